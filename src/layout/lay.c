/* lay.c — see lay.h: the regions, the filesystem probe, the readers' table, the free list. */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"
#include "lay_tab.h"
#include "io.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_BLKID
#include <blkid.h>
#endif

/* The filesystems mapped, by libblkid's TYPE name.  Anything else is read
 * whole: a new filesystem is one line here and one file. */
static const struct {
    const char *type;
    lay_fs_fn used;
} lay_fs_table[] = {
#ifdef HAVE_EXT2FS
    {"ext2", lay_ext4_used},
    {"ext3", lay_ext4_used},
    {"ext4", lay_ext4_used},
#endif
#ifdef HAVE_NTFS3G
    {"ntfs", lay_ntfs_used},
#endif
    {"vfat", lay_fat_used},
    {"exfat", lay_exfat_used},
    {"swap", lay_swap_used},
    {"xfs", lay_xfs_used},
    {"btrfs", lay_btrfs_used},
#ifdef HAVE_DEVMAPPER
    {"LVM2_member", lay_lvm_used},
#endif
};

int lay_dev_read(struct lay_dev *d, uint64_t off, void *buf, size_t n)
{
    if (off > d->len || n > d->len - off)
        return -1;
    if (d->readfn) {
        int r = d->readfn(d->ctx, buf, n, d->off + off);
        d->read += r == 0 ? n : 0;
        return r == 0 ? 0 : -1;
    }
    size_t got;
    int rc = io_pread(d->fd, buf, n, d->off + off, &got);
    d->read += got;
    return rc == 0 && got == n ? 0 : -1;
}

/* A growing list of free extents (of the input). */
struct lay_flist {
    struct sp_range *e;
    size_t n, cap;
    bool probed; /* its region went through lay_map_part() */
};

static int lay_flist_push(struct lay_flist *f, uint64_t off, uint64_t len)
{
    return sp_ranges_push(&f->e, &f->n, &f->cap, off, len);
}

/* Append the complement of the used extents u (relative to the region at
 * off) within [off, off + fs_len) to f. */
static int lay_add_free(struct lay_flist *f, uint64_t off, uint64_t fs_len, struct lay_used *u)
{
    u->n = lay_merge(u->e, u->n);
    uint64_t at = 0;
    for (size_t i = 0; i <= u->n; i++) {
        uint64_t end = i < u->n ? u->e[i].off : fs_len;
        if (end > fs_len)
            end = fs_len;
        if (end > at && lay_flist_push(f, off + at, end - at) != 0)
            return -1;
        if (i < u->n && u->e[i].off + u->e[i].len > at)
            at = u->e[i].off + u->e[i].len;
        if (at >= fs_len)
            break;
    }
    return 0;
}

/* Why a filesystem without a reader is read whole: not read by spigz at
 * all, or by this build (configured without its library). */
static const char *lay_unbuilt(const char *type)
{
#ifndef HAVE_EXT2FS
    if (strcmp(type, "ext2") == 0 || strcmp(type, "ext3") == 0 || strcmp(type, "ext4") == 0)
        return "this spigz was built without libext2fs";
#endif
#ifndef HAVE_NTFS3G
    if (strcmp(type, "ntfs") == 0)
        return "this spigz was built without libntfs-3g";
#endif
#ifndef HAVE_DEVMAPPER
    if (strcmp(type, "LVM2_member") == 0)
        return "this spigz was built without libdevmapper (lvm2's metadata parser)";
#endif
    (void)type;
    return "spigz does not read this filesystem's allocation map";
}

static lay_fs_fn lay_find_fs(const char *type)
{
    for (size_t i = 0; i < sizeof lay_fs_table / sizeof lay_fs_table[0]; i++)
        if (strcmp(lay_fs_table[i].type, type) == 0)
            return lay_fs_table[i].used;
    return NULL;
}

#ifdef HAVE_BLKID
/* Probe [off, off + p->len) of fd for a filesystem: its TYPE and LABEL
 * into p.  1 when exactly one filesystem's signature was found, else 0
 * with p marked read whole. */
