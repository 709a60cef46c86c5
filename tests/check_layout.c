/* Unit tests for the layout readers' extent list (lay_fs.h): its memory
 * bound, that coarsening it only ever adds used bytes, the second reading's
 * dispute count; and the readings of partition tables built here byte by
 * byte from the MBR and UEFI specifications (not from the code under
 * test): the kernel's MBR rules, GPT headers, two layouts on one disk. */
#include "check_util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "lay.h"
#include "lay_fs.h"
#include "lay_cfg.h"

/* Whether [off, off + len) lies inside one extent of the sorted list. */
static int covered(const struct lay_used *u, uint64_t off, uint64_t len)
{
    size_t lo = 0, hi = u->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->e[mid].off + u->e[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < u->n && u->e[lo].off <= off && off + len <= u->e[lo].off + u->e[lo].len;
}

/* A bitmap alternating used and free 4 KiB blocks over 40 GB: five million
 * extents, more than the bound; the list stays bounded and still covers
 * every block reported used. */
START_TEST(test_bounded_and_safe)
{
    struct lay_used u = {0};
    const uint64_t n = 5000000;
    for (uint64_t i = 0; i < n; i++)
        ck_assert_int_eq(lay_used_add(&u, i * 8192, 4096), 0);
    ck_assert(u.coarsened);
    ck_assert_uint_le(u.n, (size_t)1 << 22);
    for (size_t i = 1; i < u.n; i++)
        ck_assert_uint_gt(u.e[i].off, u.e[i - 1].off + u.e[i - 1].len);
    for (uint64_t i = 0; i < n; i += 997)
        ck_assert_msg(covered(&u, i * 8192, 4096), "block %llu lost", (unsigned long long)i);
    ck_assert(covered(&u, (n - 1) * 8192, 4096));
    free(u.e);
}
END_TEST

/* Below the bound nothing is coarsened: every gap stays free. */
START_TEST(test_small_lists_kept)
{
    struct lay_used u = {0};
    for (uint64_t i = 0; i < 1000; i++)
        ck_assert_int_eq(lay_used_add(&u, i * 8192, 4096), 0);
    ck_assert(!u.coarsened);
    ck_assert_uint_eq(u.n, 1000);
    free(u.e);
}
END_TEST

/* The second reading: references the map covers cost nothing; the parts
 * it calls free become used and are counted, each byte once however many
 * files name it (lay.c finishes the count; here the running count, which
 * may only over-count). */
START_TEST(test_ref_disputes)
{
    struct lay_used u = {0};
    ck_assert_int_eq(lay_used_add(&u, 8192, 4096), 0);
    ck_assert_int_eq(lay_used_add(&u, 0, 4096), 0);
    ck_assert_int_eq(lay_used_add(&u, 20480, 4096), 0);
    ck_assert_int_eq(lay_used_seal(&u), 0);
    ck_assert_uint_eq(u.sealed, 3);
    ck_assert_int_eq(lay_used_ref(&u, 0, 4096), 0); /* covered */
    ck_assert_int_eq(lay_used_ref(&u, 8192 + 100, 50), 0);
    ck_assert_uint_eq(u.disputed, 0);
    ck_assert_uint_eq(u.n, 3);
    /* [2048, 24576): free parts 4096-8192 and 12288-20480 */
    ck_assert_int_eq(lay_used_ref(&u, 2048, 22528), 0);
    ck_assert_uint_eq(u.disputed, 4096 + 8192);
    ck_assert_uint_eq(u.n, 5);
    /* past the map's end */
    ck_assert_int_eq(lay_used_ref(&u, 24576, 1000), 0);
    ck_assert_uint_eq(u.disputed, 4096 + 8192 + 1000);
    free(u.e);
}
END_TEST

/* Disputes past the extent bound: the list is coarsened after the seal,
 * the disputes merged into the map, and the count is the running one (it
 * was the few reported since the coarsening, under LAY_DISPUTE_MAX). */
START_TEST(test_ref_disputes_coarsened)
{
    struct lay_used u = {0};
    ck_assert_int_eq(lay_used_seal(&u), 0);
    const uint64_t n = 5000000;
    for (uint64_t i = 0; i < n; i++)
        ck_assert_int_eq(lay_used_ref(&u, i * 8192, 4096), 0);
    ck_assert(u.coarsened);
    ck_assert_uint_eq(u.disputed, n * 4096);
    ck_assert_uint_eq(lay_used_disputed(&u), n * 4096);
    ck_assert_uint_gt(lay_used_disputed(&u), LAY_DISPUTE_MAX);
    free(u.e);
}
END_TEST

/* Before the seal a reference is a plain used extent, not a dispute. */
START_TEST(test_ref_before_seal)
{
    struct lay_used u = {0};
    ck_assert_int_eq(lay_used_ref(&u, 4096, 4096), 0);
    ck_assert_uint_eq(u.disputed, 0);
    ck_assert_uint_eq(u.n, 1);
    free(u.e);
}
END_TEST

/* ---- partition tables, built by hand ---- */

#define DISK (8u << 20) /* 16384 sectors */

/* MBR entry slot (0-3) of the sector at sec. */
static void mbr_entry(uint8_t *sec, int slot, uint8_t boot, uint8_t type, uint32_t start,
                      uint32_t size)
{
    uint8_t *e = sec + 446 + 16 * slot;
    e[0] = boot;
    e[4] = type;
    put_le(e + 8, start, 4);
    put_le(e + 12, size, 4);
    sec[510] = 0x55;
    sec[511] = 0xAA;
}

/* A GPT header at LBA lba (512-byte sectors) over the n entries already at
 * entries_lba: its fields and both CRCs, as the UEFI specification lays
 * them out. */
static void gpt_header(uint8_t *d, uint64_t lba, uint64_t alt, uint64_t entries_lba, uint32_t n,
                       uint64_t first_usable)
{
    uint8_t *h = d + lba * 512;
    memset(h, 0, 512);
    memcpy(h, "EFI PART", 8);
    put_le(h + 8, 0x00010000, 4);
    put_le(h + 12, 92, 4);
    put_le(h + 24, lba, 8);
    put_le(h + 32, alt, 8);
    put_le(h + 40, first_usable, 8);
    put_le(h + 48, DISK / 512 - first_usable, 8);
    put_le(h + 72, entries_lba, 8);
    put_le(h + 80, n, 4);
    put_le(h + 84, 128, 4);
    put_le(h + 88, (uint32_t)crc32(0, d + entries_lba * 512, n * 128), 4);
    put_le(h + 16, (uint32_t)crc32(0, h, 92), 4);
}

/* A GPT header at LBA lba with 128 entries at entries_lba, the first
 * [first, last] of a Linux filesystem type. */
static void gpt_write(uint8_t *d, uint64_t lba, uint64_t alt, uint64_t entries_lba,
                      uint64_t first, uint64_t last)
{
    uint8_t *a = d + entries_lba * 512;
    memset(a, 0, 128 * 128);
    static const uint8_t linux_fs[16] = {0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47,
                                         0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4};
    memcpy(a, linux_fs, 16);
    a[16] = 1; /* a partition GUID, not zero */
    put_le(a + 32, first, 8);
    put_le(a + 40, last, 8);
    gpt_header(d, lba, alt, entries_lba, 128, 34);
}

/* Map the DISK bytes of d (a memfd) with --free=zero's readings. */
static void map_disk(const uint8_t *d, struct lay_map *m)
{
    int fd = memfd_with(d, DISK);
    struct lay_opts o = {.force_mounted = true};
    struct sp_err err = {0};
    ck_assert_int_eq(lay_build(fd, 0, DISK, &o, m, &err), 0);
    close(fd);
}

static bool has_table(const struct lay_map *m, uint64_t off, uint64_t len)
{
    for (size_t i = 0; i < m->ntables; i++)
        if (m->tables[i].off <= off && off + len <= m->tables[i].off + m->tables[i].len)
            return true;
    return false;
}

/* Primaries and a chain of two logicals: one layout (the kernel's and
 * libblkid's agree), numbered as the kernel numbers them, every EBR a
 * table structure. */
START_TEST(test_mbr_logicals)
{
    uint8_t *d = calloc(1, DISK);
    mbr_entry(d, 0, 0x80, 0x83, 2048, 2048);
    mbr_entry(d, 1, 0x00, 0x05, 4096, 8192);
    mbr_entry(d + 4096 * 512, 0, 0, 0x83, 64, 1024);   /* logical 5: 4160 */
    mbr_entry(d + 4096 * 512, 1, 0, 0x05, 2048, 4096); /* next EBR at 6144 */
    mbr_entry(d + 6144 * 512, 0, 0, 0x83, 64, 1024);   /* logical 6: 6208 */
    struct lay_map m;
    map_disk(d, &m);
    ck_assert_uint_eq(m.nlayouts, 1);
    ck_assert_str_eq(m.layouts[0].table, "dos");
    ck_assert_uint_eq(m.nparts, 3);
    ck_assert_uint_eq(m.parts[0].number, 1);
    ck_assert_uint_eq(m.parts[1].number, 5);
    ck_assert_uint_eq(m.parts[1].off, 4160 * 512);
    ck_assert_uint_eq(m.parts[2].number, 6);
    ck_assert_uint_eq(m.parts[2].off, 6208 * 512);
    ck_assert(has_table(&m, 0, 512));
    ck_assert(has_table(&m, 4096 * 512, 512));
    ck_assert(has_table(&m, 6144 * 512, 512));
    lay_free(&m);
    free(d);
}
END_TEST

/* An EBR that links to itself: the chain ends, nothing loops. */
START_TEST(test_mbr_loop)
{
    uint8_t *d = calloc(1, DISK);
    mbr_entry(d, 0, 0, 0x05, 4096, 8192);
    mbr_entry(d + 4096 * 512, 0, 0, 0x83, 64, 1024);
    mbr_entry(d + 4096 * 512, 1, 0, 0x05, 0, 8192); /* back to itself */
    struct lay_map m;
    map_disk(d, &m);
    ck_assert_uint_ge(m.nparts, 1);
    ck_assert_uint_eq(m.parts[0].number, 5);
    lay_free(&m);
    free(d);
}
END_TEST

/* A partition past the disk's end: read whole, never a region outside. */
START_TEST(test_mbr_outside)
{
    uint8_t *d = calloc(1, DISK);
    mbr_entry(d, 0, 0, 0x83, 2048, 1u << 30);
    mbr_entry(d, 1, 0, 0x83, 1u << 31, 100);
    struct lay_map m;
    map_disk(d, &m);
    for (size_t i = 0; i < m.nparts; i++) {
        ck_assert(!m.parts[i].mapped);
        ck_assert_uint_le(m.parts[i].off + m.parts[i].len, DISK);
    }
    ck_assert_uint_eq(m.nfree, 0);
    lay_free(&m);
    free(d);
}
END_TEST

/* Boot indicators other than 00 and 80: not a table for the kernel (nor
 * for libblkid): the whole input. */
START_TEST(test_mbr_boot_indicator)
{
    uint8_t *d = calloc(1, DISK);
    mbr_entry(d, 0, 0x12, 0x83, 2048, 2048);
    struct lay_map m;
    map_disk(d, &m);
    ck_assert_uint_eq(m.nlayouts, 1);
    ck_assert_str_eq(m.layouts[0].table, "");
    lay_free(&m);
    free(d);
}
END_TEST

/* A FAT boot sector in sector 0 with a table beside it (a disk whose FAT was partitioned later):
 * libblkid reads a FAT, the kernel a table: two layouts. */
START_TEST(test_fat_under_mbr)
{
    uint8_t *d = calloc(1, DISK);
    static const uint8_t jmp[3] = {0xEB, 0x58, 0x90};
    memcpy(d, jmp, 3);
    memcpy(d + 3, "mkfs.fat", 8);
    d[11] = 0x00, d[12] = 0x02; /* 512 bytes per sector */
    d[13] = 1;                  /* sectors per cluster */
    d[14] = 32;                 /* reserved sectors */
    d[16] = 2;                  /* FATs */
    d[21] = 0xF8;               /* media */
    put_le(d + 32, DISK / 512, 4);  /* total sectors */
    put_le(d + 36, 128, 4);         /* sectors per FAT */
    put_le(d + 44, 2, 4);           /* root cluster */
    d[66] = 0x29;
    memcpy(d + 82, "FAT32   ", 8);
    mbr_entry(d, 0, 0x00, 0x83, 2048, 8192);
    struct lay_map m;
    map_disk(d, &m);
    ck_assert_uint_eq(m.nlayouts, 2);
    ck_assert(strstr(m.layouts[0].name, "an MBR (the kernel's reading)") != NULL);
    ck_assert_str_eq(m.layouts[1].table, "");
    ck_assert(strstr(m.layouts[1].name, "vfat") != NULL);
    lay_free(&m);
    free(d);
}
END_TEST

/* A GPT whose primary and backup are both valid and agree: one layout
 * with every structure kept; made to disagree: two. */
START_TEST(test_gpt_backup)
{
    uint8_t *d = calloc(1, DISK);
    mbr_entry(d, 0, 0, 0xEE, 1, DISK / 512 - 1);
    uint64_t last = DISK / 512 - 1;
    gpt_write(d, 1, last, 2, 2048, 6143);
    gpt_write(d, last, 1, last - 32, 2048, 6143);
    struct lay_map m;
    map_disk(d, &m);
    ck_assert_uint_eq(m.nlayouts, 1);
    ck_assert_str_eq(m.layouts[0].table, "gpt");
    ck_assert_uint_eq(m.layouts[0].nparts, 1);
    ck_assert_uint_eq(m.parts[0].off, 2048 * 512);
    ck_assert_uint_eq(m.parts[0].len, 4096 * 512);
    ck_assert(has_table(&m, 512, 512));
    ck_assert(has_table(&m, 2 * 512, 32 * 512));
    ck_assert(has_table(&m, last * 512, 512));
    ck_assert(has_table(&m, (last - 32) * 512, 32 * 512));
    lay_free(&m);
    gpt_write(d, last, 1, last - 32, 2048, 4095);
    map_disk(d, &m);
    ck_assert_uint_eq(m.nlayouts, 2);
    ck_assert(strstr(m.layouts[0].name, "primary header") != NULL);
    ck_assert(strstr(m.layouts[1].name, "backup header") != NULL);
    lay_free(&m);
    /* a header whose CRC fails is no reading */
    d[last * 512 + 40] ^= 1;
    map_disk(d, &m);
    ck_assert_uint_eq(m.nlayouts, 1);
    lay_free(&m);
    free(d);
}
END_TEST

/* A GPT listing 300 partitions, more than the kernel reads: not believed,
 * the whole input read (one region, no free byte), one warning's worth. */
START_TEST(test_gpt_too_many)
{
    uint8_t *d = calloc(1, DISK);
    mbr_entry(d, 0, 0, 0xEE, 1, DISK / 512 - 1);
    const uint32_t n = 300;
    uint8_t *a = d + 2 * 512;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *e = a + i * 128;
        e[0] = 0xaf, e[1] = 0x3d; /* a type, not zero */
        e[16] = 1;
        put_le(e + 32, 1024 + 8 * i, 8);
        put_le(e + 40, 1024 + 8 * i + 7, 8);
    }
    gpt_header(d, 1, DISK / 512 - 1, 2, n, 80);
    struct lay_map m;
    map_disk(d, &m);
    ck_assert_uint_eq(m.nlayouts, 1);
    ck_assert_uint_eq(m.nparts, 1);
    ck_assert(!m.parts[0].mapped && m.parts[0].doubt);
    ck_assert_uint_eq(m.parts[0].len, DISK);
    ck_assert_uint_eq(m.nfree, 0);
    lay_free(&m);
    free(d);
}
END_TEST

