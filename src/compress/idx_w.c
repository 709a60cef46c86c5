/* idx_w.c — the index writer; see idx_w.h and doc/FORMAT.md. */
#include "idx_w.h"
#include "text.h"
#include "io.h"
#include "le.h"
#include "leb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct idx_w {
    uint8_t *buf;      /* records not yet spilled */
    size_t len;
    int spill;         /* temporary file, or -1 */
    uint64_t spilled;
    uint64_t n;
    bool bad;          /* bad ranges follow the records: footer flag 1 */
    bool notes;        /* notes follow: footer flag 2 */
    bool manifest;     /* the manifest follows: footer flag 4 */
    uint32_t crc;      /* of the whole payload */
    struct sp_err err;
};

/* Where the spill file goes: $TMPDIR, or /tmp. */
static const char *idx_tmpdir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir == NULL || dir[0] == '\0' ? "/tmp" : dir;
}

static int idx_tmpfile(void);

/* Create the spill file now and write a block to it, so that a missing,
 * unwritable or full temporary directory is an error at the start, naming
 * the directory, not after hours of compression. */
static int idx_w_open_spill(struct idx_w *w, struct sp_err *err)
{
    static const uint8_t probe[4096];
    w->spill = idx_tmpfile();
    if (w->spill < 0) {
        sp_err_set(err, SP_ERR_SYS, errno, "cannot create a temporary file for the index in %s",
                   idx_tmpdir());
        return -1;
    }
    if (io_write(w->spill, probe, sizeof probe, NULL) != 0 || ftruncate(w->spill, 0) != 0 ||
        lseek(w->spill, 0, SEEK_SET) != 0) {
        sp_err_set(err, SP_ERR_SYS, errno, "cannot write a temporary file for the index in %s",
                   idx_tmpdir());
        return -1;
    }
    return 0;
}

struct idx_w *idx_w_new(bool may_spill, struct sp_err *err)
{
    struct idx_w *w = calloc(1, sizeof *w);
    if (w != NULL)
        w->buf = malloc(IDX_SPILL);
    if (w == NULL || w->buf == NULL) {
        free(w);
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory for the index");
        return NULL;
    }
    w->spill = -1;
    if (may_spill && idx_w_open_spill(w, err) != 0) {
        idx_w_free(w);
        return NULL;
    }
    return w;
}

bool idx_w_may_spill(bool size_known, uint64_t size)
{
    /* A piece holds at least one 4 KiB block but the last of a stretch, and
     * a record takes at most IDX_REC_MAX bytes. */
    return !size_known || size / 4096 + 2 > IDX_SPILL / IDX_REC_MAX;
}

/* A piece's record into p (IDX_REC_MAX bytes): its bytes. */
static size_t idx_rec(uint8_t *p, bool data, uint64_t ulen, uint64_t clen, uint32_t crc)
{
    size_t n = leb_put(p, ulen << 1 | (data ? 1 : 0));
    n += leb_put(p + n, clen);
    if (data) {
        le_put32(p + n, crc);
        n += 4;
    }
    return n;
}

size_t idx_rec_size(bool data, uint64_t ulen, uint64_t clen)
{
    uint8_t rec[IDX_REC_MAX];
    return idx_rec(rec, data, ulen, clen, 0);
}

uint64_t idx_len(uint64_t payload)
{
    uint64_t members = (payload + IDX_MEMBER_MAX - 1) / IDX_MEMBER_MAX;
    return payload + members * (IDX_MEMBER_HEAD + sizeof idx_end) + IDX_FOOTER_LEN;
}

