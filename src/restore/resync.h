/* resync.h — finding deflate blocks in damaged data, and decoding from one
 * without knowing what came before (salvage without an index, unz.c).
 *
 * What it provides
 *  - rs_header(): the verdict zlib would give on a block header at any bit
 *    position: a stored block (LEN == ~NLEN), a fixed block, a dynamic block
 *    zlib accepts (HLIT <= 29, HDIST <= 29, a complete code-length code, a
 *    non-zero length for end-of-block, complete literal/length and distance
 *    codes, or a single code of length 1, or no distance code at all: zlib's
 *    own rules), or bad.
 *  - struct rs_walk: a walker over deflate blocks that decodes every symbol
 *    and produces no output, counting the bytes the blocks decode to.  It is
 *    resumable (the caller slides its window), so it can count a member's
 *    tail of any length, and it accepts exactly what zlib accepts with a
 *    32 KiB dictionary (every distance is then legal).
 *  - rs_confirm() / rs_search(): the block finder.  rs_search() tries every
 *    bit position in order; a candidate is a stored or dynamic header (or,
 *    on request, a gzip member header at a byte position), and it is taken
 *    only when rs_confirm() walks from it to the end of at least one block
 *    and finds there a stored or dynamic header too, or a chain of fixed
 *    blocks ending at one, or the end of a final block followed by 8 trailer
 *    bytes and then the end of the input, a gzip header or zero padding.
 *  - struct rs_dual: zlib decoding from a block start with the unknown window
 *    handled by two decoders run in lockstep (below).
 *
 * Choices (doc/DESIGN.md, "Salvage without an index", says why at length)
 *  - Fixed blocks are never resume points, only links in a confirmation
 *    chain.  Prefix codes resynchronise: a false start a few bits before a
 *    real fixed block falls into step with it after a few wrong symbols and
 *    then confirms like the real one, so a fixed start cannot be told from a
 *    wrong one and would write garbage as good data.  The cost is the fixed
 *    blocks before the next stored or dynamic block (in spigz files, the
 *    <= 257-byte tail of a zero run).
 *  - A dynamic header that zlib accepts is rare in random bits (the unit test
 *    measures it), and its block then decodes without error to its end (a
 *    complete code has no invalid pattern), so the check that gives the
 *    strength is the header that follows.  A final block is taken only when
 *    what follows its trailer is the end of the input, a gzip header or zero
 *    padding: 8 bytes follow anywhere in a file.
 *  - Unknown window: after a resume, a distance may reach before the resume
 *    point, into lost bytes.  rs_dual decodes twice, with a dictionary of 32
 *    KiB of 0x00 and one of 0xff (different at every position).  A byte is
 *    the same in both exactly when it descends from literals only; a byte
 *    that differs descends from the dictionary, is reported through the mark
 *    callback and is 0 in the first decoder's output (its dictionary is
 *    zeros).  Decoding does not depend on the bytes, only on the bits, so
 *    both decoders consume and produce the same amounts; once the last
 *    32 KiB of output agree, nothing can differ any more and the second
 *    decoder stops.  spigz pieces never refer before their start: a resume
 *    at a piece start marks nothing.
 *  - Bounded work: a confirmation walks at most `limit` bits (2 MiB of input
 *    in unz.c: a spigz zero piece of 1 GiB is about 1 MiB), and a search
 *    stops (RS_FOUND_GIVEUP) once its confirmations have walked more than
 *    its budget, so crafted input cannot make a search quadratic.  Memory:
 *    the walker's tables live in struct rs_walk (about 1.3 KiB); nothing
 *    is allocated but rs_dual's second output buffer.
 *
 * Contract: no function prints or exits.  All functions but rs_dual's are
 * pure functions of their arguments (any thread, no allocation) and read
 * p[0..n) only.  An rs_dual belongs to one thread.  Bit positions count
 * from bit 0 of p[0], least significant bit first, as deflate does.
 */
#ifndef SPIGZ_RESYNC_H
#define SPIGZ_RESYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

/* The most bytes a block header spans from its first bit: a dynamic header
 * is at most 3 + 14 + 57 + 316 * (7 + 7) bits, 558 bytes. */
