/* dec.h — decompress one input: in parallel through the piece index when the
 * input is a seekable spigz file with a valid index, else sequentially.
 *
 * Indexed path: the calling thread reads each piece's compressed bytes; the
 * pool's workers check it (a zero piece must be the canonical encoding of its
 * length; a data piece must walk as complete non-final blocks ending at its
 * last byte, decode to exactly its length and match its CRC-32) and decode
 * it; the writer puts it in place (positioned writes, holes for zeros) or, for
 * pipes, in order.  Zero pieces are never inflated.  The index is untrusted:
 * if it does not validate, the reason is returned as a warning and the file
 * is decoded sequentially (unz.c).  A piece failing its check means corrupt
 * data: an error, as a sequential decode would end in one.
 *
 * Contract: never prints or exits; -1 with *err set on failure.  The caller
 * owns the descriptors and the sink.
 *
 * Progress (o->progress, progress.h): `in` counts compressed bytes, `out`
 * decoded bytes.  The indexed path counts each piece when it is output (its
 * compressed length, and the bytes of it that were output), and on success
 * without --range the rest of the file (header, trailer, index) at the end,
 * so `in` ends at the input's size.  If it falls back to the sequential path,
 * that path counts only what goes beyond the positions already counted: the
 * counters pause while the sequential decode catches up, and never go back
 * or count a byte twice.  `zeros` is not advanced.  The indexed path sets
 * `out_total` to the length it will output before it starts, and back to 0
 * when it hands over to the sequential path (whose output is not known). 
 */
#ifndef SPIGZ_DEC_H
#define SPIGZ_DEC_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "gzip.h"
#include "mf.h"
#include "osink.h"
#include "progress.h"
#include "range.h"
#include "unz.h"

/* An index whose data pieces, compressed or decoded, exceed this either way
 * (spigz writes 1 MiB; -b allows up to 512 MiB) is not used: such a file is
 * decoded sequentially, in 1 MiB buffers, as any gzip file. */
#define DEC_PIECE_LIMIT ((uint64_t)64 << 20)

struct dec_opts {
    unsigned threads;
    bool use_index;       /* false: always sequential */
    bool copy_non_gzip;   /* gzip -dcf */
    bool lenient_end;     /* see unz.h */
    bool range;           /* output only [range_off, range_off + range_len) */
    uint64_t range_off, range_len;
    struct sp_progress *progress; /* counters to advance, or NULL (below) */
    bool salvage;         /* --salvage: restore what is intact (below) */
    bool no_fast;         /* sequential: zlib only, never ISA-L (unz.h) */
    bool free_map;        /* through an index whose manifest holds the free
                             map (--free=zero): hand it over (st->free) */
    bool digest;          /* through an index whose manifest records the
                             image digest (digest.h), the whole content
                             decoded: check it (a difference is SP_ERR_CHECK) */
};

struct dec_stats {
    uint64_t in_bytes;       /* compressed bytes */
    uint64_t out_bytes;      /* decoded content bytes */
    bool indexed;            /* decoded through the index */
    unsigned fast_members, zlib_members; /* sequential: unz.h's */
    bool trailing_garbage;   /* warning: trailing garbage ignored */
    bool trailing_zeros;     /* only zero bytes after the last member */
    char index_warning[160]; /* an index was present but not used: why */
    bool have_header;
    struct gz_info hdr;      /* the (first) member's header */
    uint32_t last_mtime;     /* sequential: the last member's MTIME that is set */
    unsigned lzw_flags;      /* sequential: LZW's reserved flags that were set */
    bool zip_more;           /* a zip file of more than one entry (gzip warns) */
    unsigned extras;         /* sequential: members with an extra field... */
    unsigned extra_len[UNZ_EXTRAS]; /* ...and its length (gzip -v notes them) */
    /* --salvage: the output's damaged ranges, zeros in it (sorted, disjoint;
     * malloc'd, the caller frees them; see unz.h for a range of unknown
     * end), and whether output from shifted_at on may be at a wrong offset
     * (sequential only).  zero_repaired: zero pieces whose bytes were
     * damaged, restored from the index (their content is zeros). */
    struct sp_range *bad;
    size_t nbad;
    bool shifted;
    uint64_t shifted_at;
    unsigned zero_repaired;
    unsigned unverified, repaired; /* sequential salvage: see unz.h */
    bool trailer_damaged;    /* the data member's CRC-32 or ISIZE is not what
                                the index's pieces add up to: decoded through
                                the index all the same, each piece checked */
    /* Through an index made with --rescue: the content's ranges that could
     * not be read when the backup was made (zeros in it); malloc'd, the
     * caller frees them. */
    struct sp_range *unread;
    size_t nunread;
    bool digest_checked;     /* o->digest: the image digest was checked, and
                                holds */
    /* o->free_map: the content's ranges the backup coded as zeros unread
     * because a filesystem called them free (--free=zero); malloc'd, the
     * caller frees them.  free_unmapped: it was made with --free=zero but
     * its map was not kept (too large), or could not be read here. */
    struct sp_range *free;
    size_t nfree;
    bool free_unmapped;
    /* Through an index with notes (what the compressor said of its input:
     * a disk whose layouts disagreed, a damaged filesystem): malloc'd
     * strings, the caller frees them (dec_notes_free). */
    char **notes;
    size_t nnotes;
};