/* An old GPT's backup header at the end of an MBR disk: two readings,
 * the old header and its entries always data. */
START_TEST(test_stale_gpt_backup)
{
    uint8_t *d = calloc(1, DISK);
    uint64_t last = DISK / 512 - 1;
    gpt_write(d, last, 1, last - 32, 40, 1000);
    mbr_entry(d, 0, 0, 0x83, 2048, 8192);
    struct lay_map m;
    map_disk(d, &m);
    ck_assert_uint_eq(m.nlayouts, 2);
    ck_assert(strstr(m.layouts[1].name, "backup header") != NULL);
    ck_assert(has_table(&m, last * 512, 512));
    lay_free(&m);
    free(d);
}
END_TEST


/* ---- the kernel's partitions (lay_kernel_parts: the mount's pN files) ---- */

static int mem_read(void *ctx, void *buf, size_t n, uint64_t off)
{
    memcpy(buf, (const uint8_t *)ctx + off, n);
    return 0;
}

static int fail_read(void *ctx, void *buf, size_t n, uint64_t off)
{
    (void)ctx, (void)buf, (void)n, (void)off;
    return -1;
}

/* The partitions of the DIMG bytes of d, as "N:OFF:LEN " in sectors. */
static const char *kparts(const uint8_t *d, uint64_t size)
{
    static char out[512];
    struct lay_kpart *p;
    size_t n;
    ck_assert_int_eq(lay_kernel_parts(mem_read, (void *)d, size, &p, &n), 0);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%u:%llu:%llu ", p[i].number,
                 (unsigned long long)(p[i].off / 512), (unsigned long long)(p[i].len / 512));
    free(p);
    return out;
}

