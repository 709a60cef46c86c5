/* piece.c — see piece.h. */
#include "piece.h"
#include "block.h"
#include "io.h"
#include "splice.h"
#include "zrun.h"

#include <errno.h>

uint64_t pc_find(const struct idx *x, uint64_t from)
{
    uint64_t lo = 0, hi = x->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (x->p[mid + 1].uoff <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int pc_pread(int fd, uint8_t *p, size_t n, uint64_t off, struct sp_err *e)
{
    int rc = io_pread_exact(fd, p, n, off);
    if (rc < 0)
        sp_err_set(e, SP_ERR_READ, errno, "read error");
    else if (rc == IO_SHORT)
        sp_err_set(e, SP_ERR_DATA, 0, "unexpected end of file");
    return rc == 0 ? 0 : -1;
}

/* Compare p[0..n), at offset `at` of a zero piece's encoding z of clen
 * bytes, with what the encoding holds there. */
static bool pc_zero_span_ok(const struct zrun *z, uint64_t clen, uint64_t at,
                            const uint8_t *p, size_t n)
{
    uint64_t tail_at = clen - z->tail_len;
    for (size_t j = 0; j < n;) {
        uint64_t i = at + j;
        if (i < z->head_len) {
            if (p[j++] != z->head[i])
                return false;
        } else if (i >= tail_at) {
            if (p[j++] != z->tail[i - tail_at])
                return false;
        } else { /* the middle: zero bytes up to the tail */
            size_t m = tail_at - i < n - j ? (size_t)(tail_at - i) : n - j;
            if (!scan_is_zero(p + j, m))
                return false;
            j += m;
        }
    }
    return true;
}

int pc_zero_ok(int fd, const struct idx *x, uint64_t k, uint8_t *scratch, struct sp_err *e)
{
    struct zrun z;
    zrun_encode(pc_ulen(x, k), &z);
    uint64_t clen = pc_clen(x, k), off = pc_file_off(x, k);
    if (clen != zrun_size(&z))
        return 0;
    for (uint64_t i = 0; i < clen;) {
        size_t n = clen - i < PC_SCRATCH ? (size_t)(clen - i) : PC_SCRATCH;
        if (pc_pread(fd, scratch, n, off + i, e) != 0)
            return -1;
        if (!pc_zero_span_ok(&z, clen, i, scratch, n))
            return 0;
        i += n;
    }
    return 1;
}

int pc_read_data(int fd, const struct idx *x, uint64_t k, uint8_t *in, struct sp_err *e)
{
    size_t clen = (size_t)pc_clen(x, k);
    if (pc_pread(fd, in, clen, pc_file_off(x, k), e) != 0)
        return -1;
    in[clen] = 0x03; /* an empty final block closes the piece */
    in[clen + 1] = 0x00;
    return 0;
}

enum pc_verdict pc_data_check(struct eng_dec *d, const struct idx *x, uint64_t k,
                              const uint8_t *in, size_t in_len, uint8_t *out)
{
    uint64_t clen = in_len - 2, ulen = pc_ulen(x, k);
    struct splice_info si;
    if (splice_walk(in, in_len, &si) != 0 || si.last_hdr_bit != 8 * clen)
        return PC_BAD_DATA;
    if (eng_dec_exact(d, in, in_len, out, (size_t)ulen) != 0)
        return PC_BAD_DATA;
    return eng_crc32(0, out, (size_t)ulen) == x->p[k].crc ? PC_OK : PC_BAD_CRC;
}
