/* crc32c.h — CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as
 * XFS and btrfs checksum their metadata.
 *
 * crc32c(0, p, n) is the standard CRC-32C of n bytes (initial value and
 * final value inverted, as zlib's crc32() is for CRC-32); crc32c(c, q, m)
 * continues a CRC c over more bytes.  A table (1 KiB, built once, under
 * pthread_once) makes it a byte at a time: only metadata is checksummed,
 * megabytes at most.  Any thread. */
#ifndef SPIGZ_CRC32C_H
#define SPIGZ_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(uint32_t crc, const void *p, size_t n);

#endif
