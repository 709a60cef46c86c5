/* cmd_estimate.c — --estimate and --map for one input: run the estimate
 * (estimate.c) and print its report on stdout, as text, JSON (one object per
 * input, one per line) or key=value lines.  The input is never modified. */
#include "config.h"
#include "cli.h"
#include "cli_manifest.h"
#include "cli_path.h"
#include "cli_progress.h"
#include "cli_report.h"
#include "estimate.h"
#include "lay.h"
#include "text.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define CE_MAP_ROWS 16
#define CE_LABEL 11 /* "  1.00 TiB " */

/* Bytes in binary units, 3 significant digits: "512 B", "4.00 GiB". */
static const char *ce_bytes(double v, char buf[32])
{
    return txt_size(buf, 32, v);
}

static double ce_pct(uint64_t part, uint64_t whole)
{
    return whole == 0 ? 0 : 100.0 * (double)part / (double)whole;
}

/* Map cells per row: what fits the terminal (stdout), 64 otherwise. */
static unsigned ce_map_width(void)
{
    unsigned cols = 0;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
        cols = ws.ws_col;
    else if (getenv("COLUMNS") != NULL)
        cols = (unsigned)atoi(getenv("COLUMNS"));
    if (cols == 0)
        return 64;
    unsigned w = cols > CE_LABEL + 2 ? cols - CE_LABEL - 2 : 8;
    w = w / 8 * 8;
    return w < 8 ? 8 : w > 128 ? 128 : w;
}

static void ce_text(const struct cli *c, const char *name, const struct est_result *r)
{
    char a[32], b[32], d[32], h[32];
    char fr[48] = "";
    if (c->free_zero)
        snprintf(fr, sizeof fr, ", free %s", ce_bytes((double)r->free_bytes, d));
    printf("%s: %s, zeros %s (%.1f%%; holes %s%s), data %s in %llu chunk%s\n", name,
           ce_bytes((double)r->in_bytes, a), ce_bytes((double)r->zero_bytes, b),
           ce_pct(r->zero_bytes, r->in_bytes), ce_bytes((double)r->hole_bytes, h), fr,
           ce_bytes((double)r->data_bytes, d), (unsigned long long)r->chunks,
           r->chunks == 1 ? "" : "s");
    if (!c->est_size)
        return;
    printf("  compressed  %s (%.0f bytes), 90%% interval %s",
           ce_bytes(r->size, a), r->size, ce_bytes(r->lo, b));
    printf(" .. %s, at -%d\n", ce_bytes(r->hi, a), c->level);
    printf("  ratio       %.2f%% of the input; data to %.1f%%\n", ce_pct((uint64_t)r->size,
           r->in_bytes), 100 * r->ratio);
    printf("  time        %.1f s at -p%u\n", r->seconds, c->threads);
    printf("  basis       %llu chunks compressed whole, %llu by pieces (%s through the"
           " engine); %s; took %.2f s\n",
           (unsigned long long)r->sampled, (unsigned long long)r->proxied,
           ce_bytes((double)r->sampled_bytes, a),
           r->split_exact ? "every block read" : "blocks sampled (--estimate=full reads all)",
           r->took);
}

static bool ce_utf8(void)
{
    const char *cs = nl_langinfo(CODESET);
    return cs != NULL && strcmp(cs, "UTF-8") == 0;
}

/* A cell's shade: none, up to 1/4, 1/2, 3/4, more data. */
static const char *ce_shade(uint8_t v, bool utf8)
{
    static const char *const u[] = {"\u00b7", "\u2591", "\u2592", "\u2593", "\u2588"};
    static const char *const asc[] = {".", "-", "+", "*", "#"};
    int k = v == 0 ? 0 : v <= 64 ? 1 : v <= 128 ? 2 : v <= 192 ? 3 : 4;
    return utf8 ? u[k] : asc[k];
}

/* --free=zero: the partitions starting in cells [a, b), as " <- 1 vfat "EFI"". */
static void ce_map_marks(const struct est_result *r, const struct lay_map *m, unsigned a,
                         unsigned b)
{
    const char *sep = "  <- ";
    for (size_t k = 0; m != NULL && k < m->nparts; k++) {
        const struct lay_part *p = &m->parts[k];
        uint64_t cell = r->cell_bytes ? p->off / r->cell_bytes : 0;
        if (p->len == 0 || cell < a || cell >= b)
            continue;
        printf("%s%u %s%s%s%s", sep, p->number, p->fs[0] ? p->fs : "?",
               p->label[0] ? " \"" : "", p->label, p->label[0] ? "\"" : "");
        sep = ", ";
    }
}

