/* lay_clu.h — what the FAT and exFAT readers share for their second
 * reading, the cluster chains (lay_fat.c, lay_exfat.c; doc/DESIGN.md §12):
 *
 *  - a set of clusters, each claimed by one chain at most: a second claim
 *    is a chain that loops or two that cross, and it bounds the work of a
 *    walk by the cluster count (every step claims a new cluster);
 *  - runs of contiguous clusters gathered into one lay_used_ref() each;
 *  - a small direct-mapped cache of an on-disk table read a few bytes at a
 *    time (a FAT followed along its chains).
 *
 * Nothing here knows a filesystem.  Memory: the set is one bit per cluster
 * (at most 32 MiB for FAT32, the allocation bitmap's own size for exFAT);
 * the cache at most LAY_CACHE_MAX bytes.
 */
#ifndef SPIGZ_LAY_CLU_H
#define SPIGZ_LAY_CLU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lay_fs.h"

/* Clusters [0, n) of a volume, indexed from 0 (the caller's cluster 2). */
struct lay_seen {
    uint8_t *bits; /* n bits, zeroed; not owned */
    uint64_t n;
};

/* Claim clusters [c, c + k): true when all were unclaimed and inside the
 * set (then they are claimed), false otherwise. */
bool lay_seen_claim(struct lay_seen *s, uint64_t c, uint64_t k);

/* A run of bytes referenced, grown while the next extent follows it. */
struct lay_run {
    uint64_t off, len;
};

/* Reference [off, off + len): joined to the run when it follows it, else
 * the run is given to lay_used_ref() and a new one starts.  0 or -1 (out
 * of memory). */
int lay_run_ref(struct lay_used *u, struct lay_run *r, uint64_t off, uint64_t len);

/* Give the run to lay_used_ref() and empty it.  0 or -1. */
int lay_run_flush(struct lay_used *u, struct lay_run *r);

#define LAY_SLOT 4096u                   /* bytes per cache slot */
#define LAY_CACHE_MAX ((size_t)16 << 20) /* bytes of slots at most */

/* Bytes [base, base + len) of a region, cached a slot at a time. */
struct lay_cache {
    struct lay_dev *d;
    uint64_t base, len;
    size_t nslots;
    uint8_t *data; /* nslots * LAY_SLOT */
    uint64_t *tag; /* slot index + 1 held in each slot, 0 none */
};

/* 0, or -1 out of memory.  As many slots as the table needs, at most
 * LAY_CACHE_MAX bytes of them. */
int lay_cache_init(struct lay_cache *c, struct lay_dev *d, uint64_t base, uint64_t len);
void lay_cache_free(struct lay_cache *c);

/* The n bytes at off of the table (n <= LAY_SLOT, not across a slot's
 * end), or NULL when they cannot be read or lie outside it. */
const uint8_t *lay_cache_get(struct lay_cache *c, uint64_t off, size_t n);

/* Fill the slot at off (a multiple of LAY_SLOT) with n bytes already read
 * (a whole slot, or the table's last bytes). */
void lay_cache_put(struct lay_cache *c, uint64_t off, const uint8_t *buf, size_t n);

#endif
