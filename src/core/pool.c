/* pool.c — see pool.h.
 *
 * One mutex guards three counters over a ring of `depth` slots:
 *   emitted <= put, put - emitted <= depth, and take (the next item workers
 *   look at) kept within [emitted, put] so slot take % depth is item take.
 * Slot s % depth holds item number s.  The producer waits on `cv_free` for
 * put - emitted < depth; workers wait on `cv_work` for a READY slot at or
 * after `take`; the writer waits on `cv_done` for slot `emitted` to be DONE.
 * Jobs are ~1 MiB of deflate (milliseconds), so one lock is not contended.
 */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum pool_state { POOL_FREE, POOL_READY, POOL_BUSY, POOL_DONE };

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done, cv_free;
    unsigned depth, nworkers, started;
    size_t item_size;
    unsigned char *items;
    enum pool_state *state;
    uint64_t put, take, emitted;
    unsigned batch, held;  /* pool_set_batch: items put before a worker is woken */
    bool closing, failed;
    pool_work_fn work;
    pool_emit_fn emit;
    void *ctx;
    pthread_t writer;
    bool writer_started;
    pthread_t *workers;
};

/* Thread primitives that cannot fail silently. */
static void pool_check(int rc)
{
    if (rc != 0)
        abort();
}
#define LOCK(p) pool_check(pthread_mutex_lock(&(p)->mu))
#define UNLOCK(p) pool_check(pthread_mutex_unlock(&(p)->mu))
#define WAIT(p, cv) pool_check(pthread_cond_wait(&(p)->cv, &(p)->mu))
#define SIGNAL(p, cv) pool_check(pthread_cond_signal(&(p)->cv))
#define BROADCAST(p, cv) pool_check(pthread_cond_broadcast(&(p)->cv))

static void *pool_item(struct pool *p, uint64_t seq)
{
    return p->items + (size_t)(seq % p->depth) * p->item_size;
}

struct pool_worker_arg {
    struct pool *p;
    unsigned id;
};

/* Mark a failure (lock held) and wake everyone so they can drain. */
static void pool_fail(struct pool *p)
{
    p->failed = true;
    BROADCAST(p, cv_work);
    BROADCAST(p, cv_done);
    BROADCAST(p, cv_free);
}

static void *pool_worker(void *arg)
{
    struct pool *p = ((struct pool_worker_arg *)arg)->p;
    unsigned id = ((struct pool_worker_arg *)arg)->id;
    free(arg);
    LOCK(p);
    for (;;) {
        /* Slots before `emitted` may already hold later items: start at or
         * after it, where slot seq % depth is item seq. */
        if (p->take < p->emitted)
            p->take = p->emitted;
        while (p->take < p->put && p->state[p->take % p->depth] != POOL_READY)
            p->take++; /* items that need no work */
        if (p->take < p->put) {
            uint64_t seq = p->take++;
            p->state[seq % p->depth] = POOL_BUSY;
            bool skip = p->failed;
            UNLOCK(p);
            int rc = skip ? 0 : p->work(p->ctx, pool_item(p, seq), id);
            LOCK(p);
            p->state[seq % p->depth] = POOL_DONE;
            if (rc != 0 && !p->failed)
                pool_fail(p);
            if (seq == p->emitted)
                SIGNAL(p, cv_done);
            continue;
        }
        if (p->closing)
            break;
        WAIT(p, cv_work);
    }
    UNLOCK(p);
    return NULL;
}

static void *pool_writer(void *arg)
{
    struct pool *p = arg;
    LOCK(p);
    for (;;) {
        if (p->emitted < p->put && p->state[p->emitted % p->depth] == POOL_DONE) {
            uint64_t seq = p->emitted;
            bool skip = p->failed;
            UNLOCK(p);
            int rc = skip ? 0 : p->emit(p->ctx, pool_item(p, seq));
            LOCK(p);
            p->state[seq % p->depth] = POOL_FREE;
            p->emitted++;
            if (rc != 0 && !p->failed)
                pool_fail(p);
            SIGNAL(p, cv_free);
            continue;
        }
        if (p->closing && p->emitted == p->put)
            break;
        WAIT(p, cv_done);
    }
    UNLOCK(p);
    return NULL;
}

