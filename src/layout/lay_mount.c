/* lay_mount.c — whether the input, or a partition of it, is mounted
 * read-write: its allocation maps then change while they are read, and a
 * block allocated after the map was read would be coded as zero.
 *
 * The devices that hold the input: itself when it is a block device; the
 * loop devices backed by it when it is a file (found by LOOP_GET_STATUS64:
 * the backing file's device and inode).  A mount in /proc/self/mountinfo is
 * of one of them when its device number is that device or one of its
 * partitions (/sys/dev/block/M:N/partition, and the parent's dev).  Other
 * stackings (device-mapper, md, LUKS) hold filesystems that are read whole
 * anyway.
 */
#include "config.h"
#include "lay.h"

#include <dirent.h>
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

/* Loop devices backed by the file st describes, into devs. */
static size_t lay_loops(const struct stat *st, dev_t *devs, size_t n, size_t max)
{
#if defined(HAVE_LINUX_LOOP_H) && defined(LOOP_GET_STATUS64)
    DIR *dir = opendir("/sys/block");
    if (dir == NULL)
        return n;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && n < max) {
        if (strncmp(e->d_name, "loop", 4) != 0)
            continue;
        char path[300];
        snprintf(path, sizeof path, "/dev/%s", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            continue;
        struct loop_info64 li;
        struct stat ls;
        if (ioctl(fd, LOOP_GET_STATUS64, &li) == 0 && fstat(fd, &ls) == 0 &&
            li.lo_device == (uint64_t)st->st_dev && li.lo_inode == (uint64_t)st->st_ino)
            devs[n++] = ls.st_rdev;
        close(fd);
    }
    closedir(dir);
#else
    (void)st, (void)devs, (void)max;
#endif
    return n;
}

int lay_mounted_rw(int fd, char *where, size_t wn)
{
    return lay_mounted(fd, true, where, wn);
}

int lay_mounted(int fd, bool rw_only, char *where, size_t wn)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 0;
    dev_t devs[LAY_MAX_DEVS];
    size_t n = 0;
    if (S_ISBLK(st.st_mode))
        devs[n++] = st.st_rdev;
    else if (S_ISREG(st.st_mode))
        n = lay_loops(&st, devs, 0, LAY_MAX_DEVS);
    if (n == 0)
        return 0;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (f == NULL)
        return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        unsigned ma, mi;
        char mnt[2048], opts[512];
        if (sscanf(line, "%*u %*u %u:%u %*s %2047s %511s", &ma, &mi, mnt, opts) != 4)
            continue;
        if (rw_only && (strncmp(opts, "rw", 2) != 0 || (opts[2] != '\0' && opts[2] != ',')))
            continue;
        dev_t m = makedev(ma, mi), w = lay_disk_of(m);
        /* the device itself, a partition of it, or the disk it is part of */
        for (size_t i = 0; i < n && !found; i++)
            if (devs[i] == m || devs[i] == w || lay_disk_of(devs[i]) == m) {
                snprintf(where, wn, "%s", mnt);
                found = 1;
            }
    }
    fclose(f);
    return found;
}
