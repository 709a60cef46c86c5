/* fuzz_lvm.c — libFuzzer harness for the LVM2 reader (src/layout/lay_lvm.c)
 * and its text parser (lay_cfg.c).
 *
 * A fuzzer cannot forge lvm2's CRCs, so the harness writes them: the input
 * is the metadata text (and, in its first byte, where in the circular
 * buffer it starts: the wrap is exercised too).  It becomes a 64 MiB PV,
 * held in a memfd, holes but for its label, PV header and metadata area,
 * with pe_start at 1 MiB; its UUID is LVM_UUID, so a text naming it is
 * read as this PV's.  What must hold, whatever the text:
 *   - lay_cfg_parse() returns 0 or -1, never more;
 *   - lay_build() returns 0 (only memory could fail);
 *   - the free ranges are sorted, disjoint, inside the input and sum to
 *     free_bytes, and every free byte is past pe_start (the label and the
 *     metadata are never free);
 *   - each volume's used bytes are at most its length, and a volume is
 *     listed only under a mapped region.
 * Seeds: fuzz/corpus/lvm holds metadata texts lvm2 2.03 wrote (linear,
 * two segments out of physical order, striped, a snapshot, a thin pool).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "lay.h"
#include "lay_cfg.h"
#include "le.h"

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "fuzz_lvm: check failed at line %d: %s\n", __LINE__, \
                    #cond);                                                      \
            abort();                                                             \
        }                                                                        \
    } while (0)

#define LVM_UUID "Hu8DbggC5HHhaF2cli5v3lEL6hEblyfv"
#define PV_SIZE ((uint64_t)64 << 20)
#define MDA_OFF 4096u
#define MDA_SIZE (1044480u)

static uint32_t lvm_crc(const void *p, size_t n)
{
    return (uint32_t)crc32(0xf597a6cfu ^ 0xffffffffu, p, (uInt)n) ^ 0xffffffffu;
}

/* The label sector and the metadata area's first 512 bytes. */
static void make_pv(int fd, const uint8_t *text, size_t n, unsigned start)
{
    uint8_t l[512] = {0};
    memcpy(l, "LABELONE", 8);
    le_put64(l + 8, 1);
    le_put32(l + 20, 32);
    memcpy(l + 24, "LVM2 001", 8);
    uint8_t *h = l + 32;
    memcpy(h, LVM_UUID, 32);
    le_put64(h + 32, PV_SIZE);
    le_put64(h + 40, 1 << 20); /* data area: pe_start */
    le_put64(h + 72, MDA_OFF); /* after the data list's zero entry */
    le_put64(h + 80, MDA_SIZE);
    le_put32(l + 16, lvm_crc(l + 20, 512 - 20));
    CHECK(pwrite(fd, l, sizeof l, 512) == (ssize_t)sizeof l);

    uint8_t m[512] = {0};
    memcpy(m + 4, " LVM2 x[5A%r0N*>", 16);
    le_put32(m + 20, 1);
    le_put64(m + 24, MDA_OFF);
    le_put64(m + 32, MDA_SIZE);
    /* the text starts at 512 + start * 4096: past the buffer's end less
     * its length, it wraps to 512 */
    uint64_t at = 512 + (uint64_t)start * 4096;
    if (at >= MDA_SIZE)
        at = 512;
    le_put64(m + 40, at);
    le_put64(m + 48, n);
    le_put32(m + 56, lvm_crc(text, n));
    le_put32(m, lvm_crc(m + 4, 512 - 4));
    CHECK(pwrite(fd, m, sizeof m, MDA_OFF) == (ssize_t)sizeof m);
    uint64_t first = n < MDA_SIZE - at ? n : MDA_SIZE - at;
    CHECK(pwrite(fd, text, first, (off_t)(MDA_OFF + at)) == (ssize_t)first);
    if (first < n)
        CHECK(pwrite(fd, text + first, n - first, MDA_OFF + 512) == (ssize_t)(n - first));
}

static void check_map(const struct lay_map *m)
{
    uint64_t sum = 0, end = 0;
    for (size_t i = 0; i < m->nfree; i++) {
        const struct sp_range *r = &m->free[i];
        CHECK(r->len > 0 && r->off >= end && r->off <= PV_SIZE && r->len <= PV_SIZE - r->off);
        CHECK(r->off >= (1u << 20)); /* the label and metadata: never free */
        end = r->off + r->len;
        sum += r->len;
    }
    CHECK(sum == m->free_bytes);
    for (size_t k = 0; k < m->nparts; k++) {
        const struct lay_part *p = &m->parts[k];
        CHECK(p->nvols == 0 || p->mapped);
        CHECK(p->vol_first + p->nvols <= m->nvols);
    }
    for (size_t v = 0; v < m->nvols; v++)
        CHECK(m->vols[v].used <= m->vols[v].len && m->vols[v].vol[0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > MDA_SIZE - 512)
        return 0;
    unsigned start = data[0];
    const uint8_t *text = data + 1;
    size_t n = size - 1;

    struct lay_cfg t;
    int oom;
    char why[96];
    int rc = lay_cfg_parse((const char *)text, n, &t, &oom, why, sizeof why);
    CHECK(rc == 0 || rc == -1);
    if (rc == 0)
        lay_cfg_free(&t);

    int fd = memfd_create("fuzz_lvm", MFD_CLOEXEC);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, (off_t)PV_SIZE) == 0);
    make_pv(fd, text, n, start);
    struct lay_map m;
    struct sp_err err = {0};
    struct lay_opts o = {0};
    CHECK(lay_build(fd, 0, PV_SIZE, &o, &m, &err) == 0);
    check_map(&m);
    lay_free(&m);
    close(fd);
    return 0;
}
