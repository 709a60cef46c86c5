/* cli_progress.h — the live progress line on stderr (CLI only).
 *
 * A display thread reads a struct sp_progress (progress.h) that the core
 * advances, and redraws one line on stderr at most 5 times a second:
 * percent, bytes done and total, elapsed time, rate, ETA, zero share and
 * ratio; with an unknown total (a pipe without --size) no total, percent or
 * ETA.  The line is cleared when the display stops, so later messages (the
 * summary line of cli_report.h first) start on a clean line.  stdout is
 * never touched.
 *
 * The line, fields separated by two spaces, the name shortened ("...tail")
 * and fields dropped to stay within the terminal's width (TIOCGWINSZ, read
 * at every draw; 80 when stderr is not a terminal), one column short of it:
 *
 *   compress    NAME  30%  1.20/4.00 GiB  0:02  512 MiB/s  ETA 0:06  zeros 61%  out 18.2%
 *   restore     NAME  30%  1.20/4.00 GiB  0:02  512 MiB/s  ETA 0:06  in 120 MiB
 *   foreign     NAME  30%  120/400 MiB  0:02  52.0 MiB/s  ETA 0:06  out 1.20 GiB (10.2x)
 *   estimate    NAME  30%  1.20/4.00 GiB  0:02  512 MiB/s  ETA 0:06  zeros 61%
 *   no total    NAME  1.20 GiB  0:02  512 MiB/s  zeros 61%  out 18.2%
 *   --rescue    NAME  30%  1.20/4.00 GiB  0:02  512 MiB/s  ETA 0:06  bad 4.00 KiB  ...
 *
 * What is measured (percent, done, total, rate, ETA): the input when
 * compressing or estimating (uncompressed bytes; --size gives a pipe its
 * total); when restoring through a spigz index, the image's bytes written,
 * whose exact total the index gives (`out_total`), so percent and ETA stay
 * right while a long run of zeros is written; when restoring anything else
 * (no total of the output is known), the compressed bytes read.  Done and
 * total share their unit when they can ("1.20/4.00 GiB").  The elapsed time
 * is m:ss (h:mm:ss past an hour); the rate is over the last 5 s (since the
 * start before that) and gives the ETA (m:ss, or h:mm:ss; --:-- while
 * unknown).  "zeros" is zeros/in; "out" is out/in as a percentage when
 * compressing; "bad" (shown once there are any) counts the bytes --rescue
 * could not read; "in" is the compressed bytes read and "out" the bytes
 * restored (with out/in).  Units are binary (B, KiB, MiB, GiB, TiB), 3
 * digits.
 *
 * Narrow terminals: the name is shortened to 12 columns and the fields go,
 * least useful first (the other side's bytes, zeros, elapsed, done/total,
 * bad), down to percent, rate and ETA; then the name goes; then ETA and
 * rate.  A resize (SIGWINCH) is taken up at the next draw; when it leaves
 * the line on screen wider than the terminal, the draw goes back to the
 * line's first row and erases from there (cli_progress.c,
 * cli_prog_unwrap), so a terminal that rewraps its lines keeps no piece
 * of the old line.
 *
 * Timing: nothing is drawn in the first 0.5 s, so quick runs print nothing;
 * then a draw at most every 200 ms (each one 200 ms after the previous one
 * started): at most 5 a second, plus the last one described below.
 *
 * Bytes: each draw is "\r", the line, and spaces over what is left of the
 * previous one (after a resize that narrowed the terminal below the line:
 * "\r", ESC [ n A, ESC [ J, then the line; only where TERM is not "dumb").
 * When the display stops after drawing anything: on a terminal the line is
 * blanked ("\r", spaces, "\r"); when stderr is not a terminal (--progress)
 * one last draw with the final counters ends with "\n", so a log keeps the
 * last state of each run (and then its summary line).  Nothing at all if
 * nothing was drawn.  Control characters in the name are shown as '?'.
 *
 * When stdout is a terminal that the run writes to (-dc), progress is only
 * shown with --progress.
 *
 * Contract: main thread only (but cli_prog_interrupted()).  cli_prog_start()
 * returns NULL when no display is wanted (show false: the caller asks
 * cli_progress_wanted(), cli.h) or it cannot start; every other call
 * accepts NULL.  The struct sp_progress must outlive the display.  The
 * display knows nothing of the command line's state (cli.h): cli.c's
 * signal handler calls down into it (cli_prog_interrupted), never back.
 */
#ifndef SPIGZ_CLI_PROGRESS_H
#define SPIGZ_CLI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "progress.h"

enum cli_prog_kind {
    CLI_PROG_COMPRESS,   /* in: uncompressed, out: compressed */
    CLI_PROG_DECOMPRESS, /* in: compressed, out: restored */
    CLI_PROG_ESTIMATE    /* in: bytes classified or sampled, no output */
};

struct cli_prog;

/* --progress=log: instead of the live line, plain lines for logs (cron
 * mail, journald, Ansible): "PROG: NAME: " and the fields above, all of
 * them, one line every every_s seconds, or (every_pct > 0, a total known)
 * each time the percent crosses a multiple of every_pct, then a last line
 * when the run ends.  No carriage return, no padding, no terminal width.
 * Set before the displays start (the options); applies to all of them. */
struct cli_prog_log {
    bool on;
    const char *prog;   /* the program's name, first on each line */
    unsigned every_s;   /* seconds between lines (every_pct 0) */
    unsigned every_pct; /* percent between lines, or 0 */
};
void cli_prog_set_log(const struct cli_prog_log *log);

struct cli_prog *cli_prog_start(bool show, const char *label, struct sp_progress *p,
                                enum cli_prog_kind kind);

/* Stop the thread and erase the line. */
void cli_prog_stop(struct cli_prog *d);

/* The `in_total` for reading fd: a regular file's size from the current
 * offset, a block device's size (BLKGETSIZE64), 0 (unknown) otherwise. */
uint64_t cli_prog_total(int fd);

/* Async-signal-safe: end a line being shown (blank it on a terminal, else a
 * newline) so a signal handler's message starts on its own line; on a
 * terminal narrowed under the line, go back to its first row and erase from
 * there, as a draw does.  Any thread; harmless when nothing is shown. */
void cli_prog_interrupted(void);

/* Seconds as m:ss under an hour, h:mm:ss after (whole seconds, down). */
void cli_prog_clock(char *b, size_t n, double s);

/* Bytes in binary units, 3 digits: 512 B, 1.20 KiB, 12.3 MiB, 123 GiB,
 * 4.00 TiB (the line's own format; also for other CLI reports). */
void cli_prog_size(char *b, size_t n, double v);

#endif
