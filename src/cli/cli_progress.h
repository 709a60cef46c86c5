/* cli_progress.h — the live progress line on stderr (CLI only).
 *
 * A display thread reads a struct sp_progress (progress.h) that the core
 * advances, and redraws one line on stderr at most 5 times a second:
 * bytes done and total, percent, rate, ETA, zero share and ratio; with an
 * unknown total (a pipe) no total, percent or ETA.  The line is cleared when the
 * display stops, so later messages start on a clean line.  stdout is never
 * touched.
 *
 * The line, fields separated by two spaces, less important ones dropped and
 * the name shortened ("...tail") to stay within the terminal's width
 * (TIOCGWINSZ; 80 when stderr is not a terminal), one column short of it:
 *
 *   compress    NAME  30%  1.20 GiB/4.00 GiB  512 MiB/s  ETA 0:06  zeros 61%  out 18.2%
 *   decompress  NAME  30%  120 MiB/400 MiB  52.0 MiB/s  ETA 0:06  out 1.20 GiB (10.2x)
 *   estimate    NAME  30%  1.20 GiB/4.00 GiB  512 MiB/s  ETA 0:06  zeros 61%
 *   no total    NAME  1.20 GiB  512 MiB/s  zeros 61%  out 18.2%
 *   --rescue    NAME  30%  1.20 GiB/4.00 GiB  512 MiB/s  ETA 0:06  bad 4.00 KiB  zeros 61%  ...
 *
 * Percent, done, total and rate are of `in` (input bytes: uncompressed when
 * compressing or estimating, compressed when decompressing); the rate is over
 * the last 5 s (since the start before that) and gives the ETA (m:ss, or
 * h:mm:ss; --:-- while unknown).  "zeros" is zeros/in; "out" is out/in as a
 * percentage when compressing; "bad" (shown once there are any) counts the
 * bytes --rescue could not read; "out" is the bytes restored with out/in when
 * decompressing.  Units are binary (B, KiB, MiB, GiB, TiB), 3 digits.
 *
 * Timing: nothing is drawn in the first 0.5 s, so quick runs print nothing;
 * then a draw at most every 200 ms (each one 200 ms after the previous one
 * started): at most 5 a second, plus the last one described below.
 *
 * Bytes: each draw is "\r", the line, and spaces over what is left of the
 * previous one.  When the display stops after drawing anything: on a
 * terminal the line is blanked ("\r", spaces, "\r"); when stderr is not a
 * terminal (--progress) one last draw with the final counters ends with
 * "\n", so a log keeps one line per run.  Nothing at all if nothing was
 * drawn.  Control characters in the name are shown as '?'.
 *
 * When stdout is a terminal that the run writes to (-dc), progress is only
 * shown with --progress.
 *
 * Contract: main thread only (but cli_prog_interrupted()).  cli_prog_start() returns NULL when no display
 * is wanted (cli_progress_wanted() false) or it cannot start; every other
 * call accepts NULL.  The struct sp_progress must outlive the display.
 */
#ifndef SPIGZ_CLI_PROGRESS_H
#define SPIGZ_CLI_PROGRESS_H

#include "cli.h"
#include "progress.h"

enum cli_prog_kind {
    CLI_PROG_COMPRESS,   /* in: uncompressed, out: compressed */
    CLI_PROG_DECOMPRESS, /* in: compressed, out: restored */
    CLI_PROG_ESTIMATE    /* in: bytes classified or sampled, no output */
};

struct cli_prog;

struct cli_prog *cli_prog_start(const struct cli *c, const char *label,
                                struct sp_progress *p, enum cli_prog_kind kind);

/* Stop the thread and erase the line. */
void cli_prog_stop(struct cli_prog *d);

/* The `in_total` for reading fd: a regular file's size from the current
 * offset, a block device's size (BLKGETSIZE64), 0 (unknown) otherwise. */
uint64_t cli_prog_total(int fd);

/* Async-signal-safe: end a line being shown (blank it on a terminal, else a
 * newline) so a signal handler's message starts on its own line.  Any
 * thread; harmless when nothing is shown. */
void cli_prog_interrupted(void);

/* Bytes in binary units, 3 digits: 512 B, 1.20 KiB, 12.3 MiB, 123 GiB,
 * 4.00 TiB (the line's own format; also for other CLI reports). */
void cli_prog_size(char *b, size_t n, double v);

#endif
