/* libFuzzer harness for the saved index of a foreign gzip file (gzx_load,
 * doc/FORMAT.md section 7), untrusted input read from beside the file.
 *
 * Input: 1 flags byte, then the index file's bytes.  Flags bits 0-1 pick
 * the gzip file it is loaded for (fixed, made at startup with zlib: several
 * members with block boundaries every few KiB; one small member; members
 * with empty ones and trailing garbage; an empty member alone).  Bit 2
 * rewrites the identity fields (size, mtime, head and tail CRC) with that
 * file's, bit 3 the length fields (np from the file's length is not
 * derived: only the trailing CRC-32), bit 4 the trailing CRC-32: the
 * fix-ups let mutations get past the identity and the CRC to the point
 * table's checks.
 *
 * Invariants (abort on failure): gzx_load returns 0 (with a reason) or 1,
 * never -1 (a memfd never fails a read; memory is bounded by the input);
 * an accepted index saves back to exactly the bytes loaded; reads at a few
 * offsets either return the clipped length or fail with SP_ERR_DATA (a
 * point that decodes to garbage, a chunk CRC that fails), never anything
 * else, and an index that is the file's own reads the file's content.
 *
 * SPIGZ_FUZZ_DUMP_SEEDS=DIR writes each file's real index (every flags
 * value of interest) to DIR and exits: fuzz/make-corpus.sh's seeds. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gzx.h"

#define CHECK(c)                                                                               \
    do {                                                                                       \
        if (!(c)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);              \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

#define F_ID 0x04
#define F_LEN 0x08
#define F_CRC 0x10

struct variant {
    int fd;            /* the gzip file (a memfd) */
    uint8_t *content;
    size_t n;
    uint8_t *idx;      /* its real index */
    size_t idxn;
    uint8_t id[24];    /* the identity fields, bytes 16..40 */
};
static struct variant V[4];

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static size_t member(uint8_t *out, size_t cap, const uint8_t *p, size_t n)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    CHECK(deflateInit2(&s, 6, Z_DEFLATED, 31, 1, Z_DEFAULT_STRATEGY) == Z_OK);
    s.next_in = (Bytef *)p;
    s.avail_in = (uInt)n;
    s.next_out = out;
    s.avail_out = (uInt)cap;
    CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END);
    size_t got = s.total_out;
    deflateEnd(&s);
    return got;
}

static size_t slurp(int fd, uint8_t **p)
{
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    *p = malloc((size_t)st.st_size + 1);
    CHECK(*p != NULL);
    CHECK(pread(fd, *p, (size_t)st.st_size, 0) == st.st_size);
    return (size_t)st.st_size;
}

/* Variant v: content of n bytes in members split at cuts (n: none), then
 * trail. */
static void make(int v, size_t n, const size_t *cuts, int ncuts, const char *trail)
{
    struct variant *x = &V[v];
    x->content = malloc(n + 1);
    x->n = n;
    uint32_t r = 12345;
    for (size_t i = 0; i < n; i++) {
        r = r * 1103515245u + 12345u;
        /* mostly repeats (small windows: small seeds), some noise */
        x->content[i] = (i / 5000) % 4 == 3 ? 0
                      : (r >> 16) % 64 == 0 ? (uint8_t)(r >> 8)
                                            : (uint8_t)"saved gzip index\n"[i % 17];
    }
    size_t cap = n + n / 2 + 4096 * (size_t)(ncuts + 2);
    uint8_t *gz = malloc(cap);
    size_t gn = 0, at = 0;
    for (int i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : n;
        gn += member(gz + gn, cap - gn, x->content + at, end - at);
        at = end;
    }
    size_t tl = trail ? strlen(trail) : 0;
    memcpy(gz + gn, trail ? trail : "", tl);
    gn += tl;
    x->fd = memfd_create("fuzz-gzx", MFD_CLOEXEC);
    CHECK(x->fd >= 0 && write(x->fd, gz, gn) == (ssize_t)gn);
    free(gz);
    struct gzx_opts o = {.span = 24576, .points_max = 64};
    struct gzx *g = NULL;
    struct sp_err err = {0};
    CHECK(gzx_build(x->fd, &o, &g, &err) == 0);
    CHECK(gzx_size(g) == n);
    int ifd = memfd_create("fuzz-gzx-idx", MFD_CLOEXEC);
    CHECK(gzx_save_fd(g, ifd, &err) == 0);
    gzx_close(g);
    x->idxn = slurp(ifd, &x->idx);
    close(ifd);
    memcpy(x->id, x->idx + 16, 24);
}

