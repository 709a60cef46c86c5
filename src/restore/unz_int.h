/* unz_int.h — PRIVATE to the sequential decoder: what its files share.
 * Only unz.c, unz_buf.c, unz_fast.c and salvage.c include it; everything
 * else uses unz.h.
 *
 * Who calls whom, one way only:
 *   unz.c       the decoder (unz_run): members, gzip's rules between them,
 *               the pipeline's writer.  Calls the three below.
 *   unz_buf.c   the input buffer (ib_*) and the output items (unz_cur,
 *               unz_put_kind, unz_flush, unz_end_item): the parts' common
 *               ground.  Calls none of them.
 *   unz_fast.c  a member through ISA-L's inflate (unz_fast_*).  Calls
 *               unz_buf.c.
 *   salvage.c   --salvage, plugged in through one table (struct
 *               unz_salvage, unz_salvage: unz.c calls it through
 *               c->salvage, NULL without --salvage).  Calls unz_buf.c.
 * struct unz_sv, salvage's state, is salvage.c's own: unz.c only holds
 * the pointer (c->sv).
 *
 * Threads (pool.h): unz_run's thread is the producer.  It alone touches the
 * ibuf, the producer's fields of unz_ctx (cur, perr, win, pout, pmember, sv
 * and all it points to) and calls every function declared here; so all of
 * salvage.c runs on it.  The writer's fields (crc to wrepaired) belong to
 * the pool's writer thread (unz_emit) until pool_close() returns: only
 * then does salvage's finish() read them; unz_run frees them.  A unz_item
 * is touched by one thread at a time, handed over by the pool.
 * unz_rl_add() touches only the list it is given (the writer's wbad and
 * wgood, the producer's salvage lists).
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

/* The input buffer's size (unz_run): reads of UNZ_IN; with salvage, SV_IN,
 * also its read-ahead's (salvage.c). */
#define UNZ_IN (1u << 20)        /* read size */
#define SV_IN (8u << 20)         /* input window: a search's look-ahead, twice */

struct pool;
struct unz_sv;
struct unz_salvage;

struct unz_ctx {
    struct pool *pool;
    struct osink *out;
    struct unz_item *cur;
    struct sp_err perr;             /* producer */
    uint8_t win[UNZ_WIN];           /* producer: gzip's window (see unz_inflate) */
    uint64_t pout;                  /* producer: output handed to items */
    uint64_t pmember;               /* producer: pout at the member's start */
    const struct unz_salvage *salvage; /* --salvage's hooks, or NULL */
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

/* ---- unz_buf.c: the input buffer and the output items ---- */

/* Read more after the unread bytes.  0 (maybe at EOF) or -1. */
int ib_fill(struct ibuf *b);
/* ib_fill(), keeping the input from offset `from` on in the buffer (as
 * keep_abs does, up to cap / 2 behind pos) unless salvage keeps already. */
int ib_fill_keep(struct ibuf *b, uint64_t from);
/* Make n (<= UNZ_IN) bytes available if the input has them; returns how many
 * are, or -1 on a read error. */
ssize_t ib_need(struct ibuf *b, size_t n);
/* The input offset of b->buf[idx]. */
uint64_t ib_abs(const struct ibuf *b, size_t idx);
/* Keep the input from offset abs on in b across refills (see struct ibuf). */
void ib_keep(struct ibuf *b, uint64_t abs);
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

/* ---- salvage.c: --salvage's hooks, unz.c's only way into it ---- */

struct unz_salvage {
    /* Salvage's state in c->sv, for input fd, its findings going to st.  0
     * or -1 (memory; close() then frees what was made). */
    int (*open)(struct unz_ctx *c, int fd, struct unz_stats *st);
    /* Free c->sv, if any. */
    void (*close)(struct unz_ctx *c);
    /* One member's deflate stream, from b->pos (its header read).
     * SV_GO_ON, SV_NO_MORE, SV_NEW_MEMBER (a member header follows at
     * b->pos), or -1. */
    int (*member)(struct unz_ctx *c, struct ibuf *b);
    /* What is not a member where one should be (a header refused, or,
     * garbage, bytes after a member) at input offset start: search from
     * it.  As member(). */
    int (*stray)(struct unz_ctx *c, struct ibuf *b, uint64_t start, bool garbage);
    /* A member header cut short: the rest is lost.  SV_NO_MORE or -1. */
    int (*cut)(struct unz_ctx *c, struct ibuf *b);
    /* The member decoders failed on input outside a gzip member's deflate
     * stream: in salvage, the rest is lost, not an error (0, or -1 when
     * memory is lacking); other failures stay -1. */
    int (*fallback)(struct unz_ctx *c);
    /* After pool_close(): the damaged ranges, sorted and merged, and the
     * writer's verdicts, into st.  0 or -1 (memory). */
    int (*finish)(struct unz_ctx *c, struct unz_stats *st);
};

extern const struct unz_salvage unz_salvage;

#endif
