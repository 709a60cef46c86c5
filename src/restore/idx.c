/* idx.c — the index reader; see idx.h and doc/FORMAT.md. */
#include "idx.h"
#include "mf.h"
#include "text.h"
#include "crcz.h"
#include "io.h"
#include "le.h"
#include "leb.h"
#include "zrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* pread exactly n bytes at off; 0, or -1 with errno: EIO for a short file,
 * which the callers take as a cut index rather than a read error. */
static int idx_pread(int fd, uint64_t off, uint8_t *p, size_t n)
{
    int rc = io_pread_exact(fd, p, n, off);
    if (rc == IO_SHORT)
        errno = EIO;
    return rc == 0 ? 0 : -1;
}

struct idx_rd {
    int fd;
    uint64_t off, end;
    uint8_t buf[4096];
    size_t pos, len;
    bool failed;
};

static int idx_rd_getc(void *ctx)
{
    struct idx_rd *r = ctx;
    if (r->pos == r->len) {
        if (r->off >= r->end)
            return -1;
        size_t n = r->end - r->off < sizeof r->buf ? (size_t)(r->end - r->off) : sizeof r->buf;
        ssize_t got = io_pread_once(r->fd, r->buf, n, r->off);
        if (got <= 0) {
            r->failed = got < 0;
            return got < 0 ? -2 : -1;
        }
        r->off += (uint64_t)got;
        r->len = (size_t)got;
        r->pos = 0;
    }
    return r->buf[r->pos++];
}

struct idx_parse {
    struct idx *x;
    uint64_t k;           /* records decoded */
    uint64_t uoff, coff;
    uint32_t crc;         /* combination of the pieces' CRCs */
    const char *why;
    bool flag_bad;        /* bad ranges follow the records */
    uint64_t nbad_want;   /* their count, once read */
    bool flag_notes;      /* notes follow */
    uint64_t nnotes_want; /* their count, once read */
    size_t note_left;     /* bytes of the current note's text still to come */
    size_t note_at;       /* bytes of it already read */
    bool flag_mf;         /* the manifest follows */
    uint8_t *mf;          /* its bytes, once its length is read */
    size_t mf_len, mf_at;
};

/* After everything else, with flag 4: the manifest's length (1..MF_MAX,
 * and no more than the index holds), then its bytes, taken as they come
 * and decoded (mf_decode) once whole. */
static int idx_mf_record(struct idx_parse *s, const uint8_t *p, size_t n)
{
    if (n == 0)
        return 0;
    if (s->mf == NULL) {
        uint64_t a;
        int k = leb_get(p, n, &a);
        if (k <= 0)
            return k;
        if (a == 0 || a > MF_MAX || a > s->x->index_len) {
            s->why = "the manifest's length is impossible";
            return -1;
        }
        if ((s->mf = malloc((size_t)a)) == NULL) {
            s->why = "out of memory for the index";
            return -1;
        }
        s->mf_len = (size_t)a;
        return k;
    }
    if (s->mf_at == s->mf_len) {
        s->why = "bytes after the manifest";
        return -1;
    }
    size_t k = n < s->mf_len - s->mf_at ? n : s->mf_len - s->mf_at;
    memcpy(s->mf + s->mf_at, p, k);
    s->mf_at += k;
    if (s->mf_at == s->mf_len) {
        const char *why;
        if (mf_decode(s->mf, s->mf_len, s->x->total, &s->x->mf, &why) != 0) {
            s->why = why;
            return -1;
        }
        s->x->has_mf = true;
    }
    return (int)k;
}

/* Whether the notes (flag 2) are all read. */
static bool idx_notes_done(const struct idx_parse *s)
{
    return !s->flag_notes || (s->x->notes != NULL && s->x->nnotes == s->nnotes_want &&
                              s->note_left == 0);
}

/* After the pieces, with flag 1: the count of bad ranges, then each as
 * (gap from the previous one's end: >= 1 but for the first, length >= 1).
 * Bytes used, 0 if incomplete, -1 if invalid. */