static int lay_probe_fs(int fd, uint64_t off, struct lay_part *p)
{
    blkid_probe pr = blkid_new_probe();
    if (pr == NULL) {
        lay_whole(p, false, "cannot probe it");
        return 0;
    }
    int rc = -1, found = 0;
    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)off, (blkid_loff_t)p->len) == 0) {
        blkid_probe_enable_partitions(pr, 0);
        blkid_probe_enable_superblocks(pr, 1);
        /* a bad checksum still names the filesystem: its reader then
         * refuses it, with a warning, rather than "no filesystem" */
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL |
                                                  BLKID_SUBLKS_USAGE | BLKID_SUBLKS_BADCSUM);
        /* every prober's match, not blkid_do_safeprobe()'s verdict: that
         * one takes the first match unchecked on a region of 1.44 MB or
         * less (its "tiny device" rule) */
        const char *v;
        while (found < 64 && (rc = blkid_do_probe(pr)) == 0) {
            if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) != 0 ||
                (p->fs[0] != '\0' && strcmp(p->fs, v) == 0))
                continue;
            if (found++ == 0) {
                snprintf(p->fs, sizeof p->fs, "%s", v);
                if (blkid_probe_lookup_value(pr, "LABEL", &v, NULL) == 0)
                    txt_clean(strncpy(p->label, v, sizeof p->label - 1)); /* printed later */
                p->encrypted = blkid_probe_lookup_value(pr, "USAGE", &v, NULL) == 0 &&
                               strcmp(v, "crypto") == 0;
            }
        }
    }
    blkid_free_probe(pr);
    if (found > 1) {
        p->encrypted = false;
        lay_whole(p, true, "more than one filesystem signature");
        return 0;
    }
    if (p->fs[0] == '\0') {
        lay_whole(p, false, rc < 0 ? "cannot probe it" : "no filesystem found");
        return 0;
    }
    return 1;
}

#endif

/* --exclude=volatile: the extents the reader chose to code as zeros, taken
 * out of its used extents.  0, or -1 out of memory. */
static int lay_apply_exclusion(struct lay_part *p, struct lay_used *u)
{
    snprintf(p->excl_names, sizeof p->excl_names, "%s", u->excl_names);
    p->excl_refused = u->excl_refused;
    if (u->nexcl == 0)
        return 0;
    size_t ne = sp_ranges_normalize(u->excl, u->nexcl);
    u->n = lay_merge(u->e, u->n);
    struct sp_range *kept;
    size_t nk;
    if (sp_ranges_subtract(u->e, u->n, u->excl, ne, 0, &kept, &nk, &p->excluded) != 0)
        return -1;
    free(u->e);
    u->e = kept;
    u->n = u->cap = nk;
    return 0;
}

/* The volumes found inside regions (lay_vol_map()), in the order found. */
struct lay_nest {
    int fd; /* the input */
    struct lay_part *v;
    size_t n, cap;
};

/* The bytes of [0, fs_len) the merged extents u leave free. */
static uint64_t lay_free_in(struct lay_used *u, uint64_t fs_len)
{
    u->n = lay_merge(u->e, u->n);
    uint64_t used = 0;
    for (size_t i = 0; i < u->n && u->e[i].off < fs_len; i++) {
        uint64_t end = u->e[i].off + u->e[i].len;
        used += (end < fs_len ? end : fs_len) - u->e[i].off;
    }
    return fs_len - used;
}

/* Probe the filesystem at [poff, poff + p->len) of pfd into p and, when
 * spigz reads it, map it through d (the same bytes): 1 with its used
 * extents in *u and *fs_len set, 0 read whole (p says why), -1 out of
 * memory.  u is the caller's to lay_used_done(). */
