/* reader.c — see reader.h.
 *
 * One mutex guards a queue of messages (reader -> consumer) and a stack of
 * free windows (consumer -> reader).  A message is a count of zero bytes, or
 * a window with its runs, or the end (or an error).  Zero counts merge with a
 * zero message still in the queue, so the queue never fills with zeros.
 *
 * A scout (scout.h) runs beside the reader for regular files and devices;
 * in_next() asks it before reading.  rd_start() starts it, rd_stop() stops
 * it after the reader thread has ended.
 *
 * Stopping: the consumer sets `stop`; the reader notices between reads.  A
 * read that may block forever (a pipe nobody writes to) is the only place the
 * reader can be cancelled, so rd_stop() never hangs on a stalled input.
 */
#include "reader.h"
#include "block.h"
#include "scan.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RD_QUEUE 64

struct rd_span {
    uint32_t off, len;
    bool zero;
};

struct rd_win {
    uint8_t *buf;
    unsigned nruns;
    struct rd_span *runs; /* wsize / SCAN_BLOCK at most */
};

struct rd_msg {
    uint64_t zeros;      /* with win == NULL and end == 0 */
    struct rd_win *win;
    int end;             /* 1: end of input, -1: read error */
};

struct rd {
    pthread_mutex_t mu;
    pthread_cond_t cv_msg, cv_space;
    pthread_t th;
    bool here;               /* rd_open: no thread, the caller reads */
    int ended;               /* here: 1 at the end, -1 after an error */
    bool started, stop;
    struct in_src *in;
    struct rd_win *wins;
    unsigned nwin, nfree;
    struct rd_win **free;
    struct rd_msg q[RD_QUEUE];
    unsigned head, count;
    struct sp_err err;       /* the reader thread's */
    /* consumer side */
    struct rd_win *cur;
    unsigned next;
};

static void rd_check(int rc)
{
    if (rc != 0)
        abort(); /* a failed lock means corruption: stop rather than misbehave */
}
#define LOCK(r) rd_check(pthread_mutex_lock(&(r)->mu))
#define UNLOCK(r) rd_check(pthread_mutex_unlock(&(r)->mu))

/* Queue a message (lock held); waits for room.  False when stopping. */
static bool rd_post(struct rd *r, struct rd_msg m)
{
    if (m.win == NULL && m.end == 0 && r->count > 0) {
        struct rd_msg *last = &r->q[(r->head + r->count - 1) % RD_QUEUE];
        if (last->win == NULL && last->end == 0) {
            last->zeros += m.zeros;
            return true;
        }
    }
    while (!r->stop && r->count == RD_QUEUE)
        rd_check(pthread_cond_wait(&r->cv_space, &r->mu));
    if (r->stop)
        return false;
    r->q[(r->head + r->count++) % RD_QUEUE] = m;
    rd_check(pthread_cond_signal(&r->cv_msg));
    return true;
}

/* Split a window into maximal runs of zero and data blocks (scan_run, as
 * seg_feed does).  True if all zero. */
static bool rd_classify(struct rd_win *w, size_t len)
{
    w->nruns = 0;
    for (size_t i = 0, n; i < len; i += n) {
        bool zero;
        n = scan_run(w->buf + i, len - i, &zero);
        w->runs[w->nruns++] = (struct rd_span){(uint32_t)i, (uint32_t)n, zero};
    }
    return w->nruns == 1 && w->runs[0].zero;
}

/* Read one extent into w; cancellable only while blocked in the read. */
static int rd_read(struct rd *r, struct rd_win *w, struct in_ext *ext, struct sp_err *err)
{
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
    int rc = in_next(r->in, w->buf, ext, err);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return rc;
}

static void *rd_main(void *arg)
{
    struct rd *r = arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    for (;;) {
        LOCK(r);
        while (!r->stop && r->nfree == 0)
            rd_check(pthread_cond_wait(&r->cv_space, &r->mu));
        if (r->stop) {
            UNLOCK(r);
            return NULL;
        }
        struct rd_win *w = r->free[--r->nfree];
        UNLOCK(r);
        struct in_ext ext;
        struct sp_err e = {0};
        int rc = rd_read(r, w, &ext, &e);
        bool zero = rc > 0 && (ext.data == NULL || rd_classify(w, (size_t)ext.len));
        LOCK(r);
        struct rd_msg m = {0, NULL, 0};
        if (rc <= 0) {
            m.end = rc == 0 ? 1 : -1;
            r->err = e;
        } else if (zero) {
            m.zeros = ext.len;
        } else {
            m.win = w;
        }
        if (m.win == NULL)
            r->free[r->nfree++] = w;
        bool posted = rd_post(r, m);
        UNLOCK(r);
        if (!posted || rc <= 0)
            return NULL;
    }
}

static void rd_free(struct rd *r)
{
    for (unsigned i = 0; r->wins != NULL && i < r->nwin; i++) {
        free(r->wins[i].buf);
        free(r->wins[i].runs);
    }
    free(r->wins);
    free(r->free);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv_msg);
    pthread_cond_destroy(&r->cv_space);
    free(r);
}

