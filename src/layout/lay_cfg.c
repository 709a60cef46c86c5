/* lay_cfg.c — see lay_cfg.h: LVM2's text metadata into a tree, parsed by
 * lvm2's own parser (libdevmapper's dm_config), then copied into lay_cfg's
 * bounded node array. */
#include "config.h"
#include "lay_cfg.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_DEVMAPPER
#include <libdevmapper.h>
#include <pthread.h>

/* libdevmapper logs parse errors to stderr unless told otherwise: the core
 * never prints, so its messages go nowhere (why says what failed). */
static void cfg_quiet(int level, const char *file, int line, int dm_errno, const char *f, ...)
{
    (void)level, (void)file, (void)line, (void)dm_errno, (void)f;
}

static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

static void cfg_init(void)
{
    dm_log_with_errno_init(cfg_quiet);
}

/* lvm2's parser recurses once per nested section: the text's nesting is
 * measured first (outside strings and comments), so that a forged text
 * cannot exhaust the stack. */
static bool cfg_shallow(const char *s, size_t n)
{
    unsigned depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '#') {
            while (i < n && s[i] != '\n')
                i++;
        } else if (s[i] == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
        } else if (s[i] == '{' || s[i] == '[') {
            if (++depth >= LAY_CFG_DEPTH)
                return false;
        } else if ((s[i] == '}' || s[i] == ']') && depth > 0) {
            depth--;
        }
    }
    return true;
}

struct cfg_copy {
    struct lay_cfg *t;
    size_t pool_cap;
    int *oom;
    char *why;
    size_t wn;
};

static int cfg_fail(struct cfg_copy *c, const char *what)
{
    snprintf(c->why, c->wn, "%s", what);
    return -1;
}

/* A node appended (its index), or 0 out of memory / past the bound. */
static size_t cfg_node(struct cfg_copy *c, enum lay_cfg_kind k)
{
    struct lay_cfg *t = c->t;
    if (t->nn == LAY_CFG_NODES) {
        cfg_fail(c, "more settings than metadata holds");
        return 0;
    }
    if (t->nn == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        struct lay_cfg_node *n = realloc(t->n, cap * sizeof *n);
        if (n == NULL) {
            *c->oom = 1;
            return 0;
        }
        t->n = n;
        t->cap = cap;
    }
    t->n[t->nn] = (struct lay_cfg_node){.kind = k, .name = "", .str = ""};
    return t->nn++;
}

/* A copy of s in the pool (sized from the text: it never grows). */
static const char *cfg_keep(struct cfg_copy *c, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n > max || c->t->used + n + 1 > c->pool_cap) {
        cfg_fail(c, "a name or a string too long");
        return NULL;
    }
    char *d = c->t->pool + c->t->used;
    memcpy(d, s, n + 1);
    c->t->used += n + 1;
    return d;
}

/* One value into node k (an integer or a string; floats refused: no
 * metadata field is one). */
static int cfg_value(struct cfg_copy *c, size_t k, const struct dm_config_value *v)
{
    if (v->type == DM_CFG_INT) {
        c->t->n[k].kind = LAY_CFG_INT;
        c->t->n[k].num = v->v.i;
        return 0;
    }
    if (v->type != DM_CFG_STRING)
        return cfg_fail(c, "a value that is neither a number nor a string");
    const char *s = cfg_keep(c, v->v.str, 4095);
    if (s == NULL)
        return -1;
    c->t->n[k].kind = LAY_CFG_STR;
    c->t->n[k].str = s;
    return 0;
}

/* The children of dm node first (and its siblings) under section sec. */
static int cfg_copy_nodes(struct cfg_copy *c, const struct dm_config_node *first, size_t sec,
                          unsigned depth)
{
    size_t last = 0;
    for (const struct dm_config_node *d = first; d != NULL; d = d->sib) {
        size_t k = cfg_node(c, LAY_CFG_SECTION);
        const char *name = k ? cfg_keep(c, d->key ? d->key : "", 127) : NULL;
        if (name == NULL)
            return -1;
        c->t->n[k].name = name;
        if (last)
            c->t->n[last].next = k;
        else
            c->t->n[sec].child = k;
        last = k;
        if (d->v == NULL) { /* a section */
            if (depth + 1 >= LAY_CFG_DEPTH)
                return cfg_fail(c, "sections nested too deep");
            if (cfg_copy_nodes(c, d->child, k, depth + 1) != 0)
                return -1;
        } else if (d->v->next == NULL && d->v->type != DM_CFG_EMPTY_ARRAY) {
            /* lvm2's tree does not tell ["x"] from "x": both are one value
             * (lay_cfg_has() takes either, as lvm2's dm_config_get_list()) */
            if (cfg_value(c, k, d->v) != 0)
                return -1;
        } else { /* a list, possibly empty */
            c->t->n[k].kind = LAY_CFG_LIST;
            size_t le = 0;
            for (const struct dm_config_value *v = d->v; v != NULL; v = v->next) {
                if (v->type == DM_CFG_EMPTY_ARRAY)
                    continue;
                size_t e = cfg_node(c, LAY_CFG_INT);
                if (e == 0 || cfg_value(c, e, v) != 0)
                    return -1;
                if (le)
                    c->t->n[le].next = e;
                else
                    c->t->n[k].child = e;
                le = e;
            }
        }
    }
    return 0;
}