/* Primaries by slot, logicals from 5 along the chain, no file for the
 * extended container. */
START_TEST(test_kparts_mbr)
{
    uint8_t *d = calloc(1, DISK);
    mbr_entry(d, 0, 0x80, 0x83, 2048, 2048);
    mbr_entry(d, 2, 0x00, 0x05, 4096, 8192);
    mbr_entry(d + 4096 * 512, 0, 0, 0x83, 64, 1024);
    mbr_entry(d + 4096 * 512, 1, 0, 0x05, 2048, 4096);
    mbr_entry(d + 6144 * 512, 0, 0, 0x83, 64, 1024);
    ck_assert_str_eq(kparts(d, DISK), "1:2048:2048 5:4160:1024 6:6208:1024 ");
    /* a partition running past the end is cut there; one starting past it
     * is left out, as the kernel does */
    mbr_entry(d, 1, 0x00, 0x83, DISK / 512 - 100, 1000);
    mbr_entry(d, 3, 0x00, 0x83, DISK / 512 + 5, 10);
    ck_assert_str_eq(kparts(d, DISK), "1:2048:2048 2:16284:100 5:4160:1024 6:6208:1024 ");
    /* an invalid boot indicator: no table */
    d[446] = 0x12;
    ck_assert_str_eq(kparts(d, DISK), "");
    free(d);
}
END_TEST

