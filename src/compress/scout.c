/* scout.c — see scout.h.
 *
 * Reads: the scout opens the input again through /proc/self/fd so that its
 * reads far ahead have their own readahead state and never disturb the
 * reader's, and reads with preadv2(RWF_NOWAIT): only pages already in the
 * page cache are scanned.  A read that would wait for the disk fails with
 * EAGAIN.  Once SCOUT_MISSES reads have missed and they are more than one
 * read in 8, the input is taken as disk-bound and the scout stops (the kernel
 * may still fetch the one page each miss asked for, so it must give up after
 * a handful); a cached input whose pages the kernel dropped here and there
 * keeps its scout.  Without preadv2, RWF_NOWAIT or /proc there is no scout.
 * Linux 6.1 answers EAGAIN to every non-blocking buffered read of a block
 * device, cached or not, so on devices the scout gives up after its first
 * SCOUT_MISSES reads: a device being backed up is rarely in the page cache,
 * and the reader alone is then limited by the disk, not by the scan.
 *
 * Ring: slot u % SCOUT_RING holds (u << 2) | SCOUT_ZERO once unit u is known
 * zero.  The unit number inside the value makes a stale slot (left by unit
 * u - SCOUT_RING) harmless; the scout writes unit u only while
 * u < reader + SCOUT_RING, so it never overwrites a slot the reader may
 * still ask about.  Slots are read without the lock (acquire/release).
 *
 * Where to scan: the scout keeps a cursor `next`.  When the reader reaches
 * it (reader unit >= next) the cursor jumps SCOUT_GAP units ahead of the
 * reader, so the two never scan the same unit for long: through zeros the
 * reader scans SCOUT_GAP units while the scout marks the next SCOUT_GAP, then
 * the reader skips those, and so on.  The scout sleeps when it is SCOUT_RING
 * units ahead, and ends at the end of the input.
 */
#include "config.h"
#include "scout.h"
#include "block.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(HAVE_PREADV2) && defined(RWF_NOWAIT) && defined(SEEK_DATA)
#define SCOUT_ENABLED 1
#endif

#define SCOUT_ZERO 1u
#define SCOUT_MISSES 8u /* uncached reads before the scout may give up */

struct scout {
    int fd;
    uint64_t base, size, nunits;
    bool holes;
    uint8_t *buf;                 /* one unit */
    pthread_t th;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;            /* reader moved, stop, idle */
    bool stop, idle;
    uint64_t rpos;                /* reader's unit, under mu */
    uint64_t rpub;                /* reader side: the unit last published */
    unsigned misses;              /* reads that found pages not cached */
    uint64_t reads;               /* reads tried */
    bool quit;                    /* the input is not cached: scouting stopped */
    _Atomic uint64_t marked;
    _Atomic uint64_t slot[SCOUT_RING];
};

static void scout_check(int rc)
{
    if (rc != 0)
        abort(); /* a failed lock means corruption */
}

static bool scout_is_zero(struct scout *s, uint64_t u)
{
    return atomic_load_explicit(&s->slot[u % SCOUT_RING], memory_order_acquire) ==
           (u << 2 | SCOUT_ZERO);
}

uint64_t scout_zero(struct scout *s, uint64_t pos, uint64_t limit, uint64_t *next)
{
    uint64_t u = pos / SCOUT_UNIT;
    if (u != s->rpub) {
        s->rpub = u;
        scout_check(pthread_mutex_lock(&s->mu));
        s->rpos = u;
        scout_check(pthread_cond_broadcast(&s->cv));
        scout_check(pthread_mutex_unlock(&s->mu));
    }
    uint64_t end = u;
    while (end * SCOUT_UNIT < limit && scout_is_zero(s, end))
        end++;
    if (end > u) {
        uint64_t stop = end * SCOUT_UNIT;
        return (stop < limit ? stop : limit) - pos;
    }
    /* The reader reads one window at a time: looking a few units on is
     * enough to end its read where a marked unit starts. */
    *next = limit;
    for (uint64_t v = u + 1; v <= u + 4 && v * SCOUT_UNIT < limit; v++)
        if (scout_is_zero(s, v)) {
            *next = v * SCOUT_UNIT;
            break;
        }
    return 0;
}

#ifdef SCOUT_ENABLED

/* Read n bytes at off only if they are cached.  1: all read, 0: not cached
 * (or short), -1: the scout cannot read this way at all. */
static int scout_read(struct scout *s, uint8_t *p, size_t n, uint64_t off)
{
    struct iovec iov = {p, n};
    ssize_t r;
    s->reads++;
    do
        r = preadv2(s->fd, &iov, 1, (off_t)(s->base + off), RWF_NOWAIT);
    while (r < 0 && errno == EINTR);
    if (r == (ssize_t)n)
        return 1;
    if (r < 0 && errno != EAGAIN)
        return -1;
    /* A few misses in a cached input are pages the kernel dropped; mostly
     * misses is a disk the scout must not compete with. */
    if (++s->misses >= SCOUT_MISSES && s->misses * 8 > s->reads)
        s->quit = true;
    return 0;
}

