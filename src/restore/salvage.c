/* salvage.c — the sequential decoder's --salvage (unz_opts.salvage).  It
 * plugs into unz.c through one table (unz_salvage, unz_int.h) and builds on
 * the decoder's buffers (unz_buf.c); it calls nothing else of unz.c. */
#include "unz_int.h"
#include "pool.h"
#include "resync.h"
#include "block.h"
#include "io.h"
#include "le.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- salvage (unz_opts.salvage; resync.h has the block finder) ----
 *
 * A member is decoded by rs_dual (zlib, Z_BLOCK) into a hold buffer, and the
 * output goes to the pipeline only once it is trusted: at a block boundary
 * whose next header is a stored or dynamic one (random bits rarely make
 * one; a fixed header is 3 bits anyone can fake), or at the member's end.
 * So when zlib fails, the output since the last trusted boundary, which may
 * be garbage decoded after the damage, is dropped: the damage starts there.
 * A search from that boundary finds the next block (or member) that
 * confirms; what lay between is lost.  Its decoded length, the gap, is
 * known when the member's trailer is intact and the input can be read
 * ahead (a regular file or a device): a walk without output counts the
 * member's tail, and ISIZE = prefix + gap + tail (mod 2^32) gives the gap
 * when deflate's 1032:1 bound on what the lost bytes decode to leaves one
 * value.  The gap is then written as zeros and the tail at its place;
 * otherwise the tail follows the prefix at once and the output is shifted
 * from there (a range of unknown end).
 *
 * Damage often decodes without an error: in a block whose codes are
 * complete every bit pattern is some symbol, and prefix codes fall back
 * into step after a few wrong ones, so zlib goes on with a few wrong bytes,
 * often a wrong number of them.  spigz and pigz end every piece but the
 * last with an empty block (a marker) on a 4 KiB grid of the content.  A
 * member is taken to be on that grid from its start: output is trusted a
 * piece at a time (held until the piece's marker), and a marker off the
 * grid (not followed by the final block) says the piece before it decoded
 * to a wrong length.  Read ahead, the trailer settles it: if the member's
 * length then agrees with ISIZE the stream merely leaves the grid;
 * otherwise the piece is dropped and decoding resumes after the marker, as
 * after an error.  A stream without markers (GNU gzip) leaves the grid
 * after SV_HOLD bytes of data.  At the trailer, a length that disagrees on
 * the grid puts the damage in the last piece. */

#define SV_HOLD (8u << 20)       /* output held back; half goes out when full */
#define SV_CONFIRM (2u << 20)    /* input a candidate's confirmation may walk */
#define SV_LOOK (SV_CONFIRM + RS_HDR_MAX + RS_FINAL_LOOK + 64)
#define SV_BUDGET ((uint64_t)256 << 23) /* bits all confirmations of one search
                                           may walk: 256 MiB, plus 64 bytes per
                                           byte searched */
#define SV_JOIN 64               /* uncertain bytes this close are one range */
#define SV_GRID 4096             /* spigz's and pigz's piece grid */
#define SV_GRID_MARKERS 4        /* markers on it (before and after, read
                                    ahead) for a marker off it to mean
                                    damage: a stream flushed anywhere has 4
                                    on it by chance once in 2^48 */
#define SV_GRID_UNREAD 16        /* the same when nothing can be read ahead:
                                    then a stream flushed at regular places
                                    and later off them is not told apart */

struct unz_sv {
    struct rs_dual d;
    uint8_t *hold;        /* output not yet trusted */
    size_t hlen;
    uint64_t commit_bit;  /* input bit of the last trusted block start */
    uint64_t last_edge;   /* the last block boundary seen (zlib may stop at
                             one twice) */
    bool damaged;         /* this member lost bytes */
    bool inferred;        /* ...all of them with a known gap */
    bool grid;            /* on the grid so far: pieces are trusted whole */
    bool gridless;        /* left it: not again in this member */
    unsigned markers;     /* piece markers on it (since a shift) */
    uint64_t last_marker; /* member offset of the last one */
    uint64_t phase;       /* member offset of the grid modulo SV_GRID */
    bool phase_set;       /* phase known (not after a gap of unknown length) */
    bool strong_ok;       /* on the grid: a stored or dynamic header at hold
                             offset strong_at, input bit strong_bit */
    size_t strong_at;
    uint64_t strong_bit;
    struct unz_rl pend;   /* uncertain bytes in hold (output offsets) */
    struct unz_rl bad;    /* damaged ranges found by the producer */
    bool seekable;        /* the input can be read ahead with pread */
    uint64_t in_base;     /* file offset of input byte 0 */
    uint8_t *cbuf;        /* SV_IN bytes for the counting walk, or NULL */
    struct unz_stats *st;
};

