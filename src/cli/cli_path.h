/* cli_path.h — names reached through directory descriptors, and what counts
 * as the same file (doc/DESIGN.md, "Paths and identity").
 *
 * A name spigz creates, renames or removes is reached through a descriptor
 * of the directory that holds it, opened once: the input's directory (the
 * walk's descriptor under -r), the output's.  Every later step is an *at()
 * call on that descriptor, so a directory component swapped for a link
 * while spigz runs redirects nothing, and a name is removed only while it
 * is still the file that was read (cli_unlink_same).
 *
 * Contract: no messages (the callers print); errno says why on failure.
 * Bounds: a temporary name is at most NAME_MAX bytes; its creation tries
 * CLI_TMP_TRIES random names at most.
 */
#ifndef SPIGZ_CLI_PATH_H
#define SPIGZ_CLI_PATH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#define CLI_TMP_TRIES 100

/* path's last component: what follows its last '/' (a pointer into path;
 * "" when path ends in '/'). */
const char *cli_base(const char *path);

/* The directory holding path's last component, opened (for reading when
 * allowed, so that it can be synced; else O_PATH, enough for the *at()
 * calls), into *dfd, and that component in *base (a pointer into path).
 * A path with no last component of its own ("", ".", "..", or ending in
 * '/') gets AT_FDCWD and base = path.  0, or -1 (errno set). */
int cli_dir_of(const char *path, int *dfd, const char **base);

/* The directory name in dfd, opened for reading as a directory, never
 * through a link unless follow: the walk's step down.  A descriptor, or -1
 * (ELOOP or ENOTDIR when name is not a directory, or became a link). */
int cli_dir_down(int dfd, const char *name, bool follow);

/* A new file ".BASE.XXXXXX" (BASE cut to fit NAME_MAX) in dfd, created
 * exclusively, mode 0600, never through a link; its name in tmp[n] (n >
 * NAME_MAX).  A descriptor open for writing, or -1 (errno set). */
int cli_tmp_create(int dfd, const char *base, char *tmp, size_t n);

/* Give from the name to in dfd.  With was (what was checked at to, -f):
 * over it, but only while to still is that file (same device and inode)
 * or is gone; another file there now (swapped meanwhile) is EEXIST.
 * Without: never over anything, EEXIST (RENAME_NOREPLACE, or link and
 * unlink where the file system lacks it).  0 or -1. */
int cli_rename_at(int dfd, const char *from, const char *to, const struct stat *was);

/* fsync the directory: 0, or -1 (errno set).  A descriptor that cannot be
 * synced (O_PATH, no read permission) or a file system that does not sync
 * directories counts as synced, as gzip leaves every directory. */
int cli_dir_sync(int dfd);

/* Remove name from dfd if it is still the file dev/ino (lstat's view: a
 * link is itself).  0 removed; 1 the name is another file now (kept); -1
 * (errno set). */
int cli_unlink_same(int dfd, const char *name, dev_t dev, ino_t ino);

/* Where a named output (-o, --bad-map) goes: the name resolved as a shell's
 * redirection resolves it, links followed.  An existing regular file (or a
 * link to one) is replaced at the name it resolves to; a dangling link is
 * itself the name (replaced with -f, as gzip replaces its outputs); a
 * device, FIFO or directory is left for the caller to open through opath
 * or to refuse. */
struct cli_dest {
    int dfd;                 /* the directory of the final name, or -1
                                (a device, FIFO or directory: none) */
    char base[NAME_MAX + 1]; /* the final name in dfd */
    char shown[PATH_MAX];    /* the final name as a path, for messages */
    struct stat dir;         /* dfd's */
    bool exists;             /* something is there: st (links followed) */
    bool dangling;           /* a link leading nowhere: st is the link's */
    struct stat st;
    int opath;               /* exists: an O_PATH descriptor on st's object
                                (to open a device or FIFO through), or -1 */
};

/* Resolve path into d.  0, or -1 (errno set; nothing left open). */
int cli_dest_named(const char *path, struct cli_dest *d);

/* The name base in the open directory dfd (dup'ed), not followed if a
 * link: a name made from the input's, beside it.  0 or -1. */
int cli_dest_at(int dfd, const char *base, const char *shown, struct cli_dest *d);

void cli_dest_close(struct cli_dest *d);

/* Whether writing b would overwrite what a holds: the same regular file
 * (device and inode), or block devices whose sectors overlap (the same
 * device number, or a disk and one of its partitions), or a loop device
 * over the other (an image and a loop device of it, two loop devices of
 * one image at any offsets: lay_stores()).  Character
 * devices, FIFOs and sockets hold nothing a write destroys (a terminal or
 * a socket is often both stdin and stdout): never the same. */
bool cli_same_object(const struct stat *a, const struct stat *b);

#endif
