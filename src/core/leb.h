/* leb.h — unsigned LEB128, as doc/FORMAT.md writes every length of the
 * index (the piece records, the bad ranges, the notes, the manifest):
 * 7 bits a byte, low group first, the high bit set on all but the last;
 * minimal (no redundant high group), at most 10 bytes, 64 bits.
 *
 * Contract: pure functions of their arguments, any thread.  One codec for
 * the index's writer (compress/idx_w.c), its reader (restore/idx.c) and
 * the manifest (core/mf.c).
 */
#ifndef SPIGZ_LEB_H
#define SPIGZ_LEB_H

#include <stddef.h>
#include <stdint.h>

#define LEB_MAX 10 /* bytes of a 64-bit value at most */

/* v into p (LEB_MAX bytes of room): the bytes written. */
static inline size_t leb_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    do {
        p[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v != 0)
            p[n] |= 0x80;
        n++;
    } while (v != 0);
    return n;
}

/* The bytes v takes. */
static inline size_t leb_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* A value from p[0..n): the bytes used, 0 when p ends inside it, -1 when
 * it is not minimal or over 64 bits. */
static inline int leb_get(const uint8_t *p, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n && i < LEB_MAX; i++) {
        if (i == LEB_MAX - 1 && p[i] > 1)
            return -1;
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            if (i > 0 && p[i] == 0)
                return -1; /* a redundant high group */
            *v = x;
            return (int)i + 1;
        }
    }
    return n >= LEB_MAX ? -1 : 0;
}

#endif
