/* lay_mount.c — whether anything may change the input while its maps are
 * read: a filesystem on it mounted read-write (a block allocated after the
 * map was read would be coded as zero), or a process writing it.
 *
 * What holds the input's bytes (the identity set, built to a fixed point):
 *   - the input itself: its device number when a block device, its device
 *     and inode when a regular file;
 *   - a loop device's backing file (an input /dev/loopN is its file too);
 *   - every loop device backed by a file or device of the set, at any
 *     offset (a partition's range mounted alone changes the input too).
 * A mount is of the input when its device number is one of the set's
 * devices, a partition of one, or the disk one belongs to; or when its
 * source (FUSE: ntfs-3g, fuse2fs, exfat-fuse on a file or a loop device,
 * whose device number is anonymous) resolves to a member of the set.
 * Every mount namespace is read, not only ours (containers, unshare): one
 * /proc/PID/mountinfo per distinct /proc/PID/ns/mnt, its sources resolved
 * under /proc/PID/root.  A namespace no process shows (kept by a bind mount
 * of its nsfs file) is still seen by the kernel: each block device of the
 * set is opened with O_EXCL, which fails with EBUSY while anything holds it
 * (a mount anywhere, device-mapper, md, swap); held is refused unless a
 * read-only mount of ours explains it, every mountinfo line was read and
 * nothing stacks on the device (its sysfs holders).  A mount counts as
 * read-write when its own options or its superblock's say so (a read-only
 * bind of a read-write filesystem still changes).  A process holding a
 * file or a device of the set open for writing (a FUSE daemon serving it,
 * a VM on the disk, dd onto a loop device of the image) is found in
 * /proc/PID/fd.
 *
 * Bounds: LAY_MAX_DEVS devices and files in the set, LAY_MAX_NS namespaces,
 * mountinfo lines read whole up to 1 MiB (a longer one, or one that does
 * not parse, rules nothing out: the O_EXCL test then decides).
 */
#include "config.h"
#include "lay.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#ifdef HAVE_LINUX_LOOP_H
#include <linux/loop.h>
#endif

#define LAY_MAX_DEVS 64
#define LAY_MAX_NS 1024

struct lm_set {
    dev_t devs[LAY_MAX_DEVS]; /* block devices holding the input's bytes */
    size_t ndevs;
    struct {
        dev_t dev;
        ino_t ino;
    } files[LAY_MAX_DEVS];    /* regular files holding them */
    size_t nfiles;
};

static bool lm_has_dev(const struct lm_set *s, dev_t d)
{
    for (size_t i = 0; i < s->ndevs; i++)
        if (s->devs[i] == d)
            return true;
    return false;
}

static bool lm_has_file(const struct lm_set *s, dev_t dev, ino_t ino)
{
    for (size_t i = 0; i < s->nfiles; i++)
        if (s->files[i].dev == dev && s->files[i].ino == ino)
            return true;
    return false;
}

static bool lm_add_dev(struct lm_set *s, dev_t d)
{
    if (d == 0 || lm_has_dev(s, d) || s->ndevs == LAY_MAX_DEVS)
        return false;
    s->devs[s->ndevs++] = d;
    return true;
}

static bool lm_add_file(struct lm_set *s, dev_t dev, ino_t ino)
{
    if (lm_has_file(s, dev, ino) || s->nfiles == LAY_MAX_DEVS)
        return false;
    s->files[s->nfiles].dev = dev;
    s->files[s->nfiles++].ino = ino;
    return true;
}

/* The whole disk a device number belongs to (itself when not a partition). */
dev_t lay_disk_of(dev_t d)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/partition", major(d), minor(d));
    if (access(path, F_OK) != 0)
        return d;
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/../dev", major(d), minor(d));
    FILE *f = fopen(path, "re");
    unsigned ma, mi;
    dev_t w = d;
    if (f != NULL && fscanf(f, "%u:%u", &ma, &mi) == 2)
        w = makedev(ma, mi);
    if (f != NULL)
        fclose(f);
    return w;
}

