/* isal_home.c — see isal_home.h. */
#include "config.h"
#include "isal_home.h"
#include "le.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

uint32_t ihome_crc32c(uint32_t v)
{
    uint32_t c = v; /* initial value 0, so the operand is all there is */
    for (int i = 0; i < 32; i++)
        c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
    return c;
}

#if UINTPTR_MAX > 0xffffffffu

#define IHOME_SPAN ((size_t)1 << (16 + IHOME_BITS)) /* addresses differing in bits 16..30 */

/* ihome_inv[t] is the k < 2^15 whose hash has low bits t: the inverse of
 * k -> ihome_crc32c(k) & IHOME_MASK, a bijection (checked when built). */
static uint16_t ihome_inv[IHOME_MASK + 1];
static int ihome_inv_ok;
static pthread_once_t ihome_once = PTHREAD_ONCE_INIT;

static void ihome_build(void)
{
    static uint8_t seen[IHOME_MASK + 1];
    for (uint32_t k = 0; k <= IHOME_MASK; k++) {
        uint32_t t = ihome_crc32c(k) & IHOME_MASK;
        if (seen[t]++)
            return; /* not a bijection: ihome_init() fails */
        ihome_inv[t] = (uint16_t)k;
    }
    ihome_inv_ok = 1;
}

/* Reserve a 2^31-aligned span of 2^31 + size bytes, PROT_NONE; NULL on failure. */
static uint8_t *ihome_reserve(size_t size)
{
    /* Twice the span, to find a 2^31-aligned span inside; the rest goes back. */
    size_t want = IHOME_SPAN + size, len = want + IHOME_SPAN;
    uint8_t *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uint8_t *base = (uint8_t *)(((uintptr_t)p + IHOME_SPAN - 1) & ~(uintptr_t)(IHOME_SPAN - 1));
    if (base > p)
        munmap(p, (size_t)(base - p));
    if (p + len > base + want)
        munmap(base + want, (size_t)(p + len - (base + want)));
    return base;
}

/* The k < 2^15 that puts a stream at base + (k << 16) into slot `slot`:
 * the operand is base's bits 16..47 XOR k, and the hash is linear. */
static uint32_t ihome_k(uint32_t base_hash, uint32_t slot)
{
    return ihome_inv[(slot ^ base_hash) & IHOME_MASK];
}

int ihome_init(struct ihome *h, size_t size)
{
    memset(h, 0, sizeof *h);
    pthread_once(&ihome_once, ihome_build);
    if (!ihome_inv_ok) {
        errno = EINVAL;
        return -1;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    h->size = (size + page - 1) / page * page;
    if ((h->base = ihome_reserve(h->size)) == NULL)
        return -1;
    h->base_hash = ihome_crc32c((uint32_t)((uintptr_t)h->base >> 16));
    return 0;
}

void *ihome_get(struct ihome *h, const uint8_t *in, size_t n)
{
    if (h->broken) {
        errno = EFAULT;
        return NULL;
    }
    uint32_t k = 0;
    if (n >= 6) /* the slot of bytes 2 to 5, as ISA-L's C version hashes them */
        k = ihome_k(h->base_hash, ihome_crc32c(le_get32(in + 2)));
    uint8_t *at = h->base + ((size_t)k << 16);
    void *p = mmap(at, h->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                   -1, 0);
    if (p == MAP_FAILED) {
        /* The range may have been unmapped: never map there again. */
        h->broken = 1;
        return NULL;
    }
    h->at = at; /* fresh anonymous pages: zero */
    return at;
}

int ihome_put(struct ihome *h)
{
    if (h->at == NULL)
        return 0;
    void *p = mmap(h->at, h->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                   -1, 0);
    h->at = NULL;
    if (p == MAP_FAILED) {
        h->broken = 1;
        return -1;
    }
    return 0;
}

void *ihome_fixed(struct ihome *h)
{
    if (h->fixed != NULL) {
        memset(h->fixed, 0, h->size);
        return h->fixed;
    }
    /* A reservation of its own, of which only the stream's pages stay. */
    uint8_t *base = ihome_reserve(h->size);
    if (base == NULL)
        return NULL;
    uint8_t *at = base + ((size_t)ihome_k(ihome_crc32c((uint32_t)((uintptr_t)base >> 16)), 0) << 16);
    if (mmap(at, h->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
        MAP_FAILED) {
        int e = errno;
        munmap(base, IHOME_SPAN + h->size);
        errno = e;
        return NULL;
    }
    if (at > base)
        munmap(base, (size_t)(at - base));
    munmap(at + h->size, (size_t)(base + IHOME_SPAN - at));
    return h->fixed = at; /* fresh anonymous pages: zero */
}

void ihome_fini(struct ihome *h)
{
    if (h->base != NULL)
        munmap(h->base, IHOME_SPAN + h->size);
    if (h->fixed != NULL)
        munmap(h->fixed, h->size);
    memset(h, 0, sizeof *h);
}

#else /* 32-bit: no x86-64 assembly, no reservation */

int ihome_init(struct ihome *h, size_t size)
{
    memset(h, 0, sizeof *h);
    h->size = size;
    return 0;
}

void *ihome_get(struct ihome *h, const uint8_t *in, size_t n)
{
    (void)in;
    (void)n;
    return h->at = calloc(1, h->size);
}

int ihome_put(struct ihome *h)
{
    free(h->at);
    h->at = NULL;
    return 0;
}

void *ihome_fixed(struct ihome *h)
{
    if (h->fixed == NULL)
        return h->fixed = calloc(1, h->size);
    memset(h->fixed, 0, h->size);
    return h->fixed;
}

void ihome_fini(struct ihome *h)
{
    ihome_put(h);
    free(h->fixed);
    memset(h, 0, sizeof *h);
}

#endif