/* The disk that lost a partition under --free=zero: a FAT boot sector with
 * an MBR written beside it.  The kernel reads the table: p1. */
START_TEST(test_kparts_fat_under_mbr)
{
    uint8_t *d = calloc(1, DISK);
    static const uint8_t jmp[3] = {0xEB, 0x58, 0x90};
    memcpy(d, jmp, 3);
    memcpy(d + 3, "mkfs.fat", 8);
    d[11] = 0x00, d[12] = 0x02, d[13] = 1, d[14] = 32, d[16] = 2, d[21] = 0xF8;
    put_le(d + 32, DISK / 512, 4);
    memcpy(d + 82, "FAT32   ", 8);
    mbr_entry(d, 0, 0x00, 0x83, 2048, 8192);
    ck_assert_str_eq(kparts(d, DISK), "1:2048:8192 ");
    free(d);
}
END_TEST

/* A GPT needs its protective MBR; the primary header first, the backup
 * when the primary fails its CRC; entries numbered by their index. */
START_TEST(test_kparts_gpt)
{
    uint8_t *d = calloc(1, DISK);
    uint64_t last = DISK / 512 - 1;
    gpt_write(d, 1, last, 2, 2048, 6143);
    gpt_write(d, last, 1, last - 32, 2048, 4095);
    ck_assert_str_eq(kparts(d, DISK), ""); /* no protective MBR */
    mbr_entry(d, 0, 0, 0xEE, 1, DISK / 512 - 1);
    ck_assert_str_eq(kparts(d, DISK), "1:2048:4096 ");
    d[512 + 40] ^= 1; /* the primary header's CRC fails */
    ck_assert_str_eq(kparts(d, DISK), "1:2048:2048 ");
    /* the third entry only, in the backup's array */
    uint8_t *a = d + (last - 32) * 512;
    memcpy(a + 2 * 128, a, 128);
    memset(a, 0, 128);
    gpt_header(d, last, 1, last - 32, 128, 34);
    ck_assert_str_eq(kparts(d, DISK), "3:2048:2048 ");
    free(d);
}
END_TEST

