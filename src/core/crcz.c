/* crcz.c — GF(2) arithmetic modulo the CRC-32 polynomial.
 *
 * Representation: reflected, as the CRC register itself is: bit 31 holds the
 * coefficient of x^0 and bit 0 that of x^31.  P without its x^32 term is
 * 0xedb88320 in this order.
 */
#include "crcz.h"

#include <pthread.h>

#define CRCZ_POLY 0xedb88320u

/* a(x) * b(x) mod P.  32 steps at most; stops once a has no bits left. */
static uint32_t crcz_mul(uint32_t a, uint32_t b)
{
    uint32_t p = 0;
    for (uint32_t m = 1u << 31; a != 0; m >>= 1) {
        if (a & m) {
            p ^= b;
            a ^= m;
        }
        b = (b & 1) ? (b >> 1) ^ CRCZ_POLY : b >> 1; /* b *= x */
    }
    return p;
}

/* pow8[k] = x^(8 * 2^k) mod P, k = 0..63: enough for any 64-bit byte count. */
static uint32_t crcz_pow8[64];
static pthread_once_t crcz_once = PTHREAD_ONCE_INIT;

static void crcz_init(void)
{
    uint32_t x = 1u << 30;              /* x^1 */
    for (int i = 0; i < 3; i++)
        x = crcz_mul(x, x);             /* x^8 */
    for (int k = 0; k < 64; k++) {
        crcz_pow8[k] = x;
        x = crcz_mul(x, x);
    }
}

/* a * x^(8n) mod P: one multiplication per set bit of n. */
static uint32_t crcz_shift(uint32_t a, uint64_t n)
{
    pthread_once(&crcz_once, crcz_init);
    for (int k = 0; n != 0; k++, n >>= 1)
        if (n & 1)
            a = crcz_mul(crcz_pow8[k], a);
    return a;
}

uint32_t crcz_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    return crcz_shift(crc_a, len_b) ^ crc_b;
}

uint32_t crcz_zeros(uint32_t crc, uint64_t n)
{
    /* The register holds ~crc; each zero byte multiplies it by x^8. */
    return ~crcz_shift(~crc, n);
}