/* What a region or a volume holds: its filesystem, size, used or why read whole. */
static void ce_part_text(const struct lay_part *p)
{
    char b[32], d[32];
    printf("%s%s%s%s, %s", p->fs[0] ? p->fs : "no filesystem", p->label[0] ? " \"" : "",
           p->label, p->label[0] ? "\"" : "", ce_bytes((double)p->len, b));
    if (p->mapped)
        printf(", %s used\n", ce_bytes((double)p->used, d));
    else
        printf(", read whole: %s\n", p->why);
}

/* --free=zero: one line per partition under the map, one per LV under it. */
static void ce_map_parts(const struct lay_map *m)
{
    char a[32];
    for (size_t k = 0; m != NULL && k < m->nparts; k++) {
        const struct lay_part *p = &m->parts[k];
        const struct lay_layout *L = &m->layouts[p->layout];
        if (m->nlayouts > 1 && k == L->first)
            printf("  reading %u: %s\n", p->layout + 1, L->name);
        if (L->table[0] != '\0')
            printf("  %s partition %u at %s, type %s: ", L->table, p->number,
                   ce_bytes((double)p->off, a), p->ptype);
        else
            printf("  the whole input: ");
        ce_part_text(p);
        for (size_t v = p->vol_first; v < p->vol_first + p->nvols && v < m->nvols; v++) {
            printf("    LV %s: ", m->vols[v].vol);
            ce_part_text(&m->vols[v]);
        }
    }
}

static void ce_map_text(const struct est_result *r, unsigned width, const struct lay_map *m)
{
    bool utf8 = ce_utf8();
    char a[32];
    printf("  map: each cell %s, shaded by its share of data:", ce_bytes((double)r->cell_bytes, a));
    static const uint8_t level[] = {0, 64, 128, 192, 255};
    static const char *const name[] = {"none", "<=25%", "<=50%", "<=75%", ">75%"};
    for (int k = 0; k < 5; k++)
        printf(" %s %s", ce_shade(level[k], utf8), name[k]);
    putchar('\n');
    for (unsigned row = 0; row * width < r->cells; row++) {
        printf("%10s ", ce_bytes((double)row * width * (double)r->cell_bytes, a));
        for (unsigned i = row * width; i < (row + 1) * width && i < r->cells; i++)
            fputs(ce_shade(r->map[i], utf8), stdout);
        ce_map_marks(r, m, row * width, (row + 1) * width);
        putchar('\n');
    }
    ce_map_parts(m);
}

/* Fields shared by JSON and key=value: name, is-a-number, value. */
static void ce_fields(const struct cli *c, const struct est_result *r,
                      void (*put)(const char *, const char *, bool, bool))
{
    char v[64];
#define CE_U(k, x) (snprintf(v, sizeof v, "%llu", (unsigned long long)(x)), put(k, v, true, false))
#define CE_F(k, fmt, x) (snprintf(v, sizeof v, fmt, (x)), put(k, v, true, false))
    put("mode", c->est_full ? "full" : "sample", false, false);
    CE_U("level", c->level);
    CE_U("threads", c->threads);
    CE_U("seed", c->seed);
    CE_U("input_bytes", r->in_bytes);
    CE_U("hole_bytes", r->hole_bytes);
    CE_U("free_bytes", r->free_bytes);
    CE_U("zero_bytes", r->zero_bytes);
    CE_U("data_bytes", r->data_bytes);
    put("split_exact", r->split_exact ? "true" : "false", true, false);
    CE_U("chunks", r->chunks);
    CE_U("whole_chunks", r->sampled);
    CE_U("proxied_chunks", r->proxied);
    CE_U("sampled_bytes", r->sampled_bytes);
    CE_U("read_bytes", r->read_bytes);
    if (c->est_size) {
        CE_F("size", "%.0f", r->size);
        CE_F("size_low", "%.0f", r->lo);
        CE_F("size_high", "%.0f", r->hi);
        put("interval", "0.90", true, false);
        CE_F("seconds", "%.2f", r->seconds);
    }
    CE_F("estimate_seconds", "%.3f", r->took);
    if (r->map != NULL) {
        CE_U("map_cell_bytes", r->cell_bytes);
        /* data share per cell in percent, comma-separated */
        put("map", NULL, false, true);
    }
#undef CE_U
#undef CE_F
}

static const struct est_result *ce_cur;
static bool ce_first;

static void ce_map_list(void)
{
    for (unsigned i = 0; i < ce_cur->cells; i++)
        printf("%s%d", i ? "," : "", (ce_cur->map[i] * 100 + 127) / 255);
}

static void ce_put_json(const char *k, const char *v, bool num, bool map)
{
    printf("%s\"%s\":", ce_first ? "" : ",", k);
    ce_first = false;
    if (map) {
        putchar('[');
        ce_map_list();
        putchar(']');
    } else if (num) {
        fputs(v, stdout);
    } else {
        cli_json_string(stdout, v);
    }
}

