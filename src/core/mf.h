/* mf.h — a backup's manifest (doc/FORMAT.md §2.2): what made it, from what,
 * and what it found there, as typed entries under dotted keys
 * ("source.size", "part.2.fs"), in the order written.
 *
 * The compressor's caller fills one (cli/cli_manifest.c), the compressor
 * adds the image digest and the index writer stores it encoded after the
 * notes (footer flag 4); the index reader decodes it (untrusted: every
 * entry checked, bounded by MF_MAX bytes) for -l, --compare and -t.  Keys
 * a reader does not know, and entries of a type it does not know, are
 * kept or skipped, never an error: newer writers may add both.
 *
 * Contract: a struct mf owns copies of everything added; one thread
 * writes it, then any thread may read it.  Nothing prints or exits.
 */
#ifndef SPIGZ_MF_H
#define SPIGZ_MF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "range.h"

#define MF_MAX ((size_t)16 << 20) /* an encoded manifest at most */
#define MF_ENTRIES_MAX 4096
#define MF_KEY_MAX 64
#define MF_TEXT_MAX 4096
#define MF_BYTES_MAX 64

enum mf_type { MF_TEXT = 1, MF_UINT = 2, MF_BYTES = 3, MF_RANGES = 4 };

struct mf_entry {
    char key[MF_KEY_MAX + 1];
    unsigned type;       /* enum mf_type, or another a newer writer used */
    uint8_t *v;          /* the value's encoded bytes (FORMAT.md §2.2) */
    size_t vlen;
};

struct mf {
    struct mf_entry *e;
    size_t n, cap;
};

/* Adding: 0, or -1 (out of memory, a key that is not [a-z0-9._-]{1,64} or
 * is there already, too many entries).  Text is cut to MF_TEXT_MAX bytes
 * and made printable (txt_clean): names read from a disk are untrusted. */
int mf_add_text(struct mf *m, const char *key, const char *text);
int mf_add_uint(struct mf *m, const char *key, uint64_t v);
int mf_add_bytes(struct mf *m, const char *key, const void *p, size_t n);
int mf_add_ranges(struct mf *m, const char *key, const struct sp_range *r, size_t n);

/* The encoded size of a ranges value (for the caller deciding whether a
 * free map fits under MF_MAX). */
size_t mf_ranges_size(const struct sp_range *r, size_t n);

/* Sizes: one entry's encoded bytes, and the whole manifest's (what
 * mf_encode writes). */
size_t mf_entry_size(const char *key, size_t vlen);
size_t mf_encoded_size(const struct mf *m);

/* The manifest's bytes: *out malloc'd (the caller frees), *len <= MF_MAX
 * when it fits.  0, or -1 out of memory or too large. */
int mf_encode(const struct mf *m, uint8_t **out, size_t *len);

/* Decode and check n bytes (a content of `total` bytes: ranges must lie
 * in it).  0 with *m filled, or -1 with *why (a static string). */
int mf_decode(const uint8_t *p, size_t n, uint64_t total, struct mf *m, const char **why);

void mf_free(struct mf *m);

/* Reading. */
const struct mf_entry *mf_get(const struct mf *m, const char *key);
bool mf_uint(const struct mf_entry *e, uint64_t *v);      /* an MF_UINT's value */
const char *mf_text(const struct mf_entry *e, char *b, size_t n); /* an MF_TEXT's, cut */
/* An MF_RANGES value: *r malloc'd (NULL when *n is 0).  0, or -1. */
int mf_ranges(const struct mf_entry *e, struct sp_range **r, size_t *n);

/* Convenience: the entry's value if it is there and of that type. */
bool mf_get_uint(const struct mf *m, const char *key, uint64_t *v);

#endif
