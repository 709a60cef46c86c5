/* pipe.h — pipes at pipe speed.
 *
 * A pipe's buffer is 64 KiB by default: a writer stops every 64 KiB, and a
 * reader filling a 1 MiB window needs 16 reads and as many wake-ups of the
 * other side.  sp_pipe_widen() raises the buffer of a pipe (either end: the
 * buffer is the pipe's) to `want` bytes, or to what the system allows
 * (/proc/sys/fs/pipe-max-size, 1 MiB by default, for unprivileged users);
 * anything that is not a pipe is left alone.  Measured
 * (bench/results/2026-12-01-free-device-pipes.md):
 * `cat zeros.img | spigz -c` went from 3.8 s to 0.95 s on 4 GiB; the bytes
 * read and written are the same, only the number of system calls changes.
 *
 * Contract: any thread; never fails (a refusal keeps the old size).
 */
#ifndef SPIGZ_PIPE_H
#define SPIGZ_PIPE_H

#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>

static inline void sp_pipe_widen(int fd, size_t want)
{
#ifdef F_SETPIPE_SZ
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
        return;
    int w = want > (1u << 20) ? (1 << 20) : (int)want;
    int now = fcntl(fd, F_GETPIPE_SZ);
    if (now >= 0 && now < w)
        (void)fcntl(fd, F_SETPIPE_SZ, w);
#else
    (void)fd, (void)want;
#endif
}

#endif
