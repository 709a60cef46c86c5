/* scout.h — a thread that finds all-zero stretches ahead of the reader.
 *
 * The reader classifies blocks in input order, one thread.  On a mostly empty
 * image that order leaves a core idle twice: while the compressors work on
 * data the reader waits for windows and scans nothing, and once the data is
 * done one thread scans the empty rest while the compressors wait.  The scout
 * scans ahead of the reader in 1 MiB units (SCOUT_UNIT, on the input's offset
 * grid) and marks the units it found all zero; the reader then skips them
 * without a read (input.c).  Through a long zero stretch the two scan
 * alternate spans of SCOUT_GAP units, so empty space is scanned about twice as
 * fast; during data the scout scans the zeros ahead, and they are done when
 * the compressors finish.
 *
 * A unit is marked only when every one of its bytes was read and found zero,
 * so the reader sees exactly the bytes it would have read: the output never
 * depends on the scout or on timing.  A unit holding data costs one 4 KiB
 * probe read (its first block) and is left unmarked.  Holes are skipped with
 * SEEK_DATA (the reader skips them itself).  The scout reads only what the
 * page cache holds and stops for good when the input is mostly not cached:
 * on a disk-bound input a second stream of reads would cost seeks and buy no
 * CPU.
 *
 * Memory: one unit buffer and a ring of SCOUT_RING slots (one per unit, 8
 * bytes each), whatever the input size; the scout stays within SCOUT_RING
 * units of the reader.  Read errors and short reads mark nothing: the reader
 * meets them itself and reports them.
 *
 * Contract: scout_start() and scout_stop() belong to the thread that owns the
 * input; scout_zero() is called by the one reader thread.  The scout never
 * prints, never fails the run; when it cannot start, reading goes on without.
 */
#ifndef SPIGZ_SCOUT_H
#define SPIGZ_SCOUT_H

#include <stdbool.h>
#include <stdint.h>

#define SCOUT_UNIT (1u << 20) /* bytes per unit: the reader's window */
#define SCOUT_GAP 32u         /* units the scout starts ahead of the reader */
#define SCOUT_RING 16384u     /* units ahead the scout may go: 16 GiB */

struct scout;

/* Scout fd (a regular file or a block device, read with pread) over the
 * bytes [base, base + size); holes says SEEK_DATA may be used.  Returns NULL
 * when the input is too small to gain anything (under 2 * SCOUT_GAP units) or
 * a resource is missing. */
struct scout *scout_start(int fd, uint64_t base, uint64_t size, bool holes);

/* The reader is at pos (relative to base).  Returns how many bytes from pos
 * are known zero, up to limit (> pos); when none are, stores in *next the
 * start of the first known-zero unit in (pos, limit), or limit. */
uint64_t scout_zero(struct scout *s, uint64_t pos, uint64_t limit, uint64_t *next);

/* Wait until the scout has nothing left to do within its reach (for tests). */
void scout_wait_idle(struct scout *s);

/* For tests: whether unit u is marked (the reader does not move), units
 * marked so far, and reads that found pages not cached. */
bool scout_peek(struct scout *s, uint64_t u);
uint64_t scout_marked(struct scout *s);
unsigned scout_misses(struct scout *s);

/* Stop the thread and free everything; NULL is fine. */
void scout_stop(struct scout *s);

#endif
