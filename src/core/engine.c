/* engine.c — see engine.h.  Three backends behind one struct: ISA-L's
 * stateless deflate (levels 1..3), libdeflate (0, 4..12) and zlib (every
 * level but 1..3 in a build without libdeflate). */
#include "config.h"
#include "engine.h"
#include "isal_home.h"
#include "splice.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
#ifdef HAVE_ISAL
#include <isa-l.h>
#endif

enum eng_kind { ENG_ISAL, ENG_LIBDEFLATE, ENG_ZLIB };

struct eng {
    enum eng_kind kind;
    int sub; /* the backend's own level */
#ifdef HAVE_ISAL
    uint8_t *isal_buf; /* ISA-L's hash tables for its level */
    uint32_t isal_buf_size;
    struct ihome home; /* where its level-2 stream goes (isal_home.h) */
#endif
#ifdef HAVE_LIBDEFLATE
    struct libdeflate_compressor *ld;
#endif
    z_stream zs;
    int zs_live;
};

#define ENG_STR2(x) #x
#define ENG_STR(x) ENG_STR2(x)
#ifdef HAVE_ISAL
#define ENG_ISAL_NAME "ISA-L " ENG_STR(ISAL_MAJOR_VERSION) "." ENG_STR(ISAL_MINOR_VERSION) \
                      "." ENG_STR(ISAL_PATCH_VERSION)
#endif
#ifdef HAVE_LIBDEFLATE
#define ENG_DATA_NAME "libdeflate " LIBDEFLATE_VERSION_STRING
#define ENG_MAX 12
#else
#define ENG_DATA_NAME "zlib " ZLIB_VERSION
#define ENG_MAX 9
#endif

const char *eng_name(void)
{
#ifdef HAVE_ISAL
    return ENG_ISAL_NAME ", " ENG_DATA_NAME;
#else
    return ENG_DATA_NAME " (built without ISA-L)";
#endif
}

int eng_max_level(void) { return ENG_MAX; }

/* ISA-L's levels by spigz level: its own level and the size of its token
 * buffer in Ki tokens.  A Huffman block ends when the token buffer fills:
 * on data.img one covers ~270 KiB at ISA-L's default of 64 Ki tokens, ~75
 * KiB at 16 Ki and ~40 KiB at 8 Ki.  Smaller blocks have codes that follow
 * the data's changes: 1.3-2% smaller output for 10-25% more time, which
 * puts levels 2 and 3 below igzip -3's size (DESIGN section 4). */
#ifdef HAVE_ISAL
static const struct { int sub; uint32_t tokens; } eng_isal_map[4] = {
    {0, 0}, {2, 64}, {2, 8}, {3, 16},
};
#endif

/* The map of engine.h: which backend and which of its levels; -1 for a
 * level this build lacks. */
static int eng_map(int level, enum eng_kind *kind, int *sub)
{
    if (level < 0 || level > ENG_MAX)
        return -1;
    if (level >= 1 && level <= 3) {
#ifdef HAVE_ISAL
        *kind = ENG_ISAL;
        *sub = eng_isal_map[level].sub;
        return 0;
#else
        return -1;
#endif
    }
#ifdef HAVE_LIBDEFLATE
    *kind = ENG_LIBDEFLATE;
#else
    *kind = ENG_ZLIB;
#endif
    *sub = level;
    return 0;
}

const char *eng_level_desc(int level)
{
    static const char *const desc[] = {
        ENG_DATA_NAME " level 0 (stored)",
#ifdef HAVE_ISAL
        ENG_ISAL_NAME " level 2", ENG_ISAL_NAME " level 2, 8 Ki-token blocks",
        ENG_ISAL_NAME " level 3, 16 Ki-token blocks",
#else
        NULL, NULL, NULL,
#endif
        ENG_DATA_NAME " level 4", ENG_DATA_NAME " level 5", ENG_DATA_NAME " level 6",
        ENG_DATA_NAME " level 7", ENG_DATA_NAME " level 8", ENG_DATA_NAME " level 9",
        ENG_DATA_NAME " level 10", ENG_DATA_NAME " level 11", ENG_DATA_NAME " level 12",
    };
    enum eng_kind kind;
    int sub;
    return eng_map(level, &kind, &sub) == 0 ? desc[level] : NULL;
}

/* ---- ISA-L: levels 1 to 3 ---- */
#ifdef HAVE_ISAL

/* The level buffer is ISA-L's hash tables (the _REQ part) and then its
 * token buffer, 4 bytes a token (igzip_lib.h's ISAL_DEF_LVLn_* sizes). */
