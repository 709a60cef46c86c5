/* unz_int.h — PRIVATE to the sequential decoder: what unz.c and salvage.c
 * (its --salvage, unz_opts.salvage) share.  Only those two files include
 * it; everything else uses unz.h.
 *
 * What it holds: the input buffer (struct ibuf), the pipeline's items
 * (struct unz_item, enum unz_kind, enum unz_check), a list of output ranges
 * (struct unz_rl), the decoder's context (struct unz_ctx); the functions of
 * unz.c that salvage.c calls (ib_*, unz_*); and salvage.c's entry points
 * (sv_*), which unz.c calls.  struct unz_sv, salvage's state, is salvage.c's
 * own: unz.c only holds the pointer (c->sv, NULL without salvage).
 *
 * Threads (pool.h): unz_run's thread is the producer.  It alone touches the
 * ibuf, the producer's fields of unz_ctx (cur, perr, win, pout, pmember, sv
 * and all it points to) and calls every function declared here; so all of
 * salvage.c runs on it.  The writer's fields (crc to wrepaired) belong to
 * the pool's writer thread (unz_emit) until pool_close() returns: only
 * then do sv_finish() read them and sv_close() free them.  A unz_item is
 * touched by one thread at a time, handed over by the pool.  unz_rl_add()
 * touches only the list it is given (the writer's wbad and wgood, the
 * producer's salvage lists).
 *
 * Contract: as unz.h's: nothing here prints or exits; a failure is -1 with
 * the error in c->perr (b->err points there).
 */
#ifndef SPIGZ_UNZ_INT_H
#define SPIGZ_UNZ_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unz.h"

/* ---- input buffer ---- */

struct ibuf {
    int fd;
    uint8_t *buf;
    size_t pos, len;
    size_t cap;              /* size of buf */
    /* Salvage: bytes from keep_abs (an input offset) on stay in buf when it
     * is refilled, as long as they are at most cap / 2 behind pos, so a
     * search can go back to the start of a damaged block. */
    bool keeping;
    uint64_t keep_abs;
    bool eof;
    uint64_t total;          /* bytes read */
    struct sp_err *err;
    bool failed;
    struct sp_progress *prog;
    uint64_t prog_in;        /* input position counted in prog so far */
};

enum unz_kind { UNZ_DATA, UNZ_RAW, UNZ_END, UNZ_ZEROS };

/* What the writer does with a member's trailer. */
enum unz_check {
    UNZ_CHECK_GZIP,     /* a mismatch is gzip's error */
    UNZ_CHECK_SALVAGE,  /* salvage, nothing lost: a mismatch makes the member
                           a damaged range (the bytes are out already) */
    UNZ_CHECK_REPAIRED, /* salvage, every gap's length known: a match says
                           the zeros written for what was lost were right */
    UNZ_CHECK_NONE      /* salvage, a gap of unknown length, or no trailer */
};

struct unz_item {
    enum unz_kind kind;
    uint8_t *buf;
    size_t len;
    uint32_t crc;                   /* DATA: CRC-32 of buf */
    uint32_t want_crc, want_isize;  /* END: the member's trailer */
    enum unz_check check;           /* END */
    uint64_t zeros;                 /* ZEROS: that many zero bytes (a gap) */
};

/* A list of output ranges, appended in order (range.h). */
struct unz_rl {
    struct sp_range *r;
    size_t n, cap;
};

#define UNZ_WIN 32768
#define UNZ_OUT (1u << 20)  /* output buffer per pipeline item */

/* Salvage's input buffer size (unz_run) and its read-ahead's (salvage.c). */
#define SV_IN (8u << 20)         /* input window: a search's look-ahead, twice */

struct pool;
struct unz_sv;

struct unz_ctx {
    struct pool *pool;
    struct osink *out;
    struct unz_item *cur;
    struct sp_err perr;             /* producer */
    uint8_t win[UNZ_WIN];           /* producer: gzip's window (see unz_inflate) */
    uint64_t pout;                  /* producer: output handed to items */
    uint64_t pmember;               /* producer: pout at the member's start */
    struct unz_sv *sv;              /* producer: salvage state, or NULL */
    struct unz_fast *fast;          /* producer: ISA-L's state, or NULL (unz_fast.c) */
    uint8_t *held_buf;              /* producer, fast path: the last full item's */
    size_t held_len;                /* bytes, out once the next is full (unz_fast.c) */
    unsigned fast_members, zlib_members; /* producer: unz_stats' */
    /* writer thread */
    uint32_t crc;                   /* of the member so far */
    uint64_t mlen, total;
    uint64_t last_mlen;             /* the last checked member's length */
    struct sp_err werr;
    struct sp_progress *prog;
    uint64_t prog_out;              /* output position counted in prog so far */
    unsigned ends;                  /* members whose trailer was checked */
    /* writer, salvage: members whose trailer disagrees although nothing was
     * lost, and damaged members whose trailer agrees with what was written */
    struct unz_rl wbad, wgood;
    bool wshifted;                  /* a length disagreed: later offsets may be wrong */
    uint64_t wshifted_at;
    unsigned wunverified;           /* damaged members no CRC-32 confirms */
    unsigned wrepaired;             /* damaged members the CRC-32 confirms */
};