static int pool_start(struct pool *p, struct sp_err *err)
{
    int rc = pthread_create(&p->writer, NULL, pool_writer, p);
    if (rc != 0) {
        sp_err_set(err, SP_ERR_SYS, rc, "cannot start the writer thread");
        return -1;
    }
    p->writer_started = true;
    p->started = 0;
    for (unsigned i = 0; i < p->nworkers; i++) {
        struct pool_worker_arg *a = malloc(sizeof *a);
        if (a == NULL) {
            rc = ENOMEM;
        } else {
            *a = (struct pool_worker_arg){p, i};
            rc = pthread_create(&p->workers[i], NULL, pool_worker, a);
            if (rc != 0)
                free(a);
        }
        if (rc != 0) {
            sp_err_set(err, SP_ERR_SYS, rc, "cannot start worker thread %u", i + 1);
            return -1;
        }
        p->started++;
    }
    return 0;
}

struct pool *pool_new(unsigned workers, unsigned depth, size_t item_size,
                      pool_work_fn work, pool_emit_fn emit, void *ctx,
                      struct sp_err *err)
{
    struct pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        goto nomem;
    p->depth = depth;
    p->batch = 1;
    p->nworkers = workers;
    p->item_size = item_size;
    p->work = work;
    p->emit = emit;
    p->ctx = ctx;
    p->items = calloc(depth, item_size);
    p->state = calloc(depth, sizeof *p->state);
    p->workers = calloc(workers, sizeof *p->workers);
    if (p->items == NULL || p->state == NULL || p->workers == NULL)
        goto nomem;
    pool_check(pthread_mutex_init(&p->mu, NULL));
    pool_check(pthread_cond_init(&p->cv_work, NULL));
    pool_check(pthread_cond_init(&p->cv_done, NULL));
    pool_check(pthread_cond_init(&p->cv_free, NULL));
    if (pool_start(p, err) != 0) {
        pool_close(p, true);
        pool_free(p, NULL);
        return NULL;
    }
    return p;
nomem:
    if (p != NULL) {
        free(p->items);
        free(p->state);
        free(p->workers);
        free(p);
    }
    sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory for the thread pool");
    return NULL;
}

/* Wake the workers for the items put and not yet announced (lock held). */
static void pool_release(struct pool *p)
{
    if (p->held > 0) {
        BROADCAST(p, cv_work);
        p->held = 0;
    }
}

void pool_set_batch(struct pool *p, unsigned batch)
{
    LOCK(p);
    p->batch = batch < 1 ? 1 : batch;
    UNLOCK(p);
}

void *pool_get(struct pool *p)
{
    LOCK(p);
    if (!p->failed && p->put - p->emitted >= p->depth)
        pool_release(p); /* about to wait: the workers must have it all */
    while (!p->failed && p->put - p->emitted >= p->depth)
        WAIT(p, cv_free);
    void *item = p->failed ? NULL : pool_item(p, p->put);
    UNLOCK(p);
    return item;
}

void pool_put(struct pool *p, void *item, bool needs_work)
{
    LOCK(p);
    if (item != pool_item(p, p->put))
        abort(); /* not the item pool_get() returned */
    p->state[p->put % p->depth] = needs_work ? POOL_READY : POOL_DONE;
    p->put++;
    if (needs_work && ++p->held >= p->batch) {
        SIGNAL(p, cv_work);
        p->held = 0;
    } else if (!needs_work) {
        pool_release(p); /* the writer needs those before this one */
        SIGNAL(p, cv_done);
    }
    UNLOCK(p);
}

int pool_drain(struct pool *p)
{
    LOCK(p);
    pool_release(p);
    while (!p->failed && p->emitted < p->put)
        WAIT(p, cv_free); /* the writer signals it after every emit */
    bool failed = p->failed;
    UNLOCK(p);
    return failed ? -1 : 0;
}

int pool_close(struct pool *p, bool abort_run)
{
    LOCK(p);
    if (abort_run && !p->failed)
        pool_fail(p);
    p->closing = true;
    BROADCAST(p, cv_work);
    BROADCAST(p, cv_done);
    bool failed;
    UNLOCK(p);
    for (unsigned i = 0; i < p->started; i++)
        pool_check(pthread_join(p->workers[i], NULL));
    p->started = 0;
    if (p->writer_started) {
        pool_check(pthread_join(p->writer, NULL));
        p->writer_started = false;
    }
    LOCK(p);
    failed = p->failed;
    UNLOCK(p);
    return failed ? -1 : 0;
}

void pool_free(struct pool *p, pool_free_fn item_free)
{
    if (p == NULL)
        return;
    if (item_free != NULL)
        for (unsigned i = 0; i < p->depth; i++)
            item_free(p->ctx, p->items + (size_t)i * p->item_size);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv_work);
    pthread_cond_destroy(&p->cv_done);
    pthread_cond_destroy(&p->cv_free);
    free(p->items);
    free(p->state);
    free(p->workers);
    free(p);
}
