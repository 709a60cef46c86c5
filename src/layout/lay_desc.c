/* lay_desc.c — see lay_desc.h. */
#include "config.h"
#include "lay_desc.h"
#include "text.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_BLKID
#include <blkid.h>
#endif
#ifdef HAVE_FDISK
#include <libfdisk.h>
#endif

void lay_desc_free(struct lay_desc *d)
{
    free(d->p);
    memset(d, 0, sizeof *d);
}

#ifdef HAVE_BLKID
/* A printable copy of an untrusted string. */
static void ld_copy(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src != NULL ? src : "");
    txt_clean(dst);
}

/* The filesystem in [off, off + len): type, label, UUID, when exactly one
 * superblock is found (blkid_do_safeprobe: two are no answer). */
static void ld_fs(int fd, uint64_t off, uint64_t len, struct lay_dpart *p)
{
    blkid_probe pr = blkid_new_probe();
    if (pr == NULL)
        return;
    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)off, (blkid_loff_t)len) == 0) {
        blkid_probe_enable_partitions(pr, 0);
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL |
                                                  BLKID_SUBLKS_UUID | BLKID_SUBLKS_USAGE);
        const char *v;
        if (blkid_do_safeprobe(pr) == 0) {
            if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0)
                ld_copy(p->fs, sizeof p->fs, v);
            if (blkid_probe_lookup_value(pr, "LABEL", &v, NULL) == 0)
                ld_copy(p->label, sizeof p->label, v);
            if (blkid_probe_lookup_value(pr, "UUID", &v, NULL) == 0)
                ld_copy(p->fs_uuid, sizeof p->fs_uuid, v);
            p->encrypted = blkid_probe_lookup_value(pr, "USAGE", &v, NULL) == 0 &&
                           strcmp(v, "crypto") == 0;
        }
    }
    blkid_free_probe(pr);
}

/* The type's name as fdisk prints it, or "". */
static void ld_type_name(const char *table, const char *type, unsigned code, char *out,
                         size_t n)
{
    out[0] = '\0';
#ifdef HAVE_FDISK
    struct fdisk_context *cx = fdisk_new_context();
    struct fdisk_label *lb = cx != NULL ? fdisk_get_label(cx, table) : NULL;
    struct fdisk_parttype *t = NULL;
    if (lb != NULL)
        t = strcmp(table, "gpt") == 0 ? fdisk_label_get_parttype_from_string(lb, type)
                                      : fdisk_label_get_parttype_from_code(lb, code);
    const char *name = t != NULL ? fdisk_parttype_get_name(t) : NULL;
    if (name != NULL)
        ld_copy(out, n, name);
    if (t != NULL)
        fdisk_unref_parttype(t);
    if (cx != NULL)
        fdisk_unref_context(cx);
#else
    (void)table;
    (void)type;
    (void)code;
#endif
}

static int ld_add(struct lay_desc *d, const struct lay_dpart *p)
{
    if (d->n >= LAY_DESC_MAX)
        return 0;
    struct lay_dpart *q = realloc(d->p, (d->n + 1) * sizeof *q);
    if (q == NULL)
        return -1;
    d->p = q;
    d->p[d->n++] = *p;
    return 0;
}

/* One partition of libblkid's list, when it lies inside the input. */
static int ld_part(int fd, uint64_t base, uint64_t size, blkid_partition par, struct lay_desc *d)
{
    blkid_loff_t s = blkid_partition_get_start(par), z = blkid_partition_get_size(par);
    if (blkid_partition_is_extended(par) || s < 0 || z <= 0 || (uint64_t)s > size / 512 ||
        (uint64_t)z > size / 512 - (uint64_t)s)
        return 0; /* a container, or outside the disk: no device, no filesystem */
    struct lay_dpart p = {.number = (unsigned)blkid_partition_get_partno(par),
                          .off = (uint64_t)s * 512, .len = (uint64_t)z * 512};
    const char *ty = blkid_partition_get_type_string(par);
    unsigned code = (unsigned)blkid_partition_get_type(par);
    if (ty != NULL)
        ld_copy(p.type, sizeof p.type, ty);
    else
        snprintf(p.type, sizeof p.type, "0x%02x", code & 0xff);
    ld_type_name(d->table, p.type, code, p.type_name, sizeof p.type_name);
    ld_copy(p.name, sizeof p.name, blkid_partition_get_name(par));
    ld_copy(p.uuid, sizeof p.uuid, blkid_partition_get_uuid(par));
    ld_fs(fd, base + p.off, p.len, &p);
    return ld_add(d, &p);
}

int lay_describe(int fd, uint64_t base, uint64_t size, struct lay_desc *d)
{
    memset(d, 0, sizeof *d);
    off_t at = lseek(fd, 0, SEEK_CUR);
    blkid_probe pr = blkid_new_probe();
    int rc = 0;
    if (pr == NULL)
        return -1;
    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)base, (blkid_loff_t)size) == 0) {
        blkid_probe_enable_superblocks(pr, 0);
        blkid_probe_enable_partitions(pr, 1);
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
        blkid_partlist ls = blkid_do_safeprobe(pr) == 0 ? blkid_probe_get_partitions(pr) : NULL;
        blkid_parttable tab = ls != NULL ? blkid_partlist_get_table(ls) : NULL;
        if (tab != NULL) {
            const char *t = blkid_parttable_get_type(tab);
            ld_copy(d->table, sizeof d->table, t != NULL && strcmp(t, "gpt") == 0 ? "gpt" : "dos");
            ld_copy(d->id, sizeof d->id, blkid_parttable_get_id(tab));
            int n = blkid_partlist_numof_partitions(ls);
            for (int i = 0; i < n && rc == 0; i++) {
                blkid_partition par = blkid_partlist_get_partition(ls, i);
                if (par != NULL)
                    rc = ld_part(fd, base, size, par, d);
            }
        }
    }
    blkid_free_probe(pr);
    if (rc == 0 && d->table[0] == '\0') { /* no table: a filesystem on it all? */
        struct lay_dpart p = {.number = 0, .off = 0, .len = size};
        ld_fs(fd, base, size, &p);
        if (p.fs[0] != '\0')
            rc = ld_add(d, &p);
    }
    if (at >= 0)
        (void)lseek(fd, at, SEEK_SET);
    if (rc != 0)
        lay_desc_free(d);
    return rc;
}
#else
int lay_describe(int fd, uint64_t base, uint64_t size, struct lay_desc *d)
{
    (void)fd;
    (void)base;
    (void)size;
    memset(d, 0, sizeof *d);
    return 0;
}
#endif
