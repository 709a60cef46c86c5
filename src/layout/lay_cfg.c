/* lay_cfg.c — see lay_cfg.h: LVM2's text metadata into a tree. */
#include "config.h"
#include "lay_cfg.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cfg_p {
    const char *s, *end;
    unsigned line;
    struct lay_cfg *t;
    int *oom;
    char *why;
    size_t wn;
};

static int cfg_fail(struct cfg_p *p, const char *what)
{
    snprintf(p->why, p->wn, "line %u: %s", p->line, what);
    return -1;
}

static void cfg_skip(struct cfg_p *p)
{
    while (p->s < p->end) {
        char c = *p->s;
        if (c == '\n')
            p->line++;
        if (c == '#') {
            while (p->s < p->end && *p->s != '\n')
                p->s++;
            continue;
        }
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
            return;
        p->s++;
    }
}

static bool cfg_namech(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == '+';
}

/* A node appended (its index), or 0 out of memory / past the bound. */
static size_t cfg_node(struct cfg_p *p, enum lay_cfg_kind k)
{
    struct lay_cfg *t = p->t;
    if (t->nn == LAY_CFG_NODES) {
        cfg_fail(p, "more settings than metadata holds");
        return 0;
    }
    if (t->nn == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        struct lay_cfg_node *n = realloc(t->n, cap * sizeof *n);
        if (n == NULL) {
            *p->oom = 1;
            return 0;
        }
        t->n = n;
        t->cap = cap;
    }
    t->n[t->nn] = (struct lay_cfg_node){.kind = k, .name = "", .str = ""};
    return t->nn++;
}

/* Copy [a, a + n) into the pool (sized in lay_cfg_parse() so it never
 * grows: every name or string is at most the text it came from, plus a
 * NUL per token). */
static const char *cfg_keep(struct lay_cfg *t, const char *a, size_t n)
{
    char *d = t->pool + t->used;
    memcpy(d, a, n);
    d[n] = '\0';
    t->used += n + 1;
    return d;
}

static int cfg_name(struct cfg_p *p, const char **out)
{
    const char *a = p->s;
    while (p->s < p->end && cfg_namech(*p->s))
        p->s++;
    if (p->s == a || p->s - a > 127)
        return cfg_fail(p, p->s == a ? "a name expected" : "a name too long");
    *out = cfg_keep(p->t, a, (size_t)(p->s - a));
    return 0;
}

