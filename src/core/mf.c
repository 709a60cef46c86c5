/* mf.c — see mf.h and doc/FORMAT.md §2.2. */
#include "mf.h"
#include "leb.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

/* A minimal LEB128 value from p[0..n) (leb.h): the bytes used, or 0 (cut
 * short, redundant, or over 64 bits: all the same to a whole manifest). */
static size_t mf_leb_get(const uint8_t *p, size_t n, uint64_t *v)
{
    int k = leb_get(p, n, v);
    return k > 0 ? (size_t)k : 0;
}

static bool mf_key_ok(const char *k)
{
    size_t n = strlen(k);
    if (n == 0 || n > MF_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '.' ||
              k[i] == '_' || k[i] == '-'))
            return false;
    return true;
}

const struct mf_entry *mf_get(const struct mf *m, const char *key)
{
    for (size_t i = 0; m != NULL && i < m->n; i++)
        if (strcmp(m->e[i].key, key) == 0)
            return &m->e[i];
    return NULL;
}

/* Append an entry taking ownership of v (malloc'd, or NULL when vlen 0). */
static int mf_push(struct mf *m, const char *key, unsigned type, uint8_t *v, size_t vlen)
{
    if (!mf_key_ok(key) || mf_get(m, key) != NULL || m->n >= MF_ENTRIES_MAX)
        goto fail;
    if (m->n == m->cap) {
        size_t cap = m->cap == 0 ? 32 : 2 * m->cap;
        struct mf_entry *e = realloc(m->e, cap * sizeof *e);
        if (e == NULL)
            goto fail;
        m->e = e;
        m->cap = cap;
    }
    struct mf_entry *e = &m->e[m->n++];
    memset(e, 0, sizeof *e);
    strcpy(e->key, key);
    e->type = type;
    e->v = v;
    e->vlen = vlen;
    return 0;
fail:
    free(v);
    return -1;
}

int mf_add_text(struct mf *m, const char *key, const char *text)
{
    size_t n = strnlen(text, MF_TEXT_MAX);
    char *t = malloc(n + 1);
    if (t == NULL)
        return -1;
    memcpy(t, text, n);
    t[n] = '\0';
    txt_clean(t);
    /* a cut may split a character: txt_clean made its bytes '?' */
    return mf_push(m, key, MF_TEXT, (uint8_t *)t, n);
}

int mf_add_uint(struct mf *m, const char *key, uint64_t v)
{
    uint8_t *p = malloc(10);
    return p == NULL ? -1 : mf_push(m, key, MF_UINT, p, leb_put(p, v));
}

int mf_add_bytes(struct mf *m, const char *key, const void *p, size_t n)
{
    if (n > MF_BYTES_MAX)
        return -1;
    uint8_t *v = malloc(n > 0 ? n : 1);
    if (v == NULL)
        return -1;
    memcpy(v, p, n);
    return mf_push(m, key, MF_BYTES, v, n);
}

size_t mf_ranges_size(const struct sp_range *r, size_t n)
{
    size_t s = leb_size(n);
    uint64_t end = 0;
    for (size_t i = 0; i < n; i++) {
        s += leb_size(r[i].off - end) + leb_size(r[i].len);
        end = r[i].off + r[i].len;
    }
    return s;
}

int mf_add_ranges(struct mf *m, const char *key, const struct sp_range *r, size_t n)
{
    size_t s = mf_ranges_size(r, n);
    if (s > MF_MAX)
        return -1;
    uint8_t *v = malloc(s), *p = v;
    if (v == NULL)
        return -1;
    p += leb_put(p, n);
    uint64_t end = 0;
    for (size_t i = 0; i < n; i++) {
        p += leb_put(p, r[i].off - end);
        p += leb_put(p, r[i].len);
        end = r[i].off + r[i].len;
    }
    return mf_push(m, key, MF_RANGES, v, s);
}

size_t mf_entry_size(const char *key, size_t vlen)
{
    return 1 + strlen(key) + 1 + leb_size(vlen) + vlen;
}

size_t mf_encoded_size(const struct mf *m)
{
    size_t s = leb_size(m->n);
    for (size_t i = 0; i < m->n; i++)
        s += mf_entry_size(m->e[i].key, m->e[i].vlen);
    return s;
}

int mf_encode(const struct mf *m, uint8_t **out, size_t *len)
{
    size_t s = mf_encoded_size(m);
    if (s > MF_MAX || (*out = malloc(s)) == NULL)
        return -1;
    uint8_t *p = *out;
    p += leb_put(p, m->n);
    for (size_t i = 0; i < m->n; i++) {
        const struct mf_entry *e = &m->e[i];
        size_t k = strlen(e->key);
        *p++ = (uint8_t)k;
        memcpy(p, e->key, k);
        p += k;
        *p++ = (uint8_t)e->type;
        p += leb_put(p, e->vlen);
        if (e->vlen > 0)
            memcpy(p, e->v, e->vlen);
        p += e->vlen;
    }
    *len = s;
    return 0;
}

