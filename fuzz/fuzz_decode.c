/* fuzz_decode.c — libFuzzer harness for the two decoding paths.
 *
 * Each input is decoded
 *   1. sequentially (unz_run) from a pipe, or from a memfd when it does not
 *      fit in a pipe, into a discard sink;
 *   2. through dec_run() from a memfd (a seekable regular file): the index
 *      is loaded (idx_load) and, when accepted, the pieces are decoded in
 *      parallel; otherwise dec_run falls back to the sequential decoder;
 *   3. when the index was accepted, once more through dec_run with a byte
 *      range derived from the input (the range path of the indexed decoder).
 *
 * Beyond "no crash, no leak, no undefined behaviour" (the sanitizers), the
 * harness checks what must hold whatever the input:
 *   - a memfd never yields a read error and a discard sink never a write
 *     error: every failure is invalid input (SP_ERR_DATA, SP_ERR_FORMAT,
 *     SP_ERR_CHECK) or SP_ERR_NOMEM;
 *     SP_ERR_INTERNAL, SP_ERR_READ and the rest abort;
 *   - idx_load() on the memfd returns 0 or 1, never -1 (no read error), and
 *     when it returns 1 the pieces tile [0, total) and the deflate stream;
 *   - dec_run falling back (not indexed) gives the same verdict and the same
 *     output length as unz_run;
 *   - dec_run succeeding through the index implies the sequential decode
 *     succeeds too, with the same output length: a wrong index must never
 *     change the output;
 *   - the indexed range decode outputs exactly the clipped range length.
 *
 * With SPIGZ_FUZZ_DUMP_SEEDS=DIR in the environment, the harness writes a
 * few spigz files of different layouts (built with cmp_run) into DIR and
 * exits: fuzz/make-corpus.sh uses that for the seed corpus.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compress.h"
#include "dec.h"
#include "idx.h"
#include "osink.h"
#include "unz.h"

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "fuzz_decode: check failed at line %d: %s\n", __LINE__, \
                    #cond);                                                      \
            abort();                                                             \
        }                                                                        \
    } while (0)

static int memfd_with(const uint8_t *p, size_t n)
{
    int fd = memfd_create("fuzz-in", MFD_CLOEXEC);
    CHECK(fd >= 0);
    for (size_t i = 0; i < n;) {
        ssize_t w = write(fd, p + i, n - i);
        CHECK(w > 0);
        i += (size_t)w;
    }
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    return fd;
}

/* The input on a pipe when it fits in one (the write end closed), else on
 * a memfd. */
static int stream_with(const uint8_t *p, size_t n)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return memfd_with(p, n);
    if (n > 65536 && fcntl(fds[1], F_SETPIPE_SZ, (int)n) < (int)n) {
        close(fds[0]);
        close(fds[1]);
        return memfd_with(p, n);
    }
    for (size_t i = 0; i < n;) {
        ssize_t w = write(fds[1], p + i, n - i);
        CHECK(w > 0);
        i += (size_t)w;
    }
    close(fds[1]);
    return fds[0];
}

static void check_kind(const struct sp_err *e)
{
    if (e->kind != SP_ERR_DATA && e->kind != SP_ERR_FORMAT && e->kind != SP_ERR_CHECK &&
        e->kind != SP_ERR_NOMEM) {
        fprintf(stderr, "fuzz_decode: unexpected error kind %d: %s\n", (int)e->kind, e->msg);
        abort();
    }
}

