/* zrun.c — see zrun.h for the block layout. */
#include "zrun.h"

#include <assert.h>
#include <string.h>

/* A tiny LSB-first bit writer over a bounded byte array. */
struct zbits {
    uint8_t *buf;
    unsigned cap, pos; /* bytes */
    uint32_t acc;      /* pending bits, < 8 of them */
    unsigned nacc;
};

static void zb_put(struct zbits *b, uint32_t val, unsigned nbits)
{
    for (unsigned i = 0; i < nbits; i++) {
        b->acc |= ((val >> i) & 1u) << b->nacc;
        if (++b->nacc == 8) {
            assert(b->pos < b->cap);
            b->buf[b->pos++] = (uint8_t)b->acc;
            b->acc = 0;
            b->nacc = 0;
        }
    }
}

/* Huffman codes go most significant bit first. */
static void zb_code(struct zbits *b, uint32_t code, unsigned len)
{
    while (len-- > 0)
        zb_put(b, (code >> len) & 1u, 1);
}

static void zb_align(struct zbits *b)
{
    if (b->nacc > 0)
        zb_put(b, 0, 8 - b->nacc);
}

/* Dynamic block header.  Literal/length code lengths: 0 -> 2, 256 -> 2,
 * 285 -> 1 (canonical codes 285 = 0, 0 = 10, 256 = 11); distance lengths:
 * 0 -> 1, 1 -> 1 (distance 1 = 0; distance 2 only completes the code).
 * The 288 lengths are sent with the code length code {18 -> 1 bit,
 * 1 -> 2 bits, 2 -> 2 bits} (canonical: 18 = 0, 1 = 10, 2 = 11). */
static void zrun_dyn_header(struct zbits *b)
{
    static const uint8_t order[18] = {16, 17, 18, 0, 8, 7, 9, 6, 10,
                                      5, 11, 4, 12, 3, 13, 2, 14, 1};
    zb_put(b, 0, 1);        /* BFINAL */
    zb_put(b, 2, 2);        /* BTYPE = dynamic */
    zb_put(b, 286 - 257, 5);/* HLIT: symbols 0..285 */
    zb_put(b, 2 - 1, 5);    /* HDIST: distances codes 0..1 */
    zb_put(b, 18 - 4, 4);   /* HCLEN: up to symbol 1 in the order above */
    for (int i = 0; i < 18; i++) {
        unsigned s = order[i];
        zb_put(b, s == 18 ? 1 : (s == 1 || s == 2) ? 2 : 0, 3);
    }
    /* literal 0: length 2 */
    zb_code(b, 3, 2);
    /* literals 1..255: 255 zeros = 138 + 117 (code 18 takes 11..138) */
    zb_code(b, 0, 1); zb_put(b, 138 - 11, 7);
    zb_code(b, 0, 1); zb_put(b, 117 - 11, 7);
    /* 256 (end of block): length 2 */
    zb_code(b, 3, 2);
    /* 257..284: 28 zeros */
    zb_code(b, 0, 1); zb_put(b, 28 - 11, 7);
    /* 285: length 1; distances 0 and 1: length 1 each */
    zb_code(b, 2, 2);
    zb_code(b, 2, 2);
    zb_code(b, 2, 2);
}

/* Fixed-code helpers (RFC 1951 3.2.6). */
static void zrun_fixed_sym(struct zbits *b, unsigned sym)
{
    if (sym < 144)
        zb_code(b, 0x30 + sym, 8);
    else if (sym < 256)
        zb_code(b, 0x190 + sym - 144, 9);
    else if (sym < 280)
        zb_code(b, sym - 256, 7);
    else
        zb_code(b, 0xc0 + sym - 280, 8);
}

/* One match of length len (3..258) at distance 1, fixed codes. */
static void zrun_fixed_match(struct zbits *b, unsigned len)
{
    static const uint16_t base[29] = {
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
        35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const uint8_t extra[29] = {
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
        3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    unsigned i = 28;
    while (base[i] > len)
        i--;
    zrun_fixed_sym(b, 257 + i);
    zb_put(b, len - base[i], extra[i]);
    zb_put(b, 0, 5); /* distance code 0 = distance 1, fixed 5-bit code */
}

/* Everything after the matches: end of the dynamic block, a fixed block with
 * the last r (0..257) zeros when r > 0, then an empty stored block. */
static void zrun_tail(struct zbits *b, unsigned r)
{
    zb_code(b, 3, 2); /* end of block */
    if (r > 0) {
        zb_put(b, 0, 1);
        zb_put(b, 1, 2); /* BTYPE = fixed */
        if (r >= 3)
            zrun_fixed_match(b, r);
        else
            while (r-- > 0)
                zrun_fixed_sym(b, 0);
        zrun_fixed_sym(b, 256);
    }
    zb_put(b, 0, 3); /* stored block header, BFINAL = 0 */
    zb_align(b);
    zb_put(b, 0x0000, 16);
    zb_put(b, 0xffff, 16);
}

void zrun_encode(uint64_t n, struct zrun *z)
{
    memset(z, 0, sizeof *z);
    if (n == 0)
        return;
    uint64_t k = (n - 1) / 258;           /* full-length matches */
    unsigned r = (unsigned)((n - 1) % 258);

    struct zbits h = {z->head, ZRUN_EDGE_MAX, 0, 0, 0};
    zrun_dyn_header(&h);
    zb_code(&h, 2, 2);                    /* literal 0 */
    uint64_t head_bits = 8ull * h.pos + h.nacc;
    uint64_t tail_bit = head_bits + 2 * k; /* where the tail starts */
    uint64_t head_bytes = (head_bits + 7) / 8;

    struct zbits t = {z->tail, ZRUN_EDGE_MAX, 0, 0, 0};
    if (tail_bit / 8 > head_bytes) {
        /* Whole zero bytes in between: cut there. */
        zb_align(&h);
        z->zeros = tail_bit / 8 - head_bytes;
        zb_put(&t, 0, (unsigned)(tail_bit % 8));
        zrun_tail(&t, r);
    } else {
        /* Short run: everything in the head. */
        for (uint64_t i = 0; i < k; i++)
            zb_put(&h, 0, 2);
        zrun_tail(&h, r);
    }
    z->head_len = h.pos;
    z->tail_len = t.pos;
}

uint64_t zrun_size(const struct zrun *z)
{
    return z->head_len + z->zeros + z->tail_len;
}