/* An unnamed file in $TMPDIR (or /tmp) for records beyond IDX_SPILL. */
static int idx_tmpfile(void)
{
    const char *dir = idx_tmpdir();
    int fd = -1;
#ifdef O_TMPFILE
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
#endif
    char path[4096];
    if (snprintf(path, sizeof path, "%s/spigz-index-XXXXXX", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

static int idx_w_spill(struct idx_w *w)
{
    if (w->spill < 0 && (w->spill = idx_tmpfile()) < 0) {
        sp_err_set(&w->err, SP_ERR_SYS, errno, "cannot create a temporary file for the index in %s",
                   idx_tmpdir());
        return -1;
    }
    if (io_write(w->spill, w->buf, w->len, NULL) != 0) {
        sp_err_set(&w->err, SP_ERR_SYS, errno, "cannot write the index's temporary file in %s",
                   idx_tmpdir());
        return -1;
    }
    w->spilled += w->len;
    w->len = 0;
    return 0;
}

int idx_w_add(struct idx_w *w, bool data, uint64_t ulen, uint64_t clen, uint32_t crc,
              struct sp_err *err)
{
    if (w->err.kind == SP_OK && w->len + IDX_REC_MAX > IDX_SPILL)
        (void)idx_w_spill(w);
    if (w->err.kind != SP_OK) {
        *err = w->err;
        return -1;
    }
    uint8_t *p = w->buf + w->len;
    size_t n = idx_rec(p, data, ulen, clen, crc);
    w->crc = (uint32_t)crc32(w->crc, p, (uInt)n);
    w->len += n;
    w->n++;
    return 0;
}

/* Append n payload bytes through the spill buffer, IDX_REC_MAX at a time
 * (the buffer keeps that much room: a note or the manifest is longer). */
static int idx_w_bytes(struct idx_w *w, const uint8_t *p, size_t n, struct sp_err *err)
{
    while (n > 0) {
        size_t k = n < IDX_REC_MAX ? n : IDX_REC_MAX;
        if (w->err.kind == SP_OK && w->len + IDX_REC_MAX > IDX_SPILL)
            (void)idx_w_spill(w);
        if (w->err.kind != SP_OK) {
            *err = w->err;
            return -1;
        }
        memcpy(w->buf + w->len, p, k);
        w->crc = (uint32_t)crc32(w->crc, p, (uInt)k);
        w->len += k;
        p += k;
        n -= k;
    }
    return 0;
}

int idx_w_add_bad(struct idx_w *w, const struct sp_range *r, size_t n, struct sp_err *err)
{
    uint8_t rec[IDX_REC_MAX];
    if (n == 0)
        return 0;
    if (idx_w_bytes(w, rec, leb_put(rec, n), err) != 0)
        return -1;
    uint64_t end = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = leb_put(rec, r[i].off - end);
        k += leb_put(rec + k, r[i].len);
        if (idx_w_bytes(w, rec, k, err) != 0)
            return -1;
        end = r[i].off + r[i].len;
    }
    w->bad = true;
    return 0;
}

bool idx_note_valid(const char *t)
{
    size_t n = strlen(t);
    return n > 0 && n <= IDX_NOTE_MAX && txt_printable((const uint8_t *)t, n);
}

int idx_w_add_notes(struct idx_w *w, const char *const *notes, size_t n, struct sp_err *err)
{
    uint8_t rec[IDX_REC_MAX];
    size_t keep = 0;
    for (size_t i = 0; i < n; i++)
        keep += idx_note_valid(notes[i]);
    if (keep > IDX_NOTES_MAX)
        keep = IDX_NOTES_MAX;
    if (keep == 0)
        return 0;
    if (idx_w_bytes(w, rec, leb_put(rec, keep), err) != 0)
        return -1;
    for (size_t i = 0, done = 0; i < n && done < keep; i++) {
        if (!idx_note_valid(notes[i]))
            continue;
        size_t len = strlen(notes[i]);
        if (idx_w_bytes(w, rec, leb_put(rec, len), err) != 0 ||
            idx_w_bytes(w, (const uint8_t *)notes[i], len, err) != 0)
            return -1;
        done++;
    }
    w->notes = true;
    return 0;
}

int idx_w_add_manifest(struct idx_w *w, const uint8_t *p, size_t n, struct sp_err *err)
{
    uint8_t rec[IDX_REC_MAX];
    if (n == 0)
        return 0;
    if (idx_w_bytes(w, rec, leb_put(rec, n), err) != 0)
        return -1;
    if (idx_w_bytes(w, p, n, err) != 0)
        return -1;
    w->manifest = true;
    return 0;
}

/* One index member holding m payload bytes. */
static int idx_w_member(struct out *o, const uint8_t *payload, size_t m)
{
    uint8_t h[IDX_MEMBER_HEAD];
    memcpy(h, idx_hdr, 10);
    le_put16(h + 10, m + 4);
    h[12] = 'S';
    h[13] = 'I';
    le_put16(h + 14, m);
    if (out_write(o, h, sizeof h) != 0 || out_write(o, payload, m) != 0)
        return -1;
    return out_write(o, idx_end, sizeof idx_end);
}

static int idx_w_footer(struct idx_w *w, struct out *o, uint64_t total, uint64_t data_len,
                        uint64_t header_len, uint64_t index_len)
{
    uint8_t f[IDX_FOOTER_LEN];
    memset(f, 0, sizeof f);
    memcpy(f, idx_hdr, 10);
    le_put16(f + 10, 4 + IDX_FOOTER_PAYLOAD);
    f[12] = 'S';
    f[13] = 'F';
    le_put16(f + 14, IDX_FOOTER_PAYLOAD);
    f[16] = 1; /* version; reserved stays 0 */
    f[17] = (w->bad ? IDX_FLAG_BAD : 0) | (w->notes ? IDX_FLAG_NOTES : 0) |
            (w->manifest ? IDX_FLAG_MANIFEST : 0);
    le_put64(f + 20, total);
    le_put64(f + 28, data_len);
    le_put64(f + 36, header_len);
    le_put64(f + 44, index_len);
    le_put64(f + 52, w->n);
    le_put32(f + 60, w->crc);
    le_put32(f + 64, (uint32_t)crc32(0, f + 16, 48));
    memcpy(f + 68, idx_end, sizeof idx_end);
    return out_write(o, f, sizeof f);
}

int idx_w_finish(struct idx_w *w, struct out *o, uint64_t total, uint64_t data_len,
                 uint64_t header_len)
{
    if (w->err.kind != SP_OK) {
        o->err = w->err;
        return -1;
    }
    uint64_t payload = w->spilled + w->len;
    uint64_t index_len = idx_len(payload) - IDX_FOOTER_LEN; /* the members' */
    uint8_t chunk[IDX_MEMBER_MAX];
    /* Spilled records first, re-read from the temporary file. */
    for (uint64_t off = 0; off < payload; off += IDX_MEMBER_MAX) {
        size_t m = payload - off < IDX_MEMBER_MAX ? (size_t)(payload - off) : IDX_MEMBER_MAX;
        size_t k = 0; /* of them spilled */
        if (off < w->spilled)
            k = w->spilled - off < m ? (size_t)(w->spilled - off) : m;
        int rd = k > 0 ? io_pread_exact(w->spill, chunk, k, off) : 0;
        if (rd != 0) {
            sp_err_set(&o->err, SP_ERR_WRITE, rd < 0 ? errno : EIO,
                       "cannot read the index's temporary file");
            return -1;
        }
        if (k < m) /* the rest from memory (off + k >= spilled here) */
            memcpy(chunk + k, w->buf + (off + k - w->spilled), m - k);
        if (idx_w_member(o, chunk, m) != 0)
            return -1;
    }
    return idx_w_footer(w, o, total, data_len, header_len, index_len);
}

void idx_w_free(struct idx_w *w)
{
    if (w == NULL)
        return;
    if (w->spill >= 0)
        close(w->spill);
    free(w->buf);
    free(w);
}

