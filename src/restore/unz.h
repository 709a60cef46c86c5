/* unz.h — sequential decompression of any gzip stream.
 *
 * Reads members one after the other as GNU gzip 1.12 does: any header
 * (FEXTRA, FNAME, FCOMMENT, FHCRC), empty members, a CRC-32 and ISIZE check
 * per member, pack(1) members and an LZW (.Z) stream (legacy.h), and after
 * the last member: trailing zero bytes ignored, other
 * trailing bytes a warning ("trailing garbage ignored"), a lone non-zero
 * byte or a cut header an error.  With copy_non_gzip (gzip -dcf), input that
 * is not gzip, at the start or after a member, is copied through unchanged.
 * What was decoded before an error in the input is output before the error
 * is returned, whatever the threads' timing (gzip does the same).
 *
 * The calling thread reads and inflates; the pool's workers compute the
 * CRC-32 of each output buffer and its writer thread writes them in order
 * and checks each member's trailer.  So reading, inflating, checking and
 * writing overlap, as in pigz.  The inflater is ISA-L for a seekable input
 * (unz_fast.c), zlib for a pipe, with salvage or no_fast, and wherever
 * ISA-L stops short of a member's end (zlib then gives gzip's verdict).
 * Before an error the output is gzip's: on invalid data a member's output
 * up to its last full 32 KiB, as gzip's window writes it; on a cut file,
 * what gzip's look-ahead reached (resync.h, rs_gzip_cut).
 *
 * Salvage (opts.salvage): damage does not stop the decode.  The output of
 * a deflate block is trusted only once the next block header is a stored
 * or dynamic one (or the member ends); when zlib fails, the output since
 * the last trusted boundary is dropped, and decoding resumes at the next
 * block that confirms (resync.h), its bytes that depend on the lost window
 * written as zeros.  The lost bytes (the gap) are written as zeros when
 * their number follows from the member's intact trailer and the input can
 * be read ahead (a regular file or a device: the tail is counted first by
 * a walk without output); otherwise the output goes on right after the
 * bytes kept and is shifted from there.  Damage that decodes without a
 * zlib error but to a wrong length is found in spigz and pigz files by
 * their pieces' 4 KiB grid (the piece is then dropped, as after an error);
 * damage that keeps the length shows in the CRC-32 only: the member is
 * listed whole.  doc/DESIGN.md, "Salvage without an index", says why.
 *
 * Contract: never prints or exits; -1 with *err set on failure (SP_ERR_DATA
 * for invalid input, with gzip's wording).  With salvage, -1 only for a
 * read or write error, memory, or input that is not gzip at all (its first
 * bytes: SP_ERR_FORMAT); damage is reported in the stats instead.  The
 * caller owns both descriptors and the sink, and st->bad.
 */
#ifndef SPIGZ_UNZ_H
#define SPIGZ_UNZ_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "gzip.h"
#include "osink.h"
#include "progress.h"
#include "range.h"

struct unz_opts {
    unsigned threads;    /* CRC workers, >= 1 */
    bool copy_non_gzip;  /* pass non-gzip input through (gzip -dcf) */
    bool lenient_end;    /* -f with stdout, -t or -l: one stray byte after a
                            member is trailing garbage, not a cut magic */
    /* Progress (progress.h), or NULL: `in` advances by each compressed
     * buffer read, `out` by each decoded buffer written.  An earlier attempt
     * on the same input (dec.c's indexed path, before falling back) may have
     * counted up to prog_in_done / prog_out_done already: those positions
     * are not counted again, so the counters never go back nor double. */
    struct sp_progress *progress;
    uint64_t prog_in_done, prog_out_done;
    bool salvage;        /* --salvage: go on after damage (above); false:
                            gzip's verdict, byte for byte */
    bool no_fast;        /* inflate with zlib only, never ISA-L (tests,
                            benchmarks: SPIGZ_INFLATE=zlib) */
};