enum { SV_END, SV_ERROR, SV_CUT };           /* how a decode stopped */

static size_t sv_idx(const struct ibuf *b, uint64_t abs)
{
    return (size_t)(abs - (b->total - b->len));
}

static int sv_nomem(struct unz_ctx *c)
{
    sp_err_set(&c->perr, SP_ERR_NOMEM, 0, "out of memory");
    return -1;
}

/* A damaged range of the output, as the producer finds it. */
static int sv_bad(struct unz_ctx *c, uint64_t off, uint64_t len)
{
    return unz_rl_add(&c->sv->bad, off, len) == 0 ? 0 : sv_nomem(c);
}

/* Everything from off on may sit at a wrong offset, or is missing. */
static int sv_unknown(struct unz_ctx *c, uint64_t off, bool shifted)
{
    struct unz_stats *st = c->sv->st;
    if (shifted && !st->shifted) {
        st->shifted = true;
        st->shifted_at = off;
    }
    return sv_bad(c, off, UINT64_MAX - off);
}

/* rs_mark_fn: out[off..off+len) of the step at hold + hlen depends on the
 * lost window.  Ranges closer than SV_JOIN bytes are joined (the bytes
 * between cleared too), which bounds the list to one range per SV_JOIN
 * bytes. */
static int sv_mark(void *ctx, size_t off, size_t len)
{
    struct unz_ctx *c = ctx;
    struct unz_sv *sv = c->sv;
    uint64_t at = c->pout + sv->hlen + off;
    if (sv->pend.n > 0) {
        struct sp_range *last = &sv->pend.r[sv->pend.n - 1];
        uint64_t end = last->off + last->len;
        if (at - end < SV_JOIN && end >= c->pout) {
            memset(sv->hold + (end - c->pout), 0, (size_t)(at - end));
            last->len = at + len - last->off;
            return 0;
        }
    }
    return unz_rl_add(&sv->pend, at, len) == 0 ? 0 : sv_nomem(c);
}

/* Trust hold[0..n): out to the pipeline, its uncertain bytes damaged. */
static int sv_commit(struct unz_ctx *c, size_t n)
{
    struct unz_sv *sv = c->sv;
    if (unz_put_kind(c, sv->hold, n, UNZ_DATA) != 0)
        return -1;
    size_t k = 0;
    for (; k < sv->pend.n && sv->pend.r[k].off < c->pout; k++) {
        struct sp_range *r = &sv->pend.r[k];
        uint64_t take = r->off + r->len <= c->pout ? r->len : c->pout - r->off;
        if (sv_bad(c, r->off, take) != 0)
            return -1;
        if (take < r->len) { /* split at the commit point: the rest stays */
            r->off += take;
            r->len -= take;
            break;
        }
    }
    if (k > 0) {
        memmove(sv->pend.r, sv->pend.r + k, (sv->pend.n - k) * sizeof *sv->pend.r);
        sv->pend.n -= k;
    }
    memmove(sv->hold, sv->hold + n, sv->hlen - n);
    sv->hlen -= n;
    sv->strong_ok = sv->strong_ok && sv->strong_at >= n;
    sv->strong_at -= sv->strong_ok ? n : 0;
    return 0;
}

static void sv_drop(struct unz_sv *sv)
{
    sv->hlen = 0;
    sv->pend.n = 0;
    sv->strong_ok = false;
}

/* Trust all that is held: it ends at a trusted block start, input bit
 * `edge`. */
static int sv_commit_all(struct unz_ctx *c, uint64_t edge)
{
    if (sv_commit(c, c->sv->hlen) != 0)
        return -1;
    c->sv->commit_bit = edge;
    return 0;
}

/* Leave the grid for the rest of the member: what is held is trusted up
 * to the block starting at bit `edge`. */
static int sv_leave_grid(struct unz_ctx *c, uint64_t edge)
{
    c->sv->grid = false;
    c->sv->gridless = true;
    return sv_commit_all(c, edge);
}

/* A zero gap of known length, through the pipeline in order. */
static int sv_zeros(struct unz_ctx *c, uint64_t n)
{
    unz_flush(c, UNZ_DATA);
    struct unz_item *it = pool_get(c->pool);
    if (it == NULL)
        return -1;
    it->kind = UNZ_ZEROS;
    it->len = 0;
    it->zeros = n;
    pool_put(c->pool, it, false);
    c->pout += n;
    return 0;
}

static int sv_suspect(struct unz_ctx *c, struct ibuf *b, uint64_t edge, uint64_t next);