/* Free notes[0..n) and the array. */
void dec_notes_free(char **notes, size_t n);

/* --salvage.  Through the index (which passed its checks: its checksums
 * and the pieces' CRCs combining to the data member's), the first piece
 * that fails its check has the file decoded sequentially to nowhere, once:
 * if the data member decodes whole, the index is wrong (a forged one can
 * move pieces and keep every checksum), and the file is decoded
 * sequentially as when -d finds a piece wrong (index_warning set).
 * Otherwise a data piece that fails its check is output as zeros at its
 * place and listed; every other piece is restored as usual, and dec_run
 * returns 0.  Without a usable index, the sequential decode resumes after
 * damage (unz.h, resync.h).  The caller decides the exit status (1 when
 * anything is listed). */

int dec_run(int in_fd, struct osink *out, const struct dec_opts *o,
            struct dec_stats *st, struct sp_err *err);

/* Sizes for -l.  With a valid index, or spigz files concatenated each with
 * a valid index: exact (exact = true), without decoding.  Otherwise what
 * gzip -l shows, after decoding the whole input as gzip 1.12 does (an
 * invalid file is an error, not a listing): the last member's length (for
 * a spigz file read without its index, its empty footer's: 0), and in `all`
 * what every member holds. */
struct dec_list {
    uint64_t compressed, uncompressed;
    uint64_t deflated;   /* exact: the data member's deflate bytes (all of
                            them, for concatenated spigz files) */
    bool exact;
    unsigned parts;      /* exact: spigz files concatenated (1 for one) */
    bool maybe_wrapped;  /* not exact: the content is not the last member's */
    unsigned members;    /* not exact: gzip members decoded */
    uint64_t all;        /* not exact: what all the members hold together */
    bool trailing_garbage, trailing_zeros; /* not exact: as in dec_stats */
    unsigned lzw_flags, extras;            /* not exact: as in dec_stats */
    bool zip_more;
    unsigned extra_len[UNZ_EXTRAS];
    uint32_t crc;        /* the last member's CRC-32 */
    bool legacy;         /* the last member is pack or LZW: no CRC-32 */
    const char *method;  /* "deflate", "store", "pack", "compress" (gzip -lv
                          * prints the first five letters) */
    bool have_header;
    struct gz_info hdr;
    uint32_t mtime;      /* -N's time: the last member's MTIME that is set
                            (gzip's), the data member's with an index */
    char index_warning[160];
    /* exact: the content's ranges that could not be read when the backup
     * was made (--rescue), zeros in it; malloc'd, the caller frees them */
    struct sp_range *bad;
    size_t nbad;
    char **notes;       /* exact: the indexes' notes, in file order (the first
                           IDX_NOTES_MAX); dec_notes_free() */
    size_t nnotes;
    struct mf mf;       /* exact: the first file's manifest (mf.h), when
                           has_mf; the caller frees it (mf_free) */
    bool has_mf;
};

/* Returns 0 with *l filled, or -1 with *err set. */
int dec_list(int in_fd, unsigned threads, bool lenient_end, struct dec_list *l,
             struct sp_err *err);

/* What gzip finds out before it creates an output: whether the file open on
 * fd starts as something it decodes (a gzip header it accepts, pack, LZW,
 * zip), read with pread from its current offset (which stays).  0 (or when
 * it cannot tell: a stream, a read error), or -1 with *err set as decoding
 * would set it. */
int dec_probe(int fd, struct sp_err *err);

/* The first member's header of the file open on fd, read with pread from
 * its current offset (which stays).  0, or -1 when it has none. */
int dec_first_header(int fd, struct gz_info *h);

#endif