/* A ranges value: count, then (gap, len) pairs, sorted, not touching, in
 * the content, filling exactly n bytes.  With r, stores them. */
static bool mf_ranges_walk(const uint8_t *p, size_t n, uint64_t total, struct sp_range *r,
                           size_t *count)
{
    uint64_t c, end = 0;
    size_t at = mf_leb_get(p, n, &c);
    if (at == 0 || c > n / 2)
        return false;
    for (uint64_t i = 0; i < c; i++) {
        uint64_t gap, len;
        size_t a = mf_leb_get(p + at, n - at, &gap);
        size_t b = a == 0 ? 0 : mf_leb_get(p + at + a, n - at - a, &len);
        if (b == 0 || (i > 0 && gap == 0) || len == 0 || gap > total - end ||
            len > total - end - gap)
            return false;
        at += a + b;
        if (r != NULL)
            r[i] = (struct sp_range){end + gap, len};
        end += gap + len;
    }
    *count = (size_t)c;
    return at == n;
}

/* A known type's value checked. */
static bool mf_value_ok(unsigned type, const uint8_t *v, size_t n, uint64_t total)
{
    uint64_t x;
    size_t c;
    switch (type) {
    case MF_TEXT:
        return n <= MF_TEXT_MAX && txt_printable(v, n);
    case MF_UINT:
        return n > 0 && mf_leb_get(v, n, &x) == n;
    case MF_BYTES:
        return n <= MF_BYTES_MAX;
    case MF_RANGES:
        return mf_ranges_walk(v, n, total, NULL, &c);
    default:
        return true; /* a newer writer's type: kept, not read */
    }
}

int mf_decode(const uint8_t *p, size_t n, uint64_t total, struct mf *m, const char **why)
{
    memset(m, 0, sizeof *m);
    uint64_t count;
    size_t at = mf_leb_get(p, n, &count);
    *why = "the manifest is malformed";
    if (n > MF_MAX || at == 0 || count == 0 || count > MF_ENTRIES_MAX) {
        *why = "the manifest's count of entries is impossible";
        return -1;
    }
    for (uint64_t i = 0; i < count; i++) {
        char key[MF_KEY_MAX + 1];
        uint64_t vlen;
        size_t k = at < n ? p[at] : 0;
        if (k == 0 || k > MF_KEY_MAX || n - at < k + 2)
            goto bad;
        memcpy(key, p + at + 1, k);
        key[k] = '\0';
        at += 1 + k;
        unsigned type = p[at++];
        size_t l = mf_leb_get(p + at, n - at, &vlen);
        if (l == 0 || vlen > n - at - l)
            goto bad;
        at += l;
        const uint8_t *v = p + at;
        at += (size_t)vlen;
        if (memchr(key, '\0', k) != NULL || !mf_key_ok(key) || mf_get(m, key) != NULL) {
            *why = "a manifest key is malformed or repeated";
            goto bad;
        }
        if (!mf_value_ok(type, v, (size_t)vlen, total)) {
            *why = "a manifest value is malformed";
            goto bad;
        }
        uint8_t *copy = malloc(vlen > 0 ? (size_t)vlen : 1);
        if (copy == NULL) {
            *why = "out of memory for the manifest";
            goto bad;
        }
        memcpy(copy, v, (size_t)vlen);
        if (mf_push(m, key, type, copy, (size_t)vlen) != 0) {
            *why = "out of memory for the manifest";
            goto bad;
        }
    }
    if (at != n) {
        *why = "the manifest has bytes after its entries";
        goto bad;
    }
    return 0;
bad:
    mf_free(m);
    return -1;
}

void mf_free(struct mf *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->e[i].v);
    free(m->e);
    memset(m, 0, sizeof *m);
}

bool mf_uint(const struct mf_entry *e, uint64_t *v)
{
    return e != NULL && e->type == MF_UINT && mf_leb_get(e->v, e->vlen, v) == e->vlen;
}

bool mf_get_uint(const struct mf *m, const char *key, uint64_t *v)
{
    return mf_uint(mf_get(m, key), v);
}

const char *mf_text(const struct mf_entry *e, char *b, size_t n)
{
    if (n == 0)
        return b;
    size_t k = e == NULL || e->type != MF_TEXT ? 0 : e->vlen < n - 1 ? e->vlen : n - 1;
    if (k > 0)
        memcpy(b, e->v, k);
    b[k] = '\0';
    return b;
}

int mf_ranges(const struct mf_entry *e, struct sp_range **r, size_t *n)
{
    size_t c = 0;
    *r = NULL;
    *n = 0;
    if (e == NULL || e->type != MF_RANGES || !mf_ranges_walk(e->v, e->vlen, UINT64_MAX, NULL, &c))
        return -1;
    if (c > 0 && (*r = malloc(c * sizeof **r)) == NULL)
        return -1;
    mf_ranges_walk(e->v, e->vlen, UINT64_MAX, *r, &c);
    *n = c;
    return 0;
}