/* Whether the block at bit `bit` of p[0..n) is final, past more empty
 * blocks (pigz ends a piece with an empty fixed block and, to align, an
 * empty stored one). */
static bool sv_final_after(const uint8_t *p, size_t n, uint64_t bit)
{
    for (int k = 0; k < 4; k++) {
        if ((bit >> 3) >= n)
            return false;
        if (p[bit >> 3] >> (bit & 7) & 1)
            return true;
        if (!rs_empty(p, n, bit, &bit))
            return false;
    }
    return false;
}

/* An empty block at input bit `edge` (stored: a strong header), the next
 * header at abs bit `next`: a piece's end.  On the grid, it must sit on it
 * (or end the last piece, which waits for the trailer); several at one
 * offset count once. */
static int sv_marker(struct unz_ctx *c, struct ibuf *b, uint64_t edge, uint64_t next,
                     bool stored)
{
    struct unz_sv *sv = c->sv;
    if (!sv->grid) /* an empty fixed block is 10 bits: no proof of sync */
        return stored ? sv_commit_all(c, edge) : 0;
    uint64_t off = c->pout + sv->hlen - c->pmember; /* its member offset */
    if (!sv->phase_set) {
        sv->phase = off % SV_GRID;
        sv->phase_set = true;
    }
    if ((off - sv->phase) % SV_GRID == 0) {
        sv->markers += sv->markers == 0 || off != sv->last_marker;
        sv->last_marker = off;
        return sv_commit_all(c, edge);
    }
    if (sv_final_after(b->buf, b->len, next - 8 * ib_abs(b, 0)))
        return 0;
    return sv_suspect(c, b, edge, next);
}

/* A block boundary at input bit `edge`: trust what came before when the
 * next header is stored or dynamic (on the grid: at markers only). */
static int sv_edge(struct unz_ctx *c, struct ibuf *b, uint64_t edge)
{
    struct unz_sv *sv = c->sv;
    ib_keep(b, sv->commit_bit >> 3);
    while (b->len - sv_idx(b, edge >> 3) < RS_HDR_MAX && !b->eof)
        if (ib_fill(b) != 0)
            return -1;
    size_t idx = sv_idx(b, edge >> 3);
    uint64_t start = 8 * ib_abs(b, 0), next;
    struct rs_hdr h;
    enum rs_kind k = rs_header(b->buf + idx, b->len - idx, edge & 7, &h);
    if (rs_empty(b->buf, b->len, edge - start, &next))
        return sv_marker(c, b, edge, start + next, k == RS_STORED);
    if (k != RS_STORED && k != RS_DYNAMIC)
        return 0; /* fixed, or one zlib is about to refuse: still held */
    if (!sv->grid)
        return sv_commit_all(c, edge);
    sv->strong_ok = true; /* on the grid: held, but noted */
    sv->strong_at = sv->hlen;
    sv->strong_bit = edge;
    return 0;
}

/* The hold is full.  On the grid with no piece ended yet and data held
 * (not a long zero piece), the stream is taken to have no markers: it
 * leaves the grid, trusting what came before the last stored or dynamic
 * header.  Otherwise the older half goes out (a damage found later drops
 * back no further than that). */
static int sv_full(struct unz_ctx *c)
{
    struct unz_sv *sv = c->sv;
    if (sv->grid && sv->markers == 0 && !scan_is_zero(sv->hold, sv->hlen)) {
        sv->grid = false;
        sv->gridless = true;
        if (sv->strong_ok && sv->strong_at > 0) {
            uint64_t bit = sv->strong_bit;
            if (sv_commit(c, sv->strong_at) != 0)
                return -1;
            sv->commit_bit = bit;
            return 0;
        }
    }
    return sv_commit(c, SV_HOLD / 2);
}

/* Decode until the member's end, an error or the end of the input. */
static int sv_decode(struct unz_ctx *c, struct ibuf *b)
{
    struct unz_sv *sv = c->sv;
    for (;;) {
        if (b->pos == b->len) {
            ib_keep(b, sv->commit_bit >> 3);
            if (ib_fill(b) != 0)
                return -1;
            if (b->pos == b->len)
                return SV_CUT;
        }
        if (sv->hlen == SV_HOLD && sv_full(c) != 0)
            return -1;
        const uint8_t *in = b->buf + b->pos;
        size_t avail = b->len - b->pos, got;
        int rc = rs_dual_inflate(&sv->d, &in, &avail, sv->hold + sv->hlen,
                                 SV_HOLD - sv->hlen, &got, sv_mark, c);
        b->pos = (size_t)(in - b->buf);
        sv->hlen += got;
        if (rc == Z_STREAM_END)
            return SV_END;
        if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
            return SV_ERROR;
        if (rc == Z_MEM_ERROR)
            return sv_nomem(c);
        if (rc == Z_STREAM_ERROR) {
            if (c->perr.kind == SP_OK)
                sp_err_set(&c->perr, SP_ERR_INTERNAL, 0, "salvage: decoders disagree");
            return -1;
        }
        int dt = rs_dual_data_type(&sv->d);
        if ((dt & 128) && !(dt & 64)) { /* between blocks, not after the last */
            uint64_t edge = 8 * ib_abs(b, b->pos) - (unsigned)(dt & 7);
            if (edge != sv->last_edge) {
                sv->last_edge = edge;
                if (sv_edge(c, b, edge) != 0)
                    return -1;
            }
        }
    }
}

