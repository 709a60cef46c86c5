/* isal_home.h — where ISA-L's stream lives, so that a level-1 or -2 piece
 * is a function of its chunk alone.
 *
 * ISA-L 2.30's level-2 body for x86-64 (igzip_icf_body_h1_gr_bt.asm, every
 * variant: isal_deflate_icf_body_hash_hist_01/02/04) hashes the third byte
 * of a stateless call's input from a register it never loaded with the
 * input: on that path the register still holds the isal_zstream pointer, so
 * position 2 is filed under a hash slot chosen by bits 16 to 47 of the
 * stream's address instead of by bytes 2 to 5.  Later matches to the first
 * bytes of the piece are found or missed accordingly: the piece stays valid
 * deflate, but its bytes depended on where the stream was (a worker's stack:
 * the thread, and with ASLR the run).  ISA-L's C version and the current
 * upstream assembly load the register with the input.
 *
 * This module hands out a zeroed stream at an address whose bits 16 to 30
 * make that slot the one bytes 2 to 5 hash to.  The slot is the low bits of
 * the x86 crc32 instruction (CRC-32C, initial value 0, no inversion) of its
 * operand, masked by the level's hash mask; CRC-32C with initial value 0 is
 * linear over GF(2), and on 15 bits of operand it is a bijection onto 15
 * bits of hash, so one address in 2^15 is right for each input, and the
 * body then does what the C version does.  Masks up to IHOME_MASK are
 * covered (ISA-L 2.30's level 2 uses 0x7fff); the caller checks the mask the
 * call used.
 *
 * Cost: 2 GiB of address space reserved per home (PROT_NONE, never backed:
 * no memory is committed), and per call two mmap() calls mapping the few
 * pages of the stream at the chosen address and taking them back.
 *
 * Where only a piece's size matters (the estimate's samples), steering per
 * call costs more than the compression of a small piece (two mmap() calls,
 * fresh pages, and on a threaded process TLB shootdowns: about a quarter of
 * the estimate's time at -1).  ihome_fixed() gives a stream mapped once at
 * an address whose operand hashes to slot 0, whatever the data: the size is
 * still a function of the data alone (position 2 is filed under slot 0, not
 * its own), a few bytes off ISA-L's C version at most, which the estimate's
 * calibration absorbs as it does the splice walk's bytes.
 *
 * Contract: one struct ihome per engine, used by one thread at a time;
 * nothing here prints; functions return -1 or NULL with errno set.  On a
 * 32-bit build (no room for the reservation) a home is a plain allocation:
 * ISA-L's x86-64 assembly is not used there. */
#ifndef SPIGZ_ISAL_HOME_H
#define SPIGZ_ISAL_HOME_H

#include <stddef.h>
#include <stdint.h>

#define IHOME_BITS 15
#define IHOME_MASK ((1u << IHOME_BITS) - 1)

struct ihome {
    uint8_t *base; /* 2^31-aligned start of the reservation */
    uint32_t base_hash; /* ihome_crc32c() of base's bits 16..47 */
    size_t size;   /* of the stream, rounded up to pages */
    uint8_t *at;   /* where the stream is mapped now, or NULL */
    uint8_t *fixed; /* ihome_fixed()'s stream, mapped on first use, or NULL */
    int broken;    /* a mapping failed: the range may not be ours any more */
};

/* Reserve the address space for a stream of size bytes.  0, or -1. */
int ihome_init(struct ihome *h, size_t size);

/* A zeroed stream of the size given to ihome_init(), at the address for
 * in[0..n) (any address when n < 6: the body is not reached then).  Valid
 * until ihome_put(); one at a time.  NULL with errno when mapping fails. */
void *ihome_get(struct ihome *h, const uint8_t *in, size_t n);

/* Give the stream's pages back.  0, or -1 with errno. */
int ihome_put(struct ihome *h);

/* A zeroed stream of the size given to ihome_init() at an address whose
 * operand hashes to slot 0 (the same for every home, run and thread), mapped
 * on the first call and kept: later calls only zero it.  Independent of
 * ihome_get()'s stream; valid until the next call or ihome_fini().  NULL
 * with errno when mapping fails. */
void *ihome_fixed(struct ihome *h);

/* Release the reservation and the fixed stream (a zeroed struct is fine too). */
void ihome_fini(struct ihome *h);

/* The hash slot ISA-L 2.30's body gives a 32-bit operand, before masking:
 * the crc32 instruction on it with initial value 0.  For tests. */
uint32_t ihome_crc32c(uint32_t v);

#endif