static int lay_map_fs(int pfd, uint64_t poff, struct lay_dev *d, struct lay_part *p,
                      struct lay_used *u, uint64_t *fs_len)
{
    p->used = p->len;
#ifdef HAVE_BLKID
    if (!lay_probe_fs(pfd, poff, p))
        return 0;
#else
    (void)pfd;
    (void)poff;
#endif
    if (p->encrypted) { /* what is free inside is known only once unlocked */
        lay_whole(p, false, "an encrypted volume: ciphertext throughout, used and free alike "
                            "(which blocks are free is known only once unlocked)");
        return 0;
    }
    lay_fs_fn fn = lay_find_fs(p->fs);
    if (fn == NULL || (fn == lay_lvm_used && d->nest == NULL)) {
        lay_whole(p, false, fn == NULL ? lay_unbuilt(p->fs) : "an LVM PV inside a logical volume");
        return 0;
    }
    char why[sizeof p->why] = "";
    int rc = fn(d, u, fs_len, why, sizeof why);
    if (rc < 0 || u->oom)
        return -1;
    if (rc == 0 || *fs_len > p->len) {
        lay_whole(p, true, rc == 0 ? why : "the filesystem is larger than its partition");
        return 0;
    }
    p->disputed = lay_used_disputed(u);
    if (p->disputed > LAY_DISPUTE_MAX) {
        snprintf(why, sizeof why, "its allocation map calls free %llu bytes its files use "
                 "(a damaged bitmap: run its fsck)", (unsigned long long)p->disputed);
        lay_whole(p, true, why);
        return 0;
    }
    return lay_apply_exclusion(p, u) != 0 ? -1 : 1;
}

/* Map one region: probe it, run its reader, its free space into f. */
static int lay_map_part(struct lay_nest *nest, uint64_t base, uint64_t *meta_read,
                        struct lay_part *p, struct lay_flist *f, bool exclude_volatile)
{
    struct lay_dev d = {.fd = nest->fd, .off = base + p->off, .len = p->len,
                        .exclude_volatile = exclude_volatile, .nest = nest};
    struct lay_used u = {0};
    uint64_t fs_len = 0;
    size_t v0 = nest->n;
    int rc = lay_map_fs(nest->fd, base + p->off, &d, p, &u, &fs_len);
    *meta_read += d.read;
    if (rc == 1) {
        uint64_t fr = lay_free_in(&u, fs_len);
        rc = lay_add_free(f, p->off, fs_len, &u) != 0 ? -1 : 1;
        p->mapped = true;
        p->used = p->len - fr;
    }
    lay_used_done(&u);
    if (rc == 0)
        nest->n = v0; /* a reader that gave up: its volumes are not read apart */
    p->vol_first = v0;
    p->nvols = nest->n - v0;
    return rc < 0 ? -1 : 0;
}

/* A copy of a volume's first and last LAY_PROBE_EDGE bytes, the rest a
 * hole, for libblkid (which reads a descriptor): a descriptor, or -1 with
 * errno (ENOMEM out of memory). */