/* Search the input from bit `from` for a block or a member that confirms;
 * *at is its bit.  RS_FOUND_* (GIVEUP when the budget is spent), or -1. */
static int sv_search(struct ibuf *b, uint64_t from, uint64_t *at)
{
    struct rs_search s = {.limit = 8 * (uint64_t)SV_CONFIRM, .budget = SV_BUDGET,
                          .look = SV_LOOK, .members = true};
    uint64_t first = from;
    for (;;) {
        uint64_t start = ib_abs(b, 0);
        if ((from >> 3) < start) /* kept no further back: see ib_fill */
            from = 8 * start;
        ib_keep(b, from >> 3);
        b->pos = sv_idx(b, from >> 3);
        while (b->len - b->pos < 2 * (size_t)SV_LOOK && !b->eof)
            if (ib_fill(b) != 0)
                return -1;
        uint64_t base = 8 * ib_abs(b, b->pos), rel;
        s.budget = SV_BUDGET + 64 * (from - first); /* 64 bytes a byte */
        enum rs_found f = rs_search(&s, b->buf + b->pos, b->len - b->pos, b->eof,
                                    from - base, &rel);
        if (f != RS_FOUND_NONE) {
            *at = base + rel;
            return (int)f;
        }
        if (b->eof)
            return RS_FOUND_NONE;
        from = base + rel;
    }
}

/* What a walk of a member's tail found: its length and trailer's ISIZE,
 * and its piece markers (but those of the last piece): how many, the first
 * one's offset modulo SV_GRID, and whether they all agree on it. */
struct sv_tail {
    uint64_t out;
    uint32_t isize;
    unsigned markers;
    uint64_t first, last;
    bool consistent;
};

/* At a header at bit `bit` of the tail, `out` bytes in. */
static void sv_tail_mark(struct sv_tail *t, const uint8_t *p, size_t n, uint64_t bit,
                         uint64_t out)
{
    uint64_t next;
    if (!rs_empty(p, n, bit, &next) || sv_final_after(p, n, next) ||
        (t->markers > 0 && out == t->last))
        return;
    if (t->markers++ == 0)
        t->first = out % SV_GRID;
    else if ((out - t->first) % SV_GRID != 0)
        t->consistent = false;
    t->last = out;
}

static int sv_pread(struct unz_ctx *c, int fd, uint8_t *p, size_t *n, size_t cap,
                    uint64_t off, bool *eof)
{
    if (*n == cap || *eof)
        return 0;
    size_t got;
    int rc = io_pread(fd, p + *n, cap - *n, off + *n, &got);
    *n += got;
    if (rc != 0) {
        sp_err_set(&c->perr, SP_ERR_READ, errno, "read error");
        return -1;
    }
    *eof = *n < cap;
    return 0;
}

/* Walk the member from block `at` to its end, reading ahead with pread
 * (the stream's position stays).  1 when the member ends and its trailer
 * is there, 0 when not (more damage, or the input ends), -1 on a read
 * error. */
static int sv_count(struct unz_ctx *c, int fd, uint64_t at, struct sv_tail *t)
{
    struct unz_sv *sv = c->sv;
    if (sv->cbuf == NULL && (sv->cbuf = malloc(SV_IN)) == NULL)
        return sv_nomem(c);
    uint64_t off = sv->in_base + (at >> 3); /* file offset of cbuf[0] */
    size_t n = 0;
    bool eof = false, ended = false;
    struct rs_walk w;
    rs_walk_start(&w, at & 7, 0);
    *t = (struct sv_tail){.consistent = true};
    if (sv_pread(c, fd, sv->cbuf, &n, SV_IN, off, &eof) != 0)
        return -1;
    sv_tail_mark(t, sv->cbuf, n, w.bit, 0);
    for (;;) {
        enum rs_ev ev = RS_EV_END;
        if (!ended)
            while ((ev = rs_walk_run(&w, sv->cbuf, n, eof)) == RS_EV_BLOCK)
                sv_tail_mark(t, sv->cbuf, n, w.bit, w.out);
        if (ev == RS_EV_END) {
            ended = true;
            size_t q = (size_t)((w.bit + 7) >> 3);
            if (q + 8 <= n) {
                t->out = w.out;
                t->isize = le_get32(sv->cbuf + q + 4);
                return 1;
            }
            if (eof)
                return 0;
        } else if (ev != RS_EV_MORE) {
            return 0;
        }
        size_t drop = (size_t)(w.bit >> 3);
        memmove(sv->cbuf, sv->cbuf + drop, n - drop);
        n -= drop;
        off += drop;
        rs_walk_rebase(&w, drop);
        if (sv_pread(c, fd, sv->cbuf, &n, SV_IN, off, &eof) != 0)
            return -1;
    }
}