static int isal_new(struct eng *e, int level, struct sp_err *err)
{
    uint32_t tokens = eng_isal_map[level].tokens * IGZIP_K;
    e->isal_buf_size = e->sub == 2 ? ISAL_DEF_LVL2_REQ + ISAL_DEF_LVL2_TOKEN_SIZE * tokens
                                   : ISAL_DEF_LVL3_REQ + ISAL_DEF_LVL3_TOKEN_SIZE * tokens;
    e->isal_buf = malloc(e->isal_buf_size);
    if (e->isal_buf == NULL)
        return -1;
    if (e->sub == 2 && ihome_init(&e->home, sizeof(struct isal_zstream)) != 0) {
        sp_err_set(err, SP_ERR_NOMEM, errno,
                   "level %d: cannot reserve 2 GiB of address space for ISA-L's stream "
                   "(is the address space limited, ulimit -v?)", level);
        return -2;
    }
    return 0;
}

/* Stored blocks bound what the stateless call may need when the data does
 * not compress: 5 bytes per 64 KiB block, and room for the Huffman headers
 * it tries first and the final empty stored block of the full flush. */
static size_t isal_bound(size_t n)
{
    return n + 5 * (n / 65535 + 2) + ISAL_DEF_MAX_HDR_SIZE + 64;
}

/* One call, no history: the piece is byte-aligned (the full flush ends with
 * an empty stored block) and no block is final (end_of_stream is 0).
 * Returns 0, -1 (no output: eng_run says so) or -2 with *err set. */
static int isal_compress(struct eng *e, const uint8_t *in, size_t n, uint8_t *out,
                         size_t cap, size_t *outlen, int whole, struct sp_err *err)
{
    if (n > UINT32_MAX)
        return -1;
    /* Every field starts at zero, the documented defaults: in ISA-L 2.30
     * isal_deflate_stateless_init() leaves some alone, hist_bits among them,
     * where stack garbage from 1 to 15 shortened the window (check_engine,
     * pieces_have_no_history).  Level 2's stream lies where its third byte's
     * hash is right (isal_home.h; check_engine, third_byte_hashed_from_data):
     * fresh zero pages.  Where only the size matters, a stream that stays
     * put, filing that byte under slot 0 (isal_home.h, ihome_fixed).  Level
     * 3's body has no such fault: a cleared local. */
    struct isal_zstream local, *s = &local;
    int steer = e->sub == 2 && whole;
    if (e->sub == 2) {
        if ((s = steer ? ihome_get(&e->home, in, n) : ihome_fixed(&e->home)) == NULL) {
            sp_err_set(err, SP_ERR_NOMEM, errno, "cannot map ISA-L's stream");
            return -2;
        }
    } else {
        memset(&local, 0, sizeof local);
    }
    isal_deflate_stateless_init(s);
    s->level = (uint32_t)e->sub;
    s->level_buf = e->isal_buf;
    s->level_buf_size = e->isal_buf_size;
    s->flush = FULL_FLUSH;
    s->end_of_stream = 0;
    s->gzip_flag = IGZIP_DEFLATE;
    s->next_in = (uint8_t *)in;
    s->avail_in = (uint32_t)n;
    s->next_out = out;
    s->avail_out = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    int rc = isal_deflate_stateless(s) == COMP_OK && s->avail_in == 0 ? 0 : -1;
    *outlen = s->total_out;
    uint32_t mask = s->internal_state.hash_mask;
    if (steer && ihome_put(&e->home) != 0) {
        sp_err_set(err, SP_ERR_NOMEM, errno, "cannot unmap ISA-L's stream");
        return -2;
    }
    if (rc == 0 && e->sub == 2 && mask > IHOME_MASK) {
        /* A wider hash than isal_home steers: the piece might depend on the
         * stream's address.  Never give such bytes under a level's name. */
        sp_err_set(err, SP_ERR_INTERNAL, 0,
                   "ISA-L's level 2 uses a hash mask of %#x, wider than spigz can keep "
                   "deterministic (%#x): rebuild spigz against this ISA-L", mask, IHOME_MASK);
        return -2;
    }
    return rc;
}

#endif

/* ---- zlib: the fallback data engine ---- */

