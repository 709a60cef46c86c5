/* lay_gpt.c — every valid GPT header on the input, each a reading.
 *
 * From the UEFI specification (chapter 5): a header at LBA 1 and a backup
 * at the last LBA (where the primary's AlternateLBA says), each with its
 * own CRC-32 and the CRC-32 of its entry array.  libblkid and the kernel
 * take the primary and fall back to the backup; both require a protective
 * MBR first.  Here each valid header is a reading of its own, protective
 * MBR or not: a disk repartitioned as MBR often keeps an old GPT's backup
 * header at its end, and a primary and backup that disagree are two
 * readings.  lay.c merges readings that define the same regions.
 *
 * A header is valid when: its signature is "EFI PART"; its size is 92 up
 * to a sector; its CRC matches; MyLBA is where it was read; FirstUsableLBA
 * <= LastUsableLBA <= the last LBA; its entries are 128 x 2^n bytes (at
 * most 4096), at most LAY_GPT_MAX_ARRAY bytes of them, inside the disk,
 * with a matching CRC.  The sector size is not recorded in a GPT: headers
 * are looked for at 512 and 4096 bytes (and the device's), MyLBA telling
 * which one a header was written for.
 *
 * Entries with a zero type GUID are unused; numbers are entry indexes + 1,
 * as the kernel numbers them.  An entry whose ending LBA is before its
 * starting LBA, or outside the disk, is kept with no length and marked
 * (lay.c reads nothing of it as free).  Structures (always data): sector
 * 0, the header's sector and its entry array.
 */
#include "config.h"
#include "lay_tab.h"
#include "le.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LAY_GPT_MAX_ARRAY ((uint64_t)4 << 20) /* 32768 entries of 128 bytes */

struct gpt_hdr {
    uint64_t my_lba, alt_lba, first_usable, last_usable, entries_lba;
    uint32_t nentries, entry_size, entries_crc;
};

/* The header in sector lba of size ss, if valid but for its entries. */
static bool gpt_header(struct lay_dev *d, unsigned ss, uint64_t lba, uint8_t *sec,
                       struct gpt_hdr *h)
{
    uint64_t last = d->len / ss - 1;
    if (lba > last || lay_dev_read(d, lba * ss, sec, ss) != 0 || memcmp(sec, "EFI PART", 8) != 0)
        return false;
    uint32_t hsize = le_get32(sec + 12), crc = le_get32(sec + 16);
    if (hsize < 92 || hsize > ss)
        return false;
    memset(sec + 16, 0, 4);
    if (crc32(0, sec, hsize) != crc)
        return false;
    *h = (struct gpt_hdr){le_get64(sec + 24), le_get64(sec + 32), le_get64(sec + 40),
                          le_get64(sec + 48), le_get64(sec + 72), le_get32(sec + 80),
                          le_get32(sec + 84), le_get32(sec + 88)};
    if (h->my_lba != lba || h->first_usable > h->last_usable || h->last_usable > last)
        return false;
    uint32_t es = h->entry_size;
    if (es < 128 || es > 4096 || (es & (es - 1)) != 0 || h->nentries == 0 ||
        (uint64_t)h->nentries * es > LAY_GPT_MAX_ARRAY)
        return false;
    uint64_t array_sectors = ((uint64_t)h->nentries * es + ss - 1) / ss;
    return h->entries_lba <= last && array_sectors <= last + 1 - h->entries_lba;
}

/* "c12a7328-f81f-11d2-ba4b-00a0c93ec93b": the first three fields little-endian. */
static void gpt_guid(const uint8_t *g, char *out, size_t n)
{
    snprintf(out, n, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12],
             g[13], g[14], g[15]);
}

/* The header h's entries as a reading.  0, or -1 out of memory (an entry
 * array that cannot be read or fails its CRC adds nothing). */
static int gpt_reading(struct lay_dev *d, unsigned ss, const struct gpt_hdr *h,
                       struct lay_readings *rs, const char *name)
{
    size_t bytes = (size_t)h->nentries * h->entry_size;
    uint8_t *a = malloc(bytes);
    if (a == NULL)
        return -1;
    int rc = 0;
    if (lay_dev_read(d, h->entries_lba * ss, a, bytes) != 0 || crc32(0, a, (uInt)bytes) != h->entries_crc)
        goto out;
    struct lay_reading *r = lay_reading_new(rs, "gpt", name);
    uint64_t array = ((uint64_t)bytes + ss - 1) / ss * ss;
    if (r == NULL || lay_reading_struct(rs, r, 0, ss) != 0 ||
        lay_reading_struct(rs, r, h->my_lba * ss, ss) != 0 ||
        lay_reading_struct(rs, r, h->entries_lba * ss, array) != 0) {
        rc = -1;
        goto out;
    }
    uint64_t sectors = d->len / ss;
    static const uint8_t zero[16];
    for (uint32_t i = 0; i < h->nentries; i++) {
        const uint8_t *e = a + (size_t)i * h->entry_size;
        if (memcmp(e, zero, 16) == 0)
            continue;
        uint64_t s = le_get64(e + 32), z = le_get64(e + 40);
        bool inside = s <= z && z < sectors;
        struct lay_part *p = lay_reading_part(r, inside ? s * ss : 0, inside ? (z - s + 1) * ss : 0,
                                              i + 1);
        if (p == NULL) {
            rc = r->too_many ? 0 : -1;
            goto out;
        }
        gpt_guid(e, p->ptype, sizeof p->ptype);
        if (!inside)
            lay_whole(p, true, "the partition lies outside the disk");
    }
out:
    free(a);
    return rc;
}

/* Every valid header for sector size ss. */
static int gpt_read_ss(struct lay_dev *d, unsigned ss, struct lay_readings *rs, uint8_t *sec)
{
    if (d->len / ss < 3)
        return 0;
    uint64_t last = d->len / ss - 1;
    struct gpt_hdr h, b;
    char name[96];
    bool primary = gpt_header(d, ss, 1, sec, &h);
    if (primary) {
        snprintf(name, sizeof name, "a GPT (primary header, %u-byte sectors)", ss);
        if (gpt_reading(d, ss, &h, rs, name) != 0)
            return -1;
    }
    uint64_t at[2] = {primary ? h.alt_lba : last, last};
    for (int k = 0; k < 2; k++) {
        if (at[k] <= 1 || (k == 1 && at[0] == last) || !gpt_header(d, ss, at[k], sec, &b))
            continue;
        snprintf(name, sizeof name, "a GPT (backup header at LBA %llu, %u-byte sectors)",
                 (unsigned long long)at[k], ss);
        if (gpt_reading(d, ss, &b, rs, name) != 0)
            return -1;
    }
    return 0;
}

int lay_gpt_read(struct lay_dev *d, unsigned ss, struct lay_readings *rs)
{
    unsigned sizes[3] = {512, 4096, ss};
    uint8_t *sec = malloc(65536);
    if (sec == NULL)
        return -1;
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++) {
        if (sizes[i] < 512 || sizes[i] > 65536 || (i == 2 && (ss == 512 || ss == 4096)))
            continue;
        rc = gpt_read_ss(d, sizes[i], rs, sec);
    }
    free(sec);
    return rc;
}