/* The gap between the output kept (up to c->pout) and block `at`, whose
 * lost input starts at bit `lost`, given the walk of the member's tail
 * from `at` (t, when counted is 1): zeros when its length follows from
 * the trailer, else the output is shifted from here.  On the grid (before
 * the damage, or in the tail) the tail's markers must all land on it: a
 * tail with more damage that decoded to a wrong length has them off it,
 * and ISIZE then does not give the gap. */
static int sv_gap_counted(struct unz_ctx *c, uint64_t at, uint64_t lost, int counted,
                          const struct sv_tail *t)
{
    struct unz_sv *sv = c->sv;
    uint64_t dmg = c->pout, prefix = dmg - c->pmember;
    /* deflate decodes at most 258 bytes from 2 bits: 1032 a byte */
    uint64_t bound = 1032 * ((at - lost) / 8 + 2);
    uint64_t gap = (uint32_t)(t->isize - (uint32_t)prefix - (uint32_t)t->out);
    bool known = counted == 1 && !sv->st->shifted && sv->inferred &&
                 bound < ((uint64_t)1 << 32) && gap <= bound;
    bool gridded = (sv->grid && sv->phase_set && sv->markers >= 2) ||
                   t->markers >= SV_GRID_MARKERS;
    if (known && gridded)
        known = t->consistent &&
                (t->markers == 0 || !sv->phase_set ||
                 (prefix + gap + t->first - sv->phase) % SV_GRID == 0);
    if (!known) { /* offsets are unknown from here: a new grid's phase */
        sv->inferred = false;
        sv->grid = !sv->gridless;
        sv->phase_set = false;
        sv->markers = 0;
        return sv_unknown(c, dmg, true);
    }
    if (gap > 0 && (sv_zeros(c, gap) != 0 || sv_bad(c, dmg, gap) != 0))
        return -1;
    return 0;
}

static int sv_gap(struct unz_ctx *c, struct ibuf *b, uint64_t at, uint64_t lost)
{
    struct unz_sv *sv = c->sv;
    struct sv_tail t = {0};
    int r = 0;
    if (!sv->st->shifted && sv->inferred && sv->seekable &&
        (r = sv_count(c, b->fd, at, &t)) < 0)
        return -1;
    return sv_gap_counted(c, at, lost, r, &t);
}

/* Decode from block `at` on, its window unknown. */
static int sv_resume(struct unz_ctx *c, struct ibuf *b, uint64_t at)
{
    struct unz_sv *sv = c->sv;
    size_t i = sv_idx(b, at >> 3);
    unsigned k = (unsigned)(at & 7);
    b->pos = i + (k != 0);
    sv->commit_bit = at;
    sv->last_edge = at;
    if (rs_dual_resume(&sv->d, k != 0 ? 8 - k : 0, k != 0 ? b->buf[i] >> k : 0) != 0) {
        sp_err_set(&c->perr, SP_ERR_INTERNAL, 0, "salvage: cannot start a decoder");
        return -1;
    }
    return 0;
}

/* On the grid, a marker off it at `edge` (next header at `next`): the
 * piece held since the last marker decoded to a wrong length, unless the
 * member's length then agrees with its trailer (the stream merely leaves
 * the grid) or too few markers sat on it; without reading ahead, the
 * grid's word is taken after SV_GRID_UNREAD of them. */
