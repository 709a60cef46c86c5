/* lay_table.c — the partition table: GPT and MBR (with extended and logical
 * partitions) through libblkid, which checks GPT's header and entry CRCs and
 * takes the backup header when the primary is bad, and follows the chain of
 * extended boot records.  Both kinds are libblkid's, so they share this file;
 * what is checked here is what libblkid leaves to its callers: entries that
 * leave the disk, overlap each other or cover the table's own sectors are
 * read whole.  libblkid counts in 512-byte sectors whatever the disk's.
 */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_BLKID
#include <blkid.h>
#endif

/* Table sectors no partition may cover: GPT keeps its protective MBR,
 * header and at least 16 KiB of entries in the first 2 sectors + 16 KiB (34
 * of 512 bytes, 6 of 4 KiB), the copy in the last sector + 16 KiB; an MBR is
 * sector 0 (its logical partitions' tables lie outside them). */
#define LAY_GPT_ENTRIES 16384u

#ifdef HAVE_BLKID
/* The partition table, if any: its partitions into m->parts.  0, or -1 out
 * of memory.  No table leaves m->table empty.  A filesystem signature on
 * the whole input beside a table (a disk formatted whole over an old table,
 * or the reverse) sets *both: which one is current cannot be known. */
int lay_table_probe(int fd, struct lay_map *m, uint64_t base, bool *both)
{
    blkid_probe pr = blkid_new_probe();
    if (pr == NULL)
        return 0;
    int rc = -1;
    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)base, (blkid_loff_t)m->size) == 0) {
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
        blkid_probe_enable_partitions(pr, 1);
        rc = blkid_do_safeprobe(pr);
    }
    const char *v;
    *both = rc == -2 || (rc == 0 && blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0);
    m->sector = blkid_probe_get_sectorsize(pr);
    if (m->sector < 512 || m->sector > 65536)
        m->sector = 512;
    blkid_partlist ls = rc == 0 ? blkid_probe_get_partitions(pr) : NULL;
    blkid_parttable tab = ls != NULL ? blkid_partlist_get_table(ls) : NULL;
    int n = ls != NULL ? blkid_partlist_numof_partitions(ls) : 0;
    if (tab != NULL && n > 0) {
        snprintf(m->table, sizeof m->table, "%s", blkid_parttable_get_type(tab));
        m->parts = calloc((size_t)n, sizeof *m->parts);
        if (m->parts == NULL) {
            blkid_free_probe(pr);
            return -1;
        }
        for (int i = 0; i < n; i++) {
            blkid_partition par = blkid_partlist_get_partition(ls, i);
            if (par == NULL || blkid_partition_is_extended(par))
                continue; /* a container: its logical partitions are listed */
            struct lay_part *p = &m->parts[m->nparts++];
            blkid_loff_t s = blkid_partition_get_start(par), z = blkid_partition_get_size(par);
            p->number = (unsigned)blkid_partition_get_partno(par);
            const char *t = blkid_partition_get_type_string(par);
            if (t != NULL)
                snprintf(p->ptype, sizeof p->ptype, "%s", t);
            else
                snprintf(p->ptype, sizeof p->ptype, "0x%02x", blkid_partition_get_type(par));
            /* libblkid counts in 512-byte sectors whatever the disk's */
            if (s < 0 || z <= 0 || (uint64_t)s > m->size / 512 ||
                (uint64_t)z > m->size / 512 - (uint64_t)s) {
                p->off = s < 0 ? 0 : (uint64_t)s * 512 > m->size ? m->size : (uint64_t)s * 512;
                p->len = 0;
                lay_whole(p, true, "the partition lies outside the disk");
                continue;
            }
            p->off = (uint64_t)s * 512;
            p->len = (uint64_t)z * 512;
        }
    }
    blkid_free_probe(pr);
    return 0;
}
#endif

/* Partitions that overlap each other or the table's own sectors are read
 * whole: which of two claims is right cannot be known. */
void lay_table_check(struct lay_map *m)
{
    bool gpt = strcmp(m->table, "gpt") == 0;
    uint64_t ss = m->sector ? m->sector : 512;
    uint64_t head = gpt ? 2 * ss + LAY_GPT_ENTRIES : 512;
    uint64_t tail = gpt ? ss + LAY_GPT_ENTRIES : 0;
    for (size_t i = 0; i < m->nparts; i++) {
        struct lay_part *p = &m->parts[i];
        if (p->why[0] != '\0')
            continue;
        if (p->off < head || p->off + p->len > m->size - (tail < m->size ? tail : m->size)) {
            lay_whole(p, true, "the partition covers the partition table");
            continue;
        }
        for (size_t j = 0; j < m->nparts; j++) {
            const struct lay_part *q = &m->parts[j];
            if (j != i && q->len > 0 && p->off < q->off + q->len && q->off < p->off + p->len) {
                lay_whole(p, true, "the partition overlaps another");
                break;
            }
        }
    }
}

