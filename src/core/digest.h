/* digest.h — the image digest: XXH3-128 over 4 KiB blocks, in groups of
 * 256 (doc/FORMAT.md §2.3), recorded in a backup's manifest and checked by
 * -t.
 *
 * What it answers: is the image the one that was read (no bit of it
 * changed on the way, whatever the pieces and their CRCs say)?  That is
 * accidental change, which a 128-bit hash makes as unlikely as any (a
 * forger rewrites the digest beside the data, so a cryptographic hash
 * would buy nothing here), and XXH3 runs at 40 GB/s a core where SHA-256
 * runs at 1.8: measured side by side (bench/manifest-bench.sh), SHA-256
 * made a -1 backup 21% slower and -t 53% slower; this, 5.7% and 10%, and
 * at the default -6 1.5% or less (doc/BENCHMARKS.md).  A plain hash of the image would cost every byte of every zero
 * run: the tree makes a zero block's hash a constant and a whole 1 MiB
 * group of zero blocks one 16-byte input, and lets the blocks of a data
 * chunk be hashed by the worker that compresses (or decodes) it, in
 * parallel, while the ordered writer folds them in.  The digest is a
 * function of the content alone: not of the pieces, the options, the
 * threads or the kind of input.
 *
 * Contract: dg_leaves() is a pure function, any thread; a dg belongs to one
 * thread at a time (the one that sees the content in order).
 * Nothing prints or exits; libxxhash does the hashing (a failure of its
 * state functions returns -1; none is expected).
 */
#ifndef SPIGZ_DIGEST_H
#define SPIGZ_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define DG_LEN 16          /* XXH3-128, canonical (big-endian) */
#define DG_BLOCK 4096      /* a leaf: 4 KiB of the content */
#define DG_GROUP 256       /* leaves per group: 1 MiB */

/* The manifest's key for the digest (FORMAT.md §2.2): DG_LEN bytes. */
#define DG_KEY "image.xxh3-128-tree"

/* The leaves of the len / DG_BLOCK whole blocks at buf[0..len), which must
 * start at a block boundary of the content, into out (DG_LEN bytes each).
 * The bytes after the last whole block are left to dg_add.  Any thread, on
 * its own buffers: a worker's, for the chunk it holds. */
void dg_leaves(const uint8_t *buf, size_t len, uint8_t *out);

/* The running digest of a content seen in order. */
struct dg;
struct dg *dg_new(void);
void dg_free(struct dg *d);

/* The next len bytes of the content.  leaves: dg_leaves() of buf, or NULL
 * (used only when the content so far ends on a block boundary, as it does
 * when buf's content offset does).  0 or -1. */
int dg_add(struct dg *d, const uint8_t *buf, size_t len, const uint8_t *leaves);

/* The next n bytes of the content are zeros: a whole group in one step. */
int dg_zeros(struct dg *d, uint64_t n);

/* The digest of everything added (its length included).  0 or -1; d may
 * not be used after. */
int dg_final(struct dg *d, uint8_t out[DG_LEN]);

/* The bytes added so far. */
uint64_t dg_length(const struct dg *d);

/* The digest as "xxh3-128-tree:" and 32 hex digits, into b (at least
 * DG_TEXT_LEN bytes). */
#define DG_TEXT_LEN 64
char *dg_text(const uint8_t d[DG_LEN], char *b);

#endif