/* Reads that fail (a damaged backup's first piece): no partitions, no
 * error; and a disk too small for a sector. */
START_TEST(test_kparts_unreadable)
{
    struct lay_kpart *p = (void *)1;
    size_t n = 7;
    ck_assert_int_eq(lay_kernel_parts(fail_read, NULL, DISK, &p, &n), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(p);
    uint8_t s[100] = {0};
    ck_assert_str_eq(kparts(s, sizeof s), "");
}
END_TEST

/* What the build offers: --free=zero with libblkid, and without it (configure
 * --without-blkid) a refusal that says why, before anything is read. */
START_TEST(test_available_as_configured)
{
    const char *why = "unset";
    bool avail = lay_available(&why);
#ifdef HAVE_BLKID
    ck_assert(avail);
    ck_assert_ptr_null(why);
#else
    ck_assert(!avail);
    ck_assert_ptr_nonnull(strstr(why, "libblkid"));
    uint8_t *d = calloc(1, DISK);
    ck_assert_ptr_nonnull(d);
    int fd = memfd_create("layout", MFD_CLOEXEC);
    ck_assert_int_eq(write(fd, d, DISK), (ssize_t)DISK);
    struct lay_opts o = {.force_mounted = true};
    struct lay_map m;
    struct sp_err err = {0};
    ck_assert_int_eq(lay_build(fd, 0, DISK, &o, &m, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "libblkid"));
    close(fd);
    free(d);
#endif
}
END_TEST

/* LVM2's metadata text (lay_cfg.h): a text as lvm2 writes it, read back
 * field by field; escapes, comments, empty lists, negative numbers. */
START_TEST(test_cfg_parse)
{
    static const char text[] =
        "vg0 {\nid = \"a-b\"\nseqno = 4 # a comment\nextent_size = 8192\n"
        "status = [\"READ\", \"WRITE\"]\nflags = []\none = [\"VISIBLE\"]\n"
        "logical_volumes {\nroot {\nsegment1 {\nstart_extent = 0\nstripes = [\n\"pv0\", 15\n]\n}\n}\n}\n"
        "}\ncontents = \"Text \\\"Format\\\\\"\nversion = -1\n\0\0";
    struct lay_cfg t;
    int oom;
    char why[96];
    ck_assert_int_eq(lay_cfg_parse(text, sizeof text - 1, &t, &oom, why, sizeof why), 0);
    size_t vg = lay_cfg_get(&t, 0, "vg0");
    ck_assert_uint_ne(vg, 0);
    int64_t v;
    ck_assert_int_eq(lay_cfg_int(&t, vg, "seqno", &v), 0);
    ck_assert_int_eq(v, 4);
    ck_assert_int_eq(lay_cfg_int(&t, 0, "version", &v), 0);
    ck_assert_int_eq(v, -1);
    ck_assert_str_eq(lay_cfg_str(&t, 0, "contents"), "Text \"Format\\");
    ck_assert_int_eq(lay_cfg_has(&t, vg, "status", "WRITE"), 1);
    ck_assert_int_eq(lay_cfg_has(&t, vg, "status", "VISIBLE"), 0);
    ck_assert_int_eq(lay_cfg_has(&t, vg, "flags", "READ"), 0);
    ck_assert_int_eq(lay_cfg_has(&t, vg, "one", "VISIBLE"), 1); /* a list of one */
    ck_assert_ptr_null(lay_cfg_str(&t, vg, "seqno")); /* an integer, not a string */
    size_t lvs = lay_cfg_get(&t, vg, "logical_volumes");
    size_t seg = lay_cfg_get(&t, lay_cfg_get(&t, lvs, "root"), "segment1");
    size_t st = lay_cfg_get(&t, seg, "stripes");
    ck_assert_int_eq(t.n[st].kind, LAY_CFG_LIST);
    size_t e = t.n[st].child;
    ck_assert_str_eq(t.n[e].str, "pv0");
    ck_assert_int_eq(t.n[t.n[e].next].num, 15);
    ck_assert_uint_eq(t.n[t.n[e].next].next, 0);
    lay_cfg_free(&t);
}
END_TEST

/* The text is len bytes, never more: lvm2's parser reads numbers with
 * strtoll, which runs on past a token's end while digits follow.  A text
 * ending in a number (a PV's metadata buffer is exactly the text, without a
 * NUL) once read past its buffer: here the bytes after it are more digits,
 * then a page no one may read. */
START_TEST(test_cfg_len_bounds)
{
    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    ck_assert_ptr_ne(m, MAP_FAILED);
    ck_assert_int_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
    static const char txt[] = "a = 17";
    char *t0 = m + pg - (sizeof txt - 1); /* its last digit is the page's last byte */
    memcpy(t0, txt, sizeof txt - 1);
    struct lay_cfg t;
    int oom;
    char why[96];
    int64_t v;
    ck_assert_int_eq(lay_cfg_parse(t0, sizeof txt - 1, &t, &oom, why, sizeof why), 0);
    ck_assert_int_eq(lay_cfg_int(&t, 0, "a", &v), 0);
    ck_assert_int_eq(v, 17);
    lay_cfg_free(&t);
    /* the first 5 bytes are "a = 1": digits follow in memory, not in the text */
    ck_assert_int_eq(lay_cfg_parse(t0, sizeof txt - 2, &t, &oom, why, sizeof why), 0);
    ck_assert_int_eq(lay_cfg_int(&t, 0, "a", &v), 0);
    ck_assert_int_eq(v, 1);
    lay_cfg_free(&t);
    munmap(m, (size_t)pg * 2);
}
END_TEST

/* What the parser refuses, each with a reason in why.  (lvm2's parser
 * takes a string left open at the text's end: so does spigz.) */
START_TEST(test_cfg_refusals)
{
    static const char *const bad[] = {
        "a = 1.5\n",                      /* a float */
        "a { b = 1\n",                    /* a section not closed */
        "}\n",                            /* a stray brace */
        "a = [1, 2\n",                    /* a list not closed */
        "a = [[1]]\n",                    /* a list in a list */
        "a = 99999999999999999999\n",     /* past 64 bits */
        "a 1\n",                          /* no '=' */
        "a = 1x\n",                       /* junk after a number */
        "a = \"x\"\0b = 1\n",             /* a NUL inside */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct lay_cfg t;
        int oom;
        char why[96] = "";
        size_t n = i == 8 ? 13 : strlen(bad[i]);
        ck_assert_msg(lay_cfg_parse(bad[i], n, &t, &oom, why, sizeof why) == -1, "accepted %zu", i);
        ck_assert_int_eq(oom, 0);
        ck_assert_msg(why[0] != '\0', "no reason for %zu", i);
    }
    /* nesting past LAY_CFG_DEPTH */
    char deep[LAY_CFG_DEPTH * 4 + 8] = "";
    for (int i = 0; i <= LAY_CFG_DEPTH; i++)
        strcat(deep, "a{");
    struct lay_cfg t;
    int oom;
    char why[96];
    ck_assert_int_eq(lay_cfg_parse(deep, strlen(deep), &t, &oom, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "deep"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("extents");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bounded_and_safe);
    tcase_add_test(tc, test_small_lists_kept);
    tcase_add_test(tc, test_ref_disputes);
    tcase_add_test(tc, test_ref_before_seal);
    tcase_add_test(tc, test_ref_disputes_coarsened);
    tcase_add_test(tc, test_available_as_configured);
#ifdef HAVE_DEVMAPPER
    tcase_add_test(tc, test_cfg_parse);
    tcase_add_test(tc, test_cfg_refusals);
    tcase_add_test(tc, test_cfg_len_bounds);
#else
    printf("NOTE: built without libdevmapper: LVM's metadata parser is not checked\n");
#endif
    TCase *tt = tcase_create("tables");
    const char *why;
    if (lay_available(&why)) { /* test_available_as_configured checks it */
        tcase_add_test(tt, test_mbr_logicals);
        tcase_add_test(tt, test_mbr_loop);
        tcase_add_test(tt, test_mbr_outside);
        tcase_add_test(tt, test_mbr_boot_indicator);
        tcase_add_test(tt, test_fat_under_mbr);
        tcase_add_test(tt, test_gpt_backup);
        tcase_add_test(tt, test_stale_gpt_backup);
        tcase_add_test(tt, test_gpt_too_many);
    } else {
        printf("NOTE: %s: the partition tables' readings are not checked\n", why);
    }
    TCase *tk = tcase_create("kernel");
    tcase_add_test(tk, test_kparts_mbr);
    tcase_add_test(tk, test_kparts_fat_under_mbr);
    tcase_add_test(tk, test_kparts_gpt);
    tcase_add_test(tk, test_kparts_unreadable);
    suite_add_tcase(s, tt);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, tk);
    return run_suite(s);
}
