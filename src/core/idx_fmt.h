/* idx_fmt.h — the piece index's bytes (doc/FORMAT.md), shared by its writer
 * (compress/idx_w.c) and its reader (restore/idx.c).
 *
 * The index is a run of empty gzip members after the data member, each
 * holding up to IDX_MEMBER_MAX payload bytes in an extra field, then a
 * footer member of IDX_FOOTER_LEN bytes (FORMAT.md sections 2 and 3).  The
 * payload is the pieces' records (LEB128 lengths, a CRC-32 for data
 * pieces), then the bad ranges (footer flag 1), then the notes (flag 2),
 * then the manifest (flag 4: its length, then its bytes, mf.h).
 *
 * Contract: constants only; the two 10-byte patterns are read-only data any
 * thread may read.
 */
#ifndef SPIGZ_IDX_FMT_H
#define SPIGZ_IDX_FMT_H

#include <stdint.h>

#define IDX_FOOTER_LEN 78
#define IDX_FOOTER_PAYLOAD 52
#define IDX_MEMBER_MAX 65531          /* payload bytes per index member */
#define IDX_MEMBER_HEAD 16            /* a member's bytes before its payload */
#define IDX_REC_MAX 24   /* a record at most: two 10-byte LEB128 values and a CRC */
#define IDX_FLAG_BAD 1   /* footer flags: bad ranges follow the records */
#define IDX_FLAG_NOTES 2 /* notes follow (the bad ranges, or the records) */
#define IDX_FLAG_MANIFEST 4 /* the manifest follows all of those (mf.h) */
#define IDX_PIECE_MAX ((uint64_t)1 << 40)

/* Notes: each at most IDX_NOTE_MAX bytes of UTF-8 without control
 * characters (text.h), at most IDX_NOTES_MAX of them. */
#define IDX_NOTE_MAX 1024
#define IDX_NOTES_MAX 64

/* An index member's first 10 bytes, and the footer's: FEXTRA only, MTIME 0,
 * XFL 0, OS 255 (unknown). */
extern const uint8_t idx_hdr[10];
/* Every member ends with an empty final block, CRC-32 0 and ISIZE 0. */
extern const uint8_t idx_end[10];

#endif
