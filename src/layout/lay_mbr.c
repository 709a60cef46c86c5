/* lay_mbr.c — an MBR as the Linux kernel's msdos parser reads it.
 *
 * libblkid and the kernel disagree on one common disk: a table written by
 * a script (sfdisk, parted) beside an old FAT boot sector.  libblkid sees
 * the FAT boot sector and no table; the kernel, fdisk and sfdisk see the
 * table.  So the kernel's rules are a reading of their own, written here
 * from its documented behaviour (block/partitions/msdos.c, read to learn):
 *
 *   - sector 0 ends in 55 AA;
 *   - every boot indicator is 0x00 or 0x80, or this is not a table (and
 *     when the first is not, a FAT boot sector: reserved sectors and FAT
 *     count non-zero, a valid media byte, says so);
 *   - an entry of type 0xEE makes it a GPT's protective MBR: the GPT
 *     readers (lay_gpt.c) take over, its other entries are a hybrid's;
 *   - entries with no sectors are skipped; start and size are 32-bit
 *     counts of the disk's logical sectors;
 *   - an extended entry (05, 0F, 85) starts a chain of extended boot
 *     records: each holds logical partitions relative to itself (entries 3
 *     and 4 only when they fit inside the extended partition) and one link
 *     to the next, relative to the first; logicals are numbered from 5.
 *     The kernel gives up after 100 records without a partition; so does
 *     this, and after LAY_MBR_MAX_LOGICALS partitions or a record seen
 *     twice.
 *
 * Table structures (rs->structs, always data): sector 0 and each extended
 * boot record read.  Entries that leave the disk are kept as they are:
 * lay.c reads them whole.
 */
#include "config.h"
#include "lay_tab.h"
#include "le.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAY_MBR_MAX_LOGICALS 252 /* the kernel's 256 partitions, less 4 primaries */
#define LAY_MBR_IDLE_LIMIT 100   /* records without a partition before giving up */

struct mbr_entry {
    uint8_t boot, type;
    uint32_t start, size;
};

static void mbr_entries(const uint8_t *sec, struct mbr_entry e[4])
{
    for (int i = 0; i < 4; i++) {
        const uint8_t *p = sec + 446 + 16 * i;
        e[i] = (struct mbr_entry){p[0], p[4], le_get32(p + 8), le_get32(p + 12)};
    }
}

static bool mbr_extended(uint8_t type)
{
    return type == 0x05 || type == 0x0F || type == 0x85;
}

static int mbr_add(struct lay_reading *r, uint64_t sector_off, uint32_t size, unsigned ss,
                   unsigned number, uint8_t type)
{
    struct lay_part *p = lay_reading_part(r, sector_off * ss, (uint64_t)size * ss, number);
    if (p == NULL)
        return r->too_many ? 0 : -1;
    snprintf(p->ptype, sizeof p->ptype, "0x%02x", type);
    return 0;
}

/* The chain of extended boot records from the extended entry e. */
static int mbr_chain(struct lay_dev *d, unsigned ss, const struct mbr_entry *ext,
                     struct lay_readings *rs, struct lay_reading *r, uint8_t *sec)
{
    uint64_t first = ext->start, this = first, this_size = ext->size;
    unsigned next = 5, idle = 0;
    uint64_t seen[LAY_MBR_IDLE_LIMIT + LAY_MBR_MAX_LOGICALS];
    size_t nseen = 0;
    while (next < 5 + LAY_MBR_MAX_LOGICALS && idle++ < LAY_MBR_IDLE_LIMIT &&
           nseen < sizeof seen / sizeof seen[0]) {
        for (size_t i = 0; i < nseen; i++)
            if (seen[i] == this)
                return 0; /* a loop */
        seen[nseen++] = this;
        if (this > d->len / ss - 1 || lay_dev_read(d, this * ss, sec, ss) != 0)
            return 0;
        if (sec[510] != 0x55 || sec[511] != 0xAA)
            return 0;
        if (lay_reading_struct(rs, r, this * ss, ss) != 0)
            return -1;
        struct mbr_entry e[4];
        mbr_entries(sec, e);
        for (int i = 0; i < 4; i++) {
            if (e[i].size == 0 || mbr_extended(e[i].type))
                continue;
            /* entries 3 and 4 often hold garbage: only when they fit */
            if (i >= 2 && ((uint64_t)e[i].start + e[i].size > this_size ||
                           this + e[i].start + e[i].size > first + ext->size))
                continue;
            if (mbr_add(r, this + e[i].start, e[i].size, ss, next++, e[i].type) != 0)
                return -1;
            idle = 0;
            if (next == 5 + LAY_MBR_MAX_LOGICALS)
                return 0;
        }
        int k = 0;
        while (k < 4 && !(e[k].size != 0 && mbr_extended(e[k].type)))
            k++;
        if (k == 4)
            return 0;
        this = first + e[k].start;
        this_size = e[k].size;
    }
    return 0;
}

int lay_mbr_read(struct lay_dev *d, unsigned ss, struct lay_readings *rs)
{
    if (ss < 512 || ss > 65536 || d->len < ss)
        return 0;
    uint8_t *sec = malloc(ss);
    if (sec == NULL)
        return -1;
    int rc = 0;
    struct mbr_entry e[4];
    if (lay_dev_read(d, 0, sec, ss) != 0 || sec[510] != 0x55 || sec[511] != 0xAA)
        goto out;
    mbr_entries(sec, e);
    for (int i = 0; i < 4; i++)
        if (e[i].boot != 0x00 && e[i].boot != 0x80)
            goto out; /* no table (a FAT boot sector, when the kernel's
                         test says so: the whole-input reading has it) */
    for (int i = 0; i < 4; i++)
        if (e[i].type == 0xEE) {
            rs->protective = true;
            goto out;
        }
    int any = 0;
    for (int i = 0; i < 4; i++)
        any |= e[i].size != 0;
    if (!any)
        goto out; /* the kernel sees no partition: the whole input it is */
    struct lay_reading *r = lay_reading_new(rs, "dos", "an MBR");
    if (r == NULL || lay_reading_struct(rs, r, 0, ss) != 0) {
        rc = -1;
        goto out;
    }
    for (int i = 0; i < 4 && rc == 0; i++) {
        if (e[i].size == 0)
            continue;
        if (mbr_extended(e[i].type))
            rc = mbr_chain(d, ss, &e[i], rs, r, sec);
        else
            rc = mbr_add(r, e[i].start, e[i].size, ss, (unsigned)i + 1, e[i].type);
    }
out:
    free(sec);
    return rc;
}
