/* splice_cost — what splice_fix() costs next to libdeflate compression.
 *
 * usage: splice_cost FILE [chunk_kib [repeats]]
 * build: cc -O2 -Isrc/core bench/splice_cost.c src/core/splice.c -ldeflate -o splice_cost
 *
 * Compresses FILE in independent chunks (default 1024 KiB) at levels 1, 6 and 9
 * on one thread, running splice_fix() on each chunk right after compressing it
 * (as spigz does, while the chunk is still in cache).  With repeats > 1 each
 * level is run that many times and the best compress and walk totals are kept,
 * which filters out noise from other work on the machine.  Times are the
 * thread's CPU time, so other processes competing for the cores inflate them
 * less than wall time would.  MB/s are of input (uncompressed) bytes, so the
 * two rates compare directly.
 */
#define _POSIX_C_SOURCE 200809L
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "splice.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    if (f == NULL)
        return NULL;
    for (;;) {
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 1 << 20);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

struct cost {
    double comp, walk;
    size_t out;
    unsigned failures;
};

/* One pass over the file at one level. */
static int run_level(const uint8_t *in, size_t len, size_t chunk, int level, uint8_t *out,
                     size_t outcap, struct cost *c)
{
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(level);
    if (z == NULL)
        return -1;
    memset(c, 0, sizeof *c);
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk, zlen, fixed;
        double t0 = now();
        zlen = libdeflate_deflate_compress(z, in + off, n, out, outcap - SPLICE_EXTRA);
        double t1 = now();
        if (zlen == 0 || splice_fix(out, zlen, outcap, &fixed) != 0)
            c->failures++;
        double t2 = now();
        c->comp += t1 - t0;
        c->walk += t2 - t1;
        c->out += zlen;
    }
    libdeflate_free_compressor(z);
    return 0;
}

int main(int argc, char **argv)
{
    static const int levels[] = {1, 6, 9};
    size_t len, chunk = 1024;
    int reps = 1;

    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s FILE [chunk_kib [repeats]]\n", argv[0]);
        return 2;
    }
    if (argc > 2)
        chunk = strtoul(argv[2], NULL, 10);
    if (argc > 3)
        reps = atoi(argv[3]);
    if (chunk == 0 || reps < 1) {
        fprintf(stderr, "%s: chunk_kib and repeats must be positive\n", argv[0]);
        return 2;
    }
    chunk *= 1024;
    uint8_t *in = read_file(argv[1], &len);
    if (in == NULL) {
        perror(argv[1]);
        return 1;
    }
    size_t outcap = libdeflate_deflate_compress_bound(NULL, chunk) + SPLICE_EXTRA;
    uint8_t *out = malloc(outcap);
    if (out == NULL) {
        perror("malloc");
        return 1;
    }
    printf("%s: %zu bytes, %zu KiB chunks, best of %d\n", argv[1], len, chunk / 1024, reps);
    printf("level  ratio  compress_s  walk_s   walk%%  compress_MB/s  walk_MB/s\n");
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++) {
        struct cost best = {0}, c;
        for (int r = 0; r < reps; r++) {
            if (run_level(in, len, chunk, levels[i], out, outcap, &c) != 0) {
                fprintf(stderr, "cannot allocate a level %d compressor\n", levels[i]);
                return 1;
            }
            if (r == 0 || c.comp < best.comp)
                best.comp = c.comp;
            if (r == 0 || c.walk < best.walk)
                best.walk = c.walk;
            best.out = c.out;
            best.failures += c.failures;
        }
        printf("%5d  %5.3f  %10.3f  %6.3f  %5.2f  %13.1f  %9.1f%s\n", levels[i],
               (double)best.out / (double)len, best.comp, best.walk,
               100.0 * best.walk / best.comp, (double)len / best.comp / 1e6,
               (double)len / best.walk / 1e6, best.failures ? "  SPLICE FAILURES" : "");
        if (best.failures)
            return 1;
    }
    free(out);
    free(in);
    return 0;
}
