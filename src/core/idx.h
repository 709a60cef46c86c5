/* idx.h — the piece index in trailing empty gzip members (doc/FORMAT.md).
 *
 * Writing: the compressor's writer thread records every piece it emits
 * (idx_w_add) and, after the data member's trailer, writes the index members
 * and the 78-byte footer (idx_w_finish).  Records are ~10 bytes per piece,
 * kept in memory up to IDX_SPILL bytes and then in an unnamed temporary file
 * in $TMPDIR (or /tmp), so memory stays bounded for any input size.
 *
 * Reading: idx_load() finds the footer at the end of a seekable file and
 * validates everything FORMAT.md section 4 lists (checks 1-6) before
 * returning the pieces.  The index is untrusted: any failure returns 0 with
 * the reason, never a partial index.
 *
 * Contract: an idx_w belongs to one thread at a time; a loaded struct idx is
 * read-only and may be shared by threads.  Nothing prints or exits.
 */
#ifndef SPIGZ_IDX_H
#define SPIGZ_IDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "gzip.h"
#include "out.h"
#include "range.h"

#define IDX_FOOTER_LEN 78
#define IDX_MEMBER_MAX 65531          /* payload bytes per index member */
#define IDX_SPILL (8u << 20)          /* records kept in memory before spilling */
#define IDX_PIECE_MAX ((uint64_t)1 << 40)
/* Memory for the piece table at most (24 bytes a piece: 44 million pieces,
 * 44 TiB of data in spigz's 1 MiB chunks).  A footer that counts more is
 * declined unread, without a reason: the file is decoded sequentially. */
#define IDX_TABLE_MAX ((uint64_t)1 << 30)

/* ---- writing ---- */

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
#define IDX_NOTE_MAX 1024
#define IDX_NOTES_MAX 64
bool idx_note_valid(const char *text);
int idx_w_add_notes(struct idx_w *w, const char *const *notes, size_t n, struct sp_err *err);

/* Write the index members and the footer after a data member of data_len
 * bytes whose header is header_len bytes and whose content is total bytes. */
int idx_w_finish(struct idx_w *w, struct out *o, uint64_t total, uint64_t data_len,
                 uint64_t header_len);

void idx_w_free(struct idx_w *w);

/* ---- reading ---- */

struct idx_piece {
    uint64_t uoff;  /* offset in the content */
    uint64_t coff;  /* offset from the first byte of the deflate stream */
    uint32_t crc;   /* data pieces: CRC-32 of the decoded bytes */
    bool data;
};

struct idx {
    uint64_t base;        /* file offset of the data member */
    uint64_t total;       /* content length */
    uint64_t data_len, header_len, index_len;
    uint64_t n;           /* pieces; p[n] is a sentinel holding the ends */
    struct idx_piece *p;
    uint64_t max_ulen, max_clen; /* largest data piece, decoded and compressed */
    uint32_t crc;         /* the data member's CRC-32 */
    struct gz_info hdr;   /* the data member's header */
    struct sp_range *bad; /* ranges of the content that could not be read
                             when the backup was made (zeros), or NULL */
    uint64_t nbad;
    char **notes;         /* what the compressor said of its input, or NULL */
    size_t nnotes;
    bool trailer_mismatch; /* idx_load_salvage: the trailer disagrees */
};

/* Load the index of the spigz file open on fd, whose data member starts at
 * file offset base and which is file_size bytes long.  Returns 1 with *x
 * filled, 0 when there is no usable index (why says why; why[0] == 0 when
 * there is simply no footer), -1 on a read error (*err set). */
int idx_load(int fd, uint64_t base, uint64_t file_size, struct idx *x,
             char *why, size_t whylen, struct sp_err *err);

/* --salvage: the same, but an index whose pieces' CRCs (and total) do not
 * combine to the data member's trailer is taken all the same, with
 * trailer_mismatch set: every other check passed, the index's own CRCs
 * among them, so it is the trailer that is damaged, and each piece is still
 * checked against its record when it is decoded. */
int idx_load_salvage(int fd, uint64_t base, uint64_t file_size, struct idx *x,
                     char *why, size_t whylen, struct sp_err *err);

/* Files made by concatenation (cat a.gz b.gz): where the spigz file whose
 * footer ends at offset `end` starts, from the sizes in that footer (its
 * checksum checked, nothing else: idx_load() validates the rest), no lower
 * than lo.  1 with *start, 0 when the bytes before `end` are no spigz
 * footer, -1 on a read error (*err set). */
int idx_start(int fd, uint64_t lo, uint64_t end, uint64_t *start, struct sp_err *err);

void idx_free(struct idx *x);

#endif