/* Whether device m (a mount's) is one of the set's, a partition of one, or
 * the disk one is part of. */
static bool lm_dev_matches(const struct lm_set *s, dev_t m)
{
    if (m == 0)
        return false;
    dev_t w = lay_disk_of(m);
    for (size_t i = 0; i < s->ndevs; i++)
        if (s->devs[i] == m || s->devs[i] == w || lay_disk_of(s->devs[i]) == m)
            return true;
    return false;
}

#if defined(HAVE_LINUX_LOOP_H) && defined(LOOP_GET_STATUS64)
/* The loop device open on fd's backing file or device into s. */
/* Whether the loop device li describes is backed by a member of s. */
static bool lm_info_of_set(const struct lm_set *s, const struct loop_info64 *li)
{
    return lm_has_file(s, (dev_t)li->lo_device, (ino_t)li->lo_inode) ||
           (li->lo_rdevice != 0 && lm_has_dev(s, (dev_t)li->lo_rdevice));
}

static bool lm_loop_backing(int fd, struct lm_set *s, bool add)
{
    struct loop_info64 li;
    if (ioctl(fd, LOOP_GET_STATUS64, &li) != 0)
        return false;
    bool of_set = lm_info_of_set(s, &li);
    if (add) {
        lm_add_file(s, (dev_t)li.lo_device, (ino_t)li.lo_inode);
        if (li.lo_rdevice != 0)
            lm_add_dev(s, (dev_t)li.lo_rdevice);
    }
    return of_set;
}

/* Every loop device backed by a member of s, added to it; true when one
 * was new. */
static bool lm_loops(struct lm_set *s)
{
    DIR *dir = opendir("/sys/block");
    if (dir == NULL)
        return false;
    bool grew = false;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strncmp(e->d_name, "loop", 4) != 0)
            continue;
        char path[300];
        snprintf(path, sizeof path, "/dev/%s", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            continue;
        struct stat ls;
        if (fstat(fd, &ls) == 0 && S_ISBLK(ls.st_mode) && lm_loop_backing(fd, s, false))
            grew |= lm_add_dev(s, ls.st_rdev);
        close(fd);
    }
    closedir(dir);
    return grew;
}
#else
static bool lm_loop_backing(int fd, struct lm_set *s, bool add)
{
    (void)fd, (void)s, (void)add;
    return false;
}

static bool lm_loops(struct lm_set *s)
{
    (void)s;
    return false;
}
#endif

static bool lm_devnode(dev_t d, char *path, size_t n);

/* The identity set of the object st describes (fd open on it, or -1);
 * false when it is neither a block device nor a regular file. */
static bool lm_identify_st(int fd, const struct stat *st, struct lm_set *s)
{
    memset(s, 0, sizeof *s);
    if (S_ISBLK(st->st_mode)) {
        lm_add_dev(s, st->st_rdev);
        char path[96];
        int own = -1;
        if (fd < 0 && lm_devnode(st->st_rdev, path, sizeof path))
            fd = own = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0)
            lm_loop_backing(fd, s, true); /* a loop device: its file too */
        if (own >= 0)
            close(own);
    } else if (S_ISREG(st->st_mode)) {
        lm_add_file(s, st->st_dev, st->st_ino);
    } else {
        return false;
    }
    for (int round = 0; round < 8 && lm_loops(s); round++)
        ;
    return true;
}

static bool lm_identify(int fd, struct lm_set *s)
{
    struct stat st;
    return fstat(fd, &st) == 0 && lm_identify_st(fd, &st, s);
}

bool lay_stores(const struct stat *a, const struct stat *b)
{
    struct lm_set s;
    if (!S_ISBLK(b->st_mode) || !lm_identify_st(-1, a, &s))
        return false;
    for (size_t i = 0; i < s.ndevs; i++)
        if (s.devs[i] == b->st_rdev || lay_disk_of(s.devs[i]) == b->st_rdev ||
            lay_disk_of(b->st_rdev) == s.devs[i])
            return true;
    return false;
}

