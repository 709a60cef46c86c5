/* Unit tests for pool: strict ordering with many small jobs at every thread
 * count and depth, items that need no work, item reuse, and failures from a
 * worker, the writer and the producer.  Run under ThreadSanitizer too. */
#include "check_util.h"

#include <check.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "pool.h"

struct item {
    uint64_t seq;
    uint64_t value;    /* set by the producer, transformed by work */
    bool worked;
    bool needs_work;
    int *alloc;        /* allocated once per item, reused */
};

struct ctx {
    uint64_t next_emit;
    bool order_ok, work_ok;
    uint64_t fail_work_at, fail_emit_at; /* UINT64_MAX: never */
    atomic_uint_fast64_t worked;
    uint64_t emitted;
    unsigned nworkers;
    atomic_bool worker_bad;
};

static void tiny_pause(uint64_t seq)
{
    /* Uneven job lengths make workers finish out of order. */
    if (seq % 7 == 0) {
        struct timespec ts = {0, (long)(seq % 5) * 1000};
        nanosleep(&ts, NULL);
    }
}

static int work(void *vctx, void *vitem, unsigned worker)
{
    struct ctx *c = vctx;
    struct item *it = vitem;
    if (worker >= c->nworkers)
        atomic_store(&c->worker_bad, true);
    tiny_pause(it->seq);
    it->value = it->value * 3 + 1;
    it->worked = true;
    atomic_fetch_add(&c->worked, 1);
    return it->seq == c->fail_work_at ? -1 : 0;
}

static int emit(void *vctx, void *vitem)
{
    struct ctx *c = vctx;
    struct item *it = vitem;
    if (it->seq != c->next_emit)
        c->order_ok = false;
    if (it->worked != it->needs_work || (it->needs_work && it->value != it->seq * 3 + 1))
        c->work_ok = false;
    c->next_emit++;
    c->emitted++;
    return it->seq == c->fail_emit_at ? -1 : 0;
}

static int allocs;
static void item_free(void *vctx, void *vitem)
{
    (void)vctx;
    struct item *it = vitem;
    if (it->alloc != NULL)
        allocs--;
    free(it->alloc);
}

/* Push n jobs; returns how many pool_get() accepted. */
static uint64_t produce(struct pool *p, uint64_t n)
{
    uint64_t i;
    for (i = 0; i < n; i++) {
        struct item *it = pool_get(p);
        if (it == NULL)
            break;
        if (it->alloc == NULL) {
            it->alloc = malloc(sizeof(int));
            allocs++;
        }
        it->seq = i;
        it->value = i;
        it->worked = false;
        it->needs_work = i % 5 != 3; /* every fifth item goes straight through */
        pool_put(p, it, it->needs_work);
    }
    return i;
}

static void ctx_init(struct ctx *c, unsigned workers)
{
    *c = (struct ctx){.order_ok = true, .work_ok = true, .fail_work_at = UINT64_MAX,
                      .fail_emit_at = UINT64_MAX, .nworkers = workers};
}

START_TEST(order_many_small_jobs)
{
    static const unsigned depths[] = {1, 2, 3, 5, 16};
    for (unsigned w = 1; w <= 8; w++)
        for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
            struct ctx c;
            ctx_init(&c, w);
            struct sp_err err = {0};
            struct pool *p = pool_new(w, depths[d], sizeof(struct item), work, emit, &c, &err);
            ck_assert_ptr_nonnull(p);
            uint64_t n = 20000;
            ck_assert_uint_eq(produce(p, n), n);
            ck_assert_int_eq(pool_close(p, false), 0);
            /* items keep their buffers across reuse */
            ck_assert_int_le(allocs, (int)depths[d]);
            pool_free(p, item_free);
            ck_assert_int_eq(allocs, 0);
            ck_assert(c.order_ok);
            ck_assert(c.work_ok);
            ck_assert(!atomic_load(&c.worker_bad));
            ck_assert_uint_eq(c.emitted, n);
            ck_assert_uint_eq(atomic_load(&c.worked), n - n / 5);
        }
}
END_TEST

/* pool_drain() returns once everything put so far is emitted, and the
 * pool goes on taking items; after a failure it says so. */
START_TEST(drain_waits_and_keeps_the_pool)
{
    for (unsigned w = 1; w <= 4; w++) {
        struct ctx c;
        ctx_init(&c, w);
        struct sp_err err = {0};
        struct pool *p = pool_new(w, 5, sizeof(struct item), work, emit, &c, &err);
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(pool_drain(p), 0); /* nothing put: returns at once */
        uint64_t n = 3000;
        ck_assert_uint_eq(produce(p, n), n);
        ck_assert_int_eq(pool_drain(p), 0);
        ck_assert_uint_eq(c.emitted, n);
        ck_assert_uint_eq(atomic_load(&c.worked), n - n / 5);
        /* more items after the drain, numbered on */
        for (uint64_t i = n; i < 2 * n; i++) {
            struct item *it = pool_get(p);
            ck_assert_ptr_nonnull(it);
            *it = (struct item){.seq = i, .value = i, .needs_work = true, .alloc = it->alloc};
            pool_put(p, it, true);
        }
        ck_assert_int_eq(pool_drain(p), 0);
        ck_assert_uint_eq(c.emitted, 2 * n);
        ck_assert_int_eq(pool_close(p, false), 0);
        pool_free(p, item_free);
        ck_assert(c.order_ok);
        ck_assert(c.work_ok);
    }
    struct ctx c;
    ctx_init(&c, 2);
    c.fail_work_at = 100;
    struct sp_err err = {0};
    struct pool *p = pool_new(2, 5, sizeof(struct item), work, emit, &c, &err);
    ck_assert_ptr_nonnull(p);
    produce(p, 1000);
    ck_assert_int_eq(pool_drain(p), -1);
    ck_assert_int_eq(pool_close(p, false), -1);
    pool_free(p, item_free);
}
END_TEST

