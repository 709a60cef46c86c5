/* lay_table.c — libblkid's reading of the input: its partition table
 * (GPT with its CRCs, the backup header when the primary is bad; MBR with
 * extended and logical partitions), and the filesystem signatures it finds
 * on the whole input.  libblkid is one reading among several (lay_tab.h):
 * it takes a FAT boot sector in sector 0 over a table beside it, where the
 * kernel takes the table.  libblkid counts in 512-byte sectors whatever
 * the disk's.
 */
#include "config.h"
#include "lay_tab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_BLKID
#include <blkid.h>
#endif

#ifdef HAVE_BLKID
/* The filesystem signatures on the whole input, each once, into sigs. */
static void lay_blkid_sigs(int fd, uint64_t base, uint64_t size, char sigs[][16],
                           uint64_t *sig_at, size_t nsig, size_t *found)
{
    *found = 0;
    blkid_probe pr = blkid_new_probe();
    if (pr == NULL)
        return;
    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)base, (blkid_loff_t)size) == 0) {
        blkid_probe_enable_partitions(pr, 0);
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_BADCSUM |
                                                  BLKID_SUBLKS_MAGIC);
        /* blkid_do_probe() returns each prober's match in turn, where
         * blkid_do_safeprobe() would give up on two: every one counts */
        for (int guard = 0; guard < 64 && *found < nsig && blkid_do_probe(pr) == 0; guard++) {
            const char *v;
            if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) != 0)
                continue;
            bool dup = false;
            for (size_t i = 0; i < *found; i++)
                dup = dup || strcmp(sigs[i], v) == 0;
            if (dup)
                continue;
            /* SBMAGIC_OFFSET: decimal bytes from the input's start */
            const char *at;
            sig_at[*found] = blkid_probe_lookup_value(pr, "SBMAGIC_OFFSET", &at, NULL) == 0
                                 ? strtoull(at, NULL, 10) : 0;
            snprintf(sigs[(*found)++], 16, "%s", v);
        }
    }
    blkid_free_probe(pr);
}

int lay_blkid_read(int fd, uint64_t base, uint64_t size, struct lay_readings *rs,
                   char sigs[][16], uint64_t *sig_at, size_t nsig, size_t *found,
                   unsigned *sector)
{
    lay_blkid_sigs(fd, base, size, sigs, sig_at, nsig, found);
    blkid_probe pr = blkid_new_probe();
    if (pr == NULL)
        return 0;
    int rc = -1;
    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)base, (blkid_loff_t)size) == 0) {
        blkid_probe_enable_superblocks(pr, 0);
        blkid_probe_enable_partitions(pr, 1);
        rc = blkid_do_safeprobe(pr);
    }
    *sector = blkid_probe_get_sectorsize(pr);
    if (*sector < 512 || *sector > 65536)
        *sector = 512;
    blkid_partlist ls = rc == 0 ? blkid_probe_get_partitions(pr) : NULL;
    blkid_parttable tab = ls != NULL ? blkid_partlist_get_table(ls) : NULL;
    int n = ls != NULL ? blkid_partlist_numof_partitions(ls) : 0;
    int ret = 0;
    if (tab != NULL && n > 0) {
        char name[96];
        snprintf(name, sizeof name, "libblkid's %s table", blkid_parttable_get_type(tab));
        const char *t = blkid_parttable_get_type(tab);
        struct lay_reading *r = lay_reading_new(rs, strcmp(t, "gpt") == 0 ? "gpt" : "dos", name);
        if (r == NULL)
            ret = -1;
        for (int i = 0; i < n && ret == 0; i++) {
            blkid_partition par = blkid_partlist_get_partition(ls, i);
            if (par == NULL || blkid_partition_is_extended(par))
                continue; /* a container: its logical partitions are listed */
            blkid_loff_t s = blkid_partition_get_start(par), z = blkid_partition_get_size(par);
            bool inside = s >= 0 && z > 0 && (uint64_t)s <= size / 512 &&
                          (uint64_t)z <= size / 512 - (uint64_t)s;
            struct lay_part *p = lay_reading_part(r, inside ? (uint64_t)s * 512 : 0,
                                                  inside ? (uint64_t)z * 512 : 0,
                                                  (unsigned)blkid_partition_get_partno(par));
            if (p == NULL) {
                ret = r->too_many ? 0 : -1;
                break;
            }
            const char *ty = blkid_partition_get_type_string(par);
            if (ty != NULL)
                snprintf(p->ptype, sizeof p->ptype, "%s", ty);
            else
                snprintf(p->ptype, sizeof p->ptype, "0x%02x", blkid_partition_get_type(par));
            if (!inside)
                lay_whole(p, true, "the partition lies outside the disk");
        }
    }
    blkid_free_probe(pr);
    return ret;
}
#endif