static void ce_put_kv(const char *k, const char *v, bool num, bool map)
{
    (void)num;
    printf("%s=", k);
    if (map)
        ce_map_list();
    else
        fputs(v, stdout);
    putchar('\n');
}

/* --free=zero: the encrypted volumes, read whole (their ciphertext barely
 * compresses: most of a backup's size when they are large). */
/* Where p is, for a line of ce_encrypted_text(): "the whole input",
 * "partition 2", "LV rhel/home". */
static const char *ce_where(const struct lay_part *p, char *b, size_t n)
{
    if (p->vol[0] != '\0')
        snprintf(b, n, "LV %s", p->vol);
    else if (p->number == 0)
        snprintf(b, n, "the whole input");
    else
        snprintf(b, n, "partition %u", p->number);
    return b;
}

static void ce_encrypted_text(const struct lay_map *m)
{
    char a[32], w[160];
    for (size_t k = 0; k < m->nparts + m->nvols; k++) {
        const struct lay_part *p = k < m->nparts ? &m->parts[k] : &m->vols[k - m->nparts];
        if (p->encrypted)
            printf("  encrypted   %s (%s, %s): read whole, ciphertext, used and free alike\n",
                   ce_where(p, w, sizeof w), p->fs, ce_bytes((double)p->len, a));
    }
    for (size_t k = 0; k < m->nparts + m->nvols; k++) {
        const struct lay_part *p = k < m->nparts ? &m->parts[k] : &m->vols[k - m->nparts];
        if (p->excluded > 0)
            printf("  volatile    %s (%s): %s of %s stored as zeros (--exclude=volatile)\n",
                   ce_where(p, w, sizeof w), p->fs, ce_bytes((double)p->excluded, a),
                   p->excl_names);
    }
}

/* A region's or a volume's filesystem, mapped, encrypted, used, disputed,
 * excluded and why, as JSON members. */
static void ce_part_json(const struct lay_part *p)
{
    fputs(",\"filesystem\":", stdout);
    cli_json_string(stdout, p->fs);
    printf(",\"mapped\":%s,\"encrypted\":%s,\"used\":%llu,\"disputed\":%llu,"
           "\"excluded\":%llu,\"why\":", p->mapped ? "true" : "false",
           p->encrypted ? "true" : "false", (unsigned long long)p->used,
           (unsigned long long)p->disputed, (unsigned long long)p->excluded);
    cli_json_string(stdout, p->why);
}

/* --free=zero in JSON: "layouts":[{"name":..,"table":..,"partitions":[..]}],
 * each partition with its number, offset, length, type, filesystem, whether
 * mapped, its used bytes and why it is read whole. */
static void ce_layouts_json(const struct lay_map *m)
{
    fputs(",\"layouts\":[", stdout);
    for (size_t l = 0; l < m->nlayouts; l++) {
        const struct lay_layout *L = &m->layouts[l];
        fputs(l ? ",{\"name\":" : "{\"name\":", stdout);
        cli_json_string(stdout, L->name);
        fputs(",\"table\":", stdout);
        cli_json_string(stdout, L->table);
        fputs(",\"partitions\":[", stdout);
        for (size_t k = L->first; k < L->first + L->nparts; k++) {
            const struct lay_part *p = &m->parts[k];
            printf("%s{\"number\":%u,\"offset\":%llu,\"length\":%llu,\"type\":",
                   k > L->first ? "," : "", p->number, (unsigned long long)p->off,
                   (unsigned long long)p->len);
            cli_json_string(stdout, p->ptype);
            ce_part_json(p);
            if (p->nvols > 0) {
                fputs(",\"volumes\":[", stdout);
                for (size_t v = p->vol_first; v < p->vol_first + p->nvols && v < m->nvols; v++) {
                    fputs(v > p->vol_first ? ",{\"name\":" : "{\"name\":", stdout);
                    cli_json_string(stdout, m->vols[v].vol);
                    printf(",\"length\":%llu", (unsigned long long)m->vols[v].len);
                    ce_part_json(&m->vols[v]);
                    putchar('}');
                }
                putchar(']');
            }
            putchar('}');
        }
        fputs("]}", stdout);
    }
    putchar(']');
}

