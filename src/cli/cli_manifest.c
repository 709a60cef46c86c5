/* cli_manifest.c — see cli_manifest.h; the keys: doc/FORMAT.md §2.2. */
#include "config.h"
#include "cli_manifest.h"
#include "cli_report.h"
#include "digest.h"
#include "io.h"
#include "leb.h"
#include "lay_desc.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* A free map whose encoding is larger than this is left out (its count and
 * bytes stay): the manifest must stay under MF_MAX, and --compare then
 * says it cannot tell free blocks (FORMAT.md §2.2). */
#define CM_FREE_MAP_MAX (MF_MAX - ((size_t)1 << 20))

/* ---- making it ---- */

/* First line of a sysfs file, trimmed, into b; false when absent or empty. */
static bool cm_sysfs(const char *dir, const char *name, char *b, size_t n)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t k = read(fd, b, n - 1);
    close(fd);
    if (k <= 0)
        return false;
    b[k] = '\0';
    b[strcspn(b, "\n")] = '\0';
    size_t len = strlen(b);
    while (len > 0 && b[len - 1] == ' ')
        b[--len] = '\0';
    return len > 0;
}

/* A block device's model, serial and sector sizes from sysfs (of the disk
 * it belongs to, for a partition, with the partition's number and start). */
static int cm_device(struct mf *m, dev_t rdev)
{
    char dir[64], disk[80], v[256];
    snprintf(dir, sizeof dir, "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
    snprintf(disk, sizeof disk, "%s", dir);
    int rc = 0;
    if (cm_sysfs(dir, "partition", v, sizeof v)) {
        rc |= mf_add_uint(m, "source.partition", strtoull(v, NULL, 10));
        if (cm_sysfs(dir, "start", v, sizeof v))
            rc |= mf_add_uint(m, "source.start", strtoull(v, NULL, 10) * 512);
        snprintf(disk, sizeof disk, "%s/..", dir);
    }
    if (cm_sysfs(disk, "device/model", v, sizeof v))
        rc |= mf_add_text(m, "source.model", v);
    if (cm_sysfs(disk, "device/serial", v, sizeof v) || cm_sysfs(disk, "serial", v, sizeof v))
        rc |= mf_add_text(m, "source.serial", v);
    if (cm_sysfs(disk, "device/wwid", v, sizeof v) || cm_sysfs(disk, "wwid", v, sizeof v))
        rc |= mf_add_text(m, "source.wwid", v);
    if (cm_sysfs(disk, "queue/logical_block_size", v, sizeof v))
        rc |= mf_add_uint(m, "source.sector", strtoull(v, NULL, 10));
    if (cm_sysfs(disk, "queue/physical_block_size", v, sizeof v))
        rc |= mf_add_uint(m, "source.physical-sector", strtoull(v, NULL, 10));
    return rc;
}

static const char *cm_kind(mode_t mode)
{
    return S_ISREG(mode) ? "file" : S_ISBLK(mode) ? "block device" : S_ISCHR(mode) ? "character device"
           : S_ISFIFO(mode) ? "pipe" : S_ISSOCK(mode) ? "socket" : "other";
}

/* Where from (left out with -n, and for stdin): the host, the source's
 * path as given, kind and size, a file's modification time (as gzip's
 * MTIME: not with -m), a device's identity. */
static int cm_source(const struct cli *c, const struct cli_job *j, struct mf *m)
{
    struct utsname u;
    int rc = 0;
    if (uname(&u) == 0)
        rc |= mf_add_text(m, "host", u.nodename);
    rc |= mf_add_text(m, "source.path", j->in_path);
    rc |= mf_add_text(m, "source.kind", cm_kind(j->st.st_mode));
    uint64_t size;
    if ((S_ISREG(j->st.st_mode) || S_ISBLK(j->st.st_mode)) && io_size(j->in_fd, &j->st, &size) == 0)
        rc |= mf_add_uint(m, "source.size", size);
    if (S_ISREG(j->st.st_mode) && c->store_time && j->st.st_mtime > 0)
        rc |= mf_add_uint(m, "source.mtime", (uint64_t)j->st.st_mtime);
    if (S_ISBLK(j->st.st_mode))
        rc |= cm_device(m, j->st.st_rdev);
    return rc;
}

/* --free=zero's reading of the region at [off, off + len), if it has one
 * (the first reading: the kernel's). */
static const struct lay_part *cm_region(const struct lay_map *map, uint64_t off, uint64_t len)
{
    if (map->nlayouts == 0)
        return NULL;
    const struct lay_layout *L = &map->layouts[0];
    for (size_t i = L->first; i < L->first + L->nparts && i < map->nparts; i++)
        if (map->parts[i].off == off && map->parts[i].len == len)
            return &map->parts[i];
    return NULL;
}

/* An LVM logical volume of partition n, the k-th: "part.N.lv.K.x". */
static int cm_vol(struct mf *m, unsigned n, size_t k, const struct lay_part *v)
{
    char key[MF_KEY_MAX + 1];
#define CM_KEY(name) (snprintf(key, sizeof key, "part.%u.lv.%zu." name, n, k), key)
    int rc = mf_add_text(m, CM_KEY("name"), v->vol) | mf_add_uint(m, CM_KEY("size"), v->len);
    if (v->fs[0] != '\0')
        rc |= mf_add_text(m, CM_KEY("fs"), v->fs);
    if (v->label[0] != '\0')
        rc |= mf_add_text(m, CM_KEY("label"), v->label);
    if (v->encrypted)
        rc |= mf_add_uint(m, CM_KEY("encrypted"), 1);
    if (v->mapped) {
        rc |= mf_add_uint(m, CM_KEY("used"), v->used);
        rc |= mf_add_uint(m, CM_KEY("free"), v->len - v->used);
        if (v->excluded > 0)
            rc |= mf_add_uint(m, CM_KEY("excluded"), v->excluded);
    } else {
        rc |= mf_add_text(m, CM_KEY("read-whole"), v->why);
    }
#undef CM_KEY
    return rc;
}

static int cm_part(struct mf *m, const struct lay_dpart *p, const struct lay_map *map)
{
    char k[MF_KEY_MAX + 1];
#define CM_KEY(name) (snprintf(k, sizeof k, "part.%u." name, p->number), k)
    int rc = mf_add_uint(m, CM_KEY("start"), p->off) | mf_add_uint(m, CM_KEY("size"), p->len);
    if (p->type[0] != '\0')
        rc |= mf_add_text(m, CM_KEY("type"), p->type);
    if (p->type_name[0] != '\0')
        rc |= mf_add_text(m, CM_KEY("type-name"), p->type_name);
    if (p->name[0] != '\0')
        rc |= mf_add_text(m, CM_KEY("name"), p->name);
    if (p->uuid[0] != '\0')
        rc |= mf_add_text(m, CM_KEY("uuid"), p->uuid);
    if (p->fs[0] != '\0')
        rc |= mf_add_text(m, CM_KEY("fs"), p->fs);
    if (p->label[0] != '\0')
        rc |= mf_add_text(m, CM_KEY("label"), p->label);
    if (p->fs_uuid[0] != '\0')
        rc |= mf_add_text(m, CM_KEY("fs-uuid"), p->fs_uuid);
    if (p->encrypted)
        rc |= mf_add_uint(m, CM_KEY("encrypted"), 1);
    const struct lay_part *r = cm_region(map, p->off, p->len);
    if (r != NULL && r->mapped) {
        rc |= mf_add_uint(m, CM_KEY("used"), r->used);
        rc |= mf_add_uint(m, CM_KEY("free"), r->len - r->used);
        if (r->excluded > 0)
            rc |= mf_add_uint(m, CM_KEY("excluded"), r->excluded);
    } else if (r != NULL) {
        rc |= mf_add_text(m, CM_KEY("read-whole"), r->why);
    }
#undef CM_KEY
    for (size_t v = 0; r != NULL && v < r->nvols && r->vol_first + v < map->nvols; v++)
        rc |= cm_vol(m, p->number, v + 1, &map->vols[r->vol_first + v]);
    return rc;
}

/* The partition table and filesystems, as libblkid reads them. */
static int cm_layout(const struct cli_job *j, const struct lay_map *map, struct mf *m)
{
    struct stat st;
    off_t base = -1;
    uint64_t size;
    if (fstat(j->in_fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) ||
        io_size(j->in_fd, &st, &size) != 0 || (base = lseek(j->in_fd, 0, SEEK_CUR)) < 0 ||
        (uint64_t)base > size)
        return 0;
    struct lay_desc d;
    if (lay_describe(j->in_fd, (uint64_t)base, size - (uint64_t)base, &d) != 0)
        return -1;
    int rc = 0;
    if (d.table[0] != '\0')
        rc |= mf_add_text(m, "table.type", d.table);
    if (d.id[0] != '\0')
        rc |= mf_add_text(m, "table.id", d.id);
    for (size_t i = 0; i < d.n && rc == 0; i++)
        rc |= cm_part(m, &d.p[i], map);
    lay_desc_free(&d);
    return rc;
}

/* --free=zero: what was skipped, and the map itself when it fits. */
static int cm_free(const struct lay_map *map, struct mf *m)
{
    int rc = mf_add_uint(m, "free.bytes", map->free_bytes) |
             mf_add_uint(m, "free.ranges", map->nfree);
    if (mf_ranges_size(map->free, map->nfree) <= CM_FREE_MAP_MAX)
        rc |= mf_add_ranges(m, "free.map", map->free, map->nfree);
    return rc;
}

int cli_manifest_make(const struct cli *c, const struct cli_job *j, const struct lay_map *map,
                      struct mf *m)
{
    memset(m, 0, sizeof *m);
    int rc = mf_add_text(m, "spigz.version", PACKAGE_VERSION);
    rc |= mf_add_uint(m, "options.level", (uint64_t)c->level);
    rc |= mf_add_uint(m, "options.piece", c->chunk_kib << 10);
    rc |= mf_add_uint(m, "options.zero-run", c->zmin_kib << 10);
    if (c->free_zero)
        rc |= mf_add_text(m, "options.free", "zero");
    if (c->rescue)
        rc |= mf_add_uint(m, "options.rescue", 1);
    if (c->rsyncable)
        rc |= mf_add_uint(m, "options.rsyncable", 1);
    if (c->force_mounted && c->free_zero)
        rc |= mf_add_uint(m, "options.force-mounted", 1);
    if (c->exclude_volatile)
        rc |= mf_add_text(m, "options.exclude", "volatile");
    /* What the content and options do not determine, only for an input
     * named on the command line and without -n: the same content then
     * gives the same bytes from a pipe, stdin, a file or a device, and
     * -p never changes them (no clock is read: the date is the file's,
     * as gzip's MTIME, and the backup's own modification time). */
    bool named = c->store_name && j->in_path != NULL;
    if (named)
        rc |= cm_source(c, j, m);
    if (named || c->free_zero)
        rc |= cm_layout(j, map, m);
    if (c->free_zero)
        rc |= cm_free(map, m);
    if (rc != 0)
        mf_free(m);
    return rc != 0 ? -1 : 0;
}

size_t cli_manifest_payload(const struct mf *m)
{
    /* m and the digest's entry (one more in the count), then the length */
    size_t len = mf_encoded_size(m) - leb_size(m->n) + leb_size(m->n + 1) +
                 mf_entry_size(DG_KEY, DG_LEN);
    return leb_size(len) + len;
}

/* ---- showing it ---- */

static bool cm_u(const struct mf *m, const char *key, uint64_t *v)
{
    return mf_get_uint(m, key, v);
}

static const char *cm_t(const struct mf *m, const char *key, char *b, size_t n)
{
    const struct mf_entry *e = mf_get(m, key);
    return e != NULL && e->type == MF_TEXT ? mf_text(e, b, n) : NULL;
}

static const char *cm_size(uint64_t v, char *b)
{
    return txt_size(b, TXT_SIZE_LEN, (double)v);
}

/* The keys the block below shows in its own words; any other is listed
 * as "key: value" after it. */
static bool cm_known(const char *k)
{
    static const char *const pre[] = {"spigz.version", "host", "options.",
                                      "source.", "table.", "part.", "free.", "image."};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (strncmp(k, pre[i], strlen(pre[i])) == 0)
            return true;
    return false;
}

static const char *cm_when(uint64_t t, char *b, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;
    b[0] = '\0';
    if (gmtime_r(&tt, &tm) != NULL)
        strftime(b, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return b;
}

/* written: the backup file's own modification time (0: unknown). */
static void cm_made(FILE *f, const struct mf *m, uint64_t written)
{
    char v[MF_TEXT_MAX + 1], h[256], when[64];
    const char *host = cm_t(m, "host", h, sizeof h);
    fprintf(f, "  made by      spigz %s%s%s", cm_t(m, "spigz.version", v, sizeof v) ?: "?",
            host != NULL ? " on " : "", host != NULL ? host : "");
    if (written != 0)
        fprintf(f, ", written %s", cm_when(written, when, sizeof when));
    fputc('\n', f);
}

static void cm_options(FILE *f, const struct mf *m)
{
    uint64_t v;
    char a[TXT_SIZE_LEN], t[64];
    fprintf(f, "  options     ");
    if (cm_u(m, "options.level", &v))
        fprintf(f, " -%llu", (unsigned long long)v);
    if (cm_u(m, "options.piece", &v))
        fprintf(f, ", pieces of %s", cm_size(v, a));
    if (cm_u(m, "options.zero-run", &v))
        fprintf(f, ", zero runs from %s", cm_size(v, a));
    if (cm_t(m, "options.free", t, sizeof t) != NULL)
        fprintf(f, ", --free=%s", t);
    if (cm_u(m, "options.rescue", &v) && v)
        fprintf(f, ", --rescue");
    if (cm_u(m, "options.rsyncable", &v) && v)
        fprintf(f, ", --rsyncable");
    if (cm_u(m, "options.force-mounted", &v) && v)
        fprintf(f, ", --force-mounted");
    if (cm_t(m, "options.exclude", t, sizeof t) != NULL)
        fprintf(f, ", --exclude=%s", t);
    fputc('\n', f);
}

static void cm_source_line(FILE *f, const struct mf *m)
{
    char p[MF_TEXT_MAX + 1], k[64], v[300], a[TXT_SIZE_LEN];
    uint64_t n, s;
    if (cm_t(m, "source.path", p, sizeof p) == NULL)
        return;
    fprintf(f, "  source       %s (%s", p, cm_t(m, "source.kind", k, sizeof k) ?: "?");
    if (cm_u(m, "source.size", &n))
        fprintf(f, ", %llu bytes, %s", (unsigned long long)n, cm_size(n, a));
    if (cm_u(m, "source.partition", &n))
        fprintf(f, "; partition %llu", (unsigned long long)n);
    if (cm_u(m, "source.start", &n))
        fprintf(f, " at %llu", (unsigned long long)n);
    if (cm_t(m, "source.model", v, sizeof v) != NULL)
        fprintf(f, "; model %s", v);
    if (cm_t(m, "source.serial", v, sizeof v) != NULL)
        fprintf(f, ", serial %s", v);
    if (cm_u(m, "source.sector", &n) && cm_u(m, "source.physical-sector", &s))
        fprintf(f, ", sectors %llu/%llu", (unsigned long long)n, (unsigned long long)s);
    if (cm_u(m, "source.mtime", &n))
        fprintf(f, ", modified %s", cm_when(n, v, sizeof v));
    fprintf(f, ")\n");
}

/* Partition n's LVM logical volumes, "part.N.lv.K.x", a line each. */
static void cm_vols(FILE *f, const struct mf *m, unsigned n)
{
    char t[MF_TEXT_MAX + 1], k[MF_KEY_MAX + 1], a[TXT_SIZE_LEN], b[TXT_SIZE_LEN];
    for (unsigned i = 1;; i++) {
#define CM_K(name) (snprintf(k, sizeof k, "part.%u.lv.%u." name, n, i), k)
        uint64_t size = 0, used, fr;
        if (cm_t(m, CM_K("name"), t, sizeof t) == NULL)
            return;
        fprintf(f, "    LV %s", t);
        if (cm_u(m, CM_K("size"), &size))
            fprintf(f, ", %s", cm_size(size, a));
        if (cm_t(m, CM_K("fs"), t, sizeof t) != NULL) {
            fprintf(f, ": %s", t);
            if (cm_t(m, CM_K("label"), t, sizeof t) != NULL)
                fprintf(f, " \"%s\"", t);
            if (cm_u(m, CM_K("encrypted"), &used) && used)
                fprintf(f, " (encrypted)");
        }
        if (cm_u(m, CM_K("used"), &used) && cm_u(m, CM_K("free"), &fr))
            fprintf(f, "; %s used, %s skipped as free", cm_size(used, a), cm_size(fr, b));
        else if (cm_t(m, CM_K("read-whole"), t, sizeof t) != NULL)
            fprintf(f, "; read whole: %s", t);
#undef CM_K
        fputc('\n', f);
    }
}

/* "part.N.x" entries, by N in the order they come. */
static void cm_parts(FILE *f, const struct mf *m)
{
    char t[MF_TEXT_MAX + 1], id[64], k[MF_KEY_MAX + 1];
    if (cm_t(m, "table.type", t, sizeof t) != NULL)
        fprintf(f, "  table        %s%s%s\n", t, cm_t(m, "table.id", id, sizeof id) ? ", id " : "",
                cm_t(m, "table.id", id, sizeof id) ?: "");
    long last = -1;
    for (size_t i = 0; i < m->n; i++) {
        unsigned num;
        int at = 0;
        if (sscanf(m->e[i].key, "part.%u.%n", &num, &at) != 1 || at == 0 || (long)num == last)
            continue;
        last = num;
        uint64_t start = 0, size = 0, v;
        char a[TXT_SIZE_LEN], b[TXT_SIZE_LEN];
#define CM_K(name) (snprintf(k, sizeof k, "part.%u." name, num), k)
        cm_u(m, CM_K("start"), &start);
        cm_u(m, CM_K("size"), &size);
        if (num == 0)
            fprintf(f, "  whole input  %s", cm_size(size, b));
        else
            fprintf(f, "  partition %-2u at %llu, %s", num, (unsigned long long)start,
                    cm_size(size, b));
        if (cm_t(m, CM_K("type-name"), t, sizeof t) != NULL)
            fprintf(f, ", %s", t);
        else if (cm_t(m, CM_K("type"), t, sizeof t) != NULL)
            fprintf(f, ", type %s", t);
        if (cm_t(m, CM_K("name"), t, sizeof t) != NULL)
            fprintf(f, ", \"%s\"", t);
        if (cm_t(m, CM_K("fs"), t, sizeof t) != NULL) {
            fprintf(f, ": %s", t);
            if (cm_t(m, CM_K("label"), t, sizeof t) != NULL)
                fprintf(f, " \"%s\"", t);
            if (cm_t(m, CM_K("fs-uuid"), t, sizeof t) != NULL)
                fprintf(f, " UUID %s", t);
            if (cm_u(m, CM_K("encrypted"), &v) && v)
                fprintf(f, " (encrypted)");
        }
        if (cm_u(m, CM_K("used"), &v) && cm_u(m, CM_K("free"), &start))
            fprintf(f, "; %s used, %s skipped as free", cm_size(v, a), cm_size(start, b));
        if (cm_u(m, CM_K("excluded"), &v))
            fprintf(f, " (of it %s of volatile files, --exclude)", cm_size(v, a));
        else if (cm_t(m, CM_K("read-whole"), t, sizeof t) != NULL)
            fprintf(f, "; read whole: %s", t);
#undef CM_K
        fputc('\n', f);
        cm_vols(f, m, num);
    }
}

static void cm_free_line(FILE *f, const struct mf *m)
{
    uint64_t bytes, ranges;
    char a[TXT_SIZE_LEN];
    if (!cm_u(m, "free.bytes", &bytes) || !cm_u(m, "free.ranges", &ranges))
        return;
    fprintf(f, "  free         %s in %llu ranges, coded as zeros unread%s\n", cm_size(bytes, a),
            (unsigned long long)ranges,
            mf_get(m, "free.map") != NULL ? "; the map is kept (--compare skips them)"
                                          : "; the map was too large to keep");
}

static void cm_hex(FILE *f, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
}

void cli_manifest_text(FILE *f, const struct mf *m, uint64_t written)
{
    fprintf(f, "manifest:\n");
    cm_made(f, m, written);
    cm_options(f, m);
    cm_source_line(f, m);
    const struct mf_entry *d = mf_get(m, DG_KEY);
    if (d != NULL && d->type == MF_BYTES && d->vlen == DG_LEN) {
        char t[DG_TEXT_LEN];
        fprintf(f, "  image        %s\n", dg_text(d->v, t));
    }
    cm_parts(f, m);
    cm_free_line(f, m);
    for (size_t i = 0; i < m->n; i++) { /* a newer writer's keys */
        const struct mf_entry *e = &m->e[i];
        uint64_t v;
        char t[MF_TEXT_MAX + 1];
        if (cm_known(e->key))
            continue;
        fprintf(f, "  %s: ", e->key);
        if (mf_uint(e, &v))
            fprintf(f, "%llu", (unsigned long long)v);
        else if (e->type == MF_TEXT)
            fputs(mf_text(e, t, sizeof t), f);
        else if (e->type == MF_BYTES)
            cm_hex(f, e->v, e->vlen);
        else
            fprintf(f, "(%zu bytes of type %u)", e->vlen, e->type);
        fputc('\n', f);
    }
}

/* ---- JSON ---- */

static void cm_json_value(FILE *f, const struct mf_entry *e)
{
    uint64_t v;
    char t[MF_TEXT_MAX + 1];
    if (mf_uint(e, &v)) {
        fprintf(f, "%llu", (unsigned long long)v);
    } else if (e->type == MF_TEXT) {
        cli_json_string(f, mf_text(e, t, sizeof t));
    } else if (e->type == MF_BYTES) {
        fputc('"', f);
        cm_hex(f, e->v, e->vlen);
        fputc('"', f);
    } else if (e->type == MF_RANGES) {
        struct sp_range *r;
        size_t n;
        uint64_t sum = 0;
        if (mf_ranges(e, &r, &n) == 0)
            for (size_t i = 0; i < n; i++)
                sum += r[i].len;
        else
            n = 0;
        free(r);
        fprintf(f, "{\"ranges\":%zu,\"bytes\":%llu}", n, (unsigned long long)sum);
    } else {
        fprintf(f, "{\"type\":%u,\"length\":%zu}", e->type, e->vlen);
    }
}

/* The first n dot-separated segments of a and b are the same. */
static size_t cm_common(const char *a, const char *b)
{
    size_t n = 0;
    for (size_t i = 0;; i++) {
        if (a[i] != b[i])
            return n;
        if (a[i] == '\0')
            return n;
        if (a[i] == '.')
            n++;
    }
}

/* Segment i of key (up to its next dot), printed as a JSON string. */
static void cm_seg(FILE *f, const char *key, size_t i)
{
    while (i-- > 0)
        key = strchr(key, '.') + 1;
    fprintf(f, "\"%.*s\":", (int)strcspn(key, "."), key);
}

static size_t cm_dots(const char *k)
{
    size_t n = 0;
    for (; *k != '\0'; k++)
        n += *k == '.';
    return n;
}

void cli_manifest_json(FILE *f, const struct mf *m)
{
    fputc('{', f);
    size_t open = 0; /* objects open below the top */
    const char *prev = NULL;
    for (size_t i = 0; i < m->n; i++) {
        const char *k = m->e[i].key;
        size_t depth = cm_dots(k), keep = prev == NULL ? 0 : cm_common(prev, k);
        if (keep > open)
            keep = open;
        if (keep > depth)
            keep = depth;
        for (; open > keep; open--)
            fputc('}', f);
        if (prev != NULL)
            fputc(',', f);
        for (; open < depth; open++) {
            cm_seg(f, k, open);
            fputc('{', f);
        }
        cm_seg(f, k, depth);
        cm_json_value(f, &m->e[i]);
        prev = k;
    }
    for (; open > 0; open--)
        fputc('}', f);
    fputc('}', f);
}