static int zl_new(struct eng *e)
{
    /* Raw deflate, 32 KiB window, default memory level and strategy. */
    if (deflateInit2(&e->zs, e->sub, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    e->zs_live = 1;
    return 0;
}

static int zl_compress(struct eng *e, const uint8_t *in, size_t n, uint8_t *out,
                       size_t cap, size_t *outlen)
{
    z_stream *zs = &e->zs;
    if (deflateReset(zs) != Z_OK)
        return -1;
    zs->next_in = (Bytef *)in;
    zs->next_out = out;
    size_t left = n;
    int rc = Z_OK;
    /* avail_in is 32-bit: feed huge chunks in pieces. */
    do {
        uInt step = left > (1u << 30) ? (1u << 30) : (uInt)left;
        zs->avail_in = step;
        left -= step;
        size_t room = cap - (size_t)(zs->next_out - out);
        zs->avail_out = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
        rc = deflate(zs, left == 0 ? Z_SYNC_FLUSH : Z_NO_FLUSH);
    } while (rc == Z_OK && left > 0);
    if (rc != Z_OK || zs->avail_in != 0 || zs->avail_out == 0)
        return -1;
    *outlen = (size_t)(zs->next_out - out);
    return 0;
}

/* ---- the interface ---- */

struct eng *eng_new(int level, struct sp_err *err)
{
    struct eng *e = calloc(1, sizeof *e);
    if (e == NULL)
        goto nomem;
    if (eng_map(level, &e->kind, &e->sub) != 0) {
        free(e);
        sp_err_set(err, SP_ERR_INTERNAL, 0, "no engine for level %d in this build", level);
        return NULL;
    }
    int rc = -1;
    switch (e->kind) {
#ifdef HAVE_ISAL
    case ENG_ISAL: rc = isal_new(e, level, err); break;
#endif
#ifdef HAVE_LIBDEFLATE
    case ENG_LIBDEFLATE:
        rc = (e->ld = libdeflate_alloc_compressor(e->sub)) != NULL ? 0 : -1;
        break;
#endif
    case ENG_ZLIB: rc = zl_new(e); break;
    default: break;
    }
    if (rc == 0)
        return e;
    eng_free(e);
    if (rc == -2)
        return NULL; /* *err says why */
nomem:
    sp_err_set(err, SP_ERR_NOMEM, 0, "cannot allocate a level %d compressor", level);
    return NULL;
}

size_t eng_bound(struct eng *e, size_t n)
{
    switch (e->kind) {
#ifdef HAVE_ISAL
    case ENG_ISAL: return isal_bound(n);
#endif
#ifdef HAVE_LIBDEFLATE
    case ENG_LIBDEFLATE: return libdeflate_deflate_compress_bound(e->ld, n) + SPLICE_EXTRA;
#endif
    default:
        /* deflateBound covers Z_FINISH; a sync flush adds an empty stored
         * block (at most 5 bytes) and may close one more block header. */
        return deflateBound(&e->zs, n) + 16;
    }
}

/* whole: a spliceable piece; otherwise only its size matters (eng_size). */
static int eng_run(struct eng *e, const uint8_t *in, size_t n, uint8_t *out, size_t cap,
                   size_t *outlen, int whole, struct sp_err *err)
{
    int rc = -1;
    switch (e->kind) {
#ifdef HAVE_ISAL
    case ENG_ISAL: rc = isal_compress(e, in, n, out, cap, outlen, whole, err); break;
#endif
#ifdef HAVE_LIBDEFLATE
    case ENG_LIBDEFLATE: {
        size_t len = libdeflate_deflate_compress(e->ld, in, n, out,
                                                 whole ? cap - SPLICE_EXTRA : cap);
        if (len != 0)
            rc = whole ? splice_fix(out, len, cap, outlen) : (*outlen = len, 0);
        break;
    }
#endif
    default: rc = zl_compress(e, in, n, out, cap, outlen); break;
    }
    if (rc == -2)
        return -1; /* *err says why */
    if (rc != 0)
        sp_err_set(err, SP_ERR_INTERNAL, 0, "%s produced no %soutput for a %zu-byte chunk",
                   e->kind == ENG_ISAL ? "ISA-L" : e->kind == ENG_ZLIB ? "zlib" : "libdeflate",
                   whole ? "spliceable " : "", n);
    return rc;
}

int eng_compress(struct eng *e, const uint8_t *in, size_t n,
                 uint8_t *out, size_t cap, size_t *outlen, struct sp_err *err)
{
    return eng_run(e, in, n, out, cap, outlen, 1, err);
}

int eng_size(struct eng *e, const uint8_t *in, size_t n,
             uint8_t *out, size_t cap, size_t *outlen, struct sp_err *err)
{
    return eng_run(e, in, n, out, cap, outlen, 0, err);
}

/* The fastest CRC-32 linked: ISA-L's folds 64 bytes a step with the widest
 * carry-less multiply the CPU has (VPCLMULQDQ on AVX-512), about 4x
 * libdeflate 1.14's on this project's bench machine (53 against 14 GB/s).
 * Every implementation gives the same value: the choice is speed only. */
uint32_t eng_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
#if defined(HAVE_ISAL)
    return crc32_gzip_refl(crc, p, (uint64_t)n);
#elif defined(HAVE_LIBDEFLATE)
    return libdeflate_crc32(crc, p, n);
#else
    while (n > 0) {
        uInt step = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, p, step);
        p += step;
        n -= step;
    }
    return crc;
#endif
}

void eng_free(struct eng *e)
{
    if (e == NULL)
        return;
#ifdef HAVE_ISAL
    free(e->isal_buf);
    ihome_fini(&e->home);
#endif
#ifdef HAVE_LIBDEFLATE
    if (e->ld != NULL)
        libdeflate_free_compressor(e->ld);
#endif
    if (e->zs_live)
        deflateEnd(&e->zs);
    free(e);
}

/* ---- decoding a piece: libdeflate, else zlib ---- */

#ifdef HAVE_LIBDEFLATE

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