static int sv_suspect(struct unz_ctx *c, struct ibuf *b, uint64_t edge, uint64_t next)
{
    struct unz_sv *sv = c->sv;
    uint64_t have = c->pout + sv->hlen - c->pmember;
    struct sv_tail t = {0};
    int r = 0;
    /* after a gap of unknown length, ISIZE says nothing of the rest */
    bool ahead = sv->seekable && sv->inferred && !sv->st->shifted;
    if (ahead && (r = sv_count(c, b->fd, next, &t)) < 0)
        return -1;
    bool agree = r == 1 && (uint32_t)(have + t.out) == t.isize;
    bool proven = ahead ? sv->markers + (t.consistent ? t.markers : 0) >= SV_GRID_MARKERS
                        : sv->markers >= SV_GRID_UNREAD;
    if (agree || !proven)
        return sv_leave_grid(c, edge);
    sv_drop(sv);
    sv->damaged = true;
    sv->st->resyncs++;
    if (sv_gap_counted(c, next, sv->commit_bit, r, &t) != 0)
        return -1;
    return sv_resume(c, b, next);
}

/* zlib failed: the output since the last trusted block start is dropped.
 * On the grid with a marker seen, that is the piece's start: damage that
 * decoded to a wrong length before the failure would go unseen otherwise;
 * before any marker (a stream that may have none), the last stored or
 * dynamic header. */
static int sv_error_drop(struct unz_ctx *c)
{
    struct unz_sv *sv = c->sv;
    if (sv->grid && sv->markers == 0 && sv->strong_ok) {
        uint64_t bit = sv->strong_bit;
        if (sv_commit(c, sv->strong_at) != 0)
            return -1;
        sv->commit_bit = bit;
    }
    sv_drop(sv);
    return 0;
}

/* Nothing more to decode: read the rest (it counts as read).  SV_NO_MORE
 * or -1. */
static int sv_drain(struct ibuf *b)
{
    b->keeping = false;
    while (!b->eof) {
        b->pos = b->len;
        if (ib_fill(b) != 0)
            return -1;
    }
    b->pos = b->len;
    return SV_NO_MORE;
}

/* Everything from here on is lost (a header cut short, or nothing found
 * in place of one): the rest is read.  SV_NO_MORE or -1. */
static int sv_lost_rest(struct unz_ctx *c, struct ibuf *b)
{
    return sv_unknown(c, c->pout, false) == 0 ? sv_drain(b) : -1;
}

/* The member ends here, its trailer lost. */
static int sv_end_lost(struct unz_ctx *c, struct ibuf *b)
{
    return unz_end_item(c, 0, 0, UNZ_CHECK_NONE) == 0 ? sv_drain(b) : -1;
}

/* Where a search after damage in the block at bit `bit` starts: just
 * after it, but past a stored block's LEN and NLEN (a stored header also
 * parses a few bits later: the padding is free). */
static uint64_t sv_search_from(const struct ibuf *b, uint64_t bit)
{
    uint64_t start = ib_abs(b, 0);
    struct rs_hdr h;
    if ((bit >> 3) >= start &&
        rs_header(b->buf, b->len, bit - 8 * start, &h) == RS_STORED)
        return 8 * start + h.data_bit;
    return bit + 1;
}

/* The member's output since c->pout is damaged from here on; search from
 * bit `from` (`lost`: where the lost input may start) and go on. */
static int sv_damage(struct unz_ctx *c, struct ibuf *b, uint64_t from, uint64_t lost)
{
    struct unz_sv *sv = c->sv;
    sv->damaged = true;
    uint64_t at;
    int f = sv_search(b, from, &at);
    if (f < 0)
        return -1;
    if (f == RS_FOUND_NONE || f == RS_FOUND_GIVEUP) {
        if (sv_unknown(c, c->pout, false) != 0)
            return -1;
        return sv_end_lost(c, b);
    }
    sv->st->resyncs++;
    if (f == RS_FOUND_MEMBER) { /* the rest of this member is lost */
        if (sv_unknown(c, c->pout, true) != 0 || unz_end_item(c, 0, 0, UNZ_CHECK_NONE) != 0)
            return -1;
        b->pos = sv_idx(b, at >> 3);
        return SV_NEW_MEMBER;
    }
    if (sv_gap(c, b, at, lost) != 0 || sv_resume(c, b, at) != 0)
        return -1;
    return SV_GO_ON;
}

/* gzip's window after a member (see unz_keep_window): its last 32 KiB at
 * their places modulo 32 KiB of the member's length. */
static void sv_keep_window(struct unz_ctx *c)
{
    uint8_t dict[UNZ_WIN];
    unsigned n;
    if (rs_dual_window(&c->sv->d, dict, &n) != 0)
        return;
    uint64_t len = c->pout + c->sv->hlen - c->pmember;
    for (unsigned j = 0; j < n; j++)
        c->win[(len - n + j) % UNZ_WIN] = dict[j];
}

/* On the grid, the member's length disagrees with ISIZE at its end: the
 * last piece (held since the last marker) is damaged; its length follows
 * from ISIZE when deflate's bound leaves one value. */
