/* ra.c — see ra.h. */
#include "ra.h"
#include "dec.h"
#include "engine.h"
#include "idx.h"
#include "piece.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The cache counts pieces too, a piece for every 4 KiB it may hold: tiny
 * pieces cannot make its bookkeeping outgrow its bytes. */
#define RA_ENT_BYTES 4096
#define RA_BUCKETS_MAX ((uint64_t)1 << 20)

/* Read-ahead: a ring of pieces to decode ahead of a sequential reader, on
 * at most RA_AHEAD_MAX threads started at the first need (not at ra_open:
 * the mount forks after opening, and threads do not survive a fork).  A
 * request that finds the ring full is dropped: read-ahead is a hint. */
#define RA_RING 64
#define RA_AHEAD_MAX 8

/* A read is taken as sequential when its first piece lies within this
 * many pieces of the previous read's end, before or after: a reader's
 * requests arrive out of order (the kernel sends a 4 MiB direct read as
 * four or five FUSE reads at once, served by as many threads), so "the
 * next piece exactly" missed most of them.  `cat DIR/disk`'s 4 GiB ext4
 * partition: 2.6 s with the exact rule, 1.5-1.7 s with a window of 8 (4 and
 * 16 the same).  A random read that lands this near costs a few pieces
 * decoded ahead, at worst. */
#define RA_SEQ_WINDOW 8

/* A decoded data piece.  In the table (`listed`) while it is being decoded
 * (`ready` false) and then in the LRU list; a reader holding a reference
 * may keep it after it left the table.  Freed at the last reference once
 * it is out of the table.  Every field is under ra.mu but buf's bytes,
 * which are written once, before `ready`, and only read after. */
struct ra_ent {
    uint64_t k;
    uint8_t *buf;
    size_t len;
    unsigned refs;
    bool ready, failed, listed, in_lru;
    struct ra_ent *hnext;       /* the bucket's chain */
    struct ra_ent *prev, *next; /* LRU: head most recent */
};

/* What one call needs to check and decode a piece; kept for the next. */
struct ra_slot {
    struct eng_dec *d;
    uint8_t *in;      /* max_clen + 2 bytes, taken at the first data piece */
    uint8_t *scratch; /* PC_SCRATCH bytes */
    struct ra_slot *next;
};

struct ra {
    int fd;
    struct idx x;
    uint64_t st_size, st_ino, st_dev; /* the file at ra_open() */
    uint64_t *run;  /* first piece of each run of zero or data pieces, then n */
    uint64_t nrun;
    pthread_mutex_t mu;
    pthread_cond_t cv;  /* a piece's decode ended */
    uint8_t *zok;       /* a bit a piece: zero piece checked */
    struct ra_ent **bucket;
    uint64_t nbucket;   /* a power of 2 */
    struct ra_ent *head, *tail;
    uint64_t cap, bytes;    /* the cache's bytes: at most, held */
    uint64_t max_ent, nent; /* pieces in the LRU: at most, held */
    struct ra_slot *slots;  /* free list */
    /* read-ahead, under mu */
    unsigned nahead;        /* threads wanted (0: none) */
    bool held;              /* ra_hold_ahead: nothing started or queued */
    pthread_t th[RA_AHEAD_MAX];
    unsigned nth;           /* started */
    pthread_cond_t work;    /* the ring has a piece, or stop */
    uint64_t ring[RA_RING];
    unsigned rhead, rlen;
    bool stop;
    uint64_t next_k;        /* the piece after the last read's last, +1 (0: none) */
    uint64_t nseq;          /* reads taken as sequential (ra_seq_reads) */
};

/* ---- opening ---- */

/* Runs of pieces of one kind, for ra_extent.  0, or -1 out of memory. */
static int ra_runs(struct ra *r)
{
    const struct idx *x = &r->x;
    uint64_t n = 0;
    for (uint64_t k = 0; k < x->n; k++)
        n += k == 0 || x->p[k].data != x->p[k - 1].data;
    if ((r->run = malloc((n + 1) * sizeof *r->run)) == NULL)
        return -1;
    r->nrun = 0;
    for (uint64_t k = 0; k < x->n; k++)
        if (k == 0 || x->p[k].data != x->p[k - 1].data)
            r->run[r->nrun++] = k;
    r->run[r->nrun] = x->n;
    return 0;
}

