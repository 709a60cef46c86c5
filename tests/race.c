/* race.c — an LD_PRELOAD shim for the path-race tests (tests/paths.sh):
 * it changes the file system at the moment the process makes a given call
 * on a given name, then lets the call proceed.  No sleeps, no timing: the
 * race window is opened exactly where it lies.
 *
 *   RACE_ON=FAMILY      open (open, open64, openat, openat64), stat (stat,
 *                       lstat, fstatat and their 64-bit names), rename
 *                       (rename, renameat, renameat2), unlink (unlink,
 *                       unlinkat), or any
 *   RACE_NAME=NAME      ... on a path whose last component is NAME (the new
 *                       name of a rename; NAME* is any name beginning NAME)
 *   RACE_NTH=N          ... the Nth such call (default 1); once only
 *   RACE_ARM=FAMILY:NAME  ... counting only calls made after a call of
 *                       FAMILY on NAME (the output's rename, say: the next
 *                       call on the input's name is then the removal's)
 *   RACE_AFTER=1        act after the call returned, not before it
 *   RACE_MOVE=A:B       the action: rename A to B (a directory moved away,
 *                       a file saved over another), then
 *   RACE_LINK=T:A       make A a symbolic link to T (either may be alone)
 *   RACE_LOG=PATH       append "FAMILY NAME\n" when the action ran, so a
 *                       test knows the window was reached
 *
 * Calls glibc makes internally (opendir's open, fopen's) are not seen; the
 * shim's own calls go to the real functions.  Test-only: not installed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_int race_seen, race_done, race_armed;

static const char *race_last(const char *path)
{
    const char *b = strrchr(path, '/');
    return b != NULL ? b + 1 : path;
}

/* Whether name matches the pattern pat: equal, or, when pat ends in '*',
 * beginning with what comes before it (a temporary name's random tail). */
static int race_is(const char *name, const char *pat)
{
    size_t n = strlen(pat);
    if (n > 0 && pat[n - 1] == '*')
        return strncmp(name, pat, n - 1) == 0;
    return strcmp(name, pat) == 0;
}

/* Whether a call of fam on p arms the action (RACE_ARM); 1 when armed. */
static int race_arm(const char *fam, const char *p)
{
    const char *arm = getenv("RACE_ARM");
    if (arm == NULL || atomic_load(&race_armed))
        return 1;
    size_t n = strlen(fam);
    if (p != NULL && strncmp(arm, fam, n) == 0 && arm[n] == ':' &&
        race_is(race_last(p), arm + n + 1))
        atomic_store(&race_armed, 1);
    return 0;
}

/* Whether this call (family fam, on path p) is the one to act on. */
static int race_match(const char *fam, const char *p)
{
    const char *on = getenv("RACE_ON"), *name = getenv("RACE_NAME");
    if (on == NULL || name == NULL || p == NULL || atomic_load(&race_done))
        return 0;
    if (!race_arm(fam, p))
        return 0;
    if (strcmp(on, "any") != 0 && strcmp(on, fam) != 0)
        return 0;
    if (!race_is(race_last(p), name))
        return 0;
    const char *nth = getenv("RACE_NTH");
    int want = nth != NULL ? atoi(nth) : 1;
    return atomic_fetch_add(&race_seen, 1) + 1 == want;
}

/* "X:Y" into two strings (x and y point into a copy); 0 or -1. */
static int race_pair(const char *v, char *buf, size_t n, char **x, char **y)
{
    if (v == NULL || strlen(v) >= n)
        return -1;
    strcpy(buf, v);
    char *colon = strchr(buf, ':');
    if (colon == NULL)
        return -1;
    *colon = '\0';
    *x = buf;
    *y = colon + 1;
    return 0;
}

static void race_act(const char *fam, const char *p)
{
    static int (*real_rename)(const char *, const char *);
    static int (*real_symlink)(const char *, const char *);
    if (real_rename == NULL)
        real_rename = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    if (real_symlink == NULL)
        real_symlink = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "symlink");
    int e = errno;
    atomic_store(&race_done, 1);
    char buf[8192], *a, *b;
    if (race_pair(getenv("RACE_MOVE"), buf, sizeof buf, &a, &b) == 0 && real_rename(a, b) != 0)
        fprintf(stderr, "race.so: rename %s %s: %s\n", a, b, strerror(errno));
    if (race_pair(getenv("RACE_LINK"), buf, sizeof buf, &a, &b) == 0 && real_symlink(a, b) != 0)
        fprintf(stderr, "race.so: symlink %s %s: %s\n", a, b, strerror(errno));
    const char *log = getenv("RACE_LOG");
    FILE *f = log != NULL ? fopen(log, "a") : NULL;
    if (f != NULL) {
        fprintf(f, "%s %s\n", fam, race_last(p));
        fclose(f);
    }
    errno = e;
}

