/* idx.h — the piece index reader (doc/FORMAT.md; the bytes: idx_fmt.h; the
 * writer: compress/idx_w.h).
 *
 * idx_load() finds the footer at the end of a seekable file and validates
 * everything FORMAT.md section 4 lists (checks 1-6) before returning the
 * pieces.  The index is untrusted: any failure returns 0 with the reason,
 * never a partial index.
 *
 * Contract: a loaded struct idx is read-only and may be shared by threads;
 * it owns its tables until idx_free().  Nothing prints or exits.
 */
#ifndef SPIGZ_IDX_H
#define SPIGZ_IDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "gzip.h"
#include "idx_fmt.h"
#include "mf.h"
#include "range.h"

/* Memory for the piece table at most (24 bytes a piece: 44 million pieces,
 * 44 TiB of data in spigz's 1 MiB chunks).  A footer that counts more is
 * declined unread, without a reason: the file is decoded sequentially. */
#define IDX_TABLE_MAX ((uint64_t)1 << 30)

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
    struct mf mf;         /* the manifest (footer flag 4), when has_mf */
    bool has_mf;
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
