/* block.h — the 4 KiB block and its zero test: the unit every layer shares.
 *
 * spigz looks at its input, and at what it restores, in 4 KiB blocks on the
 * absolute offset grid (the last block of an input may be short).  A block
 * is zero when all its bytes are.  The compressor's segmenter (compress/
 * scan.h) routes blocks by this test; the restore side uses it to leave
 * holes, to compare and to find zero spans (restore/osink.c, dec.c,
 * salvage.c).  The names keep the scan_ prefix of the compressor's scanner,
 * where they began.
 *
 * Contract: pure functions of the bytes they are given; any thread may call
 * them; nothing is allocated, printed or kept.
 */
#ifndef SPIGZ_BLOCK_H
#define SPIGZ_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCAN_BLOCK 4096

/* True when p[0..n) is all zero bytes. */
bool scan_is_zero(const uint8_t *p, size_t n);

/* The length of the run of blocks of one class at p (whole 4 KiB blocks,
 * the last of p[0..n) possibly short), n >= 1; *zero says which class. */
size_t scan_run(const uint8_t *p, size_t n, bool *zero);

#endif
