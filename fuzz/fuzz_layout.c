/* fuzz_layout.c — libFuzzer harness for --free=zero's readers: partition
 * tables (through libblkid) and the filesystem readers (ext2/3/4 through
 * libext2fs, NTFS through libntfs-3g, FAT, exFAT and swap by hand).
 *
 * The input is a disk, a partition or a filesystem image, held in a memfd.
 * What must hold, whatever it is:
 *   - lay_build() returns 0 (a memfd has no read errors; only memory could
 *     fail) and leaves the descriptor's offset where it was;
 *   - the free ranges are sorted, disjoint, not adjacent, non-empty, inside
 *     the input, and sum to free_bytes;
 *   - there is at least one layout; the layouts tile m->parts in order;
 *   - every free byte lies, in every layout, in exactly one region, a
 *     mapped one (a byte is free only when every reading says so), and in
 *     no table structure; a mapped region's used bytes are at most its
 *     length, an unmapped one's its length;
 *   - the same input maps the same way twice (no state kept between calls);
 *   - with --exclude=volatile the map holds as well and covers the plain
 *     one (the exclusion only adds free bytes);
 *   - lay_kernel_parts() (the mount's pN files) on the same bytes through a
 *     read callback returns 0 and partitions inside the input, non-empty,
 *     numbered 1 to 256, in increasing order.
 * Seeds: fuzz/make-layout-seeds.sh writes small images made by each mkfs,
 * alone and inside MBR and GPT disks; XFS and btrfs (tens of MiB at least)
 * as sparse images (sparse_image()).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lay.h"

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fuzz_layout: check failed at line %d: %s\n", __LINE__, \
                    #cond);                                                        \
            abort();                                                               \
        }                                                                          \
    } while (0)

/* Free range r lies inside one region of layout L, a mapped one. */
static bool in_mapped(const struct lay_map *m, const struct lay_layout *L, const struct sp_range *r)
{
    unsigned inside = 0;
    bool mapped = false;
    for (size_t k = L->first; k < L->first + L->nparts; k++) {
        const struct lay_part *p = &m->parts[k];
        if (r->off < p->off + p->len && p->off < r->off + r->len) {
            inside++;
            mapped = p->mapped && r->off >= p->off && r->off + r->len <= p->off + p->len;
        }
    }
    return inside == 1 && mapped;
}

static void check_map(const struct lay_map *m, uint64_t size)
{
    CHECK(m->nlayouts >= 1);
    size_t next = 0;
    for (size_t l = 0; l < m->nlayouts; l++) {
        CHECK(m->layouts[l].first == next);
        next += m->layouts[l].nparts;
    }
    CHECK(next == m->nparts);
    uint64_t sum = 0, prev_end = 0;
    for (size_t i = 0; i < m->nfree; i++) {
        const struct sp_range *r = &m->free[i];
        CHECK(r->len > 0);
        CHECK(r->off <= size && r->len <= size - r->off);
        CHECK(i == 0 || r->off > prev_end); /* sorted, disjoint, not adjacent */
        prev_end = r->off + r->len;
        sum += r->len;
        for (size_t l = 0; l < m->nlayouts; l++)
            CHECK(in_mapped(m, &m->layouts[l], r));
        for (size_t t = 0; t < m->ntables; t++)
            CHECK(r->off >= m->tables[t].off + m->tables[t].len ||
                  m->tables[t].off >= r->off + r->len);
    }
    CHECK(sum == m->free_bytes);
    for (size_t k = 0; k < m->nparts; k++) {
        const struct lay_part *p = &m->parts[k];
        CHECK(p->layout < m->nlayouts);
        CHECK(p->off <= size && p->len <= size - p->off);
        CHECK(p->used <= p->len);
        CHECK(p->mapped || p->used == p->len);
    }
}

struct mem {
    const uint8_t *data;
    size_t size;
};