/* pool_set_batch(): workers are woken once every `batch` items, yet every
 * item is worked and emitted in order, whether the batch is larger than
 * the pool (the producer then wakes them before it waits), all items need
 * work (none releases the held ones on its way), or the producer drains a
 * number of items that is no multiple of the batch. */
START_TEST(batched_wakeups)
{
    static const unsigned batches[] = {2, 3, 4, 8, 20};
    static const unsigned depths[] = {1, 3, 5, 16};
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++)
        for (unsigned w = 1; w <= 4; w++)
            for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
                struct ctx c;
                ctx_init(&c, w);
                struct sp_err err = {0};
                struct pool *p = pool_new(w, depths[d], sizeof(struct item), work, emit, &c, &err);
                ck_assert_ptr_nonnull(p);
                pool_set_batch(p, batches[b]);
                uint64_t n = 3001;
                ck_assert_uint_eq(produce(p, n), n); /* every fifth needs no work */
                ck_assert_int_eq(pool_drain(p), 0);
                ck_assert_uint_eq(c.emitted, n);
                for (uint64_t i = n; i < n + 7; i++) { /* all need work: 7 held at most */
                    struct item *it = pool_get(p);
                    ck_assert_ptr_nonnull(it);
                    *it = (struct item){.seq = i, .value = i, .needs_work = true, .alloc = it->alloc};
                    pool_put(p, it, true);
                }
                ck_assert_int_eq(pool_drain(p), 0);
                ck_assert_uint_eq(c.emitted, n + 7);
                ck_assert_int_eq(pool_close(p, false), 0);
                pool_free(p, item_free);
                ck_assert(c.order_ok);
                ck_assert(c.work_ok);
                ck_assert_uint_eq(atomic_load(&c.worked), n - n / 5 - (n % 5 > 3) + 7);
            }
}
END_TEST

START_TEST(worker_failure_stops_pipeline)
{
    for (unsigned w = 1; w <= 4; w++) {
        struct ctx c;
        ctx_init(&c, w);
        c.fail_work_at = 1000;
        struct sp_err err = {0};
        struct pool *p = pool_new(w, 6, sizeof(struct item), work, emit, &c, &err);
        ck_assert_ptr_nonnull(p);
        uint64_t accepted = produce(p, 1000000);
        ck_assert_uint_lt(accepted, 1000000); /* the producer was told to stop */
        ck_assert_int_eq(pool_close(p, false), -1);
        ck_assert_uint_le(c.emitted, 1000); /* nothing at or after the failure */
        ck_assert(c.order_ok);
        pool_free(p, item_free);
    }
}
END_TEST

START_TEST(writer_failure_stops_pipeline)
{
    struct ctx c;
    ctx_init(&c, 3);
    c.fail_emit_at = 500;
    struct sp_err err = {0};
    struct pool *p = pool_new(3, 8, sizeof(struct item), work, emit, &c, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_lt(produce(p, 1000000), 1000000);
    ck_assert_int_eq(pool_close(p, false), -1);
    ck_assert_uint_eq(c.emitted, 501);
    pool_free(p, item_free);
}
END_TEST

START_TEST(producer_abort)
{
    struct ctx c;
    ctx_init(&c, 2);
    struct sp_err err = {0};
    struct pool *p = pool_new(2, 4, sizeof(struct item), work, emit, &c, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(produce(p, 100), 100);
    ck_assert_int_eq(pool_close(p, true), -1);
    ck_assert(c.order_ok);
    ck_assert_uint_le(c.emitted, 100);
    pool_free(p, item_free);
}
END_TEST

START_TEST(empty_run)
{
    struct ctx c;
    ctx_init(&c, 4);
    struct sp_err err = {0};
    struct pool *p = pool_new(4, 4, sizeof(struct item), work, emit, &c, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(pool_close(p, false), 0);
    ck_assert_uint_eq(c.emitted, 0);
    pool_free(p, item_free);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, order_many_small_jobs);
    tcase_add_test(t, drain_waits_and_keeps_the_pool);
    tcase_add_test(t, batched_wakeups);
    tcase_add_test(t, worker_failure_stops_pipeline);
    tcase_add_test(t, writer_failure_stops_pipeline);
    tcase_add_test(t, producer_abort);
    tcase_add_test(t, empty_run);
    suite_add_tcase(s, t);
    return run_suite(s);
}