static int idx_bad_record(struct idx_parse *s, const uint8_t *p, size_t n)
{
    struct idx *x = s->x;
    uint64_t a, b;
    int k = leb_get(p, n, &a);
    if (k <= 0)
        return k;
    if (x->bad == NULL) { /* the count: each range takes >= 2 payload bytes */
        if (a == 0 || a > x->total || a > x->index_len / 2 ||
            a >= IDX_TABLE_MAX / sizeof(struct sp_range)) {
            s->why = "the count of bad ranges is impossible";
            return -1;
        }
        if ((x->bad = calloc(a, sizeof *x->bad)) == NULL) {
            s->why = "out of memory for the index";
            return -1;
        }
        s->nbad_want = a;
        return k;
    }
    if (x->nbad == s->nbad_want) {
        s->why = "more bad ranges than the index counts";
        return -1;
    }
    int l = leb_get(p + k, n - (size_t)k, &b);
    if (l <= 0)
        return l;
    uint64_t prev = x->nbad == 0 ? 0 : x->bad[x->nbad - 1].off + x->bad[x->nbad - 1].len;
    if ((x->nbad > 0 && a == 0) || b == 0 || a > x->total - prev || b > x->total - prev - a) {
        s->why = "a bad range is out of order or out of the content";
        return -1;
    }
    x->bad[x->nbad++] = (struct sp_range){prev + a, b};
    return k + l;
}

/* After the pieces (and bad ranges), with flag 2: the count of notes,
 * then each as its length and its text.  The text is taken a member's
 * bytes at a time, so a note may span members while the carry between
 * them stays under a record's size.  Bytes used, 0 if incomplete, -1. */
static int idx_note_record(struct idx_parse *s, const uint8_t *p, size_t n)
{
    struct idx *x = s->x;
    if (s->note_left > 0) { /* inside a note's text */
        size_t k = n < s->note_left ? n : s->note_left;
        char *t = x->notes[x->nnotes - 1];
        for (size_t i = 0; i < k; i++)
            if (p[i] < 0x20 || p[i] == 0x7F) {
                s->why = "a note holds a control character";
                return -1;
            }
        memcpy(t + s->note_at, p, k);
        s->note_at += k;
        s->note_left -= k;
        /* whole, it must be UTF-8 without controls (C1 ones included) */
        if (s->note_left == 0 && !txt_printable((const uint8_t *)t, s->note_at)) {
            s->why = "a note is not printable UTF-8";
            return -1;
        }
        return (int)k;
    }
    uint64_t a;
    int k = leb_get(p, n, &a);
    if (k <= 0)
        return k;
    if (x->notes == NULL) { /* the count */
        if (a == 0 || a > IDX_NOTES_MAX) {
            s->why = "the count of notes is impossible";
            return -1;
        }
        if ((x->notes = calloc(a, sizeof *x->notes)) == NULL) {
            s->why = "out of memory for the index";
            return -1;
        }
        s->nnotes_want = a;
        return k;
    }
    if (x->nnotes == s->nnotes_want) {
        s->why = "more notes than the index counts";
        return -1;
    }
    if (a == 0 || a > IDX_NOTE_MAX) {
        s->why = "a note's length is out of range";
        return -1;
    }
    if ((x->notes[x->nnotes] = calloc(1, a + 1)) == NULL) {
        s->why = "out of memory for the index";
        return -1;
    }
    x->nnotes++;
    s->note_left = a;
    s->note_at = 0;
    return k;
}

