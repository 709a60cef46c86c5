/* le.h — fixed-width integers in a byte buffer, by byte order.
 *
 * Every format spigz reads or writes fixes its byte order: gzip, its index
 * (doc/FORMAT.md), zip, partition tables and filesystems little-endian;
 * gztool's index and a big-endian swap header big-endian.  These read and
 * write such fields byte by byte, whatever the host's order and alignment.
 *
 * The 16-bit readers return uint32_t: a uint16_t would promote to a signed
 * int in arithmetic (a field times a field could overflow it).
 *
 * Contract: p points to at least 2, 4 or 8 bytes; pure functions, any
 * thread.
 */
#ifndef SPIGZ_LE_H
#define SPIGZ_LE_H

#include <stdint.h>

static inline uint32_t le_get16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t le_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le_get64(const uint8_t *p)
{
    return (uint64_t)le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}

static inline void le_put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void le_put32(uint8_t *p, uint32_t v)
{
    le_put16(p, v);
    le_put16(p + 2, v >> 16);
}

static inline void le_put64(uint8_t *p, uint64_t v)
{
    le_put32(p, (uint32_t)v);
    le_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t be_get16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | (uint32_t)p[1];
}

static inline uint32_t be_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline uint64_t be_get64(const uint8_t *p)
{
    return (uint64_t)be_get32(p) << 32 | be_get32(p + 4);
}

static inline void be_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void be_put64(uint8_t *p, uint64_t v)
{
    be_put32(p, (uint32_t)(v >> 32));
    be_put32(p + 4, (uint32_t)v);
}

#endif