static int sv_last_piece(struct unz_ctx *c, struct ibuf *b, uint32_t isize)
{
    struct unz_sv *sv = c->sv;
    sv_drop(sv);
    sv->damaged = true;
    uint64_t prefix = c->pout - c->pmember, at = 8 * ib_abs(b, b->pos);
    uint64_t bound = 1032 * ((at - sv->commit_bit) / 8 + 2);
    uint64_t gap = (uint32_t)(isize - (uint32_t)prefix);
    if (!sv->inferred || bound >= ((uint64_t)1 << 32) || gap > bound) {
        sv->inferred = false;
        return sv_unknown(c, c->pout, true);
    }
    uint64_t dmg = c->pout;
    return gap == 0 || (sv_zeros(c, gap) == 0 && sv_bad(c, dmg, gap) == 0) ? 0 : -1;
}

/* The member's deflate stream ended: its trailer. */
static int sv_trailer(struct unz_ctx *c, struct ibuf *b)
{
    struct unz_sv *sv = c->sv;
    sv_keep_window(c);
    ib_keep(b, ib_abs(b, b->pos));
    ssize_t avail = ib_need(b, 8);
    if (avail < 0)
        return -1;
    if (avail < 8) { /* cut in the trailer: what follows is unknown */
        if (sv_commit(c, sv->hlen) != 0 || sv_unknown(c, c->pout, false) != 0)
            return -1;
        return sv_end_lost(c, b);
    }
    const uint8_t *p = b->buf + b->pos;
    uint32_t crc = le_get32(p), isize = le_get32(p + 4);
    uint64_t len = c->pout + sv->hlen - c->pmember;
    if (sv->grid && sv->markers > 0 && (uint32_t)len != isize) {
        if (sv_last_piece(c, b, isize) != 0)
            return -1;
    } else if (sv_commit(c, sv->hlen) != 0) {
        return -1;
    }
    b->pos += 8;
    b->keeping = false;
    sv->st->last_crc = crc;
    sv->st->last_isize = isize;
    sv->st->last_fmt = UNZ_LAST_GZIP;
    enum unz_check check = !sv->damaged ? UNZ_CHECK_SALVAGE
                         : sv->inferred ? UNZ_CHECK_REPAIRED : UNZ_CHECK_NONE;
    return unz_end_item(c, crc, isize, check) == 0 ? SV_GO_ON : -1;
}

/* One member's deflate stream, from b->pos, or (resume) from block `at`
 * after a lost header that began at bit `lost`.  SV_GO_ON when more may
 * follow, SV_NO_MORE when the input is used up, SV_NEW_MEMBER when a member
 * header found by a search follows at b->pos, or -1. */
static int sv_member(struct unz_ctx *c, struct ibuf *b, bool resume, uint64_t at,
              uint64_t lost)
{
    struct unz_sv *sv = c->sv;
    sv->damaged = resume;
    sv->inferred = true;
    sv->markers = 0;
    sv->grid = true; /* until a piece ends off it or none ends in SV_HOLD */
    sv->gridless = false;
    sv->phase = 0; /* a member starts a piece */
    sv->phase_set = true;
    sv_drop(sv);
    c->pmember = c->pout;
    if (resume) {
        sv->st->resyncs++;
        if (sv_gap(c, b, at, lost) != 0 || sv_resume(c, b, at) != 0)
            return -1;
    } else {
        sv->commit_bit = 8 * ib_abs(b, b->pos);
        sv->last_edge = UINT64_MAX;
        if (rs_dual_member(&sv->d, c->win, UNZ_WIN) != 0)
            return unz_data_error(c, "inflate reset failed");
    }
    for (;;) {
        int r = sv_decode(c, b);
        if (r < 0)
            return -1;
        if (r == SV_END)
            return sv_trailer(c, b);
        if (r == SV_CUT) { /* what decoded up to the cut is kept */
            if (sv_commit(c, sv->hlen) != 0 || sv_unknown(c, c->pout, false) != 0)
                return -1;
            return sv_end_lost(c, b);
        }
        if (sv_error_drop(c) != 0) /* SV_ERROR */
            return -1;
        /* the search starts after the block that failed (on the grid the
         * blocks before it in its piece are dropped too, but they decoded:
         * resuming there would meet the same failure) */
        uint64_t failed = sv->last_edge != UINT64_MAX && sv->last_edge > sv->commit_bit
                        ? sv->last_edge : sv->commit_bit;
        if ((r = sv_damage(c, b, sv_search_from(b, failed), sv->commit_bit)) != SV_GO_ON)
            return r;
    }
}

