/* crcz.h — CRC-32 (the gzip/zlib polynomial) arithmetic without the data.
 *
 * A CRC-32 is a remainder modulo the polynomial P; appending n bytes to a
 * message multiplies its register by x^(8n) mod P.  That lets the writer
 * combine the CRCs that workers computed for their chunks, and get the CRC of
 * a run of zeros of any length (a 64 GiB hole) in O(log n) without a byte.
 *
 * Contract: pure functions, callable from any thread; the one-time table of
 * x^(2^k) is built under pthread_once on first use.  Lengths are 64-bit.
 */
#ifndef SPIGZ_CRCZ_H
#define SPIGZ_CRCZ_H

#include <stdint.h>

/* CRC of A||B, given crc(A) = crc_a, crc(B) = crc_b and len_b = |B|. */
uint32_t crcz_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

/* CRC of a message with CRC crc followed by n zero bytes.
 * crcz_zeros(0, n) is the CRC of n zeros. */
uint32_t crcz_zeros(uint32_t crc, uint64_t n);

#endif