/* A mountinfo source (its octal escapes undone) resolved under root:
 * whether it is a member of the set. */
static bool lm_source_matches(const struct lm_set *s, const char *root, const char *src)
{
    if (src[0] != '/')
        return false;
    char path[4096 + 64], *o = path + snprintf(path, 64, "%s", root);
    for (const char *p = src; *p && o < path + sizeof path - 1; p++) {
        if (p[0] == '\\' && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
            isdigit((unsigned char)p[3])) {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    if (S_ISREG(st.st_mode))
        return lm_has_file(s, st.st_dev, st.st_ino);
    return S_ISBLK(st.st_mode) && lm_dev_matches(s, st.st_rdev);
}

struct lm_hit {
    bool found, rw;
    bool unparsed; /* a mountinfo line that could not be read: it may be
                      one of ours, so nothing may be ruled out by it */
    char what[1100], where[2400]; /* a source, a mountpoint and a namespace */
};

/* Whether a comma-separated option list says "rw". */
static bool lm_opts_rw(const char *o)
{
    return strncmp(o, "rw", 2) == 0 && (o[2] == '\0' || o[2] == ',');
}

/* A mountinfo line split at its spaces (fields never hold one: the kernel
 * escapes it as \040): fields 2 (major:minor), 4 (mount point) and 5
 * (per-mount options), then after the "-" separator the filesystem type,
 * the source and the superblock's options.  False when it is not that. */
struct lm_line {
    unsigned ma, mi;
    const char *mnt, *opts, *src, *sopts;
};

static bool lm_split(char *line, struct lm_line *l)
{
    char *f[64];
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \n", &save); t != NULL && n < 64;
         t = strtok_r(NULL, " \n", &save))
        f[n++] = t;
    size_t dash = 6;
    while (dash < n && strcmp(f[dash], "-") != 0)
        dash++;
    if (n < 6 || dash + 2 >= n || sscanf(f[2], "%u:%u", &l->ma, &l->mi) != 2)
        return false;
    l->mnt = f[4];
    l->opts = f[5];
    l->src = f[dash + 2];
    l->sopts = dash + 3 < n ? f[dash + 3] : "";
    return true;
}

/* One mountinfo file (of the namespace whose root is root, named ns in
 * messages): the first mount of the set, read-write first.  A mount is
 * read-write when its own options or its superblock's say so (a read-only
 * bind of a read-write filesystem still changes).  Lines are read whole
 * (up to 1 MiB: a longer one, or one that does not parse, sets unparsed). */
static void lm_scan_mountinfo(const struct lm_set *s, const char *path, const char *root,
                              const char *ns, bool rw_only, struct lm_hit *h)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        struct lm_line l;
        if (len > (1 << 20) || !lm_split(line, &l)) {
            h->unparsed = true;
            continue;
        }
        bool rw = lm_opts_rw(l.opts) || lm_opts_rw(l.sopts);
        if ((rw_only && !rw) || (h->found && (h->rw || !rw)))
            continue;
        if (!lm_dev_matches(s, makedev(l.ma, l.mi)) && !lm_source_matches(s, root, l.src))
            continue;
        h->found = true;
        h->rw = rw;
        snprintf(h->what, sizeof h->what, "%s", l.src[0] ? l.src : "it");
        snprintf(h->where, sizeof h->where, "%s%s", l.mnt, ns);
    }
    free(line);
    fclose(f);
}

