/* gzx_read.c — reads through a gzip index (gzx.h): chunks decoded from the
 * nearest access point, checked against their CRC-32, kept in an LRU cache.
 *
 * A read wants chunk c (GZX_CHUNK bytes of content at c * GZX_CHUNK).  If
 * the cache has it, or another reader is decoding it, it takes it (waiting
 * for the decode).  Else it claims c and, when c - 1 is held (a reader in
 * order), the chunks after it that nobody holds or decodes, up to the chunk
 * holding the next access point (a later read of those would decode from
 * the same point through the same bytes) and as many as the cache holds;
 * decodes from the last point at or before
 * c's start, through the claimed chunks, checking each chunk's CRC-32 and
 * publishing it as soon as it passed; readers of a claimed chunk wait for
 * it.  A failed decode fails its claimed chunks: a reader waiting on one
 * tries again itself (and fails with its own message).  So a sequential
 * reader decodes each byte about once, not once per read.
 *
 * The cache's structure is ra.c's: a hash table of entries (listed while
 * decoding or cached), an LRU list of the ready ones, bounded in bytes and
 * entries; a reader's reference keeps an evicted entry alive. */
#include "gzx.h"
#include "gzx_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GZX_RD_IN (256u << 10)
#define GZX_BUCKETS_MAX ((uint64_t)1 << 20)
/* A decode claims at most this many chunks: a read never waits for more
 * than 64 MiB of decode past its own bytes, however far apart the points. */
#define GZX_CLAIM_MAX 64u

struct gzx_ent {
    uint64_t k;
    uint8_t *buf;
    size_t len;
    unsigned refs;
    bool ready, failed, listed, in_lru;
    struct gzx_ent *hnext;
    struct gzx_ent *prev, *next;
};

struct gzx_slot {
    z_stream zs;
    bool zinit;
    bool ended; /* the member's deflate stream ended: its trailer next */
    struct gzx_rd rd;
    uint8_t *scratch; /* GZX_CHUNK: content decoded on the way, not kept */
    uint8_t *win;     /* GZX_WINDOW */
    struct gzx_slot *next;
};

static size_t gzx_chunk_len(const struct gzx *g, uint64_t c)
{
    uint64_t start = c * GZX_CHUNK;
    return (size_t)(g->total - start < GZX_CHUNK ? g->total - start : GZX_CHUNK);
}

/* ---- slots ---- */

static void gzx_slot_free(struct gzx_slot *s)
{
    if (s == NULL)
        return;
    if (s->zinit)
        inflateEnd(&s->zs);
    free(s->rd.buf);
    free(s->scratch);
    free(s->win);
    free(s);
}

static struct gzx_slot *gzx_slot_get(struct gzx *g, struct sp_err *err)
{
    pthread_mutex_lock(&g->mu);
    struct gzx_slot *s = g->slots;
    if (s != NULL)
        g->slots = s->next;
    pthread_mutex_unlock(&g->mu);
    if (s != NULL)
        return s;
    s = calloc(1, sizeof *s);
    if (s != NULL && (s->rd.buf = malloc(GZX_RD_IN)) != NULL &&
        (s->scratch = malloc(GZX_CHUNK)) != NULL && (s->win = malloc(GZX_WINDOW)) != NULL &&
        inflateInit2(&s->zs, -15) == Z_OK) {
        s->zinit = true;
        s->rd.fd = g->fd;
        s->rd.cap = GZX_RD_IN;
        s->rd.limit = g->data_end;
        return s;
    }
    gzx_slot_free(s);
    sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
    return NULL;
}

static void gzx_slot_put(struct gzx *g, struct gzx_slot *s)
{
    pthread_mutex_lock(&g->mu);
    s->next = g->slots;
    g->slots = s;
    pthread_mutex_unlock(&g->mu);
}

/* ---- decoding ---- */