int lay_cfg_parse(const char *text, size_t len, struct lay_cfg *t, int *oom, char *why,
                  size_t wn)
{
    memset(t, 0, sizeof *t);
    *oom = 0;
    pthread_once(&cfg_once, cfg_init);
    while (len > 0 && text[len - 1] == '\0')
        len--;
    if (memchr(text, '\0', len) != NULL) {
        snprintf(why, wn, "a NUL inside the text");
        return -1;
    }
    if (!cfg_shallow(text, len)) {
        snprintf(why, wn, "sections nested too deep");
        return -1;
    }
    struct cfg_copy c = {.t = t, .pool_cap = 2 * len + 2, .oom = oom, .why = why, .wn = wn};
    struct dm_config_tree *cft = dm_config_create();
    t->pool = malloc(c.pool_cap);
    /* The parser reads numbers with strtoll/strtod, which run on past the
     * end it is given while digits follow: it gets a copy ending in a NUL,
     * so that it never reads past len (a PV's text has no NUL of its own). */
    char *z = malloc(len + 1);
    if (cft == NULL || t->pool == NULL || z == NULL || cfg_node(&c, LAY_CFG_SECTION) != 0 ||
        *oom) {
        if (cft != NULL)
            dm_config_destroy(cft);
        free(z);
        *oom = 1;
        lay_cfg_free(t);
        return -1;
    }
    memcpy(z, text, len);
    z[len] = '\0';
    int rc = 0;
    if (!dm_config_parse(cft, z, z + len))
        rc = cfg_fail(&c, "lvm2's parser refuses it");
    else if (cft->root != NULL)
        rc = cfg_copy_nodes(&c, cft->root, 0, 0);
    dm_config_destroy(cft);
    free(z);
    if (rc != 0) {
        if (*oom)
            snprintf(why, wn, "out of memory");
        lay_cfg_free(t);
    }
    return rc;
}

#else

int lay_cfg_parse(const char *text, size_t len, struct lay_cfg *t, int *oom, char *why,
                  size_t wn)
{
    (void)text, (void)len;
    memset(t, 0, sizeof *t);
    *oom = 0;
    snprintf(why, wn, "this spigz was built without libdevmapper");
    return -1;
}

#endif

void lay_cfg_free(struct lay_cfg *t)
{
    free(t->n);
    free(t->pool);
    memset(t, 0, sizeof *t);
}

size_t lay_cfg_get(const struct lay_cfg *t, size_t s, const char *name)
{
    if (s >= t->nn || t->n[s].kind != LAY_CFG_SECTION)
        return 0;
    for (size_t k = t->n[s].child; k != 0; k = t->n[k].next)
        if (strcmp(t->n[k].name, name) == 0)
            return k;
    return 0;
}

int lay_cfg_int(const struct lay_cfg *t, size_t s, const char *name, int64_t *v)
{
    size_t k = lay_cfg_get(t, s, name);
    if (k == 0 || t->n[k].kind != LAY_CFG_INT)
        return -1;
    *v = t->n[k].num;
    return 0;
}

const char *lay_cfg_str(const struct lay_cfg *t, size_t s, const char *name)
{
    size_t k = lay_cfg_get(t, s, name);
    return k != 0 && t->n[k].kind == LAY_CFG_STR ? t->n[k].str : NULL;
}

int lay_cfg_has(const struct lay_cfg *t, size_t s, const char *name, const char *v)
{
    size_t k = lay_cfg_get(t, s, name);
    if (k != 0 && t->n[k].kind == LAY_CFG_STR) /* a list of one */
        return strcmp(t->n[k].str, v) == 0;
    if (k == 0 || t->n[k].kind != LAY_CFG_LIST)
        return 0;
    for (size_t e = t->n[k].child; e != 0; e = t->n[e].next)
        if (t->n[e].kind == LAY_CFG_STR && strcmp(t->n[e].str, v) == 0)
            return 1;
    return 0;
}