static void check_index(const struct idx *x)
{
    CHECK(x->p != NULL);
    CHECK(x->p[0].uoff == 0 && x->p[0].coff == 0);
    for (uint64_t k = 0; k < x->n; k++) {
        CHECK(x->p[k + 1].uoff > x->p[k].uoff);
        CHECK(x->p[k + 1].coff > x->p[k].coff);
    }
    CHECK(x->p[x->n].uoff == x->total);
    CHECK(x->p[x->n].coff == x->data_len - x->header_len - 10);
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void dump_seeds(const char *dir);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);
    const char *dir = getenv("SPIGZ_FUZZ_DUMP_SEEDS");
    if (dir != NULL) {
        dump_seeds(dir);
        exit(0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sp_err err;
    struct osink o;

    /* 1. Sequential, from a stream. */
    memset(&err, 0, sizeof err);
    CHECK(osink_open(&o, -1, OSINK_SPARSE_AUTO, &err) == 0);
    int sfd = stream_with(data, size);
    struct unz_opts uo = {1, false};
    struct unz_stats us;
    int urc = unz_run(sfd, &o, &uo, &us, &err);
    close(sfd);
    if (urc != 0)
        check_kind(&err);
    else
        CHECK(o.pos == us.out_bytes);

    /* The index alone. */
    int fd = memfd_with(data, size);
    struct idx x;
    char why[160];
    memset(&err, 0, sizeof err);
    int lr = idx_load(fd, 0, size, &x, why, sizeof why, &err);
    CHECK(lr == 0 || lr == 1);
    if (lr == 1) {
        check_index(&x);
        idx_free(&x);
    }

    /* 2. dec_run: indexed when the index validates, else sequential. */
    memset(&err, 0, sizeof err);
    CHECK(osink_open(&o, -1, OSINK_SPARSE_AUTO, &err) == 0);
    struct dec_opts dopt = {.threads = 2, .use_index = true};
    struct dec_stats ds;
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    int drc = dec_run(fd, &o, &dopt, &ds, &err);
    free(ds.bad);
    free(ds.unread);
    dec_notes_free(ds.notes, ds.nnotes);
    if (drc != 0)
        check_kind(&err);
    /* Indexed only when the index loads; not indexed although it loads only
     * with a warning saying why (a piece too large, or a piece that does not
     * match its record: then the sequential path decides, checked below). */
    CHECK(ds.indexed ? lr == 1 : lr != 1 || ds.index_warning[0] != '\0');
    if (!ds.indexed) {
        CHECK(drc == urc);
        if (drc == 0)
            CHECK(ds.out_bytes == us.out_bytes);
    } else if (drc == 0) {
        /* A used index never changes the output. */
        CHECK(urc == 0);
        CHECK(ds.out_bytes == us.out_bytes);
    }

    /* 3. A range through the index. */
    if (ds.indexed && drc == 0 && ds.out_bytes > 0) {
        uint64_t h = fnv(data, size), total = ds.out_bytes;
        uint64_t off = h % (total + 1), len = (h >> 32) % (total + 2);
        memset(&err, 0, sizeof err);
        CHECK(osink_open(&o, -1, OSINK_SPARSE_AUTO, &err) == 0);
        dopt.range = true;
        dopt.range_off = off;
        dopt.range_len = len;
        CHECK(lseek(fd, 0, SEEK_SET) == 0);
        int rrc = dec_run(fd, &o, &dopt, &ds, &err);
        free(ds.bad);
        free(ds.unread);
        dec_notes_free(ds.notes, ds.nnotes);
        if (rrc != 0)
            check_kind(&err);
        if (len > total - off) {
            /* past the image's end: refused before a byte is written */
            CHECK(rrc == -1 && err.kind == SP_ERR_FORMAT && ds.out_bytes == 0);
        } else {
            CHECK(ds.indexed);
            if (rrc == 0)
                CHECK(ds.out_bytes == len);
        }
    }
    close(fd);
    return 0;
}

/* ---- seeds ---- */

static void dump_one(const char *dir, const char *name, const uint8_t *p, size_t n,
                     size_t chunk, int level, bool index, const char *fname)
{
    int in = memfd_with(p, n);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(out >= 0);
    struct cmp_opts co;
    cmp_opts_default(&co);
    co.threads = 1;
    co.chunk = chunk;
    co.zmin = 4096;
    co.level = level;
    co.index = index;
    co.name = fname;
    struct cmp_stats st;
    struct sp_err err = {0};
    if (cmp_run(in, out, &co, &st, &err) != 0) {
        fprintf(stderr, "cmp_run: %s\n", err.msg);
        exit(1);
    }
    close(in);
    close(out);
}

static void dump_seeds(const char *dir)
{
    size_t cap = 96 << 10;
    uint8_t *p = calloc(1, cap);
    CHECK(p != NULL);
    uint32_t r = 12345;
    /* text, then a zero run, then more text, then a zero run at the end */
    for (size_t i = 0; i < cap; i++) {
        r = r * 1103515245u + 12345u;
        bool zero = (i >= 8192 && i < 40960) || i >= 81920;
        p[i] = zero ? 0 : (uint8_t)("spigz fuzz "[(r >> 16) % 11]);
    }
    dump_one(dir, "spigz-empty.gz", p, 0, 4096, 6, true, NULL);
    dump_one(dir, "spigz-one-byte.gz", (const uint8_t *)"x", 1, 4096, 6, true, "x");
    dump_one(dir, "spigz-mixed.gz", p, cap, 8192, 6, true, "mixed.img");
    dump_one(dir, "spigz-mixed-l1.gz", p, 20000, 4096, 1, true, NULL);
    dump_one(dir, "spigz-mixed-l0.gz", p, 9000, 4096, 0, true, NULL);
    dump_one(dir, "spigz-noindex.gz", p, cap, 8192, 6, false, NULL);
    dump_one(dir, "spigz-zeros.gz", p + 40960, 40960 - 8192, 4096, 9, true, NULL);
    free(p);
}