/* Our namespace, then every other one a process shows. */
static void lm_scan_mounts(const struct lm_set *s, bool rw_only, struct lm_hit *h)
{
    struct stat self;
    ino_t seen[LAY_MAX_NS];
    size_t nseen = 0;
    if (stat("/proc/self/ns/mnt", &self) == 0)
        seen[nseen++] = self.st_ino;
    lm_scan_mountinfo(s, "/proc/self/mountinfo", "", "", rw_only, h);
    DIR *d = opendir("/proc");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && nseen < LAY_MAX_NS && !(h->found && h->rw)) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[300], root[300], ns[320];
        struct stat st;
        snprintf(path, sizeof path, "/proc/%s/ns/mnt", e->d_name);
        if (stat(path, &st) != 0)
            continue;
        bool known = false;
        for (size_t i = 0; i < nseen && !known; i++)
            known = seen[i] == st.st_ino;
        if (known)
            continue;
        seen[nseen++] = st.st_ino;
        snprintf(path, sizeof path, "/proc/%s/mountinfo", e->d_name);
        snprintf(root, sizeof root, "/proc/%s/root", e->d_name);
        snprintf(ns, sizeof ns, " (in the mount namespace of process %s)", e->d_name);
        lm_scan_mountinfo(s, path, root, ns, rw_only, h);
    }
    closedir(d);
}

/* Whether block device d is still a way to write to the set: a loop device
 * found backed by the input may have been detached since, and its number
 * taken by another losetup for another file (whose writer is then no
 * concern); and a loop device bound read-only (losetup -r) holds its file
 * open for reading only, so whoever opens it for writing writes nothing to
 * the input.  A loop device whose detach waits for its last close is such a
 * case: util-linux's losetup -f, hunting for a free device, opens it for
 * writing and may keep it open (it retries while the device is busy).  Any
 * doubt (no node, no open, not a loop device) counts as a way to write. */
static bool lm_still_ours(const struct lm_set *s, dev_t d)
{
#if defined(HAVE_LINUX_LOOP_H) && defined(LOOP_GET_STATUS64)
    char path[300];
    if (major(d) != 7 || !lm_devnode(d, path, sizeof path)) /* LOOP_MAJOR */
        return true;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return true;
    struct loop_info64 li;
    bool ours = ioctl(fd, LOOP_GET_STATUS64, &li) == 0 &&
                (li.lo_flags & LO_FLAGS_READ_ONLY) == 0 && lm_info_of_set(s, &li);
    close(fd);
    return ours;
#else
    (void)s, (void)d;
    return true;
#endif
}

/* A process other than this one holding a file or a block device of the
 * set open for writing (FUSE daemons serving the file, a virtual machine
 * on the disk, dd onto a loop device of the image). */
static void lm_scan_writers(const struct lm_set *s, struct lm_hit *h)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return;
    char self[32];
    snprintf(self, sizeof self, "%ld", (long)getpid());
    struct dirent *e;
    while (!h->found && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]) || strcmp(e->d_name, self) == 0)
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/fd", e->d_name);
        DIR *fds = opendir(path);
        if (fds == NULL)
            continue;
        struct dirent *f;
        while (!h->found && (f = readdir(fds)) != NULL) {
            char p[600], info[600];
            struct stat st;
            snprintf(p, sizeof p, "/proc/%s/fd/%s", e->d_name, f->d_name);
            if (f->d_name[0] == '.' || stat(p, &st) != 0 ||
                !((S_ISREG(st.st_mode) && lm_has_file(s, st.st_dev, st.st_ino)) ||
                  (S_ISBLK(st.st_mode) && lm_dev_matches(s, st.st_rdev))))
                continue;
            snprintf(info, sizeof info, "/proc/%s/fdinfo/%s", e->d_name, f->d_name);
            FILE *fi = fopen(info, "re");
            unsigned flags = 0;
            char l[128];
            while (fi != NULL && fgets(l, sizeof l, fi) != NULL)
                if (sscanf(l, "flags: %o", &flags) == 1)
                    break;
            if (fi != NULL)
                fclose(fi);
            if ((flags & O_ACCMODE) == O_RDONLY)
                continue;
            if (S_ISBLK(st.st_mode) && !lm_still_ours(s, st.st_rdev))
                continue;
            char comm[64] = "?", cp[300];
            snprintf(cp, sizeof cp, "/proc/%s/comm", e->d_name);
            FILE *c = fopen(cp, "re");
            if (c != NULL && fgets(comm, sizeof comm, c) != NULL)
                comm[strcspn(comm, "\n")] = '\0';
            if (c != NULL)
                fclose(c);
            h->found = h->rw = true;
            snprintf(h->what, sizeof h->what, "process %s (%s)", e->d_name, comm);
        }
        closedir(fds);
    }
    closedir(d);
}

