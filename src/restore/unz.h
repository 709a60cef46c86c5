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
 * The calling thread reads and inflates (zlib); the pool's workers compute
 * the CRC-32 of each output buffer and its writer thread writes them in order
 * and checks each member's trailer.  So reading, inflating, checking and
 * writing overlap, as in pigz.
 *
 * Contract: never prints or exits; -1 with *err set on failure (SP_ERR_DATA
 * for invalid input, with gzip's wording).  The caller owns both descriptors
 * and the sink.
 */
#ifndef SPIGZ_UNZ_H
#define SPIGZ_UNZ_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "gzip.h"
#include "osink.h"
#include "progress.h"

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
};

struct unz_stats {
    uint64_t in_bytes;       /* compressed bytes read */
    uint64_t read_bytes;     /* bytes read from the descriptor (in_bytes and
                                what was read ahead of it) */
    uint64_t out_bytes;      /* bytes decoded */
    unsigned members;
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