#define RS_HDR_MAX 576

/* ---- block headers ---- */

enum rs_kind {
    RS_BAD,     /* zlib would reject it */
    RS_SHORT,   /* p[0..n) ends inside it */
    RS_STORED,
    RS_FIXED,
    RS_DYNAMIC
};

struct rs_hdr {
    bool final;          /* BFINAL */
    uint64_t data_bit;   /* first bit after the header; stored: its first
                            data byte (byte aligned) */
    uint32_t stored_len; /* stored: LEN */
};

/* The header at bit `bit` of p[0..n).  *h is filled for the three valid
 * kinds. */
enum rs_kind rs_header(const uint8_t *p, size_t n, uint64_t bit, struct rs_hdr *h);

/* GNU gzip's verdict where zlib's differs on a header: a dynamic block
 * whose code-length code has no code at all (its HCLEN + 4 lengths all 0).
 * zlib takes it (each code length then reads as 0 from one bit) and fails
 * later, at the missing end-of-block code, or at the input's end if that
 * comes first ("unexpected end of file"); gzip refuses the header as soon
 * as it has read those lengths ("format violated", its bug#33501).  True
 * when the block at bit `bit` of p[0..n) is such a block, those lengths
 * all in p. */
bool rs_gzip_no_lengths(const uint8_t *p, size_t n, uint64_t bit);

/* Whether an empty non-final block starts at bit `bit`: a stored one (LEN
 * 0) or a fixed one (end-of-block at once), the marks flushes leave (zlib's
 * sync flush, spigz's and pigz's piece ends).  *next is the header after. */
bool rs_empty(const uint8_t *p, size_t n, uint64_t bit, uint64_t *next);

/* ---- walking blocks without output ---- */

#define RS_NSYM 288

struct rs_huff {
    uint16_t count[16]; /* codes of each length */
    uint16_t sym[RS_NSYM];   /* symbols in canonical order */
};

enum rs_ev {
    RS_EV_BLOCK, /* a non-final block ended: bit is the next header */
    RS_EV_END,   /* the final block ended: bit is just past its last bit */
    RS_EV_MORE,  /* needs bytes past n (only when not eof): slide and call again */
    RS_EV_BAD,   /* zlib would fail here, or the input ends inside a block */
    RS_EV_LIMIT  /* walked more than limit bits */
};

struct rs_walk {
    uint64_t bit;     /* where the walk is, in the caller's p */
    uint64_t out;     /* bytes the walked blocks decode to */
    uint64_t walked;  /* bits walked since rs_walk_start() */
    uint64_t limit;   /* RS_EV_LIMIT past this many bits walked; 0: none */
    uint64_t blocks;  /* blocks ended */
    /* private */
    int state;
    bool final;
    uint32_t left;    /* stored bytes still to skip */
    struct rs_huff lit, dist;
};

/* Start a walk at the block header at bit `bit`. */
void rs_walk_start(struct rs_walk *w, uint64_t bit, uint64_t limit);

/* Walk p[0..n) (eof: nothing follows) until an event.  After RS_EV_BLOCK,
 * call again to walk the next block; after RS_EV_MORE, drop bytes from the
 * front of the window with rs_walk_rebase() and call again with more. */
enum rs_ev rs_walk_run(struct rs_walk *w, const uint8_t *p, size_t n, bool eof);

/* The caller dropped `bytes` (<= w->bit / 8) bytes from the window's front. */
void rs_walk_rebase(struct rs_walk *w, size_t bytes);

/* ---- GNU gzip at the end of a cut stream ---- */

/* The bytes GNU gzip 1.12 writes from the blocks that start at bit `bit` of
 * p[0..n) when the input ends at p[n] inside them: everything but the codes
 * its look-ahead cannot reach (it asks for a table's width of bits before
 * each code, so it stops a code or two before zlib does).  The blocks are
 * ones zlib decoded without error up to the end. */
uint64_t rs_gzip_cut(const uint8_t *p, size_t n, uint64_t bit);

/* ---- the finder ---- */

enum rs_verdict { RS_NO, RS_YES, RS_MORE };