/* The /dev node of block device d (its name from sysfs, the node checked
 * to be that device) into path; false when there is none. */
static bool lm_devnode(dev_t d, char *path, size_t n)
{
    char name[64] = "", l[160];
    snprintf(path, n, "/sys/dev/block/%u:%u/uevent", major(d), minor(d));
    FILE *f = fopen(path, "re");
    while (f != NULL && fgets(l, sizeof l, f) != NULL)
        if (sscanf(l, "DEVNAME=%63s", name) == 1)
            break;
    if (f != NULL)
        fclose(f);
    if (name[0] == '\0' || strchr(name, '/') != NULL || strstr(name, "..") != NULL)
        return false;
    snprintf(path, n, "/dev/%s", name);
    struct stat st;
    return stat(path, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == d;
}

/* Whether anything stacks on a device of the set (device-mapper, md,
 * bcache: /sys/dev/block/M:N/holders is not empty). */
static bool lm_has_holders(const struct lm_set *s)
{
    for (size_t i = 0; i < s->ndevs; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/dev/block/%u:%u/holders", major(s->devs[i]),
                 minor(s->devs[i]));
        DIR *d = opendir(path);
        if (d == NULL)
            continue;
        struct dirent *e;
        bool any = false;
        while (!any && (e = readdir(d)) != NULL)
            any = e->d_name[0] != '.';
        closedir(d);
        if (any)
            return true;
    }
    return false;
}

/* A block device of the set that the kernel will not open exclusively. */
static void lm_scan_exclusive(const struct lm_set *s, struct lm_hit *h)
{
    for (size_t i = 0; i < s->ndevs && !h->found; i++) {
        char path[96];
        if (!lm_devnode(s->devs[i], path, sizeof path))
            continue;
        int fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0) {
            close(fd);
            continue;
        }
        if (errno == EBUSY) {
            h->found = h->rw = true;
            snprintf(h->what, sizeof h->what, "%s", path);
        }
    }
}

int lay_mounted_rw(int fd, char *why, size_t wn)
{
    struct lm_set s;
    if (!lm_identify(fd, &s))
        return 0;
    struct lm_hit h = {0};
    lm_scan_mounts(&s, true, &h);
    if (!h.found || !h.rw)
        return 0;
    snprintf(why, wn, "%s is mounted read-write on %s", h.what, h.where);
    return 1;
}

int lay_mount_check(int fd, char *why, size_t wn)
{
    struct lm_set s;
    if (!lm_identify(fd, &s))
        return 0;
    struct lm_hit h = {0};
    lm_scan_mounts(&s, false, &h);
    if (h.found && h.rw) {
        snprintf(why, wn, "%s is mounted read-write on %s", h.what, h.where);
        return 1;
    }
    struct lm_hit w = {0};
    lm_scan_writers(&s, &w);
    if (w.found) {
        snprintf(why, wn, "%s has it open for writing", w.what);
        return 1;
    }
    /* Held exclusively: by a mount no process shows, device-mapper, md,
     * swap; or by the read-only mount found above, which alone is fine
     * when every mountinfo line was read and nothing stacks on the set. */
    struct lm_hit x = {0};
    lm_scan_exclusive(&s, &x);
    if (x.found && !(h.found && !h.unparsed && !lm_has_holders(&s))) {
        snprintf(why, wn, "%s is held exclusively by the kernel: mounted (in a mount namespace "
                          "no process here shows), or used by device-mapper, md or swap",
                 x.what);
        return 1;
    }
    return 0;
}

int lay_mounted(int fd, bool rw_only, char *why, size_t wn)
{
    struct lm_set s;
    if (!lm_identify(fd, &s))
        return 0;
    struct lm_hit h = {0};
    lm_scan_mounts(&s, rw_only, &h);
    if (h.found)
        snprintf(why, wn, "%s is mounted on %s", h.what, h.where);
    return h.found;
}