/* The reader with nwin windows, no thread yet; NULL out of memory. */
static struct rd *rd_new(struct in_src *in, unsigned nwin)
{
    struct rd *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    rd_check(pthread_mutex_init(&r->mu, NULL));
    rd_check(pthread_cond_init(&r->cv_msg, NULL));
    rd_check(pthread_cond_init(&r->cv_space, NULL));
    r->in = in;
    r->nwin = nwin;
    r->wins = calloc(nwin, sizeof *r->wins);
    r->free = calloc(nwin, sizeof *r->free);
    if (r->wins == NULL || r->free == NULL)
        goto nomem_free;
    for (unsigned i = 0; i < nwin; i++) {
        struct rd_win *w = &r->wins[i];
        if (posix_memalign((void **)&w->buf, SCAN_BLOCK, in->wsize) != 0) {
            w->buf = NULL;
            goto nomem_free;
        }
        if ((w->runs = calloc(in->wsize / SCAN_BLOCK + 1, sizeof *w->runs)) == NULL)
            goto nomem_free;
        r->free[r->nfree++] = w;
    }
    return r;
nomem_free:
    rd_free(r);
    return NULL;
}

struct rd *rd_open(struct in_src *in, struct sp_err *err)
{
    struct rd *r = rd_new(in, 1);
    if (r == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory for read windows");
        return NULL;
    }
    r->here = true;
    return r;
}

struct rd *rd_start(struct in_src *in, unsigned nwin, struct sp_err *err)
{
    struct rd *r = rd_new(in, nwin);
    if (r == NULL)
        goto nomem;
    /* with zero ranges the free space is skipped unread: a scout would read it */
    if (in->kind != IN_STREAM && in->size_known && in->nzr == 0)
        in->scout = scout_start(in->fd, in->base, in->size, in->seek_holes);
    int rc = pthread_create(&r->th, NULL, rd_main, r);
    if (rc != 0) {
        sp_err_set(err, SP_ERR_SYS, rc, "cannot start the reader thread");
        scout_stop(in->scout);
        in->scout = NULL;
        rd_free(r);
        return NULL;
    }
    r->started = true;
    return r;
nomem:
    sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory for read windows");
    return NULL;
}

/* The next run of the current window, if any is left. */
static bool rd_take_run(struct rd *r, struct rd_run *run)
{
    if (r->cur == NULL || r->next == r->cur->nruns)
        return false;
    const struct rd_span *s = &r->cur->runs[r->next++];
    run->data = s->zero ? NULL : r->cur->buf + s->off;
    run->len = s->len;
    return true;
}

/* rd_open's rd_next: read and classify the next extent here. */
static int rd_next_here(struct rd *r, struct rd_run *run, struct sp_err *err)
{
    while (!rd_take_run(r, run)) {
        if (r->ended != 0) { /* the end, or the error, stays for later calls */
            if (r->ended < 0)
                *err = r->err;
            return r->ended > 0 ? 0 : -1;
        }
        struct rd_win *w = &r->wins[0];
        struct in_ext ext;
        int rc = in_next(r->in, w->buf, &ext, &r->err);
        if (rc <= 0) {
            r->ended = rc == 0 ? 1 : -1;
            continue;
        }
        if (ext.data == NULL) {
            *run = (struct rd_run){NULL, ext.len};
            return 1;
        }
        rd_classify(w, (size_t)ext.len);
        r->cur = w;
        r->next = 0;
    }
    return 1;
}

int rd_next(struct rd *r, struct rd_run *run, struct sp_err *err)
{
    if (r->here)
        return rd_next_here(r, run, err);
    if (rd_take_run(r, run))
        return 1;
    LOCK(r);
    if (r->cur != NULL) {              /* the caller is done with it */
        r->free[r->nfree++] = r->cur;
        r->cur = NULL;
        rd_check(pthread_cond_signal(&r->cv_space));
    }
    while (r->count == 0)
        rd_check(pthread_cond_wait(&r->cv_msg, &r->mu));
    struct rd_msg m = r->q[r->head];
    if (m.end == 0) {                  /* the end stays queued for later calls */
        r->head = (r->head + 1) % RD_QUEUE;
        r->count--;
        rd_check(pthread_cond_signal(&r->cv_space));
    }
    if (m.end < 0)
        *err = r->err;
    UNLOCK(r);
    if (m.end != 0)
        return m.end > 0 ? 0 : -1;
    if (m.win == NULL) {
        *run = (struct rd_run){NULL, m.zeros};
        return 1;
    }
    r->cur = m.win;
    r->next = 0;
    return rd_take_run(r, run) ? 1 : rd_next(r, run, err);
}

void rd_stop(struct rd *r)
{
    if (r == NULL)
        return;
    LOCK(r);
    r->stop = true;
    rd_check(pthread_cond_broadcast(&r->cv_space));
    UNLOCK(r);
    if (r->started) {
        /* A reader blocked reading a silent pipe would never see `stop`. */
        pthread_cancel(r->th);
        rd_check(pthread_join(r->th, NULL));
    }
    scout_stop(r->in->scout); /* after the reader: it is the scout's caller */
    r->in->scout = NULL;
    rd_free(r);
}

int rd_feed(struct rd *r, struct seg *s, rd_seen_fn seen, void *ctx, struct sp_err *err)
{
    struct rd_run run;
    uint64_t off = 0;
    int rc;
    while ((rc = rd_next(r, &run, err)) > 0) {
        int fed = run.data == NULL ? seg_zeros(s, run.len) : seg_data(s, run.data, (size_t)run.len);
        if (fed != 0)
            return -1;
        if (seen != NULL)
            seen(ctx, s, &run, off);
        off += run.len;
    }
    return rc;
}