static int ra_tables(struct ra *r, uint64_t cache)
{
    r->cap = cache;
    r->max_ent = cache / RA_ENT_BYTES > 0 ? cache / RA_ENT_BYTES : 1;
    uint64_t want = r->max_ent < r->x.n ? r->max_ent : r->x.n;
    r->nbucket = 1;
    while (r->nbucket < want && r->nbucket < RA_BUCKETS_MAX)
        r->nbucket *= 2;
    r->bucket = calloc(r->nbucket, sizeof *r->bucket);
    r->zok = calloc(r->x.n / 8 + 1, 1);
    return r->bucket == NULL || r->zok == NULL || ra_runs(r) != 0 ? -1 : 0;
}

int ra_open(int fd, const struct ra_opts *o, struct ra **out, char *why, size_t whylen,
            struct sp_err *err)
{
    struct stat s;
    *out = NULL;
    snprintf(why, whylen, "%s", "");
    if (fstat(fd, &s) != 0 || !S_ISREG(s.st_mode)) {
        snprintf(why, whylen, "not a regular file");
        return 0;
    }
    struct ra *r = calloc(1, sizeof *r);
    if (r == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    int rc = idx_load(fd, 0, (uint64_t)s.st_size, &r->x, why, whylen, err);
    if (rc != 1) {
        if (rc == 0 && why[0] == 0)
            snprintf(why, whylen, "no spigz index");
        free(r);
        return rc;
    }
    if (r->x.max_ulen > DEC_PIECE_LIMIT || r->x.max_clen > DEC_PIECE_LIMIT) {
        snprintf(why, whylen, "its pieces are larger than %llu MiB",
                 (unsigned long long)(DEC_PIECE_LIMIT >> 20));
        idx_free(&r->x);
        free(r);
        return 0;
    }
    r->fd = fd;
    r->st_size = (uint64_t)s.st_size;
    r->st_ino = (uint64_t)s.st_ino;
    r->st_dev = (uint64_t)s.st_dev;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    uint64_t cache = o != NULL && o->cache_bytes > 0 ? o->cache_bytes : RA_CACHE_DEFAULT;
    pthread_cond_init(&r->work, NULL);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    r->nahead = o != NULL && o->ahead_threads > 0 ? o->ahead_threads
                : cpus > 0 ? (unsigned)cpus : 1;
    if (o != NULL && o->no_ahead)
        r->nahead = 0;
    if (r->nahead > RA_AHEAD_MAX)
        r->nahead = RA_AHEAD_MAX;
    r->held = o != NULL && o->hold_ahead;
    if (ra_tables(r, cache) != 0) {
        ra_close(r);
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    *out = r;
    return 1;
}

uint64_t ra_size(const struct ra *r)
{
    return r->x.total;
}

/* ---- slots ---- */

static void ra_slot_free(struct ra_slot *s)
{
    if (s == NULL)
        return;
    eng_dec_free(s->d);
    free(s->in);
    free(s->scratch);
    free(s);
}

static struct ra_slot *ra_slot_get(struct ra *r, struct sp_err *err)
{
    pthread_mutex_lock(&r->mu);
    struct ra_slot *s = r->slots;
    if (s != NULL)
        r->slots = s->next;
    pthread_mutex_unlock(&r->mu);
    if (s != NULL)
        return s;
    s = calloc(1, sizeof *s);
    if (s != NULL && (s->scratch = malloc(PC_SCRATCH)) != NULL &&
        (s->d = eng_dec_new(err)) != NULL)
        return s;
    ra_slot_free(s);
    sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
    return NULL;
}

static void ra_slot_put(struct ra *r, struct ra_slot *s)
{
    pthread_mutex_lock(&r->mu);
    s->next = r->slots;
    r->slots = s;
    pthread_mutex_unlock(&r->mu);
}

/* ---- checking a piece ---- */

/* Piece k failed (e says how): *err names its content range. */
static void ra_fail(const struct ra *r, uint64_t k, const struct sp_err *e, struct sp_err *err)
{
    sp_err_set(err, e->kind, 0, "bytes %llu to %llu of the image: %s",
               (unsigned long long)r->x.p[k].uoff, (unsigned long long)r->x.p[k + 1].uoff,
               e->msg);
    err->errnum = e->errnum;
}

/* The file is still the one opened: 0, or -1 with *e set. */
static int ra_same_file(const struct ra *r, struct sp_err *e)
{
    struct stat s;
    if (fstat(r->fd, &s) != 0) {
        sp_err_set(e, SP_ERR_READ, errno, "cannot stat the file");
        return -1;
    }
    if ((uint64_t)s.st_size != r->st_size || (uint64_t)s.st_ino != r->st_ino ||
        (uint64_t)s.st_dev != r->st_dev) {
        sp_err_set(e, SP_ERR_DATA, 0, "the file changed since it was opened (%llu bytes, "
                   "now %llu)", (unsigned long long)r->st_size, (unsigned long long)s.st_size);
        return -1;
    }
    return 0;
}

/* Zero piece k checked (once).  0, or -1 with *err set. */
static int ra_zero(struct ra *r, uint64_t k, struct sp_err *err)
{
    pthread_mutex_lock(&r->mu);
    bool done = r->zok[k / 8] >> (k % 8) & 1;
    pthread_mutex_unlock(&r->mu);
    if (done)
        return 0;
    struct sp_err e = {0};
    struct ra_slot *s = ra_slot_get(r, &e);
    int ok = s == NULL || ra_same_file(r, &e) != 0 ? -1 : pc_zero_ok(r->fd, &r->x, k,
                                                                       s->scratch, &e);
    if (s != NULL)
        ra_slot_put(r, s);
    if (ok == 0)
        sp_err_set(&e, SP_ERR_DATA, 0, "a zero piece that is not the encoding of its length");
    if (ok != 1) {
        ra_fail(r, k, &e, err);
        return -1;
    }
    pthread_mutex_lock(&r->mu);
    r->zok[k / 8] |= (uint8_t)(1u << (k % 8));
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* Data piece k read, checked and decoded into a new buffer (*out, freed by
 * the caller).  0, or -1 with *e set. */
static int ra_decode(struct ra *r, uint64_t k, uint8_t **out, struct sp_err *e)
{
    const struct idx *x = &r->x;
    struct ra_slot *s = ra_slot_get(r, e);
    if (s == NULL)
        return -1;
    uint64_t ulen = pc_ulen(x, k), clen = pc_clen(x, k);
    int rc = -1;
    if (s->in == NULL)
        s->in = malloc((size_t)x->max_clen + 2);
    *out = malloc(ulen > 0 ? (size_t)ulen : 1);
    if (s->in == NULL || *out == NULL)
        sp_err_set(e, SP_ERR_NOMEM, 0, "out of memory");
    else if (ra_same_file(r, e) == 0 && pc_read_data(r->fd, x, k, s->in, e) == 0) {
        enum pc_verdict v = pc_data_check(s->d, x, k, s->in, (size_t)clen + 2, *out);
        if (v == PC_BAD_DATA)
            sp_err_set(e, SP_ERR_DATA, 0, "invalid compressed data in its piece");
        else if (v == PC_BAD_CRC)
            sp_err_set(e, SP_ERR_CHECK, 0, "its piece fails its CRC-32");
        rc = v == PC_OK ? 0 : -1;
    }
    ra_slot_put(r, s);
    if (rc != 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- the cache (every function here under r->mu) ---- */

static struct ra_ent **ra_slot_of(struct ra *r, uint64_t k)
{
    uint64_t h = k * 0x9e3779b97f4a7c15ull;
    return &r->bucket[(h >> 32) & (r->nbucket - 1)];
}

static struct ra_ent *ra_lookup(struct ra *r, uint64_t k)
{
    struct ra_ent *e = *ra_slot_of(r, k);
    while (e != NULL && e->k != k)
        e = e->hnext;
    return e;
}

static void ra_lru_unlink(struct ra *r, struct ra_ent *e)
{
    if (!e->in_lru)
        return;
    *(e->prev != NULL ? &e->prev->next : &r->head) = e->next;
    *(e->next != NULL ? &e->next->prev : &r->tail) = e->prev;
    e->prev = e->next = NULL;
    e->in_lru = false;
    r->bytes -= e->len;
    r->nent--;
}

static void ra_lru_front(struct ra *r, struct ra_ent *e)
{
    ra_lru_unlink(r, e);
    e->next = r->head;
    *(r->head != NULL ? &r->head->prev : &r->tail) = e;
    r->head = e;
    e->in_lru = true;
    r->bytes += e->len;
    r->nent++;
}

static void ra_release(struct ra_ent *e)
{
    if (--e->refs == 0 && !e->listed) {
        free(e->buf);
        free(e);
    }
}

/* Out of the table and the LRU list; freed now if no reader holds it. */
static void ra_drop(struct ra *r, struct ra_ent *e)
{
    struct ra_ent **p = ra_slot_of(r, e->k);
    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    ra_lru_unlink(r, e);
    e->listed = false;
    e->refs++;
    ra_release(e);
}

/* A decoded piece e: kept if it fits, the least recently used making room. */
static void ra_keep(struct ra *r, struct ra_ent *e)
{
    if (e->len > r->cap) {
        ra_drop(r, e);
        return;
    }
    while (r->tail != NULL && (r->bytes + e->len > r->cap || r->nent + 1 > r->max_ent))
        ra_drop(r, r->tail);
    ra_lru_front(r, e);
}

/* Data piece k, decoded and checked, with a reference (ra_put): waits for a
 * decode of it under way, else decodes it.  NULL with *err set. */
static struct ra_ent *ra_get(struct ra *r, uint64_t k, struct sp_err *err)
{
    pthread_mutex_lock(&r->mu);
    for (;;) {
        struct ra_ent *e = ra_lookup(r, k);
        if (e == NULL)
            break;
        e->refs++;
        while (!e->ready && !e->failed)
            pthread_cond_wait(&r->cv, &r->mu);
        if (e->ready) {
            if (e->in_lru)
                ra_lru_front(r, e);
            pthread_mutex_unlock(&r->mu);
            return e;
        }
        ra_release(e); /* its decode failed: try it ourselves */
    }
    struct ra_ent *e = calloc(1, sizeof *e);
    if (e == NULL) {
        pthread_mutex_unlock(&r->mu);
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    e->k = k;
    e->len = (size_t)pc_ulen(&r->x, k);
    e->refs = 1;
    e->listed = true;
    struct ra_ent **b = ra_slot_of(r, k);
    e->hnext = *b;
    *b = e;
    pthread_mutex_unlock(&r->mu);
    struct sp_err de = {0};
    uint8_t *buf;
    int rc = ra_decode(r, k, &buf, &de);
    pthread_mutex_lock(&r->mu);
    if (rc == 0) {
        e->buf = buf;
        e->ready = true;
        ra_keep(r, e);
    } else {
        e->failed = true;
        ra_drop(r, e);
        ra_release(e);
        e = NULL;
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if (e == NULL)
        ra_fail(r, k, &de, err);
    return e;
}

static void ra_put(struct ra *r, struct ra_ent *e)
{
    pthread_mutex_lock(&r->mu);
    ra_release(e);
    pthread_mutex_unlock(&r->mu);
}

/* ---- read-ahead ---- */

/* A read-ahead thread: decodes the pieces queued into the cache.  A piece
 * that fails is left for the reader that needs it, which reports it. */
static void *ra_ahead_main(void *arg)
{
    struct ra *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->stop && r->rlen == 0)
            pthread_cond_wait(&r->work, &r->mu);
        if (r->stop)
            break;
        uint64_t k = r->ring[r->rhead];
        r->rhead = (r->rhead + 1) % RA_RING;
        r->rlen--;
        if (ra_lookup(r, k) != NULL)
            continue; /* cached, or being decoded */
        pthread_mutex_unlock(&r->mu);
        struct sp_err e = {0};
        struct ra_ent *got = ra_get(r, k, &e);
        if (got != NULL)
            ra_put(r, got);
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* Queue data pieces [from, to) not cached, under mu; threads started as
 * needed.  Nothing when read-ahead is off. */
static void ra_ahead_queue(struct ra *r, uint64_t from, uint64_t to)
{
    for (uint64_t k = from; k < to && k < r->x.n && r->rlen < RA_RING; k++) {
        if (!r->x.p[k].data || ra_lookup(r, k) != NULL)
            continue;
        r->ring[(r->rhead + r->rlen) % RA_RING] = k;
        r->rlen++;
    }
    while (r->nth < r->nahead && r->nth < r->rlen) {
        if (pthread_create(&r->th[r->nth], NULL, ra_ahead_main, r) != 0)
            break; /* no thread: the readers decode for themselves */
        r->nth++;
    }
    if (r->rlen > 0)
        pthread_cond_broadcast(&r->work);
}

/* Before a read of pieces [k0, k1]: the pieces after the first go to the
 * read-ahead threads, decoded in parallel with it; and when the read
 * continues the previous one (its first piece within RA_SEQ_WINDOW of
 * that one's last), the pieces after it too, as many as the threads, within half
 * the cache (so that read-ahead never evicts what it read ahead). */
static void ra_ahead(struct ra *r, uint64_t k0, uint64_t k1)
{
    if (r->nahead == 0)
        return;
    pthread_mutex_lock(&r->mu);
    if (r->held) {
        pthread_mutex_unlock(&r->mu);
        return;
    }
    bool seq = r->next_k != 0 && k0 + 1 + RA_SEQ_WINDOW >= r->next_k &&
               k0 <= r->next_k + RA_SEQ_WINDOW;
    r->next_k = k1 + 2;
    r->nseq += seq;
    uint64_t to = k1 + 1;
    if (seq) {
        uint64_t bytes = 0, want = 2 * (uint64_t)r->nahead;
        while (to < r->x.n && to - k1 <= want && bytes + pc_ulen(&r->x, to) <= r->cap / 2)
            bytes += pc_ulen(&r->x, to++);
    }
    if (k1 > k0 || to > k1 + 1)
        ra_ahead_queue(r, k0 + 1, to);
    pthread_mutex_unlock(&r->mu);
}

uint64_t ra_seq_reads(struct ra *r)
{
    pthread_mutex_lock(&r->mu);
    uint64_t n = r->nseq;
    pthread_mutex_unlock(&r->mu);
    return n;
}

void ra_hold_ahead(struct ra *r, bool hold)
{
    pthread_mutex_lock(&r->mu);
    r->held = hold;
    pthread_mutex_unlock(&r->mu);
}

static void ra_ahead_stop(struct ra *r)
{
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_broadcast(&r->work);
    pthread_mutex_unlock(&r->mu);
    for (unsigned i = 0; i < r->nth; i++)
        pthread_join(r->th[i], NULL);
    r->nth = 0;
}

int ra_extent(struct ra *r, uint64_t off, uint64_t *len, bool *zero)
{
    const struct idx *x = &r->x;
    if (off >= x->total)
        return -1;
    uint64_t k = pc_find(x, off), lo = 0, hi = r->nrun;
    while (hi - lo > 1) { /* the run holding piece k: run[lo] <= k < run[lo + 1] */
        uint64_t mid = lo + (hi - lo) / 2;
        if (r->run[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t end = r->run[lo + 1];
    *zero = !x->p[k].data;
    if (*zero) { /* as far as its pieces pass their check */
        uint64_t j = k;
        struct sp_err e = {0};
        while (j < end && j - k < RA_EXTENT_CHECK && ra_zero(r, j, &e) == 0)
            j++;
        *zero = j > k;
        end = j > k ? j : k + 1;
    }
    *len = x->p[end].uoff - off;
    return 0;
}

/* ---- reading ---- */

int64_t ra_pread(struct ra *r, void *buf, size_t len, uint64_t off, struct sp_err *err)
{
    const struct idx *x = &r->x;
    if (off >= x->total || len == 0)
        return 0;
    if (len > x->total - off)
        len = (size_t)(x->total - off);
    if (len > INT64_MAX)
        len = INT64_MAX;
    uint8_t *p = buf;
    size_t done = 0;
    uint64_t k0 = pc_find(x, off);
    ra_ahead(r, k0, pc_find(x, off + len - 1));
    for (uint64_t k = k0; done < len; k++) {
        uint64_t at = off + done, skip = at - x->p[k].uoff, end = x->p[k + 1].uoff;
        size_t n = end - at < len - done ? (size_t)(end - at) : len - done;
        if (!x->p[k].data) {
            if (ra_zero(r, k, err) != 0)
                return -1;
            memset(p + done, 0, n);
        } else {
            struct ra_ent *e = ra_get(r, k, err);
            if (e == NULL)
                return -1;
            memcpy(p + done, e->buf + skip, n);
            ra_put(r, e);
        }
        done += n;
    }
    return (int64_t)done;
}

void ra_close(struct ra *r)
{
    if (r == NULL)
        return;
    if (r->bucket != NULL)
        ra_ahead_stop(r);
    for (uint64_t i = 0; r->bucket != NULL && i < r->nbucket; i++)
        while (r->bucket[i] != NULL)
            ra_drop(r, r->bucket[i]);
    while (r->slots != NULL) {
        struct ra_slot *s = r->slots;
        r->slots = s->next;
        ra_slot_free(s);
    }
    free(r->bucket);
    free(r->zok);
    free(r->run);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    pthread_cond_destroy(&r->work);
    idx_free(&r->x);
    free(r);
}