/* Scan unit u; returns the next unit to look at. */
static uint64_t scout_unit(struct scout *s, uint64_t u)
{
    uint64_t off = u * SCOUT_UNIT;
    size_t len = s->size - off < SCOUT_UNIT ? (size_t)(s->size - off) : SCOUT_UNIT;
    if (s->holes) {
        off_t d = lseek(s->fd, (off_t)(s->base + off), SEEK_DATA);
        if (d < 0 && errno == ENXIO)
            return s->nunits;               /* a hole to the end */
        if (d < 0)
            s->holes = false;
        else if ((uint64_t)d - s->base >= off + len)
            return ((uint64_t)d - s->base) / SCOUT_UNIT; /* the reader skips holes */
    }
    size_t probe = len < SCAN_BLOCK ? len : SCAN_BLOCK;
    int rc = scout_read(s, s->buf, probe, off);
    if (rc == 1 && scan_is_zero(s->buf, probe) && len > probe)
        rc = scout_read(s, s->buf + probe, len - probe, off + probe);
    if (rc < 0) {
        s->quit = true;
    } else if (rc == 1 && scan_is_zero(s->buf, len)) {
        atomic_store_explicit(&s->slot[u % SCOUT_RING], u << 2 | SCOUT_ZERO,
                              memory_order_release);
        atomic_fetch_add_explicit(&s->marked, 1, memory_order_relaxed);
    }
    return u + 1;
}

/* The next unit to scan, waiting while the scout is too far ahead; false
 * when there is nothing more to do. */
static bool scout_pick(struct scout *s, uint64_t *next)
{
    scout_check(pthread_mutex_lock(&s->mu));
    for (;;) {
        if (*next <= s->rpos)
            *next = s->rpos + SCOUT_GAP;
        if (s->stop || *next >= s->nunits || s->quit)
            break;
        if (*next < s->rpos + SCOUT_RING) {
            s->idle = false;
            scout_check(pthread_mutex_unlock(&s->mu));
            return true;
        }
        s->idle = true;
        scout_check(pthread_cond_broadcast(&s->cv));
        scout_check(pthread_cond_wait(&s->cv, &s->mu));
    }
    s->idle = true;
    scout_check(pthread_cond_broadcast(&s->cv));
    scout_check(pthread_mutex_unlock(&s->mu));
    return false;
}

static void *scout_main(void *arg)
{
    struct scout *s = arg;
    uint64_t next = 0;
    while (scout_pick(s, &next))
        next = scout_unit(s, next);
    return NULL;
}

static int scout_reopen(int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return open(path, O_RDONLY | O_CLOEXEC);
}

#endif /* SCOUT_ENABLED */

static void scout_free(struct scout *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

struct scout *scout_start(int fd, uint64_t base, uint64_t size, bool holes)
{
#ifdef SCOUT_ENABLED
    if (size < 2ull * SCOUT_GAP * SCOUT_UNIT)
        return NULL;
    struct scout *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->fd = -1;
    scout_check(pthread_mutex_init(&s->mu, NULL));
    scout_check(pthread_cond_init(&s->cv, NULL));
    s->base = base;
    s->size = size;
    s->nunits = (size + SCOUT_UNIT - 1) / SCOUT_UNIT;
    s->holes = holes;
    if ((s->fd = scout_reopen(fd)) < 0 ||
        posix_memalign((void **)&s->buf, SCAN_BLOCK, SCOUT_UNIT) != 0) {
        s->buf = NULL;
        scout_free(s);
        return NULL;
    }
    if (pthread_create(&s->th, NULL, scout_main, s) != 0) {
        scout_free(s);
        return NULL;
    }
    s->started = true;
    return s;
#else
    (void)fd, (void)base, (void)size, (void)holes;
    return NULL;
#endif
}

void scout_wait_idle(struct scout *s)
{
    scout_check(pthread_mutex_lock(&s->mu));
    while (!s->idle)
        scout_check(pthread_cond_wait(&s->cv, &s->mu));
    scout_check(pthread_mutex_unlock(&s->mu));
}

bool scout_peek(struct scout *s, uint64_t u)
{
    return scout_is_zero(s, u);
}

uint64_t scout_marked(struct scout *s)
{
    return atomic_load_explicit(&s->marked, memory_order_relaxed);
}

unsigned scout_misses(struct scout *s)
{
    scout_check(pthread_mutex_lock(&s->mu));
    unsigned m = s->misses;
    scout_check(pthread_mutex_unlock(&s->mu));
    return m;
}

void scout_stop(struct scout *s)
{
    if (s == NULL)
        return;
    scout_check(pthread_mutex_lock(&s->mu));
    s->stop = true;
    scout_check(pthread_cond_broadcast(&s->cv));
    scout_check(pthread_mutex_unlock(&s->mu));
    if (s->started)
        scout_check(pthread_join(s->th, NULL));
    scout_free(s);
}
