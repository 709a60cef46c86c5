/* idx_w.h — the piece index writer (doc/FORMAT.md; the bytes: idx_fmt.h).
 *
 * The compressor's writer thread records every piece it emits (idx_w_add)
 * and, after the data member's trailer, writes the index members and the
 * 78-byte footer (idx_w_finish).  Records are ~10 bytes per piece, kept in
 * memory up to IDX_SPILL bytes and then in an unnamed temporary file in
 * $TMPDIR (or /tmp), so memory stays bounded for any input size.
 *
 * Contract: an idx_w belongs to one thread at a time.  Nothing prints or
 * exits; failures come back in struct sp_err.  idx_rec_size and idx_len are
 * pure functions, any thread.
 */
#ifndef SPIGZ_IDX_W_H
#define SPIGZ_IDX_W_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "idx_fmt.h"
#include "out.h"
#include "range.h"

#define IDX_SPILL (8u << 20)          /* records kept in memory before spilling */

struct idx_w;

/* may_spill: the records might outgrow IDX_SPILL (idx_w_may_spill), so the
 * temporary file is created, and written to once, now: a missing or full
 * temporary directory fails here, named in the message. */
struct idx_w *idx_w_new(bool may_spill, struct sp_err *err);

/* Whether an input of that size (or of unknown size) can need the spill. */
bool idx_w_may_spill(bool size_known, uint64_t size);

/* Record the next piece: data (with the CRC-32 of its bytes) or zero.
 * Returns 0, or -1 with *err set (the temporary file failed). */
int idx_w_add(struct idx_w *w, bool data, uint64_t ulen, uint64_t clen, uint32_t crc,
              struct sp_err *err);

/* Record the input's unreadable ranges (--rescue; sorted, disjoint, not
 * adjacent), after the last piece: they follow the pieces in the payload and
 * the footer's flag 1 says so (doc/FORMAT.md).  Call once, before finish. */
int idx_w_add_bad(struct idx_w *w, const struct sp_range *r, size_t n, struct sp_err *err);

/* Notes: what the compressor said of its input (a disk with two layouts,
 * a damaged filesystem read whole), kept for a later reader to repeat.
 * Each at most IDX_NOTE_MAX bytes of UTF-8 without control characters
 * (text.h; others are left out), at most IDX_NOTES_MAX of them; the footer's flag
 * 2 says they follow (doc/FORMAT.md).  Call once, after idx_w_add_bad(). */
bool idx_note_valid(const char *text);
int idx_w_add_notes(struct idx_w *w, const char *const *notes, size_t n, struct sp_err *err);

/* The manifest's encoded bytes (mf_encode, at most MF_MAX), after the
 * notes: footer flag 4 says it follows.  Call once, last. */
int idx_w_add_manifest(struct idx_w *w, const uint8_t *p, size_t n, struct sp_err *err);

/* Write the index members and the footer after a data member of data_len
 * bytes whose header is header_len bytes and whose content is total bytes.
 * It writes exactly idx_len(payload) bytes, payload being the bytes of every
 * record added. */
int idx_w_finish(struct idx_w *w, struct out *o, uint64_t total, uint64_t data_len,
                 uint64_t header_len);

void idx_w_free(struct idx_w *w);

/* ---- sizes: what an index costs, for the estimate's prices (the writer's
 * own arithmetic, so the two cannot part) ---- */

/* The payload bytes of one piece's record (idx_w_add's). */
size_t idx_rec_size(bool data, uint64_t ulen, uint64_t clen);

/* The index members' and footer's bytes around a payload of that many
 * bytes. */
uint64_t idx_len(uint64_t payload);

#endif
