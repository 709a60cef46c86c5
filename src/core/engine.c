/* engine.c — see engine.h. */
#include "config.h"
#include "engine.h"
#include "splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

struct eng {
    int level;
#ifdef HAVE_LIBDEFLATE
    struct libdeflate_compressor *ld;
#else
    z_stream zs;
#endif
};

#ifdef HAVE_LIBDEFLATE

const char *eng_name(void) { return "libdeflate " LIBDEFLATE_VERSION_STRING; }
int eng_max_level(void) { return 12; }

struct eng *eng_new(int level, struct sp_err *err)
{
    struct eng *e = calloc(1, sizeof *e);
    if (e != NULL && (e->ld = libdeflate_alloc_compressor(level)) != NULL) {
        e->level = level;
        return e;
    }
    free(e);
    sp_err_set(err, SP_ERR_NOMEM, 0, "cannot allocate a level %d compressor", level);
    return NULL;
}

size_t eng_bound(struct eng *e, size_t n)
{
    return libdeflate_deflate_compress_bound(e->ld, n) + SPLICE_EXTRA;
}

int eng_compress(struct eng *e, const uint8_t *in, size_t n,
                 uint8_t *out, size_t cap, size_t *outlen, struct sp_err *err)
{
    size_t len = libdeflate_deflate_compress(e->ld, in, n, out, cap - SPLICE_EXTRA);
    if (len == 0 || splice_fix(out, len, cap, outlen) != 0) {
        sp_err_set(err, SP_ERR_INTERNAL, 0,
                   "libdeflate produced no spliceable output for a %zu-byte chunk", n);
        return -1;
    }
    return 0;
}

int eng_size(struct eng *e, const uint8_t *in, size_t n,
             uint8_t *out, size_t cap, size_t *outlen, struct sp_err *err)
{
    *outlen = libdeflate_deflate_compress(e->ld, in, n, out, cap);
    if (*outlen == 0) {
        sp_err_set(err, SP_ERR_INTERNAL, 0, "libdeflate produced no output for %zu bytes", n);
        return -1;
    }
    return 0;
}

uint32_t eng_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    return libdeflate_crc32(crc, p, n);
}

void eng_free(struct eng *e)
{
    if (e != NULL)
        libdeflate_free_compressor(e->ld);
    free(e);
}

struct eng_dec {
    struct libdeflate_decompressor *ld;
};

struct eng_dec *eng_dec_new(struct sp_err *err)
{
    struct eng_dec *d = calloc(1, sizeof *d);
    if (d != NULL && (d->ld = libdeflate_alloc_decompressor()) != NULL)
        return d;
    free(d);
    sp_err_set(err, SP_ERR_NOMEM, 0, "cannot allocate a decompressor");
    return NULL;
}

int eng_dec_exact(struct eng_dec *d, const uint8_t *in, size_t n, uint8_t *out, size_t want)
{
    size_t in_used = 0, out_len = 0;
    enum libdeflate_result r = libdeflate_deflate_decompress_ex(d->ld, in, n, out, want,
                                                                &in_used, &out_len);
    return r == LIBDEFLATE_SUCCESS && in_used == n && out_len == want ? 0 : -1;
}

void eng_dec_free(struct eng_dec *d)
{
    if (d != NULL)
        libdeflate_free_decompressor(d->ld);
    free(d);
}

#else /* zlib */

const char *eng_name(void) { return "zlib " ZLIB_VERSION; }
int eng_max_level(void) { return 9; }

struct eng *eng_new(int level, struct sp_err *err)
{
    struct eng *e = calloc(1, sizeof *e);
    /* Raw deflate, 32 KiB window, default memory level and strategy. */
    if (e != NULL && deflateInit2(&e->zs, level, Z_DEFLATED, -15, 8,
                                  Z_DEFAULT_STRATEGY) == Z_OK) {
        e->level = level;
        return e;
    }
    free(e);
    sp_err_set(err, SP_ERR_NOMEM, 0, "cannot allocate a level %d compressor", level);
    return NULL;
}

size_t eng_bound(struct eng *e, size_t n)
{
    /* deflateBound covers Z_FINISH; a sync flush adds an empty stored block
     * (at most 5 bytes) and may close one more block header. */
    return deflateBound(&e->zs, n) + 16;
}

int eng_compress(struct eng *e, const uint8_t *in, size_t n,
                 uint8_t *out, size_t cap, size_t *outlen, struct sp_err *err)
{
    z_stream *zs = &e->zs;
    if (deflateReset(zs) != Z_OK)
        goto fail;
    zs->next_in = (Bytef *)in;
    zs->next_out = out;
    size_t left = n;
    int rc = Z_OK;
    /* avail_in is 32-bit: feed huge chunks in pieces. */
    do {
        uInt step = left > (1u << 30) ? (1u << 30) : (uInt)left;
        zs->avail_in = step;
        left -= step;
        zs->avail_out = (uInt)(cap - (size_t)(zs->next_out - out));
        rc = deflate(zs, left == 0 ? Z_SYNC_FLUSH : Z_NO_FLUSH);
    } while (rc == Z_OK && left > 0);
    if (rc != Z_OK || zs->avail_in != 0 || zs->avail_out == 0)
        goto fail;
    *outlen = (size_t)(zs->next_out - out);
    return 0;
fail:
    sp_err_set(err, SP_ERR_INTERNAL, 0, "zlib deflate failed on a %zu-byte chunk", n);
    return -1;
}

int eng_size(struct eng *e, const uint8_t *in, size_t n,
             uint8_t *out, size_t cap, size_t *outlen, struct sp_err *err)
{
    return eng_compress(e, in, n, out, cap, outlen, err); /* zlib needs no walk */
}

uint32_t eng_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    while (n > 0) {
        uInt step = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, p, step);
        p += step;
        n -= step;
    }
    return crc;
}

void eng_free(struct eng *e)
{
    if (e != NULL)
        deflateEnd(&e->zs);
    free(e);
}

struct eng_dec {
    z_stream zs;
};

struct eng_dec *eng_dec_new(struct sp_err *err)
{
    struct eng_dec *d = calloc(1, sizeof *d);
    if (d != NULL && inflateInit2(&d->zs, -15) == Z_OK)
        return d;
    free(d);
    sp_err_set(err, SP_ERR_NOMEM, 0, "cannot allocate a decompressor");
    return NULL;
}

int eng_dec_exact(struct eng_dec *d, const uint8_t *in, size_t n, uint8_t *out, size_t want)
{
    z_stream *zs = &d->zs;
    if (n > UINT32_MAX || want > UINT32_MAX || inflateReset(zs) != Z_OK)
        return -1;
    uint8_t spare;
    zs->next_in = (Bytef *)in;
    zs->avail_in = (uInt)n;
    zs->next_out = want > 0 ? out : &spare;
    zs->avail_out = want > 0 ? (uInt)want : 1;
    int rc = inflate(zs, Z_FINISH);
    return rc == Z_STREAM_END && zs->avail_in == 0 && zs->total_out == want ? 0 : -1;
}

void eng_dec_free(struct eng_dec *d)
{
    if (d != NULL)
        inflateEnd(&d->zs);
    free(d);
}

#endif