static int race_after(void)
{
    const char *v = getenv("RACE_AFTER");
    return v != NULL && strcmp(v, "1") == 0;
}

/* Run CALL (an expression giving the result r) with the action before or
 * after it when this call matches. */
#define RACE_WRAP(fam, path, type, call)                                                          \
    do {                                                                                         \
        int hit_ = race_match(fam, path);                                                        \
        if (hit_ && !race_after())                                                               \
            race_act(fam, path);                                                                 \
        type r_ = (call);                                                                        \
        if (hit_ && race_after())                                                                \
            race_act(fam, path);                                                                 \
        return r_;                                                                               \
    } while (0)

#define REAL(name, type) \
    static __typeof__(type) real_; \
    if (real_ == NULL) \
        real_ = (type)dlsym(RTLD_NEXT, name)

static mode_t race_mode(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *p, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = race_mode(flags, ap);
    va_end(ap);
    REAL("open", int (*)(const char *, int, ...));
    RACE_WRAP("open", p, int, real_(p, flags, m));
}

int open64(const char *p, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = race_mode(flags, ap);
    va_end(ap);
    REAL("open64", int (*)(const char *, int, ...));
    RACE_WRAP("open", p, int, real_(p, flags, m));
}

int openat(int d, const char *p, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = race_mode(flags, ap);
    va_end(ap);
    REAL("openat", int (*)(int, const char *, int, ...));
    RACE_WRAP("open", p, int, real_(d, p, flags, m));
}

int openat64(int d, const char *p, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = race_mode(flags, ap);
    va_end(ap);
    REAL("openat64", int (*)(int, const char *, int, ...));
    RACE_WRAP("open", p, int, real_(d, p, flags, m));
}

int stat(const char *p, struct stat *st)
{
    REAL("stat", int (*)(const char *, struct stat *));
    RACE_WRAP("stat", p, int, real_(p, st));
}

int stat64(const char *p, struct stat64 *st)
{
    REAL("stat64", int (*)(const char *, struct stat64 *));
    RACE_WRAP("stat", p, int, real_(p, st));
}

int lstat(const char *p, struct stat *st)
{
    REAL("lstat", int (*)(const char *, struct stat *));
    RACE_WRAP("stat", p, int, real_(p, st));
}

int lstat64(const char *p, struct stat64 *st)
{
    REAL("lstat64", int (*)(const char *, struct stat64 *));
    RACE_WRAP("stat", p, int, real_(p, st));
}

int fstatat(int d, const char *p, struct stat *st, int fl)
{
    REAL("fstatat", int (*)(int, const char *, struct stat *, int));
    RACE_WRAP("stat", p, int, real_(d, p, st, fl));
}

int fstatat64(int d, const char *p, struct stat64 *st, int fl)
{
    REAL("fstatat64", int (*)(int, const char *, struct stat64 *, int));
    RACE_WRAP("stat", p, int, real_(d, p, st, fl));
}

int rename(const char *a, const char *b)
{
    REAL("rename", int (*)(const char *, const char *));
    RACE_WRAP("rename", b, int, real_(a, b));
}

int renameat(int da, const char *a, int db, const char *b)
{
    REAL("renameat", int (*)(int, const char *, int, const char *));
    RACE_WRAP("rename", b, int, real_(da, a, db, b));
}

int renameat2(int da, const char *a, int db, const char *b, unsigned fl)
{
    REAL("renameat2", int (*)(int, const char *, int, const char *, unsigned));
    RACE_WRAP("rename", b, int, real_(da, a, db, b, fl));
}

int unlink(const char *p)
{
    REAL("unlink", int (*)(const char *));
    RACE_WRAP("unlink", p, int, real_(p));
}

int unlinkat(int d, const char *p, int fl)
{
    REAL("unlinkat", int (*)(int, const char *, int));
    RACE_WRAP("unlink", p, int, real_(d, p, fl));
}
