/* legacy.c — see legacy.h. */
#include "config.h"
#include "legacy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBARCHIVE
#include <archive.h>
#include <archive_entry.h>
#endif

/* ---- output, buffered ---- */

struct lg_out {
    const struct lg_io *io;
    uint8_t buf[LG_OUT];
    size_t n;
    uint64_t total;
    bool failed;
};

static int lg_flush(struct lg_out *o)
{
    if (o->n > 0 && !o->failed && o->io->put(o->io->ctx, o->buf, o->n) != 0)
        o->failed = true;
    o->total += o->n;
    o->n = 0;
    return o->failed ? -1 : 0;
}

static int lg_byte(struct lg_out *o, uint8_t b)
{
    o->buf[o->n++] = b;
    return o->n == LG_OUT ? lg_flush(o) : 0;
}

/* ==== pack(1) ====
 *
 * After the magic: the original length (4 bytes, big-endian), the longest
 * code's length L (1..25), for each length 1..L the number of leaves of that
 * length (the count for L less 2), then the leaves' bytes, shortest codes
 * first, the last leaf of length L left out: it is the end of the data.
 * Codes are read most significant bit first.  At each length the codes of
 * internal nodes are the smallest values, then the leaves in order. */

#define PK_MAXLEN 25
#define PK_PEEK 12 /* bits looked up at once */

struct pk {
    int maxlen;
    int leaves[PK_MAXLEN + 1];
    int parents[PK_MAXLEN + 1]; /* internal nodes at each length */
    int base[PK_MAXLEN + 1];    /* literal index of a length's code 0 */
    int nlit;
    uint8_t lit[256];
    uint8_t len_of[1 << PK_PEEK]; /* code length of a PK_PEEK-bit prefix; 0: longer */
    int peek;
};

static int pk_fail(struct sp_err *err, const char *msg)
{
    sp_err_set(err, SP_ERR_DATA, 0, "%s", msg);
    return -1;
}

/* A byte of the stream; -1 (err set) at its end or on a read error. */
static int pk_get(const struct lg_io *io, struct sp_err *err)
{
    int c = io->getc(io->ctx);
    if (c == -1)
        sp_err_set(err, SP_ERR_DATA, 0, "unexpected end of file");
    else if (c < 0)
        sp_err_set(err, SP_ERR_READ, EIO, "read error");
    return c < 0 ? -1 : c;
}

/* The header and the tree, checked as gzip checks them. */
static int pk_tree(const struct lg_io *io, struct pk *t, uint32_t *orig, struct sp_err *err)
{
    uint32_t n = 0;
    for (int i = 0; i < 4; i++) {
        int c = pk_get(io, err);
        if (c < 0)
            return -1;
        n = n << 8 | (uint32_t)c;
    }
    *orig = n;
    if ((t->maxlen = pk_get(io, err)) < 0)
        return -1;
    if (t->maxlen < 1 || t->maxlen > PK_MAXLEN)
        return pk_fail(err, "invalid compressed data -- Huffman code bit length out of range");
    /* room: the codes of this length less one (for the last length, the
     * stored count is 2 short of the leaves there) */
    int room = 1, total = 0;
    for (int len = 1; len <= t->maxlen; len++) {
        int c = pk_get(io, err);
        if (c < 0)
            return -1;
        if (c > room - (len == t->maxlen))
            return pk_fail(err, "too many leaves in Huffman tree");
        t->leaves[len] = c;
        room = (room - c + 1) * 2 - 1;
        total += c;
    }
    if (total >= 256)
        return pk_fail(err, "too many leaves in Huffman tree");
    t->leaves[t->maxlen]++; /* the leaves sent: all but the end code */
    t->nlit = 0;
    for (int len = 1; len <= t->maxlen; len++) {
        t->base[len] = t->nlit;
        for (int k = 0; k < t->leaves[len]; k++) {
            int c = pk_get(io, err);
            if (c < 0)
                return -1;
            t->lit[t->nlit++] = (uint8_t)c;
        }
    }
    t->leaves[t->maxlen]++; /* and the end code */
    /* internal nodes at each length, from the longest codes up */
    int nodes = 0;
    for (int len = t->maxlen; len >= 1; len--) {
        nodes >>= 1;
        t->parents[len] = nodes;
        t->base[len] -= nodes;
        nodes += t->leaves[len];
    }
    if (nodes >> 1 != 1)
        return pk_fail(err, "too few leaves in Huffman tree");
    /* prefixes of the short codes: the leaves hold the largest values of
     * each length, shorter codes above longer ones */
    t->peek = t->maxlen < PK_PEEK ? t->maxlen : PK_PEEK;
    int pos = 1 << t->peek;
    for (int len = 1; len <= t->peek; len++)
        for (int k = t->leaves[len] << (t->peek - len); k > 0 && pos > 0; k--)
            t->len_of[--pos] = (uint8_t)len;
    while (pos > 0)
        t->len_of[--pos] = 0;
    return 0;
}

struct pk_bits {
    uint64_t buf;
    int valid;
};