static void setup(void)
{
    static const size_t cuts0[] = {100000, 150000};
    static const size_t cuts2[] = {0, 3000, 3000, 9000};
    make(0, 200000, cuts0, 2, NULL);
    make(1, 4000, NULL, 0, NULL);
    make(2, 20000, cuts2, 4, "trailing garbage");
    make(3, 0, NULL, 0, NULL);
}

static uint32_t crc_of(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(0, p, (uInt)n);
}

static void dump_seeds(const char *dir)
{
    static const uint8_t flags[] = {0x00, 0x04, 0x14, 0x1c};
    for (int v = 0; v < 4; v++)
        for (size_t f = 0; f < sizeof flags; f++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/gzx-v%d-f%02x", dir, v, flags[f]);
            FILE *fp = fopen(path, "wb");
            CHECK(fp != NULL);
            uint8_t b = (uint8_t)(flags[f] | v);
            CHECK(fwrite(&b, 1, 1, fp) == 1);
            CHECK(fwrite(V[v].idx, 1, V[v].idxn, fp) == V[v].idxn);
            CHECK(fclose(fp) == 0);
        }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setup();
    const char *dir = getenv("SPIGZ_FUZZ_DUMP_SEEDS");
    if (dir != NULL) {
        dump_seeds(dir);
        exit(0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    const struct variant *v = &V[flags & 3];
    size_t n = size - 1;
    uint8_t *t = malloc(n + 1);
    CHECK(t != NULL);
    memcpy(t, data + 1, n);
    if (n >= 100) {
        if (flags & F_ID)
            memcpy(t + 16, v->id, 24);
        if (flags & F_LEN) { /* wbytes from the points' zlen, np kept */
            uint64_t np = 0, w = 0;
            for (int i = 0; i < 8; i++)
                np |= (uint64_t)t[64 + i] << (8 * i);
            for (uint64_t k = 0; k < np && 96 + k * 32 + 24 <= n; k++)
                w += (uint64_t)t[96 + k * 32 + 20] | (uint64_t)t[96 + k * 32 + 21] << 8 |
                     (uint64_t)t[96 + k * 32 + 22] << 16 | (uint64_t)t[96 + k * 32 + 23] << 24;
            put64(t + 72, w);
        }
        if (flags & F_CRC)
            put32(t + n - 4, crc_of(t, n - 4));
    }
    int ifd = memfd_create("fuzz-gzx-in", MFD_CLOEXEC);
    CHECK(ifd >= 0 && (n == 0 || write(ifd, t, n) == (ssize_t)n));
    struct gzx_opts o = {.cache_bytes = (flags & 0x20) ? 1 : 0};
    struct gzx *g = NULL;
    char why[200];
    struct sp_err err = {0};
    int rc = gzx_load_fd(v->fd, &o, ifd, &g, why, sizeof why, &err);
    if (rc < 0)
        fprintf(stderr, "gzx_load_fd: -1 (%s)\n", err.msg);
    CHECK(rc == 0 || rc == 1);
    CHECK((rc == 1) == (g != NULL));
    close(ifd);
    if (rc == 1) {
        /* saves back to the bytes loaded */
        int sfd = memfd_create("fuzz-gzx-save", MFD_CLOEXEC);
        CHECK(gzx_save_fd(g, sfd, &err) == 0);
        uint8_t *s;
        size_t sn = slurp(sfd, &s);
        close(sfd);
        CHECK(sn == n && memcmp(s, t, n) == 0);
        free(s);
        bool own = n == v->idxn && memcmp(t, v->idx, n) == 0;
        uint64_t total = gzx_size(g);
        uint64_t offs[] = {0, total / 3, total / 2 + 1, total > 0 ? total - 1 : 0,
                           (uint64_t)1 << 20, total + 1};
        uint8_t buf[5000];
        for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
            memset(&err, 0, sizeof err);
            int64_t got = gzx_pread(g, buf, sizeof buf, offs[i], &err);
            uint64_t want = offs[i] >= total ? 0
                          : total - offs[i] < sizeof buf ? total - offs[i] : sizeof buf;
            if (got < 0) {
                if (err.kind != SP_ERR_DATA)
                    fprintf(stderr, "gzx_pread: kind %d: %s\n", (int)err.kind, err.msg);
                CHECK(err.kind == SP_ERR_DATA && !own);
            } else {
                CHECK((uint64_t)got == want);
                if (own)
                    CHECK(want == 0 || memcmp(buf, v->content + offs[i], (size_t)want) == 0);
            }
        }
        gzx_close(g);
    }
    free(t);
    return 0;
}