/* What is not a member where one should be (a header gzip refuses, or
 * bytes after a member): search from it.  A block found there is a member
 * whose header was lost; a member found is decoded normally, and whatever
 * was lost before it has an unknown length.  Nothing found: after a
 * member that is trailing garbage, as for gzip (no damage); in place of a
 * header, the rest is lost. */
static int sv_stray(struct unz_ctx *c, struct ibuf *b, uint64_t start, bool garbage)
{
    uint64_t at;
    int f = sv_search(b, 8 * start + (garbage ? 0 : 8), &at);
    if (f < 0)
        return -1;
    if (f == RS_FOUND_BLOCK)
        return sv_member(c, b, true, at, 8 * start);
    if (f == RS_FOUND_MEMBER) {
        c->sv->st->resyncs++;
        b->pos = sv_idx(b, at >> 3);
        return sv_unknown(c, c->pout, true) == 0 ? SV_NEW_MEMBER : -1;
    }
    if (garbage) {
        c->sv->st->trailing_garbage = true;
        return sv_drain(b);
    }
    return sv_lost_rest(c, b);
}

/* ---- salvage: setting up and the final list ---- */

static int sv_open(struct unz_ctx *c, int fd, struct unz_stats *st)
{
    struct unz_sv *sv = calloc(1, sizeof *sv);
    if (sv == NULL)
        return -1;
    c->sv = sv;
    sv->st = st;
    if (rs_dual_open(&sv->d) != 0 || (sv->hold = malloc(SV_HOLD)) == NULL)
        return -1;
    struct stat s;
    off_t cur = lseek(fd, 0, SEEK_CUR);
    sv->seekable = cur >= 0 && fstat(fd, &s) == 0 && (S_ISREG(s.st_mode) || S_ISBLK(s.st_mode));
    sv->in_base = cur >= 0 ? (uint64_t)cur : 0;
    return 0;
}

static void sv_close(struct unz_ctx *c)
{
    struct unz_sv *sv = c->sv;
    if (sv != NULL) {
        rs_dual_close(&sv->d);
        free(sv->hold);
        free(sv->cbuf);
        free(sv->pend.r);
        free(sv->bad.r);
        free(sv);
    }
}

/* Input the member decoders refuse outside a gzip member's deflate stream
 * (pack, LZW, zip, a cut magic): in salvage, the rest is lost, not an
 * error. */
static int sv_fallback(struct unz_ctx *c)
{
    if (c->perr.kind != SP_ERR_DATA && c->perr.kind != SP_ERR_CHECK)
        return -1;
    memset(&c->perr, 0, sizeof c->perr);
    return sv_unknown(c, c->pout, false);
}

/* The producer's ranges (less those inside members whose trailer then
 * agreed) and the writer's, sorted and merged, into st. */
static int sv_finish(struct unz_ctx *c, struct unz_stats *st)
{
    struct unz_sv *sv = c->sv;
    size_t n = 0, g = 0;
    struct sp_range *all = malloc((sv->bad.n + c->wbad.n + 1) * sizeof *all);
    if (all == NULL)
        return -1;
    for (size_t i = 0; i < sv->bad.n; i++) {
        struct sp_range r = sv->bad.r[i];
        while (g < c->wgood.n && c->wgood.r[g].off + c->wgood.r[g].len <= r.off)
            g++;
        bool repaired = g < c->wgood.n && c->wgood.r[g].off <= r.off &&
                        r.len <= c->wgood.r[g].off + c->wgood.r[g].len - r.off;
        if (!repaired)
            all[n++] = r;
    }
    if (c->wbad.n > 0)
        memcpy(all + n, c->wbad.r, c->wbad.n * sizeof *all);
    n += c->wbad.n;
    size_t m = sp_ranges_normalize(all, n);
    if (m == 0) {
        free(all);
        all = NULL;
    }
    st->bad = all;
    st->nbad = m;
    st->unverified = c->wunverified;
    st->repaired = c->wrepaired;
    if (c->wshifted && (!st->shifted || c->wshifted_at < st->shifted_at)) {
        st->shifted = true;
        st->shifted_at = c->wshifted_at;
    }
    return 0;
}

/* ---- the table unz.c calls salvage through (unz_int.h) ---- */

/* A member's deflate stream from b->pos (its header read). */
static int sv_start(struct unz_ctx *c, struct ibuf *b)
{
    return sv_member(c, b, false, 0, 0);
}

const struct unz_salvage unz_salvage = {
    .open = sv_open,
    .close = sv_close,
    .member = sv_start,
    .stray = sv_stray,
    .cut = sv_lost_rest,
    .fallback = sv_fallback,
    .finish = sv_finish,
};
