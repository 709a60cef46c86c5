/* cli_report.h — what one run did, said once at its end (CLI only).
 *
 * Two forms, both on stderr (stdout may carry the data, -c):
 *
 * - the summary line, printed where the progress line was (the display
 *   erased it first), when a progress display ran for the file (stderr a
 *   terminal, or --progress; never with -q, nor for the files of a
 *   directory walked with -r, which would be one line per file), and the run
 *   succeeded:
 *
 *     NAME: 4.00 GiB => 1.02 GiB (25.5%) in 3.21 s, 1.25 GiB/s, zeros 61%
 *     NAME.gz: 1.02 GiB => 4.00 GiB (3.92x) in 1.10 s, 3.64 GiB/s
 *     NAME.gz: OK, 1.02 GiB => 4.00 GiB (3.92x) in 1.10 s, 3.64 GiB/s     (-t)
 *
 *   in => out, the ratio (compressed over original when compressing,
 *   original over compressed when restoring), the time, the rate of the
 *   uncompressed side, the share of zeros (compressing).
 *
 * - with --format=json (or kv), one JSON object on a line (or key=value
 *   lines and an empty line) per file that succeeded, whether or not a
 *   display ran and even with -q (it was asked for), instead of the summary.
 *   The keys are listed in doc/spigz.1 (REPORTS).
 *
 * Contract: main thread only; prints, never exits.
 */
#ifndef SPIGZ_CLI_REPORT_H
#define SPIGZ_CLI_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

struct cli_report {
    enum cli_mode mode;     /* MODE_COMPRESS, MODE_DECOMPRESS or MODE_TEST */
    const char *in_name;    /* as in messages */
    const char *out_name;   /* NULL for -t */
    uint64_t in_bytes, out_bytes;
    uint64_t zero_bytes, hole_bytes, free_bytes, bad_bytes; /* compressing */
    const char *path;       /* restoring: "index" or "sequential" */
    double seconds;
};

/* Say what the run did, as the options ask; `displayed`: a progress display
 * ran for it (cli_prog_start() returned non-NULL). */
void cli_report(const struct cli *c, const struct cli_report *r, bool displayed);

/* Seconds on the monotonic clock, for the run's time. */
double cli_report_now(void);

/* A JSON string of s to f: quotes, backslashes and control characters
 * escaped; bytes that are not UTF-8 become \u00XX (their Latin-1 reading), so
 * any file name gives valid JSON. */
void cli_json_string(FILE *f, const char *s);

#endif