static int lay_probe_copy(struct lay_dev *vd)
{
    int fd = memfd_create("spigz-probe", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t bn = 1 << 20;
    char *buf = malloc(bn);
    uint64_t head = vd->len < LAY_PROBE_EDGE ? vd->len : LAY_PROBE_EDGE;
    uint64_t tail = vd->len - head < LAY_PROBE_EDGE ? head : vd->len - LAY_PROBE_EDGE;
    int rc = buf != NULL && ftruncate(fd, (off_t)vd->len) == 0 ? 0 : -1;
    for (int w = 0; w < 2 && rc == 0; w++)
        for (uint64_t at = w ? tail : 0, end = w ? vd->len : head; at < end && rc == 0;) {
            size_t n = end - at < bn ? (size_t)(end - at) : bn;
            if (lay_dev_read(vd, at, buf, n) != 0) {
                errno = EIO;
                rc = -1;
            } else if (pwrite(fd, buf, n, (off_t)at) != (ssize_t)n) {
                rc = -1;
            }
            at += n;
        }
    if (buf == NULL)
        errno = ENOMEM;
    int e = errno;
    free(buf);
    if (rc != 0) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int lay_vol_map(struct lay_dev *d, struct lay_dev *vd, uint64_t phys, const char *name,
                const char *whole, struct lay_used *u, uint64_t *fs_len)
{
    struct lay_nest *nest = d->nest;
    struct lay_part vp = {.len = vd->len, .used = vd->len};
    snprintf(vp.vol, sizeof vp.vol, "%s", name);
    int rc = 0;
    if (whole != NULL) {
#ifdef HAVE_BLKID
        /* named all the same, when it is in one place (a probe, no reader) */
        if (phys != UINT64_MAX && d->readfn == NULL)
            lay_probe_fs(d->fd, d->off + phys, &vp);
#endif
        lay_whole(&vp, false, whole);
    } else if (phys != UINT64_MAX && d->readfn == NULL) {
        vd->nest = NULL;
        vd->exclude_volatile = d->exclude_volatile;
        rc = lay_map_fs(d->fd, d->off + phys, vd, &vp, u, fs_len);
    } else {
        vd->nest = NULL;
        vd->exclude_volatile = d->exclude_volatile;
        int pfd = lay_probe_copy(vd);
        if (pfd < 0 && errno == ENOMEM)
            return -1;
        if (pfd < 0)
            lay_whole(&vp, true, "cannot read its first and last blocks");
        else
            rc = lay_map_fs(pfd, 0, vd, &vp, u, fs_len);
        if (pfd >= 0)
            close(pfd);
    }
    if (rc == 1) {
        vp.mapped = true;
        vp.used = vp.len - lay_free_in(u, *fs_len);
    }
    if (rc >= 0 && nest->n == nest->cap) {
        size_t cap = nest->cap ? nest->cap * 2 : 8;
        struct lay_part *v = realloc(nest->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        nest->v = v;
        nest->cap = cap;
    }
    if (rc >= 0)
        nest->v[nest->n++] = vp;
    return rc;
}

/* ---- the readings, combined ---- */

/* A layout: a reading's regions (parts) and, per part, its free extents. */
struct lay_lay {
    struct lay_reading *r;
    struct lay_flist *pf; /* r->nparts lists */
    struct lay_flist all; /* the union over its parts, sorted */
};

struct lay_ctx {
    int fd;
    struct lay_nest nest; /* the volumes found in regions */
    uint64_t base, size;
    struct lay_readings rs;
    struct lay_lay *ls;
    size_t nls;
    uint64_t meta_read;
    char sigs[8][16];     /* filesystem signatures on the whole input */
    uint64_t sig_at[8];   /* where each one's magic lies */
    size_t nsigs;
    unsigned sector;
    bool exclude_volatile; /* lay_opts' */
};

/* Whether readings a and b define the same regions (in any order). */
static bool lay_same_regions(const struct lay_reading *a, const struct lay_reading *b)
{
    if (a->nparts != b->nparts)
        return false;
    for (size_t i = 0; i < a->nparts; i++) {
        bool found = false;
        for (size_t j = 0; j < b->nparts && !found; j++)
            found = a->parts[i].off == b->parts[j].off && a->parts[i].len == b->parts[j].len;
        if (!found)
            return false;
    }
    return true;
}

/* The kernel's reading first, named so: a GPT when sector 0 is protective,
 * else the MBR; then the others as they were found. */
static void lay_kernel_first(struct lay_readings *rs)
{
    size_t k = rs->n;
    for (size_t i = 0; i < rs->n && k == rs->n; i++)
        if (strncmp(rs->r[i].name, rs->protective ? "a GPT" : "an MBR", 5) == 0)
            k = i;
    if (k == rs->n)
        return;
    struct lay_reading t = rs->r[k];
    memmove(&rs->r[1], &rs->r[0], k * sizeof t);
    rs->r[0] = t;
    size_t n = strlen(t.name);
    snprintf(rs->r[0].name + n, sizeof t.name - n, " (the kernel's reading)");
}

/* Fold readings that define the same regions into the first of them.
 * 0, or -1 out of memory. */
static int lay_fold(struct lay_readings *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        for (size_t j = i + 1; j < rs->n;) {
            if (!lay_same_regions(&rs->r[i], &rs->r[j])) {
                j++;
                continue;
            }
            char add[sizeof rs->r[j].name];
            memcpy(add, rs->r[j].name, sizeof add);
            size_t n = strlen(rs->r[i].name), room = sizeof rs->r[i].name - n;
            if (room > 3) /* the names joined, the tail cut to fit */
                snprintf(rs->r[i].name + n, room, ", %.*s", (int)(room - 3), add);
            /* the table checks see both readings' structures */
            for (size_t k = 0; k < rs->r[j].nstructs; k++)
                if (lay_reading_struct(NULL, &rs->r[i], rs->r[j].structs[k].off,
                                       rs->r[j].structs[k].len) != 0)
                    return -1;
            free(rs->r[j].parts);
            free(rs->r[j].structs);
            memmove(&rs->r[j], &rs->r[j + 1], (rs->n - j - 1) * sizeof rs->r[j]);
            rs->n--;
        }
    return 0;
}

/* Map part p of layout li, from an identical region already mapped when
 * there is one (readers are the costly part). */
static int lay_map_cached(struct lay_ctx *c, size_t li, size_t pi)
{
    struct lay_part *p = &c->ls[li].r->parts[pi];
    struct lay_flist *f = &c->ls[li].pf[pi];
    if (p->why[0] != '\0')
        return 0; /* read whole for its table's sake */
    f->probed = true;
    for (size_t l = 0; l <= li; l++)
        for (size_t q = 0; q < (l == li ? pi : c->ls[l].r->nparts); q++) {
            const struct lay_part *o = &c->ls[l].r->parts[q];
            if (!c->ls[l].pf[q].probed || o->off != p->off || o->len != p->len)
                continue;
            unsigned number = p->number;
            char ptype[sizeof p->ptype];
            memcpy(ptype, p->ptype, sizeof ptype);
            *p = *o;
            p->number = number;
            memcpy(p->ptype, ptype, sizeof ptype);
            const struct lay_flist *of = &c->ls[l].pf[q];
            for (size_t i = 0; i < of->n; i++)
                if (lay_flist_push(f, of->e[i].off, of->e[i].len) != 0)
                    return -1;
            return 0;
        }
    return lay_map_part(&c->nest, c->base, &c->meta_read, p, f, c->exclude_volatile);
}

/* Map every region of every layout; each layout's free union. */
static int lay_map_layouts(struct lay_ctx *c)
{
    c->ls = calloc(c->rs.n, sizeof *c->ls);
    if (c->ls == NULL)
        return -1;
    c->nls = c->rs.n;
    for (size_t li = 0; li < c->nls; li++) {
        struct lay_lay *l = &c->ls[li];
        l->r = &c->rs.r[li];
        l->pf = calloc(l->r->nparts ? l->r->nparts : 1, sizeof *l->pf);
        if (l->pf == NULL)
            return -1;
        if (l->r->table[0] != '\0')
            lay_table_check(l->r);
        for (size_t pi = 0; pi < l->r->nparts; pi++) {
            if (lay_map_cached(c, li, pi) != 0)
                return -1;
            for (size_t i = 0; i < l->pf[pi].n; i++)
                if (lay_flist_push(&l->all, l->pf[pi].e[i].off, l->pf[pi].e[i].len) != 0)
                    return -1;
        }
        l->all.n = lay_merge(l->all.e, l->all.n);
    }
    return 0;
}

/* A signature found on the whole input belongs to a partition when its
 * magic lies inside one whose filesystem is of its type. */
static bool lay_sig_in_part(const struct lay_ctx *c, size_t s)
{
    for (size_t i = 0; i < c->rs.n; i++)
        for (size_t k = 0; k < c->rs.r[i].nparts; k++) {
            const struct lay_part *p = &c->rs.r[i].parts[k];
            if (c->sig_at[s] >= p->off && c->sig_at[s] - p->off < p->len &&
                strcmp(p->fs, c->sigs[s]) == 0)
                return true;
        }
    return false;
}

/* The whole input as one filesystem is a reading when no table was found,
 * or when a signature on it belongs to no partition: an old filesystem
 * under a new table, or a new one over an old table. */
static int lay_whole_reading(struct lay_ctx *c)
{
    bool want = c->rs.n == 0;
    char sig[64] = "";
    for (size_t s = 0; s < c->nsigs; s++)
        if (!lay_sig_in_part(c, s)) {
            want = true;
            if (sig[0] == '\0')
                snprintf(sig, sizeof sig, "%s", c->sigs[s]);
        }
    if (!want)
        return 0;
    char name[96];
    if (sig[0] != '\0')
        snprintf(name, sizeof name, "a %s filesystem on the whole input", sig);
    else
        snprintf(name, sizeof name, "the whole input");
    struct lay_reading *r = lay_reading_new(&c->rs, "", name);
    return r == NULL || lay_reading_part(r, 0, c->size, 0) == NULL ? -1 : 0;
}

/* a := a ∩ b (both sorted, merged); a stays sorted and merged. */
static int lay_intersect(struct lay_flist *a, const struct lay_flist *b)
{
    struct lay_flist out = {0};
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        uint64_t ae = a->e[i].off + a->e[i].len, be = b->e[j].off + b->e[j].len;
        uint64_t lo = a->e[i].off > b->e[j].off ? a->e[i].off : b->e[j].off;
        uint64_t hi = ae < be ? ae : be;
        if (lo < hi && lay_flist_push(&out, lo, hi - lo) != 0) {
            free(out.e);
            return -1;
        }
        if (ae <= be)
            i++;
        else
            j++;
    }
    free(a->e);
    *a = out;
    return 0;
}

/* a := a minus the sorted, merged list t. */
static int lay_subtract(struct lay_flist *a, const struct sp_range *t, size_t nt)
{
    struct lay_flist out = {0};
    size_t j = 0;
    for (size_t i = 0; i < a->n; i++) {
        uint64_t at = a->e[i].off, end = a->e[i].off + a->e[i].len;
        while (j < nt && t[j].off + t[j].len <= at)
            j++;
        for (size_t k = j; at < end; k++) {
            uint64_t cut = k < nt && t[k].off < end ? t[k].off : end;
            if (cut > at && lay_flist_push(&out, at, cut - at) != 0) {
                free(out.e);
                return -1;
            }
            if (k >= nt || t[k].off >= end)
                break;
            at = t[k].off + t[k].len;
        }
    }
    free(a->e);
    *a = out;
    return 0;
}

/* The map: every layout's regions, and the free bytes all of them agree
 * on, less every table structure. */
static int lay_fill(struct lay_ctx *c, struct lay_map *m)
{
    size_t total = 0;
    for (size_t li = 0; li < c->nls; li++)
        total += c->ls[li].r->nparts;
    m->parts = calloc(total ? total : 1, sizeof *m->parts);
    m->layouts = calloc(c->nls ? c->nls : 1, sizeof *m->layouts);
    if (m->parts == NULL || m->layouts == NULL)
        return -1;
    for (size_t li = 0; li < c->nls; li++) {
        const struct lay_reading *r = c->ls[li].r;
        struct lay_layout *L = &m->layouts[m->nlayouts++];
        snprintf(L->name, sizeof L->name, "%s", r->name);
        snprintf(L->table, sizeof L->table, "%s", r->table);
        L->first = m->nparts;
        L->nparts = r->nparts;
        for (size_t k = 0; k < r->nparts; k++) {
            m->parts[m->nparts] = r->parts[k];
            m->parts[m->nparts++].layout = (unsigned)li;
        }
    }
    m->vols = c->nest.v;
    m->nvols = c->nest.n;
    c->nest.v = NULL;
    if (c->nls == 0)
        return 0;
    snprintf(m->table, sizeof m->table, "%s", c->ls[0].r->table);
    struct lay_flist acc = c->ls[0].all;
    c->ls[0].all = (struct lay_flist){0};
    for (size_t li = 1; li < c->nls; li++)
        if (lay_intersect(&acc, &c->ls[li].all) != 0) {
            free(acc.e);
            return -1;
        }
    struct lay_used *t = &c->rs.structs;
    t->n = lay_merge(t->e, t->n);
    if (lay_subtract(&acc, t->e, t->n) != 0) {
        free(acc.e);
        return -1;
    }
    m->free = acc.e;
    m->nfree = acc.n;
    for (size_t i = 0; i < m->nfree; i++)
        m->free_bytes += m->free[i].len;
    if (t->n > 0) {
        m->tables = malloc(t->n * sizeof *m->tables);
        if (m->tables == NULL)
            return -1;
        memcpy(m->tables, t->e, t->n * sizeof *m->tables);
        m->ntables = t->n;
    }
    return 0;
}

static void lay_ctx_free(struct lay_ctx *c)
{
    for (size_t li = 0; li < c->nls; li++) {
        for (size_t k = 0; c->ls[li].pf != NULL && k < c->ls[li].r->nparts; k++)
            free(c->ls[li].pf[k].e);
        free(c->ls[li].pf);
        free(c->ls[li].all.e);
    }
    free(c->ls);
    free(c->nest.v);
    lay_readings_free(&c->rs);
}

/* A partition that leaves the input (a forged or truncated table; the
 * kernel truncates it) is read whole: it keeps no length, so that every
 * reader's version of it is the same region.  A reading of more than
 * LAY_MAX_PARTS partitions is one region, the whole input, read whole. */
static void lay_clip(struct lay_ctx *c)
{
    for (size_t i = 0; i < c->rs.n; i++) {
        struct lay_reading *r = &c->rs.r[i];
        if (r->too_many) {
            r->nparts = 1;
            r->parts[0] = (struct lay_part){.off = 0, .len = c->size, .used = c->size};
            lay_whole(&r->parts[0], true, "its table lists more partitions than the kernel "
                                          "reads (256)");
            continue;
        }
        for (size_t k = 0; k < c->rs.r[i].nparts; k++) {
            struct lay_part *p = &c->rs.r[i].parts[k];
            if (p->off <= c->size && p->len <= c->size - p->off && (p->len > 0 || p->why[0]))
                continue;
            p->off = 0;
            p->len = 0;
            lay_whole(p, true, "the partition lies outside the disk");
        }
    }
}

/* Every reading of the input: libblkid's, the kernel's MBR rules, each
 * GPT header; then, once their regions are probed, the whole input. */
static int lay_readings_all(struct lay_ctx *c)
{
    struct lay_dev d = {.fd = c->fd, .off = c->base, .len = c->size};
    c->sector = 512;
#ifdef HAVE_BLKID
    if (lay_blkid_read(c->fd, c->base, c->size, &c->rs, c->sigs, c->sig_at, 8, &c->nsigs,
                       &c->sector) != 0)
        return -1;
#endif
    int rc = lay_mbr_read(&d, c->sector, &c->rs) != 0 || lay_gpt_read(&d, c->sector, &c->rs) != 0;
    c->meta_read += d.read;
    if (rc)
        return -1;
    lay_clip(c);
    lay_kernel_first(&c->rs);
    return lay_fold(&c->rs);
}

/* The reading lay_whole_reading() added, mapped like the others. */
static int lay_map_last(struct lay_ctx *c)
{
    struct lay_lay *ls = realloc(c->ls, c->rs.n * sizeof *ls);
    if (ls == NULL)
        return -1;
    c->ls = ls;
    for (size_t li = 0; li < c->nls; li++)
        c->ls[li].r = &c->rs.r[li]; /* rs.r may have moved */
    struct lay_lay *l = &c->ls[c->nls];
    *l = (struct lay_lay){.r = &c->rs.r[c->nls]};
    c->nls++;
    l->pf = calloc(1, sizeof *l->pf);
    if (l->pf == NULL || lay_map_cached(c, c->nls - 1, 0) != 0)
        return -1;
    for (size_t i = 0; i < l->pf[0].n; i++)
        if (lay_flist_push(&l->all, l->pf[0].e[i].off, l->pf[0].e[i].len) != 0)
            return -1;
    return 0;
}

/* libblkid reads with lseek and read: the offset is put back after it. */
static int lay_build_at(int fd, uint64_t base, uint64_t size, const struct lay_opts *o,
                        struct lay_map *m, struct sp_err *err);

int lay_build(int fd, uint64_t base, uint64_t size, const struct lay_opts *o,
              struct lay_map *m, struct sp_err *err)
{
    off_t at = lseek(fd, 0, SEEK_CUR);
    int rc = lay_build_at(fd, base, size, o, m, err);
    if (at >= 0 && lseek(fd, at, SEEK_SET) != at && rc == 0) {
        lay_free(m);
        sp_err_set(err, SP_ERR_READ, errno, "cannot seek back after reading the partitions");
        rc = -1;
    }
    return rc;
}

static int lay_build_at(int fd, uint64_t base, uint64_t size, const struct lay_opts *o,
                        struct lay_map *m, struct sp_err *err)
{
    memset(m, 0, sizeof *m);
    m->size = size;
    const char *why;
    if (!lay_available(&why)) {
        sp_err_set(err, SP_ERR_SYS, 0, "%s", why);
        return -1;
    }
    char held[sizeof m->forced];
    if (lay_mount_check(fd, held, sizeof held)) {
        if (!o->force_mounted) {
            sp_err_set(err, SP_ERR_FORMAT, 0,
                       "%s: its allocation maps change while they are read (--force-mounted "
                       "maps it anyway)", held);
            return -1;
        }
        snprintf(m->forced, sizeof m->forced, "%s", held);
    }
    struct lay_ctx c = {.fd = fd, .nest = {.fd = fd}, .base = base, .size = size,
                        .exclude_volatile = o->exclude_volatile};
    /* the table readings' regions are mapped first: whether a signature on
     * the whole input is a partition's own is known only then */
    size_t ntab = 0;
    int rc = lay_readings_all(&c);
    if (rc == 0) {
        ntab = c.rs.n;
        rc = lay_map_layouts(&c);
    }
    if (rc == 0)
        rc = lay_whole_reading(&c);
    if (rc == 0 && c.rs.n > ntab)
        rc = lay_map_last(&c);
    m->sector = c.sector;
    m->meta_read = c.meta_read;
    if (rc == 0)
        rc = lay_fill(&c, m);
    lay_ctx_free(&c);
    if (rc != 0) {
        lay_free(m);
        sp_err_set(err, SP_ERR_NOMEM, ENOMEM, "out of memory reading the partitions");
        return -1;
    }
    return 0;
}

void lay_free(struct lay_map *m)
{
    free(m->parts);
    free(m->vols);
    free(m->layouts);
    free(m->tables);
    free(m->free);
    memset(m, 0, sizeof *m);
}

bool lay_available(const char **why)
{
#ifdef HAVE_BLKID
    *why = NULL;
    return true;
#else
    *why = "--free=zero needs libblkid (util-linux), which this spigz was built without";
    return false;
#endif
}

const char *lay_filesystems(void)
{
#ifndef HAVE_BLKID
    return "unavailable (built without libblkid)";
#else
    return "partitions by libblkid (GPT, MBR), "
#ifdef HAVE_EXT2FS
           "ext2/3/4 by libext2fs, "
#else
           "ext2/3/4 read whole (built without libext2fs), "
#endif
#ifdef HAVE_NTFS3G
           "NTFS by libntfs-3g, "
#else
           "NTFS read whole (built without libntfs-3g), "
#endif
#ifdef HAVE_DEVMAPPER
           "LVM2 (linear and striped LVs; its metadata by libdevmapper), "
#else
           "LVM2 read whole (built without libdevmapper), "
#endif
           "FAT12/16/32, exFAT, XFS, btrfs (one device) and swap by hand";
#endif
}
