/* gzip.c — see gzip.h. */
#include "gzip.h"
#include "le.h"

#include <stdio.h>
#include <string.h>
#include <zlib.h>

size_t gz_write_header(uint8_t *buf, const char *name, uint32_t mtime, int level)
{
    buf[0] = 0x1f;
    buf[1] = 0x8b;
    buf[2] = 8;                      /* CM = deflate */
    buf[3] = name != NULL ? 0x08 : 0; /* FNAME */
    le_put32(buf + 4, mtime);
    buf[8] = level >= 9 ? 2 : level == 1 ? 4 : 0; /* XFL: slowest, fastest */
    buf[9] = 3;                      /* OS = Unix */
    size_t n = 10;
    if (name != NULL) {
        size_t len = strlen(name);
        memcpy(buf + n, name, len + 1);
        n += len + 1;
    }
    return n;
}

void gz_end(uint8_t buf[GZ_END_LEN], uint32_t crc, uint64_t length)
{
    buf[0] = 0x03; /* BFINAL = 1, BTYPE = fixed, then end-of-block (7 zero bits) */
    buf[1] = 0x00;
    le_put32(buf + 2, crc);
    le_put32(buf + 6, (uint32_t)length);
}

/* ---- reading ---- */

struct gz_rd {
    gz_getc_fn get;
    void *ctx;
    uint32_t crc; /* of the header bytes so far, for FHCRC */
    uint64_t n;
    int status;   /* first failure */
};

static int gz_byte(struct gz_rd *r)
{
    if (r->status != GZ_OK)
        return -1;
    int c = r->get(r->ctx);
    if (c < 0) {
        r->status = c == -2 ? GZ_READ_ERROR : GZ_TRUNCATED;
        return -1;
    }
    uint8_t b = (uint8_t)c;
    r->crc = (uint32_t)crc32(r->crc, &b, 1);
    r->n++;
    return c;
}

/* A NUL-terminated field; kept (truncated) in out when out is non-NULL. */
static void gz_string(struct gz_rd *r, char *out, size_t cap)
{
    size_t k = 0;
    int c;
    while ((c = gz_byte(r)) > 0)
        if (out != NULL && k + 1 < cap)
            out[k++] = (char)c;
    if (out != NULL)
        out[k] = '\0';
}

int gz_read_header(gz_getc_fn get, void *ctx, struct gz_info *h)
{
    struct gz_rd r = {get, ctx, 0, 0, GZ_OK};
    memset(h, 0, sizeof *h);
    int m0 = gz_byte(&r), m1 = gz_byte(&r);
    if (r.status != GZ_OK)
        return r.status;
    if (m0 != 0x1f || (m1 != 0x8b && m1 != 0x9e)) /* 9e: gzip 0.5's magic */
        return GZ_NOT_GZIP;
    /* Each byte is judged as it comes, as gzip does: an unknown method is
     * refused even when the input ends right after it. */
    int method = gz_byte(&r);
    if (r.status != GZ_OK)
        return r.status;
    h->method = (uint8_t)method;
    if (method != 8)
        return GZ_BAD_METHOD;
    int flags = gz_byte(&r);
    if (r.status != GZ_OK)
        return r.status;
    h->flags = (uint8_t)flags;
    if (flags & GZ_FENCRYPTED)
        return GZ_ENCRYPTED;
    if (flags & GZ_FRESERVED)
        return GZ_BAD_FLAGS;
    for (int i = 0; i < 4; i++)
        h->mtime |= (uint32_t)(gz_byte(&r) & 0xff) << (8 * i);
    h->xfl = (uint8_t)gz_byte(&r);
    h->os = (uint8_t)gz_byte(&r);
    if (flags & GZ_FEXTRA) {
        unsigned xlen = (unsigned)(gz_byte(&r) & 0xff);
        xlen |= (unsigned)(gz_byte(&r) & 0xff) << 8;
        h->extra_len = xlen;
        for (unsigned i = 0; i < xlen && r.status == GZ_OK; i++)
            gz_byte(&r);
    }
    if (flags & GZ_FNAME)
        gz_string(&r, h->name, sizeof h->name);
    if (flags & GZ_FCOMMENT)
        gz_string(&r, NULL, 0);
    if (flags & GZ_FHCRC) {
        h->hcrc_computed = r.crc & 0xffff;
        h->hcrc_stored = (unsigned)(gz_byte(&r) & 0xff);
        h->hcrc_stored |= (unsigned)(gz_byte(&r) & 0xff) << 8;
        if (r.status == GZ_OK && h->hcrc_stored != h->hcrc_computed)
            return GZ_BAD_HCRC;
    }
    h->len = r.n;
    return r.status;
}

const char *gz_status_msg(int status, const struct gz_info *h, char *buf, size_t n)
{
    switch (status) {
    case GZ_TRUNCATED: return "unexpected end of file";
    case GZ_NOT_GZIP: return "not in gzip format";
    case GZ_BAD_METHOD:
        snprintf(buf, n, "unknown method %u -- not supported", h->method);
        return buf;
    case GZ_ENCRYPTED: return "is encrypted -- not supported";
    case GZ_BAD_FLAGS:
        snprintf(buf, n, "has flags 0x%x -- not supported", h->flags);
        return buf;
    case GZ_BAD_HCRC:
        snprintf(buf, n, "header checksum 0x%04x != computed checksum 0x%04x",
                 h->hcrc_stored, h->hcrc_computed);
        return buf;
    case GZ_READ_ERROR: return "read error";
    default: return "invalid gzip header";
    }
}
