/* pool.h — an ordered job pipeline: one producer, N workers, one writer.
 *
 * The producer takes an item with pool_get(), fills it and hands it back with
 * pool_put(), saying whether it needs work.  Worker threads run `work` on the
 * items that need it, in any order and in parallel; the writer thread runs
 * `emit` on every item strictly in the order they were put.  At most `depth`
 * items are between pool_get() and the end of their emit: pool_get() blocks
 * until the writer frees the oldest one.  That is the back-pressure that
 * bounds memory whatever the input size.
 *
 * Items live in the pool (depth of them, item_size bytes each, zeroed at
 * start) and are reused in turn: what a producer left in an item (a buffer it
 * allocated) is still there the next time pool_get() returns that item.
 *
 * Failure: a callback returning non-zero, or pool_close(p, true), stops the
 * pipeline: later items are neither worked nor emitted, pool_get() returns
 * NULL, and pool_close() reports it.  Callbacks keep their own error details.
 *
 * Threads: pool_new/get/put/close/free belong to the producer thread only.
 * `work` runs on a worker (0 <= worker < workers); `emit` runs on the writer
 * thread; an item is touched by one thread at a time, handed over under the
 * pool's lock (so no other synchronization is needed for its contents).
 * A failed mutex or condition variable call aborts: it means corruption.
 */
#ifndef SPIGZ_POOL_H
#define SPIGZ_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

typedef int (*pool_work_fn)(void *ctx, void *item, unsigned worker);
typedef int (*pool_emit_fn)(void *ctx, void *item);
typedef void (*pool_free_fn)(void *ctx, void *item);

struct pool;

/* Start `workers` (>= 1) worker threads and the writer.  NULL with *err set
 * when memory or threads are lacking. */
struct pool *pool_new(unsigned workers, unsigned depth, size_t item_size,
                      pool_work_fn work, pool_emit_fn emit, void *ctx,
                      struct sp_err *err);

/* Wake a worker only once every `batch` items that need work (default 1:
 * each), or when the producer is about to wait (pool_get on a full pool,
 * pool_drain, pool_close) or puts an item that needs none: fewer wake-ups
 * for short jobs, each a futex call and an interrupt to another core on
 * the producer's thread, at the cost of up to batch - 1 items waiting for
 * the next put.  For a producer that never waits on its input (a file). */
void pool_set_batch(struct pool *p, unsigned batch);

/* The next item to fill, or NULL when the pipeline has failed. */
void *pool_get(struct pool *p);

/* Hand back the item from the last pool_get(). */
void pool_put(struct pool *p, void *item, bool needs_work);

/* Wait until every item put so far is emitted; the pool stays open.
 * Returns 0, or -1 when the pipeline has failed. */
int pool_drain(struct pool *p);

/* Wait until every item put is emitted (or, with abort, dropped), and join
 * the threads.  Returns 0, or -1 when a callback failed or abort was asked. */
int pool_close(struct pool *p, bool abort);

/* Free the pool after pool_close(); item_free (may be NULL) sees each item. */
void pool_free(struct pool *p, pool_free_fn item_free);

#endif