static int pk_need(const struct lg_io *io, struct pk_bits *b, int n, struct sp_err *err)
{
    while (b->valid < n) {
        int c = pk_get(io, err);
        if (c < 0)
            return -1;
        b->buf = b->buf << 8 | (uint64_t)c;
        b->valid += 8;
    }
    return 0;
}

/* The next code: its length and value.  As gzip, PK_PEEK bits (or the
 * longest code's length) are taken first, whatever the code's own length. */
static int pk_code(const struct lg_io *io, const struct pk *t, struct pk_bits *b, int *len,
                   uint32_t *val, struct sp_err *err)
{
    if (pk_need(io, b, t->peek, err) != 0)
        return -1;
    uint32_t mask = (1u << t->peek) - 1;
    uint32_t v = (uint32_t)(b->buf >> (b->valid - t->peek)) & mask;
    int l = t->len_of[v];
    if (l > 0) {
        v >>= t->peek - l;
    } else {
        l = t->peek;
        while ((int)v < t->parents[l]) { /* an internal node: one bit more */
            l++;
            mask = mask << 1 | 1;
            if (pk_need(io, b, l, err) != 0)
                return -1;
            v = (uint32_t)(b->buf >> (b->valid - l)) & mask;
        }
    }
    *len = l;
    *val = v;
    return 0;
}

int lg_unpack(const struct lg_io *io, uint64_t *out_len, struct sp_err *err)
{
    struct pk *t = calloc(1, sizeof *t);
    struct lg_out *o = calloc(1, sizeof *o);
    int rc = -1;
    uint32_t orig;
    if (t == NULL || o == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        goto done;
    }
    o->io = io;
    if (pk_tree(io, t, &orig, err) != 0)
        goto done;
    struct pk_bits b = {0, 0};
    uint32_t eob = (uint32_t)t->leaves[t->maxlen] - 1;
    for (;;) {
        int len;
        uint32_t v;
        if (pk_code(io, t, &b, &len, &v, err) != 0)
            goto done;
        if (len == t->maxlen && v == eob)
            break;
        int i = (int)v + t->base[len];
        if (i < 0 || i >= t->nlit) { /* a code no leaf has (a tree not full) */
            pk_fail(err, "invalid compressed data--format violated");
            goto done;
        }
        if (lg_byte(o, t->lit[i]) != 0)
            goto done;
        b.valid -= len;
    }
    if (lg_flush(o) != 0)
        goto done;
    if ((uint32_t)o->total != orig) {
        pk_fail(err, "invalid compressed data--length error");
        goto done;
    }
    rc = 0;
done:
    if (o != NULL) {
        if (rc != 0)
            (void)lg_flush(o); /* what was decoded goes out, as gzip's */
        *out_len = o->total;
    }
    free(t);
    free(o);
    return rc;
}

/* ==== compress(1)'s LZW, through libarchive ==== */

#ifdef HAVE_LIBARCHIVE

bool lg_have_lzw(void) { return true; }

static la_ssize_t lg_ar_read(struct archive *a, void *ctx, const void **buf)
{
    const struct lg_io *io = ctx;
    const uint8_t *p;
    ssize_t n = io->read(io->ctx, &p, LG_OUT);
    if (n < 0) {
        archive_set_error(a, EIO, "read error");
        return -1;
    }
    *buf = p;
    return n;
}

static int lg_ar_fail(struct archive *a, struct sp_err *err)
{
    const char *why = archive_error_string(a);
    if (archive_errno(a) == EIO && why != NULL && strcmp(why, "read error") == 0)
        sp_err_set(err, SP_ERR_READ, EIO, "read error");
    else
        sp_err_set(err, SP_ERR_DATA, 0, "corrupt input (LZW): %s",
                   why != NULL ? why : "invalid data");
    return -1;
}

int lg_unlzw(const struct lg_io *io, uint64_t *out_len, struct sp_err *err)
{
    *out_len = 0;
    struct archive *a = archive_read_new();
    if (a == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    int rc = -1;
    struct archive_entry *e;
    uint8_t *buf = malloc(LG_OUT);
    if (buf == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
    } else if (archive_read_support_filter_compress(a) != ARCHIVE_OK ||
               archive_read_support_format_raw(a) != ARCHIVE_OK ||
               archive_read_open(a, (void *)io, NULL, lg_ar_read, NULL) != ARCHIVE_OK ||
               archive_read_next_header(a, &e) != ARCHIVE_OK) {
        lg_ar_fail(a, err);
    } else {
        for (;;) {
            la_ssize_t n = archive_read_data(a, buf, LG_OUT);
            if (n == 0) {
                rc = 0;
                break;
            }
            if (n < 0) {
                lg_ar_fail(a, err);
                break;
            }
            if (io->put(io->ctx, buf, (size_t)n) != 0)
                break;
            *out_len += (uint64_t)n;
        }
    }
    free(buf);
    archive_read_free(a);
    return rc;
}

#else

bool lg_have_lzw(void) { return false; }

int lg_unlzw(const struct lg_io *io, uint64_t *out_len, struct sp_err *err)
{
    (void)io;
    *out_len = 0;
    sp_err_set(err, SP_ERR_DATA, 0,
               "LZW (.Z) input: this spigz was built without libarchive, which decodes it");
    return -1;
}

#endif