/* The file is still the one indexed: 0, or -1 with *e. */
static int gzx_same_file(const struct gzx *g, struct sp_err *e)
{
    struct stat s;
    if (fstat(g->fd, &s) != 0) {
        sp_err_set(e, SP_ERR_READ, errno, "cannot stat the file");
        return -1;
    }
    int64_t mt = (int64_t)s.st_mtim.tv_sec * 1000000000 + s.st_mtim.tv_nsec;
    if ((uint64_t)s.st_size != g->id.size || mt != g->id.mtime_ns ||
        (uint64_t)s.st_ino != g->ino || (uint64_t)s.st_dev != g->dev) {
        sp_err_set(e, SP_ERR_DATA, 0, "the file changed since it was indexed");
        return -1;
    }
    return 0;
}

/* The last point at or before content offset off. */
static uint64_t gzx_point_of(const struct gzx *g, uint64_t off)
{
    uint64_t lo = 0, hi = g->np;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->p[mid].uoff <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The slot's inflater positioned at point k.  0, or -1 with *e. */
static int gzx_start(const struct gzx *g, struct gzx_slot *s, uint64_t k, struct sp_err *e)
{
    const struct gzx_point *pt = &g->p[k];
    if (gzx_same_file(g, e) != 0)
        return -1;
    if (inflateReset(&s->zs) != Z_OK) {
        sp_err_set(e, SP_ERR_INTERNAL, 0, "inflateReset failed");
        return -1;
    }
    s->ended = false;
    gzx_rd_seek(&s->rd, pt->coff);
    if (pt->member)
        return gzx_header(&s->rd, false, e);
    if (pt->bits > 0) {
        uint8_t b;
        gzx_rd_seek(&s->rd, pt->coff - 1);
        int c = gzx_rd_getc(&s->rd);
        if (c < 0) {
            sp_err_set(e, c == -2 ? SP_ERR_READ : SP_ERR_DATA, c == -2 ? s->rd.err : 0,
                       c == -2 ? "cannot read the file" : "unexpected end of file");
            return -1;
        }
        b = (uint8_t)c;
        if (inflatePrime(&s->zs, pt->bits, b >> (8 - pt->bits)) != Z_OK) {
            sp_err_set(e, SP_ERR_INTERNAL, 0, "inflatePrime failed");
            return -1;
        }
    }
    if (pt->wlen > 0) {
        uLongf wl = GZX_WINDOW;
        if (uncompress(s->win, &wl, pt->zwin, pt->zlen) != Z_OK || wl != pt->wlen ||
            inflateSetDictionary(&s->zs, s->win, pt->wlen) != Z_OK) {
            sp_err_set(e, SP_ERR_DATA, 0, "the index's window at byte %llu does not decode",
                       (unsigned long long)pt->uoff);
            return -1;
        }
    }
    return 0;
}

/* The member's trailer, then the next member's header.  0, or -1. */
static int gzx_next_member(struct gzx_slot *s, struct sp_err *e)
{
    for (int i = 0; i < 8; i++) {
        int c = gzx_rd_getc(&s->rd);
        if (c < 0) {
            sp_err_set(e, c == -2 ? SP_ERR_READ : SP_ERR_DATA, c == -2 ? s->rd.err : 0,
                       c == -2 ? "cannot read the file" : "unexpected end of file");
            return -1;
        }
    }
    if (gzx_header(&s->rd, false, e) != 0)
        return -1;
    s->ended = false;
    if (inflateReset(&s->zs) != Z_OK) {
        sp_err_set(e, SP_ERR_INTERNAL, 0, "inflateReset failed");
        return -1;
    }
    return 0;
}

/* The next n content bytes into out.  0, or -1 with *e. */
static int gzx_produce(struct gzx_slot *s, uint8_t *out, size_t n, struct sp_err *e)
{
    z_stream *zs = &s->zs;
    while (n > 0) {
        if (s->ended && gzx_next_member(s, e) != 0)
            return -1;
        if (s->rd.at == s->rd.have) {
            int rc = gzx_rd_fill(&s->rd);
            if (rc <= 0) {
                sp_err_set(e, rc < 0 ? SP_ERR_READ : SP_ERR_DATA, rc < 0 ? s->rd.err : 0,
                           rc < 0 ? "cannot read the file" : "unexpected end of file");
                return -1;
            }
        }
        zs->next_in = s->rd.buf + s->rd.at;
        zs->avail_in = (uInt)(s->rd.have - s->rd.at);
        zs->next_out = out;
        zs->avail_out = n < (1u << 30) ? (uInt)n : 1u << 30;
        uInt want = zs->avail_out;
        int ret = inflate(zs, Z_NO_FLUSH);
        s->rd.at = s->rd.have - zs->avail_in;
        size_t made = want - zs->avail_out;
        out += made;
        n -= made;
        if (ret == Z_STREAM_END)
            s->ended = true;
        else if (ret == Z_MEM_ERROR) {
            sp_err_set(e, SP_ERR_NOMEM, 0, "out of memory");
            return -1;
        } else if (ret != Z_OK && !(ret == Z_BUF_ERROR && s->rd.at == s->rd.have)) {
            sp_err_set(e, SP_ERR_DATA, 0, "invalid compressed data (%s)",
                       zs->msg ? zs->msg : "format violated");
            return -1;
        }
    }
    return 0;
}

/* ---- the cache (every function here under g->mu) ---- */

static struct gzx_ent **gzx_bucket_of(struct gzx *g, uint64_t k)
{
    uint64_t h = k * 0x9e3779b97f4a7c15ull;
    return &g->bucket[(h >> 32) & (g->nbucket - 1)];
}

static struct gzx_ent *gzx_lookup(struct gzx *g, uint64_t k)
{
    struct gzx_ent *e = *gzx_bucket_of(g, k);
    while (e != NULL && e->k != k)
        e = e->hnext;
    return e;
}

static void gzx_lru_unlink(struct gzx *g, struct gzx_ent *e)
{
    if (!e->in_lru)
        return;
    *(e->prev != NULL ? &e->prev->next : &g->head) = e->next;
    *(e->next != NULL ? &e->next->prev : &g->tail) = e->prev;
    e->prev = e->next = NULL;
    e->in_lru = false;
    g->bytes -= e->len;
    g->nent--;
}

static void gzx_lru_front(struct gzx *g, struct gzx_ent *e)
{
    gzx_lru_unlink(g, e);
    e->next = g->head;
    *(g->head != NULL ? &g->head->prev : &g->tail) = e;
    g->head = e;
    e->in_lru = true;
    g->bytes += e->len;
    g->nent++;
}

static void gzx_release(struct gzx_ent *e)
{
    if (--e->refs == 0 && !e->listed) {
        free(e->buf);
        free(e);
    }
}

static void gzx_drop(struct gzx *g, struct gzx_ent *e)
{
    struct gzx_ent **p = gzx_bucket_of(g, e->k);
    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    gzx_lru_unlink(g, e);
    e->listed = false;
    e->refs++;
    gzx_release(e);
}

static void gzx_keep(struct gzx *g, struct gzx_ent *e)
{
    if (e->len > g->cap) {
        gzx_drop(g, e);
        return;
    }
    while (g->tail != NULL && (g->bytes + e->len > g->cap || g->nent + 1 > g->max_ent))
        gzx_drop(g, g->tail);
    gzx_lru_front(g, e);
}

/* ---- a decode of claimed chunks ---- */

/* Chunk e's range in *err, with e's message. */
static void gzx_fail(const struct gzx *g, uint64_t c, const struct sp_err *e, struct sp_err *err)
{
    uint64_t a = c * GZX_CHUNK, b = a + GZX_CHUNK < g->total ? a + GZX_CHUNK : g->total;
    sp_err_set(err, e->kind, 0, "bytes %llu to %llu of the content: %s", (unsigned long long)a,
               (unsigned long long)b, e->msg);
    err->errnum = e->errnum;
}

/* Decode ents[0..n) (chunks c, c + 1, ...; each holding one reference for
 * this decode), publishing each when checked.  On failure the rest fail. */
static void gzx_decode(struct gzx *g, uint64_t c, struct gzx_ent **ents, unsigned n,
                       struct sp_err *de)
{
    struct gzx_slot *s = gzx_slot_get(g, de);
    unsigned i = 0;
    if (s != NULL) {
        uint64_t k = gzx_point_of(g, c * GZX_CHUNK);
        uint64_t skip = c * GZX_CHUNK - g->p[k].uoff;
        int rc = gzx_start(g, s, k, de);
        while (rc == 0 && skip > 0) {
            size_t m = skip < GZX_CHUNK ? (size_t)skip : GZX_CHUNK;
            rc = gzx_produce(s, s->scratch, m, de);
            skip -= m;
        }
        for (; rc == 0 && i < n; i++) {
            struct gzx_ent *e = ents[i];
            if ((e->buf = malloc(e->len)) == NULL) {
                sp_err_set(de, SP_ERR_NOMEM, 0, "out of memory");
                break;
            }
            if (gzx_produce(s, e->buf, e->len, de) != 0)
                break;
            if ((uint32_t)crc32(0, e->buf, (uInt)e->len) != g->crc[e->k]) {
                sp_err_set(de, SP_ERR_DATA, 0, "its CRC-32 is not the one the index recorded");
                break;
            }
            pthread_mutex_lock(&g->mu);
            e->ready = true;
            gzx_keep(g, e);
            gzx_release(e);
            pthread_cond_broadcast(&g->cv);
            pthread_mutex_unlock(&g->mu);
        }
        gzx_slot_put(g, s);
    }
    pthread_mutex_lock(&g->mu);
    for (; i < n; i++) {
        ents[i]->failed = true;
        gzx_drop(g, ents[i]);
        gzx_release(ents[i]);
    }
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Chunks to claim from c: up to the one holding the next point after c's
 * (inclusive), as many as the cache holds, at most GZX_CLAIM_MAX; but c
 * alone when chunk c - 1 is not held (nor being decoded): a reader that
 * is not going in order waits for its own chunk only, not for the rest of
 * the span (a random 4 KiB read then decodes ~3 MiB on average, not ~5). */
static uint64_t gzx_claim_len(struct gzx *g, uint64_t c)
{
    if (c > 0 && !gzx_is_zero(g, c - 1) && gzx_lookup(g, c - 1) == NULL)
        return 1;
    uint64_t k = gzx_point_of(g, c * GZX_CHUNK);
    uint64_t last = k + 1 < g->np ? g->p[k + 1].uoff / GZX_CHUNK : g->nchunks - 1;
    if (last >= g->nchunks)
        last = g->nchunks - 1;
    uint64_t n = last >= c ? last - c + 1 : 1, fit = g->cap / GZX_CHUNK;
    if (fit < 1)
        fit = 1;
    if (n > fit)
        n = fit;
    return n < GZX_CLAIM_MAX ? n : GZX_CLAIM_MAX;
}

/* Chunk c, checked, with a reference (gzx_put).  NULL with *err. */
static struct gzx_ent *gzx_get(struct gzx *g, uint64_t c, struct sp_err *err)
{
    pthread_mutex_lock(&g->mu);
    for (;;) {
        struct gzx_ent *e = gzx_lookup(g, c);
        if (e == NULL)
            break;
        e->refs++;
        while (!e->ready && !e->failed)
            pthread_cond_wait(&g->cv, &g->mu);
        if (e->ready) {
            if (e->in_lru)
                gzx_lru_front(g, e);
            pthread_mutex_unlock(&g->mu);
            return e;
        }
        gzx_release(e);
    }
    struct gzx_ent *ents[GZX_CLAIM_MAX];
    uint64_t want = gzx_claim_len(g, c);
    unsigned n = 0;
    while (n < want && (n == 0 || (gzx_lookup(g, c + n) == NULL && !gzx_is_zero(g, c + n)))) {
        struct gzx_ent *e = calloc(1, sizeof *e);
        if (e == NULL)
            break;
        e->k = c + n;
        e->len = gzx_chunk_len(g, c + n);
        e->refs = n == 0 ? 2 : 1; /* the decode's, and chunk c's reader's */
        e->listed = true;
        struct gzx_ent **b = gzx_bucket_of(g, e->k);
        e->hnext = *b;
        *b = e;
        ents[n++] = e;
    }
    pthread_mutex_unlock(&g->mu);
    if (n == 0) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    struct gzx_ent *e = ents[0];
    struct sp_err de = {0};
    gzx_decode(g, c, ents, n, &de);
    pthread_mutex_lock(&g->mu);
    bool ok = e->ready;
    if (!ok)
        gzx_release(e);
    pthread_mutex_unlock(&g->mu);
    if (ok)
        return e;
    gzx_fail(g, c, &de, err);
    return NULL;
}

static void gzx_put(struct gzx *g, struct gzx_ent *e)
{
    pthread_mutex_lock(&g->mu);
    gzx_release(e);
    pthread_mutex_unlock(&g->mu);
}

/* ---- read-ahead ---- */

static void *gzx_ra_main(void *arg)
{
    struct gzx *g = arg;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (!g->ra_stop && g->ra_nreq == 0)
            pthread_cond_wait(&g->ra_cv, &g->mu);
        if (g->ra_stop)
            break;
        uint64_t c = g->ra_req[0];
        g->ra_nreq--;
        memmove(g->ra_req, g->ra_req + 1, g->ra_nreq * sizeof *g->ra_req);
        pthread_mutex_unlock(&g->mu);
        struct sp_err err = {0}; /* a failure is the reader's to meet */
        struct gzx_ent *e = gzx_get(g, c, &err);
        if (e != NULL)
            gzx_put(g, e);
        pthread_mutex_lock(&g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* The first chunk after the span holding chunk c: the one after the chunk
 * that holds the next point.  nchunks when there is none. */
static uint64_t gzx_next_span(const struct gzx *g, uint64_t c)
{
    uint64_t k = gzx_point_of(g, c * GZX_CHUNK);
    if (k + 1 >= g->np)
        return g->nchunks;
    uint64_t n = g->p[k + 1].uoff / GZX_CHUNK + 1;
    return n < g->nchunks ? n : g->nchunks;
}

/* A read begins in chunk c.  When it follows the last read (the same chunk
 * or the next: a sequential reader), the next two spans not held nor being
 * decoded are queued for the read-ahead threads (started here, at the first
 * need: a process that forks after opening keeps none), when the cache holds
 * them besides the reader's. */
static void gzx_ahead(struct gzx *g, uint64_t c)
{
    if (g->cap < 4 * (GZX_SPAN + 2 * GZX_CHUNK)) /* room for the reader's spans and two more */
        return;
    uint64_t n1 = gzx_next_span(g, c), n2 = n1 < g->nchunks ? gzx_next_span(g, n1) : n1;
    uint64_t want[2] = {n1, n2};
    pthread_mutex_lock(&g->mu);
    bool in_order = c == g->ra_last || c == g->ra_last + 1;
    g->ra_last = c;
    for (int i = 0; i < 2 && in_order && !g->ra_stop && !g->ra_held; i++) {
        uint64_t n = want[i], len;
        bool zero;
        if (n < g->nchunks && gzx_extent(g, n * GZX_CHUNK, &len, &zero) == 0 && zero)
            n = (n * GZX_CHUNK + len + GZX_CHUNK - 1) / GZX_CHUNK; /* past the zero run */
        if (n >= g->nchunks || gzx_lookup(g, n) != NULL)
            continue;
        bool queued = false;
        for (unsigned q = 0; q < g->ra_nreq; q++)
            queued |= g->ra_req[q] == n;
        if (queued || g->ra_nreq == GZX_RA_QUEUE)
            continue;
        g->ra_req[g->ra_nreq++] = n;
        if (g->ra_nthr < GZX_RA_THREADS &&
            pthread_create(&g->ra_thr[g->ra_nthr], NULL, gzx_ra_main, g) == 0)
            g->ra_nthr++;
        pthread_cond_signal(&g->ra_cv);
    }
    pthread_mutex_unlock(&g->mu);
}

int64_t gzx_pread(struct gzx *g, void *buf, size_t len, uint64_t off, struct sp_err *err)
{
    if (off >= g->total || len == 0)
        return 0;
    if (len > g->total - off)
        len = (size_t)(g->total - off);
    if (len > INT64_MAX)
        len = INT64_MAX;
    uint8_t *p = buf;
    size_t done = 0;
    while (done < len) {
        uint64_t at = off + done, c = at / GZX_CHUNK, skip = at - c * GZX_CHUNK;
        if (gzx_is_zero(g, c)) { /* the pass saw zeros: never decoded again */
            size_t n = gzx_chunk_len(g, c) - skip < len - done ? gzx_chunk_len(g, c) - skip
                                                                : len - done;
            memset(p + done, 0, n);
            done += n;
            continue;
        }
        if (done == 0)
            gzx_ahead(g, c);
        struct gzx_ent *e = gzx_get(g, c, err);
        if (e == NULL)
            return -1;
        size_t n = e->len - skip < len - done ? (size_t)(e->len - skip) : len - done;
        memcpy(p + done, e->buf + skip, n);
        gzx_put(g, e);
        done += n;
    }
    return (int64_t)done;
}

/* ---- set up, tear down ---- */

int gzx_cache_init(struct gzx *g, uint64_t cache_bytes)
{
    g->cap = cache_bytes > 0 ? cache_bytes : GZX_CACHE_DEFAULT;
    g->max_ent = g->cap / GZX_CHUNK > 0 ? g->cap / GZX_CHUNK : 1;
    uint64_t want = g->max_ent + GZX_CLAIM_MAX;
    g->nbucket = 1;
    while (g->nbucket < want && g->nbucket < GZX_BUCKETS_MAX)
        g->nbucket *= 2;
    if ((g->bucket = calloc(g->nbucket, sizeof *g->bucket)) == NULL)
        return -1;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    pthread_cond_init(&g->ra_cv, NULL);
    g->sync = true;
    return 0;
}

void gzx_hold_ahead(struct gzx *g, bool hold)
{
    if (!g->sync)
        return;
    pthread_mutex_lock(&g->mu);
    g->ra_held = hold;
    pthread_mutex_unlock(&g->mu);
}

void gzx_cache_free(struct gzx *g)
{
    if (g->sync) { /* the read-ahead threads end first: they use the cache */
        pthread_mutex_lock(&g->mu);
        g->ra_stop = true;
        pthread_cond_broadcast(&g->ra_cv);
        pthread_mutex_unlock(&g->mu);
        for (unsigned i = 0; i < g->ra_nthr; i++)
            pthread_join(g->ra_thr[i], NULL);
        g->ra_nthr = 0;
    }
    for (uint64_t i = 0; g->bucket != NULL && i < g->nbucket; i++)
        while (g->bucket[i] != NULL)
            gzx_drop(g, g->bucket[i]);
    while (g->slots != NULL) {
        struct gzx_slot *s = g->slots;
        g->slots = s->next;
        gzx_slot_free(s);
    }
    free(g->bucket);
    g->bucket = NULL;
    if (g->sync) {
        pthread_mutex_destroy(&g->mu);
        pthread_cond_destroy(&g->cv);
        pthread_cond_destroy(&g->ra_cv);
        g->sync = false;
    }
}