enum { SV_GO_ON, SV_NO_MORE, SV_NEW_MEMBER }; /* what follows a damage */

/* ---- unz.c, for salvage.c ---- */

/* Read more after the unread bytes.  0 (maybe at EOF) or -1. */
int ib_fill(struct ibuf *b);
/* ib_fill(), keeping the input from offset `from` on in the buffer (as
 * keep_abs does, up to cap / 2 behind pos) unless salvage keeps already. */
int ib_fill_keep(struct ibuf *b, uint64_t from);
/* Make n (<= UNZ_IN) bytes available if the input has them; returns how many
 * are, or -1 on a read error. */
ssize_t ib_need(struct ibuf *b, size_t n);
/* Append [off, off + len) to l, merged into the last range when they touch
 * or overlap.  0, or -1 when memory is lacking. */
int unz_rl_add(struct unz_rl *l, uint64_t off, uint64_t len);
/* c->perr: invalid data, msg in gzip's wording.  -1. */
int unz_data_error(struct unz_ctx *c, const char *msg);
/* Output into pipeline items of that kind. */
int unz_put_kind(struct unz_ctx *c, const uint8_t *p, size_t n, enum unz_kind kind);
/* The item being filled (taken from the pool when there is none), or NULL
 * when the pipeline has failed. */
struct unz_item *unz_cur(struct unz_ctx *c);
/* Hand the current output item, if any, to the pipeline as `kind`. */
void unz_flush(struct unz_ctx *c, enum unz_kind kind);
/* A member's end: its trailer, and what the writer makes of it. */
int unz_end_item(struct unz_ctx *c, uint32_t crc, uint32_t isize,
                 enum unz_check check);

/* ---- unz_fast.c, for unz.c: the fast path ---- */

/* ISA-L's inflate for the members of input fd, or NULL: without ISA-L, for
 * input that cannot be read again (a pipe), or short of memory; the zlib
 * path is used then. */
struct unz_fast *unz_fast_open(struct unz_ctx *c, int fd);
void unz_fast_close(struct unz_ctx *c);
/* Hand the bytes held back to the pipeline, before the current item's:
 * after the fast path stopped on an error they are output still.  0 or -1. */
int unz_fast_flush(struct unz_ctx *c);
/* One member's deflate stream from b->pos, as unz.c's zlib path would.  0:
 * the stream ended, b->pos is at its trailer; -1: a read error or memory;
 * 1: ISA-L stopped short of the end: gzip's verdict is zlib's, so b is back
 * at the member's deflate data and *done bytes of the member are out
 * already (zlib's output is to go on from there); 2: likewise, for a member
 * ISA-L decoded to nothing (whose trailer vouches for nothing). */
int unz_fast_member(struct unz_ctx *c, struct ibuf *b, uint64_t *done);

/* ---- salvage.c, for unz.c ---- */

/* The input offset of b->buf[idx]. */
uint64_t sv_abs(const struct ibuf *b, size_t idx);
/* Keep the input from offset abs on in b across refills (see struct ibuf). */
void sv_keep(struct ibuf *b, uint64_t abs);
/* Everything from output offset off on may sit at a wrong offset
 * (shifted), or is missing. */
int sv_unknown(struct unz_ctx *c, uint64_t off, bool shifted);
/* Nothing more to decode: read the rest.  SV_NO_MORE or -1. */
int sv_drain(struct ibuf *b);
/* One member's deflate stream, from b->pos, or (resume) from block `at`
 * after a lost header that began at bit `lost`.  SV_GO_ON, SV_NO_MORE,
 * SV_NEW_MEMBER (a member header follows at b->pos), or -1. */
int sv_member(struct unz_ctx *c, struct ibuf *b, bool resume, uint64_t at,
              uint64_t lost);
/* What is not a member where one should be (a header refused, or, garbage,
 * bytes after a member) at input offset start: search from it.  As
 * sv_member. */
int sv_stray(struct unz_ctx *c, struct ibuf *b, uint64_t start, bool garbage);
/* Salvage's state in c->sv, for input fd, its findings going to st.  0 or
 * -1 (memory; sv_close() then frees what was made). */
int sv_open(struct unz_ctx *c, int fd, struct unz_stats *st);
/* Free c->sv, if any, and the writer's range lists. */
void sv_close(struct unz_ctx *c);
/* The member decoders failed on input outside a gzip member's deflate
 * stream: in salvage, the rest is lost, not an error (0, or -1 when memory
 * is lacking); other failures stay -1. */
int sv_fallback(struct unz_ctx *c);
/* After pool_close(): the damaged ranges, sorted and merged, and the
 * writer's verdicts, into st.  0 or -1 (memory). */
int sv_finish(struct unz_ctx *c, struct unz_stats *st);

#endif
