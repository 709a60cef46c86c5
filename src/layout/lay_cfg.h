/* lay_cfg.h — LVM2's text metadata, parsed into a tree (lay_lvm.c reads it).
 *
 * The syntax is LVM's configuration format (lvm2's doc "metadata text
 * format"): `name { ... }` sections, `name = value` settings whose value is
 * an integer, a quoted string (backslash escapes \" and \\) or a bracketed
 * list of them ([] may be empty), and `#` comments to the end of a line.
 * Floats, which LVM's own configuration allows, are refused: no metadata
 * field is one, and refusing costs a PV read whole, never a wrong map.
 *
 * The parser is lvm2's own (libdevmapper's dm_config_parse(), which lvm2
 * reads its metadata with); its tree is copied into lay_cfg's node array,
 * bounded.  Without libdevmapper (configure --without-devmapper) every
 * parse fails, saying so, and LVM PVs are read whole.
 *
 * Bounds: the text is untrusted.  Its nesting is measured before lvm2's
 * recursive parser sees it: depth at most LAY_CFG_DEPTH; at most
 * LAY_CFG_NODES nodes, names at most 127 bytes, strings at most 4095;
 * integers are 64-bit signed.  Lookups are linear in a section's children.
 *
 * Memory: lay_cfg_parse() returns a tree that owns copies of every name and
 * string; lay_cfg_free() frees it.  No globals: any thread may parse.
 */
#ifndef SPIGZ_LAY_CFG_H
#define SPIGZ_LAY_CFG_H

#include <stddef.h>
#include <stdint.h>

#define LAY_CFG_DEPTH 16
#define LAY_CFG_NODES ((size_t)1 << 20)

enum lay_cfg_kind { LAY_CFG_SECTION, LAY_CFG_INT, LAY_CFG_STR, LAY_CFG_LIST };

/* One node: a section, a setting (INT, STR or LIST), or an element of a
 * list (INT or STR, with no name).  Children and list elements hang from
 * child, in the text's order, linked by next (indices into the tree's
 * nodes; 0 ends a chain: node 0 is the root section). */
struct lay_cfg_node {
    enum lay_cfg_kind kind;
    const char *name; /* "" for the root and list elements */
    const char *str;  /* STR */
    int64_t num;      /* INT */
    size_t child, next;
};

struct lay_cfg {
    struct lay_cfg_node *n;
    size_t nn, cap;
    char *pool; /* names and strings */
    size_t used, pool_cap;
};

/* Parse len bytes of text (NULs at its end are ignored; one inside is an
 * error).  0 with *t filled, or -1 with why set ("line 12: ...") and *t
 * empty; out of memory is -1 with *oom set. */
int lay_cfg_parse(const char *text, size_t len, struct lay_cfg *t, int *oom, char *why,
                  size_t wn);

void lay_cfg_free(struct lay_cfg *t);

/* The first child of section s named name, of any kind, or 0. */
size_t lay_cfg_get(const struct lay_cfg *t, size_t s, const char *name);

/* The integer setting name of section s: 0 with *v, or -1 (absent, or not
 * an integer). */
int lay_cfg_int(const struct lay_cfg *t, size_t s, const char *name, int64_t *v);

/* The string setting name of section s, or NULL (absent, or not a string). */
const char *lay_cfg_str(const struct lay_cfg *t, size_t s, const char *name);

/* Whether the list setting name of section s holds the string v (a list
 * of one is a plain string in lvm2's tree: that counts). */
int lay_cfg_has(const struct lay_cfg *t, size_t s, const char *name, const char *v);

#endif