/* An integer or a string at p->s into node k. */
static int cfg_scalar(struct cfg_p *p, size_t k)
{
    struct lay_cfg_node *n = &p->t->n[k];
    if (p->s < p->end && *p->s == '"') {
        char buf[4096];
        size_t len = 0;
        for (p->s++; p->s < p->end && *p->s != '"'; p->s++) {
            if (*p->s == '\\' && p->s + 1 < p->end)
                p->s++;
            if (*p->s == '\n')
                p->line++;
            if (len == sizeof buf - 1)
                return cfg_fail(p, "a string too long");
            buf[len++] = *p->s;
        }
        if (p->s == p->end)
            return cfg_fail(p, "a string not closed");
        p->s++;
        n->kind = LAY_CFG_STR;
        n->str = cfg_keep(p->t, buf, len);
        return 0;
    }
    bool neg = p->s < p->end && *p->s == '-';
    p->s += neg;
    uint64_t v = 0;
    const char *a = p->s;
    for (; p->s < p->end && *p->s >= '0' && *p->s <= '9'; p->s++) {
        if (v > (UINT64_C(1) << 62) / 5) /* v * 10 would pass 2^63 */
            return cfg_fail(p, "a number too large");
        v = v * 10 + (uint64_t)(*p->s - '0');
    }
    if (p->s == a || (p->s < p->end && (*p->s == '.' || cfg_namech(*p->s))))
        return cfg_fail(p, "a number or a string expected");
    if (v > (uint64_t)INT64_MAX)
        return cfg_fail(p, "a number too large");
    n->kind = LAY_CFG_INT;
    n->num = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

/* [ elem, elem ... ] into the list node k. */
static int cfg_list(struct cfg_p *p, size_t k)
{
    p->s++; /* '[' */
    size_t last = 0;
    for (;;) {
        cfg_skip(p);
        if (p->s < p->end && *p->s == ']') {
            p->s++;
            return 0;
        }
        size_t e = cfg_node(p, LAY_CFG_INT);
        if (e == 0 || cfg_scalar(p, e) != 0)
            return -1;
        if (last)
            p->t->n[last].next = e;
        else
            p->t->n[k].child = e;
        last = e;
        cfg_skip(p);
        if (p->s < p->end && *p->s == ',')
            p->s++;
        else if (p->s >= p->end || *p->s != ']')
            return cfg_fail(p, "',' or ']' expected in a list");
    }
}

/* The settings and sections of section sec, up to '}' (inner) or the end
 * of the text (the root). */
static int cfg_body(struct cfg_p *p, size_t sec, unsigned depth)
{
    size_t last = 0;
    for (;;) {
        cfg_skip(p);
        if (p->s == p->end)
            return depth == 0 ? 0 : cfg_fail(p, "a section not closed");
        if (*p->s == '}') {
            if (depth == 0)
                return cfg_fail(p, "'}' without a section");
            p->s++;
            return 0;
        }
        const char *name;
        if (cfg_name(p, &name) != 0)
            return -1;
        cfg_skip(p);
        size_t k = cfg_node(p, LAY_CFG_SECTION);
        if (k == 0)
            return -1;
        p->t->n[k].name = name;
        if (last)
            p->t->n[last].next = k;
        else
            p->t->n[sec].child = k;
        last = k;
        if (p->s < p->end && *p->s == '{') {
            if (depth + 1 >= LAY_CFG_DEPTH)
                return cfg_fail(p, "sections nested too deep");
            p->s++;
            if (cfg_body(p, k, depth + 1) != 0)
                return -1;
            continue;
        }
        if (p->s == p->end || *p->s != '=')
            return cfg_fail(p, "'=' or '{' expected");
        p->s++;
        cfg_skip(p);
        if (p->s < p->end && *p->s == '[') {
            p->t->n[k].kind = LAY_CFG_LIST;
            if (cfg_list(p, k) != 0)
                return -1;
        } else if (cfg_scalar(p, k) != 0) {
            return -1;
        }
    }
}

int lay_cfg_parse(const char *text, size_t len, struct lay_cfg *t, int *oom, char *why,
                  size_t wn)
{
    memset(t, 0, sizeof *t);
    *oom = 0;
    while (len > 0 && text[len - 1] == '\0')
        len--;
    if (memchr(text, '\0', len) != NULL) {
        snprintf(why, wn, "a NUL inside the text");
        return -1;
    }
    struct cfg_p p = {.s = text, .end = text + len, .line = 1, .t = t, .oom = oom,
                      .why = why, .wn = wn};
    t->pool_cap = 2 * len + 2;
    t->pool = malloc(t->pool_cap);
    if (t->pool == NULL || cfg_node(&p, LAY_CFG_SECTION) != 0) { /* the root is node 0 */
        *oom = 1;
        lay_cfg_free(t);
        return -1;
    }
    if (cfg_body(&p, 0, 0) != 0) {
        if (*oom)
            snprintf(why, wn, "out of memory");
        lay_cfg_free(t);
        return -1;
    }
    return 0;
}

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
    if (k == 0 || t->n[k].kind != LAY_CFG_LIST)
        return 0;
    for (size_t e = t->n[k].child; e != 0; e = t->n[e].next)
        if (t->n[e].kind == LAY_CFG_STR && strcmp(t->n[e].str, v) == 0)
            return 1;
    return 0;
}