static int mem_read(void *ctx, void *buf, size_t n, uint64_t off)
{
    const struct mem *m = ctx;
    CHECK(off <= m->size && n <= m->size - off); /* lay_dev_read bounds it */
    memcpy(buf, m->data + off, n);
    return 0;
}

static void check_kernel_parts(const uint8_t *data, size_t size)
{
    struct mem m = {data, size};
    struct lay_kpart *p;
    size_t n;
    CHECK(lay_kernel_parts(mem_read, &m, size, &p, &n) == 0);
    CHECK((n == 0) == (p == NULL));
    for (size_t i = 0; i < n; i++) {
        CHECK(p[i].len > 0 && p[i].off < size && p[i].len <= size - p[i].off);
        CHECK(p[i].number >= 1 && p[i].number <= 256);
        CHECK(i == 0 || p[i].number > p[i - 1].number);
    }
    free(p);
}

/* A sparse image: "SPZSPARS", a u32 (little-endian) of its size in MiB
 * (at most 512), then records of a u32 block number (4 KiB blocks) and the
 * block's 4096 bytes; the rest is holes.  Filesystems whose smallest image
 * is tens of MiB (XFS, btrfs) fit the fuzzer's inputs so.  0 with *size
 * set, or -1 (not one: the input is the image itself). */
static int sparse_image(int fd, const uint8_t *data, size_t n, size_t *size)
{
    if (n < 12 || memcmp(data, "SPZSPARS", 8) != 0)
        return -1;
    uint32_t mib = (uint32_t)data[8] | (uint32_t)data[9] << 8 | (uint32_t)data[10] << 16 |
                   (uint32_t)data[11] << 24;
    if (mib == 0 || mib > 512)
        return -1;
    *size = (size_t)mib << 20;
    CHECK(ftruncate(fd, (off_t)*size) == 0);
    for (size_t at = 12; n - at >= 4 + 4096; at += 4 + 4096) {
        uint32_t b = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 |
                     (uint32_t)data[at + 2] << 16 | (uint32_t)data[at + 3] << 24;
        if ((uint64_t)b * 4096 + 4096 <= *size)
            CHECK(pwrite(fd, data + at + 4, 4096, (off_t)b * 4096) == 4096);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-layout", MFD_CLOEXEC);
    CHECK(fd >= 0);
    if (sparse_image(fd, data, size, &size) != 0) {
        check_kernel_parts(data, size);
        CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
    }
    CHECK(lseek(fd, 7, SEEK_SET) == 7);
    struct lay_opts o = {.force_mounted = true}; /* a memfd is mounted nowhere */
    struct lay_map a, b;
    struct sp_err err = {0};
    CHECK(lay_build(fd, 0, size, &o, &a, &err) == 0);
    CHECK(lseek(fd, 0, SEEK_CUR) == 7);
    check_map(&a, size);
    CHECK(lay_build(fd, 0, size, &o, &b, &err) == 0);
    CHECK(a.nfree == b.nfree && a.nparts == b.nparts && a.nlayouts == b.nlayouts);
    CHECK(a.nfree == 0 || memcmp(a.free, b.free, a.nfree * sizeof *a.free) == 0);
    lay_free(&b);
    /* --exclude=volatile only adds free bytes (NTFS's volatile files), in
     * mapped regions: the map holds, and covers the plain one */
    struct lay_opts ov = {.force_mounted = true, .exclude_volatile = true};
    CHECK(lay_build(fd, 0, size, &ov, &b, &err) == 0);
    check_map(&b, size);
    CHECK(b.free_bytes >= a.free_bytes);
    for (size_t i = 0, j = 0; i < a.nfree; i++) {
        while (j < b.nfree && b.free[j].off + b.free[j].len <= a.free[i].off)
            j++;
        CHECK(j < b.nfree && b.free[j].off <= a.free[i].off &&
              b.free[j].off + b.free[j].len >= a.free[i].off + a.free[i].len);
    }
    lay_free(&a);
    lay_free(&b);
    close(fd);
    return 0;
}