/* One record from p[0..n): bytes used, 0 if incomplete, -1 if invalid. */
static int idx_record(struct idx_parse *s, const uint8_t *p, size_t n)
{
    if (s->k == s->x->n && s->flag_bad &&
        (s->x->bad == NULL || s->x->nbad < s->nbad_want))
        return idx_bad_record(s, p, n);
    if (s->k == s->x->n && s->flag_mf && (!s->flag_bad || s->x->bad != NULL) &&
        idx_notes_done(s))
        return idx_mf_record(s, p, n);
    if (s->k == s->x->n && s->flag_notes)
        return idx_note_record(s, p, n);
    uint64_t h, clen;
    int a = leb_get(p, n, &h);
    if (a <= 0)
        return a;
    int b = leb_get(p + a, n - (size_t)a, &clen);
    if (b <= 0)
        return b;
    bool data = h & 1;
    uint64_t ulen = h >> 1;
    size_t used = (size_t)a + (size_t)b + (data ? 4 : 0);
    if (used > n)
        return 0;
    if (ulen == 0 || ulen > IDX_PIECE_MAX || clen == 0 || clen > IDX_PIECE_MAX) {
        s->why = "a piece length is out of range";
        return -1;
    }
    /* Cheap checks that pin each length to its bytes as far as the index
     * alone can (FORMAT.md section 4, check 5): a zero piece's encoding is a
     * function of its length; a data piece cannot expand beyond deflate's
     * 1032:1 (a 258-byte match costs at least 2 bits). */
    if (!data) {
        struct zrun z;
        zrun_encode(ulen, &z);
        if (zrun_size(&z) != clen) {
            s->why = "a zero piece's length does not match its encoding";
            return -1;
        }
    } else if (ulen / 1032 >= clen) {
        s->why = "a data piece expands beyond deflate's limit";
        return -1;
    }
    if (s->k >= s->x->n) {
        s->why = "more records than the footer says";
        return -1;
    }
    /* Sums stay far from wrapping: 2^62 is more than any file holds. */
    if (s->uoff + ulen > ((uint64_t)1 << 62) || s->coff + clen > ((uint64_t)1 << 62)) {
        s->why = "the pieces add up to an impossible size";
        return -1;
    }
    /* Refused at the first piece past the end, not after all are read. */
    if (s->coff + clen > s->x->data_len - s->x->header_len - 10 || s->uoff + ulen > s->x->total) {
        s->why = "the pieces run past the data member";
        return -1;
    }
    uint32_t crc = data ? le_get32(p + a + b) : crcz_zeros(0, ulen);
    s->x->p[s->k] = (struct idx_piece){s->uoff, s->coff, crc, data};
    if (data && ulen > s->x->max_ulen)
        s->x->max_ulen = ulen;
    if (data && clen > s->x->max_clen)
        s->x->max_clen = clen;
    s->crc = crcz_combine(s->crc, crc, ulen);
    s->uoff += ulen;
    s->coff += clen;
    s->k++;
    return (int)used;
}

static int idx_walk_members(struct idx_parse *s, int fd, uint64_t from, uint64_t to,
                            uint32_t *payload_crc, uint8_t *work, struct sp_err *err);

/* Read and decode the index members in [from, to).  0, -1 with s->why, or
 * -2 for a read error (*err set). */
static int idx_members(struct idx_parse *s, int fd, uint64_t from, uint64_t to,
                       uint32_t *payload_crc, struct sp_err *err)
{
    uint8_t *work = malloc(IDX_REC_MAX + IDX_MEMBER_MAX);
    if (work == NULL) {
        s->why = "out of memory for the index";
        return -1;
    }
    int rc = idx_walk_members(s, fd, from, to, payload_crc, work, err);
    free(work);
    return rc;
}

static int idx_walk_members(struct idx_parse *s, int fd, uint64_t from, uint64_t to,
                            uint32_t *payload_crc, uint8_t *work, struct sp_err *err)
{
    size_t carry = 0;
    *payload_crc = 0;
    while (from < to) {
        uint8_t h[IDX_MEMBER_HEAD];
        if (to - from < IDX_MEMBER_HEAD + sizeof idx_end) {
            s->why = "an index member is cut short";
            return -1;
        }
        if (idx_pread(fd, from, h, sizeof h) != 0)
            goto short_read;
        size_t m = (size_t)le_get16(h + 14);
        if (memcmp(h, idx_hdr, 10) != 0 || h[12] != 'S' || h[13] != 'I' || m == 0 ||
            m > IDX_MEMBER_MAX || le_get16(h + 10) != m + 4 ||
            to - from < IDX_MEMBER_HEAD + m + sizeof idx_end) {
            s->why = "an index member is malformed";
            return -1;
        }
        uint8_t end[sizeof idx_end];
        if (idx_pread(fd, from + IDX_MEMBER_HEAD, work + carry, m) != 0 ||
            idx_pread(fd, from + IDX_MEMBER_HEAD + m, end, sizeof end) != 0)
            goto short_read;
        if (memcmp(end, idx_end, sizeof end) != 0) {
            s->why = "an index member is not empty";
            return -1;
        }
        *payload_crc = (uint32_t)crc32(*payload_crc, work + carry, (uInt)m);
        size_t n = carry + m, i = 0;
        int used;
        while ((used = idx_record(s, work + i, n - i)) > 0)
            i += (size_t)used;
        if (used < 0) {
            if (s->why == NULL)
                s->why = "an index record is malformed";
            return -1;
        }
        carry = n - i;
        memmove(work, work + i, carry);
        from += IDX_MEMBER_HEAD + m + sizeof idx_end;
    }
    if (carry != 0) {
        s->why = "the index ends inside a record";
        return -1;
    }
    if (s->flag_bad && (s->x->bad == NULL || s->x->nbad != s->nbad_want)) {
        s->why = "the index's bad ranges are cut short";
        return -1;
    }
    if (s->flag_notes && (s->x->notes == NULL || s->x->nnotes != s->nnotes_want ||
                          s->note_left != 0)) {
        s->why = "the index's notes are cut short";
        return -1;
    }
    if (s->flag_mf && (s->mf == NULL || s->mf_at != s->mf_len)) {
        s->why = "the index's manifest is cut short";
        return -1;
    }
    return 0;
short_read:
    if (errno != EIO) {
        sp_err_set(err, SP_ERR_READ, errno, "read error");
        return -2;
    }
    s->why = "an index member is cut short";
    return -1;
}