struct unz_stats {
    uint64_t in_bytes;       /* compressed bytes read */
    uint64_t read_bytes;     /* bytes read from the descriptor (in_bytes and
                                what was read ahead of it) */
    uint64_t out_bytes;      /* bytes decoded */
    unsigned members;
    unsigned fast_members;   /* gzip members ISA-L decoded to their end */
    unsigned zlib_members;   /* ... and that zlib decoded (ISA-L stopped short, or
                                was not used: a pipe, salvage, no_fast) */
    uint32_t last_crc, last_isize; /* the last member's trailer (gzip -l); for
                                      pack or LZW: UINT32_MAX, its length */
    uint64_t last_len;       /* the last gzip member's decoded length, all
                                64 bits (gzip 1.12 -l counts it) */
    enum { UNZ_LAST_GZIP, UNZ_LAST_PACK, UNZ_LAST_LZW, UNZ_LAST_ZIP_DEFLATE,
           UNZ_LAST_ZIP_STORE } last_fmt;
    bool zip_more;           /* a zip file with more than one entry: gzip warns */
    uint64_t legacy_bytes;   /* decoded from pack and LZW members */
    unsigned lzw_flags;      /* LZW's reserved flag bits that were set:
                                gzip warns "unknown flags" */
    uint32_t last_mtime;     /* the last MTIME that is not 0 (gzip -N's) */
#define UNZ_EXTRAS 64
    unsigned extras;         /* members with FEXTRA (up to UNZ_EXTRAS)... */
    unsigned extra_len[UNZ_EXTRAS]; /* ...and its length: gzip -v notes them */
    bool trailing_garbage;   /* warn: decompression OK, trailing garbage ignored */
    bool trailing_zeros;     /* only zero bytes followed the last member (gzip
                                warns about them with -v) */
    bool have_header;        /* first is valid */
    struct gz_info first;    /* header of the first member */
    /* Salvage only.  bad: the damaged ranges of the output (offsets in the
     * decoded content), sorted, disjoint, not adjacent; malloc'd, NULL when
     * nbad is 0, freed by the caller with free() whatever unz_run returned.
     * A range whose end is unknown has len = UINT64_MAX - off: the input
     * ended (cut, or no block found after damage) or the output is shifted
     * from there.  Every byte of a damaged range reads as zeros in the
     * output, but in three cases whose bytes cannot be: a member whose
     * CRC-32 alone disagrees with its trailer (its whole range: the bytes
     * as decoded, out before the trailer showed it), a member whose length
     * disagrees (from its start to an unknown end: bytes went missing or
     * came extra), and the shifted output (the data found after a gap of
     * unknown length, all of it at unknown offsets).  A gap whose length
     * was inferred is left out when the member's CRC-32 then matches the
     * output with zeros in the gap: it held zeros. */
    struct sp_range *bad;
    size_t nbad;
    bool shifted;            /* output from shifted_at on may sit at a wrong
                                offset (a gap of unknown length); the range
                                list then ends with [shifted_at, unknown) */
    uint64_t shifted_at;
    unsigned resyncs;        /* times decoding resumed after damage: at a
                                block or a member found by a search */
    unsigned unverified;     /* members with damage whose output no CRC-32
                                confirms (the gap held data, its length is
                                unknown, or the trailer is lost): damage that
                                decoded without a zlib error, a few wrong
                                bytes, would go unseen there */
    unsigned repaired;       /* members with damage whose output the CRC-32
                                then confirmed as written (gaps that held
                                zeros, a last piece whose length ISIZE
                                fixed): nothing listed, but the input was
                                damaged */
};

int unz_run(int in_fd, struct osink *out, const struct unz_opts *o,
            struct unz_stats *st, struct sp_err *err);

/* The checks gzip makes of a zip file's first local header before it
 * creates an output: the file (starting "PK\3\4") has have bytes in hand,
 * of which h holds the first min(have, 30) (nothing more is read), and
 * *skip is set to the length of the header with its name and extra field.
 * NULL when the entry can be decoded (have >= *skip), else gzip's message;
 * with have < 30, *skip is 30. */
const char *unz_zip_check(const uint8_t *h, size_t have, size_t *skip);

#endif