/* The same for key=value: one line per partition. */
static void ce_layouts_kv(const struct lay_map *m)
{
    for (size_t k = 0; k < m->nparts; k++) {
        const struct lay_part *p = &m->parts[k];
        printf("partition=%u:%s:%u:%llu:%llu:%s:%s:%s:%llu\n", p->layout + 1,
               m->layouts[p->layout].table, p->number, (unsigned long long)p->off,
               (unsigned long long)p->len, p->ptype, p->fs[0] ? p->fs : "-",
               p->mapped ? "mapped" : "whole", (unsigned long long)p->used);
        if (p->encrypted) /* a line of its own: the partition= fields stay as they were */
            printf("encrypted=%u:%u:%s:%llu\n", p->layout + 1, p->number, p->fs,
                   (unsigned long long)p->len);
        if (p->excluded > 0)
            printf("excluded=%u:%u:%llu\n", p->layout + 1, p->number,
                   (unsigned long long)p->excluded);
        /* its LVs: volume=layout:partition:name:length:fs:mapped|whole:used,
         * and their encrypted= and excluded= lines with the name last */
        for (size_t v = p->vol_first; v < p->vol_first + p->nvols && v < m->nvols; v++) {
            const struct lay_part *q = &m->vols[v];
            printf("volume=%u:%u:%s:%llu:%s:%s:%llu\n", p->layout + 1, p->number, q->vol,
                   (unsigned long long)q->len, q->fs[0] ? q->fs : "-",
                   q->mapped ? "mapped" : "whole", (unsigned long long)q->used);
            if (q->encrypted)
                printf("encrypted=%u:%u:%s:%llu:%s\n", p->layout + 1, p->number, q->fs,
                       (unsigned long long)q->len, q->vol);
            if (q->excluded > 0)
                printf("excluded=%u:%u:%llu:%s\n", p->layout + 1, p->number,
                       (unsigned long long)q->excluded, q->vol);
        }
    }
}

static void ce_report(const struct cli *c, const char *name, const struct est_result *r,
                      const struct lay_map *m)
{
    ce_cur = r;
    if (c->format == FORMAT_JSON) {
        ce_first = false;
        fputs("{\"file\":", stdout);
        cli_json_string(stdout, name);
        ce_fields(c, r, ce_put_json);
        if (c->free_zero)
            ce_layouts_json(m);
        fputs("}\n", stdout);
    } else if (c->format == FORMAT_KV) {
        printf("file=%s\n", name);
        ce_fields(c, r, ce_put_kv);
        if (c->free_zero)
            ce_layouts_kv(m);
        putchar('\n');
    } else {
        ce_text(c, name, r);
        if (c->free_zero)
            ce_encrypted_text(m);
        if (r->map != NULL)
            ce_map_text(r, ce_map_width(), c->free_zero ? m : NULL);
    }
    fflush(stdout);
}

static void ce_run(struct cli *c, const char *name, const char *path, int fd, bool regular)
{
    struct lay_map map;
    struct cli_job j = {.in_name = name, .in_fd = fd, .dir_fd = -1};
    if (cli_free_map(c, &j, &map, NULL) != 0)
        return;
    struct sp_progress prog = {0};
    struct est_opts o = {
        .level = c->level, .threads = c->threads, .chunk = (size_t)c->chunk_kib << 10,
        .zmin = c->zmin_kib << 10, .index = c->index, .full = c->est_full, .seed = c->seed,
        .progress = &prog, .zero_ranges = map.free, .nzero_ranges = map.nfree,
    };
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o.cpus = cpus < 1 ? 1 : (unsigned)cpus;
    if (c->store_name && path != NULL && regular)
        o.name_len = strlen(cli_base(path));
    /* the manifest the backup would carry: made as the backup makes it */
    struct mf man = {0};
    j.in_path = path;
    if (c->index && fstat(fd, &j.st) == 0 && cli_manifest_make(c, &j, &map, &man) == 0) {
        o.manifest_len = cli_manifest_payload(&man);
        mf_free(&man);
    }
    if (c->est_map)
        o.cells = ce_map_width() * CE_MAP_ROWS;
    struct cli_prog *d = cli_prog_start(cli_progress_wanted(c), name, &prog, CLI_PROG_ESTIMATE);
    struct est_result r;
    struct sp_err err = {0};
    int rc = est_run(fd, &o, &r, &err);
    cli_prog_stop(d);
    if (rc != 0) {
        lay_free(&map);
        cli_error(c, "%s: %s", name, err.msg);
        return;
    }
    ce_report(c, name, &r, &map);
    lay_free(&map);
    est_result_free(&r);
}

void cmd_estimate(struct cli *c, const char *path)
{
    static bool locale_set;
    if (!locale_set) {
        setlocale(LC_CTYPE, ""); /* only to learn whether the map may use UTF-8 */
        locale_set = true;
    }
    if (path == NULL || strcmp(path, "-") == 0) {
        struct stat st;
        ce_run(c, "stdin", NULL, STDIN_FILENO, fstat(STDIN_FILENO, &st) == 0 &&
               S_ISREG(st.st_mode));
        return;
    }
    struct cli_job j = {.in_name = path, .dir_fd = -1};
    if (cli_open_input(c, path, &j) != 0)
        return;
    ce_run(c, path, path, j.in_fd, S_ISREG(j.st.st_mode));
    cli_close_input(&j);
}