/* Footer checks (FORMAT.md 4.1-4.2): fills the sizes in *x. */
static const char *idx_footer(const uint8_t *f, uint64_t size, struct idx *x)
{
    if (memcmp(f, idx_hdr, 10) != 0 || le_get16(f + 10) != 4 + IDX_FOOTER_PAYLOAD ||
        f[12] != 'S' || f[13] != 'F' || le_get16(f + 14) != IDX_FOOTER_PAYLOAD)
        return ""; /* not a spigz footer: a plain gzip file */
    if (memcmp(f + 68, idx_end, sizeof idx_end) != 0)
        return "the footer member is not empty";
    if (le_get32(f + 64) != (uint32_t)crc32(0, f + 16, 48))
        return "the footer's checksum does not match";
    if (f[16] != 1)
        return "unknown index version";
    if ((f[17] & ~(IDX_FLAG_BAD | IDX_FLAG_NOTES | IDX_FLAG_MANIFEST)) != 0 || f[18] != 0 || f[19] != 0)
        return "unknown index flags";
    x->total = le_get64(f + 20);
    x->data_len = le_get64(f + 28);
    x->header_len = le_get64(f + 36);
    x->index_len = le_get64(f + 44);
    x->n = le_get64(f + 52);
    if (x->data_len > size || x->index_len > size ||
        x->data_len + x->index_len + IDX_FOOTER_LEN > size)
        return "the sizes in the footer do not add up to the file's";
    if (x->data_len + x->index_len + IDX_FOOTER_LEN < size)
        return ""; /* members before it (cat a.gz b.gz): decode it all in turn */
    if (x->data_len < x->header_len + 10 || x->header_len < 10)
        return "the data member's sizes are impossible";
    /* Each piece takes >= 1 compressed byte and >= 2 index bytes. */
    if (x->n > x->data_len || x->n > x->index_len / 2 + 1)
        return "the footer counts more pieces than can fit";
    /* More than it is worth holding: a forged index could otherwise make a
     * reader touch 12 bytes for each byte of the file before refusing it. */
    if (x->n >= IDX_TABLE_MAX / sizeof(struct idx_piece))
        return "";
    return NULL;
}

/* The data member: header length and trailer (FORMAT.md 4.3, 4.6). */
static const char *idx_data_member(int fd, struct idx *x, uint32_t *isize,
                                   struct sp_err *err, int *rc)
{
    struct idx_rd r = {fd, x->base, x->base + x->data_len, {0}, 0, 0, false};
    int hs = gz_read_header(idx_rd_getc, &r, &x->hdr);
    uint8_t t[10];
    if (r.failed || idx_pread(fd, x->base + x->data_len - 10, t, 10) != 0) {
        sp_err_set(err, SP_ERR_READ, errno, "read error");
        *rc = -1;
        return "read error";
    }
    if (hs != GZ_OK || x->hdr.len != x->header_len)
        return "the data member's header does not match the footer";
    if (t[0] != 0x03 || t[1] != 0x00)
        return "the data member does not end as the index says";
    x->crc = le_get32(t + 2);
    *isize = le_get32(t + 6);
    return NULL;
}

