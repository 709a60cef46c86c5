/* lay_read.c — the readings container (lay_tab.h): readings, their regions
 * and table structures, which readings define the same regions, and the
 * checks every reading's table gets (lay_table_check, lay_whole). */
#include "config.h"
#include "lay_tab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Readings and regions are few: the kernel reads at most 256 partitions
 * of a disk, so a reading past LAY_MAX_PARTS is one no program agrees on
 * (lay.c reads the whole input then), and the bound keeps a forged table
 * (a GPT of 32768 entries, six headers) from costing quadratic work and a
 * warning per entry.  Structures: sector 0, the EBRs, the GPT's three. */
#define LAY_MAX_READINGS 16
#define LAY_MAX_REGIONS 512

static int lay_grow(void **p, size_t *cap, size_t n, size_t size, size_t max)
{
    if (n < *cap)
        return 0;
    if (n >= max)
        return -1;
    size_t c = *cap ? *cap * 2 : 8;
    if (c > max)
        c = max;
    void *q = realloc(*p, c * size);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

struct lay_reading *lay_reading_new(struct lay_readings *rs, const char *table, const char *name)
{
    if (lay_grow((void **)&rs->r, &rs->cap, rs->n, sizeof *rs->r, LAY_MAX_READINGS) != 0)
        return NULL;
    struct lay_reading *r = &rs->r[rs->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->table, sizeof r->table, "%s", table);
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

struct lay_part *lay_reading_part(struct lay_reading *r, uint64_t off, uint64_t len,
                                  unsigned number)
{
    if (r->nparts >= LAY_MAX_PARTS) {
        r->too_many = true;
        return NULL;
    }
    if (lay_grow((void **)&r->parts, &r->cap, r->nparts, sizeof *r->parts, LAY_MAX_PARTS) != 0)
        return NULL;
    struct lay_part *p = &r->parts[r->nparts++];
    memset(p, 0, sizeof *p);
    p->off = off;
    p->len = len;
    p->number = number;
    p->used = len;
    return p;
}

int lay_reading_struct(struct lay_readings *rs, struct lay_reading *r, uint64_t off, uint64_t len)
{
    if (len == 0)
        return 0;
    if (lay_grow((void **)&r->structs, &r->scap, r->nstructs, sizeof *r->structs,
                 LAY_MAX_REGIONS) != 0)
        return -1;
    r->structs[r->nstructs++] = (struct sp_range){off, len};
    return rs == NULL ? 0 : lay_used_add(&rs->structs, off, len);
}

void lay_readings_free(struct lay_readings *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        free(rs->r[i].parts);
        free(rs->r[i].structs);
    }
    free(rs->r);
    free(rs->structs.e);
    memset(rs, 0, sizeof *rs);
}

void lay_whole(struct lay_part *p, bool doubt, const char *why)
{
    p->mapped = false;
    p->doubt = doubt;
    p->used = p->len;
    snprintf(p->why, sizeof p->why, "%s", why);
}

/* Partitions of one reading that overlap each other or its table's own
 * structures are read whole: which of two claims is right cannot be known. */
void lay_table_check(struct lay_reading *r)
{
    for (size_t i = 0; i < r->nparts; i++) {
        struct lay_part *p = &r->parts[i];
        if (p->why[0] != '\0')
            continue;
        for (size_t k = 0; k < r->nstructs; k++) {
            const struct sp_range *t = &r->structs[k];
            if (p->off < t->off + t->len && t->off < p->off + p->len) {
                lay_whole(p, true, "the partition covers the partition table");
                break;
            }
        }
        for (size_t j = 0; j < r->nparts && p->why[0] == '\0'; j++) {
            const struct lay_part *q = &r->parts[j];
            if (j != i && q->len > 0 && p->off < q->off + q->len && q->off < p->off + p->len)
                lay_whole(p, true, "the partition overlaps another");
        }
    }
}