/* Whether a block really starts at bit `bit` (see the top).  At most
 * `limit` bits are walked; their count is added to *work.  RS_MORE: p[0..n)
 * is too short to tell (only when not eof). */
enum rs_verdict rs_confirm(const uint8_t *p, size_t n, uint64_t bit, bool eof,
                           uint64_t limit, uint64_t *work);

/* The length of a gzip member header starting at byte q (1f 8b 08, no
 * reserved flag, its optional fields complete in p[q..n) and the name and
 * comment under 64 KiB each, the header CRC right if FHCRC), else 0. */
size_t rs_member(const uint8_t *p, size_t n, size_t q);

struct rs_search {
    uint64_t limit;   /* bits a confirmation may walk */
    uint64_t budget;  /* bits all confirmations together may walk */
    uint64_t work;    /* bits walked so far (start at 0) */
    size_t look;      /* bytes needed after a candidate when not at eof:
                         at least limit / 8 + RS_HDR_MAX + RS_FINAL_LOOK */
    bool members;     /* also look for gzip member headers */
};

/* Bytes of zero padding rs_confirm() looks at after a final trailer. */
#define RS_FINAL_LOOK 65536

enum rs_found {
    RS_FOUND_NONE,   /* nothing in [from, *at): go on from *at with more input
                        (at eof: nothing at all) */
    RS_FOUND_BLOCK,  /* a block starts at bit *at */
    RS_FOUND_MEMBER, /* a gzip member starts at bit *at (a byte boundary) */
    RS_FOUND_GIVEUP  /* the budget is spent */
};

/* Search p[0..n) from bit `from`.  Not at eof, only positions with s->look
 * bytes after them are tried. */
enum rs_found rs_search(struct rs_search *s, const uint8_t *p, size_t n, bool eof,
                        uint64_t from, uint64_t *at);

/* ---- decoding from a block start ---- */

#define RS_WIN 32768          /* deflate's window */
#define RS_STEP (256u << 10)  /* most output one rs_dual_inflate() makes */

struct rs_dual {
    z_stream z[2];
    bool live[2];       /* inflateInit2 done */
    bool two;           /* the second decoder runs */
    size_t same;        /* bytes at the end of the output equal in both */
    uint8_t *scratch;   /* RS_STEP bytes: the second decoder's output */
};

/* Called for out[off..off+len) of one rs_dual_inflate() call: bytes that
 * depend on the lost window.  Returns 0, or -1 to fail the call. */
typedef int (*rs_mark_fn)(void *ctx, size_t off, size_t len);

/* Allocate; 0 or -1 (out of memory; rs_dual_close() still to be called). */
int rs_dual_open(struct rs_dual *d);

/* Decode a stream from its start with one decoder, the window preset to
 * dict[0..dlen) (gzip's window between members, see unz.c).  0 or -1. */
int rs_dual_member(struct rs_dual *d, const uint8_t *dict, unsigned dlen);

/* Decode from a block start in the middle of a stream: the header's first
 * `nbits` (0..7) bits are `value` (the rest of their byte), the input then
 * continues at the next byte.  Two decoders, the window unknown.  0 or -1. */
int rs_dual_resume(struct rs_dual *d, unsigned nbits, unsigned value);

/* inflate(Z_BLOCK) from *in (avail bytes) into out (at most cap bytes, cap
 * capped at RS_STEP); *in and *avail advance, *got is the output.  Returns
 * zlib's code, or Z_STREAM_ERROR when the two decoders disagree (a bug) or
 * mark failed.  data_type of the first decoder tells the block boundaries:
 * rs_dual_data_type(). */
int rs_dual_inflate(struct rs_dual *d, const uint8_t **in, size_t *avail, uint8_t *out,
                    size_t cap, size_t *got, rs_mark_fn mark, void *ctx);

int rs_dual_data_type(const struct rs_dual *d);

/* The last min(output, 32 KiB) bytes of output, as inflateGetDictionary(). */
int rs_dual_window(struct rs_dual *d, uint8_t *dict, unsigned *len);

void rs_dual_close(struct rs_dual *d);

#endif
