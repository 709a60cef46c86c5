/* lay_parts.c — the partitions the kernel would make block devices of, for
 * a disk read through a callback (the content of a backup: the mount's
 * DIR/pN files).  lay_mbr.c and lay_gpt.c do the reading; this picks the
 * one reading the kernel takes (lay.h: lay_kernel_parts). */
#include "config.h"
#include "lay_tab.h"

#include <stdlib.h>
#include <string.h>

static int kpart_cmp(const void *a, const void *b)
{
    unsigned x = ((const struct lay_kpart *)a)->number, y = ((const struct lay_kpart *)b)->number;
    return x < y ? -1 : x > y;
}

/* The reading the kernel takes: with a protective MBR the GPT read with
 * 512-byte sectors, its primary header first (lay_gpt.c adds it first),
 * else the MBR; NULL for none. */
static const struct lay_reading *kernel_reading(const struct lay_readings *rs)
{
    const char *want = rs->protective ? "a GPT" : "an MBR";
    for (size_t i = 0; i < rs->n; i++)
        if (strncmp(rs->r[i].name, want, strlen(want)) == 0 &&
            (!rs->protective || strstr(rs->r[i].name, " 512-byte sectors") != NULL))
            return &rs->r[i];
    return NULL;
}

int lay_kernel_parts(int (*readfn)(void *ctx, void *buf, size_t n, uint64_t off), void *ctx,
                     uint64_t size, struct lay_kpart **out, size_t *n)
{
    struct lay_dev d = {.fd = -1, .off = 0, .len = size, .readfn = readfn, .ctx = ctx};
    struct lay_readings rs = {0};
    *out = NULL;
    *n = 0;
    int rc = lay_mbr_read(&d, 512, &rs);
    if (rc == 0 && rs.protective)
        rc = lay_gpt_read(&d, 512, &rs);
    const struct lay_reading *r = rc == 0 ? kernel_reading(&rs) : NULL;
    size_t k = 0;
    if (r != NULL && r->nparts > 0) {
        *out = calloc(r->nparts, sizeof **out);
        if (*out == NULL)
            rc = -1;
        for (size_t i = 0; *out != NULL && i < r->nparts; i++) {
            const struct lay_part *p = &r->parts[i];
            if (p->len == 0 || p->off >= size)
                continue; /* empty, or starting past the disk's end */
            struct lay_kpart *q = &(*out)[k++];
            q->number = p->number;
            q->off = p->off;
            /* The kernel truncates a partition that runs past the end. */
            q->len = p->len < size - p->off ? p->len : size - p->off;
            memcpy(q->ptype, p->ptype, sizeof q->ptype);
        }
        if (*out != NULL)
            qsort(*out, k, sizeof **out, kpart_cmp);
    }
    if (k == 0) {
        free(*out);
        *out = NULL;
    }
    *n = k;
    lay_readings_free(&rs);
    return rc;
}
