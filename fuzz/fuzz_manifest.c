/* libFuzzer harness for a backup's manifest (mf_decode, doc/FORMAT.md
 * section 2.2), untrusted bytes from a backup's index.
 *
 * Input: 8 bytes of the content's length (little-endian: what the ranges
 * must lie in), then the manifest's bytes.
 *
 * Invariants (abort on failure): mf_decode returns 0 or -1, and -1 leaves
 * nothing allocated; an accepted manifest encodes back to exactly the
 * bytes decoded (unknown types and keys kept as they are); every key is
 * [a-z0-9._-]{1,64} and appears once; every text is printable UTF-8; every
 * integer reads; every ranges value decodes to sorted ranges that neither
 * overlap nor touch, inside the content, no more of them than its bytes
 * allow. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mf.h"
#include "text.h"

#define CHECK(c)                                                                               \
    do {                                                                                       \
        if (!(c)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);              \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

static void check_entry(const struct mf *m, const struct mf_entry *e, uint64_t total)
{
    size_t k = strlen(e->key);
    CHECK(k >= 1 && k <= MF_KEY_MAX);
    CHECK(strspn(e->key, "abcdefghijklmnopqrstuvwxyz0123456789._-") == k);
    CHECK(mf_get(m, e->key) == e);
    uint64_t v;
    if (e->type == MF_TEXT) {
        CHECK(e->vlen <= MF_TEXT_MAX && txt_printable(e->v, e->vlen));
    } else if (e->type == MF_UINT) {
        CHECK(mf_uint(e, &v));
    } else if (e->type == MF_BYTES) {
        CHECK(e->vlen <= MF_BYTES_MAX);
    } else if (e->type == MF_RANGES) {
        struct sp_range *r;
        size_t n;
        CHECK(mf_ranges(e, &r, &n) == 0);
        CHECK(n <= e->vlen / 2);
        uint64_t end = 0;
        for (size_t i = 0; i < n; i++) {
            CHECK(r[i].len > 0 && (i == 0 || r[i].off > end));
            CHECK(r[i].off <= total && r[i].len <= total - r[i].off);
            end = r[i].off + r[i].len;
        }
        free(r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t total = 0;
    for (int i = 0; i < 8; i++)
        total |= (uint64_t)data[i] << (8 * i);
    data += 8;
    size -= 8;
    struct mf m;
    const char *why = NULL;
    int rc = mf_decode(data, size, total, &m, &why);
    CHECK(rc == 0 || rc == -1);
    if (rc != 0) {
        CHECK(why != NULL && m.e == NULL && m.n == 0);
        return 0;
    }
    CHECK(m.n >= 1 && m.n <= MF_ENTRIES_MAX);
    for (size_t i = 0; i < m.n; i++)
        check_entry(&m, &m.e[i], total);
    uint8_t *out;
    size_t len;
    CHECK(mf_encode(&m, &out, &len) == 0);
    CHECK(len == size && memcmp(out, data, size) == 0);
    free(out);
    mf_free(&m);
    return 0;
}