int idx_start(int fd, uint64_t lo, uint64_t end, uint64_t *start, struct sp_err *err)
{
    uint8_t f[IDX_FOOTER_LEN];
    if (end < lo || end - lo < IDX_FOOTER_LEN + 20)
        return 0;
    if (idx_pread(fd, end - IDX_FOOTER_LEN, f, sizeof f) != 0) {
        sp_err_set(err, SP_ERR_READ, errno, "read error");
        return -1;
    }
    if (memcmp(f, idx_hdr, 10) != 0 || le_get16(f + 10) != 4 + IDX_FOOTER_PAYLOAD ||
        f[12] != 'S' || f[13] != 'F' || le_get16(f + 14) != IDX_FOOTER_PAYLOAD ||
        le_get32(f + 64) != (uint32_t)crc32(0, f + 16, 48))
        return 0;
    uint64_t data_len = le_get64(f + 28), index_len = le_get64(f + 44);
    uint64_t room = end - lo - IDX_FOOTER_LEN;
    if (data_len > room || index_len > room - data_len)
        return 0;
    *start = end - IDX_FOOTER_LEN - index_len - data_len;
    return 1;
}

static int idx_reject(struct idx *x, const char *why, char *out, size_t n)
{
    snprintf(out, n, "%s", why);
    idx_free(x);
    return 0;
}

static int idx_load_in(int fd, uint64_t base, uint64_t file_size, struct idx *x,
                       char *why, size_t whylen, struct sp_err *err, bool lenient);

int idx_load(int fd, uint64_t base, uint64_t file_size, struct idx *x,
             char *why, size_t whylen, struct sp_err *err)
{
    return idx_load_in(fd, base, file_size, x, why, whylen, err, false);
}

int idx_load_salvage(int fd, uint64_t base, uint64_t file_size, struct idx *x,
                     char *why, size_t whylen, struct sp_err *err)
{
    return idx_load_in(fd, base, file_size, x, why, whylen, err, true);
}

static int idx_load_in(int fd, uint64_t base, uint64_t file_size, struct idx *x,
                       char *why, size_t whylen, struct sp_err *err, bool lenient)
{
    memset(x, 0, sizeof *x);
    why[0] = '\0';
    if (file_size < base + IDX_FOOTER_LEN + 20)
        return 0;
    uint8_t f[IDX_FOOTER_LEN];
    if (idx_pread(fd, file_size - IDX_FOOTER_LEN, f, sizeof f) != 0) {
        sp_err_set(err, SP_ERR_READ, errno, "read error");
        return -1;
    }
    x->base = base;
    const char *bad = idx_footer(f, file_size - base, x);
    if (bad != NULL)
        return idx_reject(x, bad, why, whylen);
    int rc = 0;
    uint32_t isize;
    if ((bad = idx_data_member(fd, x, &isize, err, &rc)) != NULL)
        return rc < 0 ? -1 : idx_reject(x, bad, why, whylen);
    x->p = calloc(x->n + 1, sizeof *x->p);
    if (x->p == NULL)
        return idx_reject(x, "the index is too large for memory", why, whylen);
    struct idx_parse s = {.x = x, .flag_bad = (f[17] & IDX_FLAG_BAD) != 0,
                          .flag_notes = (f[17] & IDX_FLAG_NOTES) != 0,
                          .flag_mf = (f[17] & IDX_FLAG_MANIFEST) != 0};
    uint32_t pcrc;
    uint64_t from = base + x->data_len;
    int mr = idx_members(&s, fd, from, from + x->index_len, &pcrc, err);
    free(s.mf);
    if (mr == -2) {
        idx_free(x);
        return -1;
    }
    if (mr != 0)
        return idx_reject(x, s.why, why, whylen);
    x->p[x->n] = (struct idx_piece){s.uoff, s.coff, 0, false};
    if (pcrc != le_get32(f + 60))
        return idx_reject(x, "the index payload's checksum does not match", why, whylen);
    if (s.k != x->n)
        return idx_reject(x, "fewer records than the footer says", why, whylen);
    if (s.coff != x->data_len - x->header_len - 10 || s.uoff != x->total)
        return idx_reject(x, "the pieces do not cover the data member", why, whylen);
    if ((uint32_t)x->total != isize || s.crc != x->crc) {
        if (!lenient)
            return idx_reject(x, "the pieces disagree with the data member's CRC-32 or size",
                              why, whylen);
        x->trailer_mismatch = true; /* the index's own CRCs vouch for it */
        x->crc = s.crc;
    }
    return 1;
}

void idx_free(struct idx *x)
{
    free(x->p);
    x->p = NULL;
    free(x->bad);
    x->bad = NULL;
    for (size_t i = 0; i < x->nnotes; i++)
        free(x->notes[i]);
    free(x->notes);
    x->notes = NULL;
    x->nnotes = 0;
    x->nbad = 0;
    mf_free(&x->mf);
    x->has_mf = false;
}
