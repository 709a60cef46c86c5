/* cli.h — the command line's shared state and helpers.
 *
 * The CLI (spigz.c: options; cmd_compress.c; cmd_decompress.c; cli.c: what
 * they share) is the only part of spigz that prints or exits.  It keeps
 * gzip's conventions: messages "spigz: NAME: cause", exit status 0 (ok), 1
 * (error) or 2 (warning, when no error), errors winning; the other files
 * are still processed after one fails.
 *
 * Contract: main thread only.  A named output is created by cli_out_create()
 * under a temporary name and ended by cli_out_finish(), which renames it:
 * between the two a SIGINT, SIGTERM, SIGHUP, SIGXCPU or SIGXFSZ removes it.
 */
#ifndef SPIGZ_CLI_H
#define SPIGZ_CLI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "err.h"
#include "osink.h"
#include "xidx.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define EXIT_WARN 2

enum cli_mode { MODE_COMPRESS, MODE_DECOMPRESS, MODE_TEST, MODE_LIST, MODE_ESTIMATE,
                MODE_COMPARE, MODE_EXPORT };
enum cli_progress { PROGRESS_AUTO, PROGRESS_ON, PROGRESS_OFF };
enum cli_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_KV };

struct cli {
    enum cli_mode mode;
    bool to_stdout, keep, force, quiet, store_name, name_set, index;
    bool store_time, time_set;   /* gzip's no_time: -m/-M, and -n/-N with the name */
    bool ascii;                  /* -a: gzip says it is ignored here */
    bool synchronous;            /* --synchronous: sync every output file */
    bool recursive;              /* -r */
    unsigned walking;            /* inside a directory given with -r */
    bool rsyncable;              /* --rsyncable */
    bool free_zero;              /* --free=zero */
    bool force_mounted;          /* --force-mounted */
    bool rescue;                 /* --rescue: survive read errors */
    const char *bad_map;         /* --bad-map FILE (ddrescue mapfile) */
    bool nocache;                /* --nocache: files too leave the page cache */
    bool salvage;                /* --salvage: restore what is intact */
    bool discard;                /* --discard: zero device spans by discard */
    bool direct;                 /* --direct: write a device past the page cache */
    const char *compare_target;  /* --compare BACKUP TARGET: the second */
    bool stop;                   /* an error ended the run (cli_stop_on) */
    int verbose;
    int level;
    unsigned threads;
    uint64_t chunk_kib, zmin_kib;
    const char *suffix;
    const char *output;          /* -o */
    enum osink_sparse sparse;
    bool range;                  /* --range */
    uint64_t range_off, range_len;
    enum cli_progress progress;  /* --progress, --no-progress */
    uint64_t size;               /* --size: the input's total for the display, 0: none */
    bool est_full;               /* --estimate=full */
    bool est_size;               /* --estimate given: print the size estimate */
    bool est_map;                /* --map */
    uint64_t seed;               /* --seed */
    enum cli_format format;      /* --format */
    enum xidx_fmt export_fmt;    /* --export-index=FORMAT (MODE_EXPORT) */
    int status;                  /* worst exit status so far */
    /* -l totals */
    unsigned listed;
    unsigned operands;           /* file operands on the command line */
    uint64_t list_in, list_out;
    uint64_t list_frame;         /* header + trailer of the last file listed */
    bool list_inexact;
};

struct cli_job {
    const char *in_name;   /* as shown in messages */
    const char *out_name;  /* as shown in messages */
    const char *in_path;   /* NULL for stdin */
    int in_fd, out_fd;
    struct stat st;        /* of the input */
    double seconds;        /* the run's time, for the report (cli_report.h) */
    bool displayed;        /* a progress display ran for it */
};

extern const char *cli_prog;

void cli_status(struct cli *c, int status);

/* After a failed file: gzip ends the run on an error in the data or in
 * reading or writing (its abort), on a CRC-32 or length mismatch but with
 * -t or -l, and goes on after a file it refuses as a whole (not gzip, a
 * header it does not support).  Sets c->stop. */
void cli_stop_on(struct cli *c, const struct sp_err *err);
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_error(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_warn(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void cli_signals_install(void);

/* Open the output for the path: an existing device or FIFO named with -o
 * (named) as it is; else a temporary file beside it, an existing file being
 * refused without -f.  Returns the descriptor, or -1 (message printed). */
int cli_out_create(struct cli *c, const char *path, bool named);

/* Restoring onto a device: the counter of image bytes written, which a
 * signal's message reports (the device keeps a partial image); NULL when
 * done. */
void cli_device_progress(_Atomic uint64_t *written);

/* stdout is a block device that is mounted or held (as -o checks a device
 * it opens): error printed, true.  False for anything else. */
bool cli_stdout_device_busy(struct cli *c);

/* Keep (rename to its name) or remove the output; false when it is not
 * kept (message printed). */
bool cli_out_done(struct cli *c, bool ok);

/* True when the run keeps its inputs and writes no file named after them
 * (-c, -o, -t, -l, --estimate, --export-index). */
bool cli_input_stays(const struct cli *c);

/* Open a named input with gzip's refusals (directories, links, devices,
 * FIFOs, hard links).  Returns 0 or -1 (message printed, status set). */
int cli_open_input(struct cli *c, const char *path, struct cli_job *j);

/* Finish a named output: metadata, fsync when the input goes, close, keep or
 * remove it, then remove the input (only once the output has its name, on
 * disk).  Returns true when the output is kept. */
bool cli_out_finish(struct cli *c, struct cli_job *j, bool ok, bool remove_input,
                    const struct timespec *mtime);

bool cli_has_suffix(const char *name, const char *suf);

/* True when fd is the input's regular file (named, or stdin from it). */
bool cli_same_file(const struct cli_job *j, int fd);

/* True (error printed, status set) when out_path names the input itself
 * (a named input, or stdin redirected from that file). */
bool cli_out_is_input(struct cli *c, const struct cli_job *j, const char *out_path);
const char *cli_base(const char *path);

/* The two entry points per input. */
void cmd_compress(struct cli *c, const char *path);
void cmd_decompress(struct cli *c, const char *path);
void cmd_list_totals(struct cli *c);
void cmd_estimate(struct cli *c, const char *path);
/* --export-index: the index of the spigz file at path in another tool's
 * format (cmd_export.c). */
void cmd_export(struct cli *c, const char *path);
/* --compare: the backup at path against c->compare_target. */
void cmd_compare(struct cli *c, const char *path);

/* --free=zero: the map of the job's input (from its offset), reported per
 * partition (-v; warnings for what is read whole for a doubt).  0 with *m
 * filled (empty without --free=zero; lay_free() it), or -1 (message
 * printed, status set). */
struct lay_map;
int cli_free_map(struct cli *c, const struct cli_job *j, struct lay_map *m);

/* --bad-map: write [0, total) with the ranges bad[0..n) as ddrescue's
 * mapfile at path (cli_badmap.c); `what` goes in its header comment.
 * False (message printed, status set) when it cannot be written. */
struct sp_range;
bool cli_badmap_write(struct cli *c, const char *path, uint64_t total,
                      const struct sp_range *bad, size_t n, const char *what);

/* The union of two range lists, sorted, overlaps and touching ranges
 * joined: malloc'd (*n ranges), NULL when *n is 0 or out of memory. */
struct sp_range *cli_ranges_union(const struct sp_range *a, size_t na, const struct sp_range *b,
                                  size_t nb, size_t *n);

/* "NAME: B bytes in N ranges WHAT (first at offset X)": a warning (status
 * 2) with warn, else a note shown only with -v; with -v each range too
 * ("NAME: bad OFF+LEN", 100 at most; -vv all).  Nothing when n is 0. */
void cli_bad_report(struct cli *c, const char *name, const struct sp_range *bad, size_t n,
                    const char *what, bool warn);

/* Whether a progress line is shown: --progress, or stderr a terminal;
 * never with -q or --no-progress. */
bool cli_progress_wanted(const struct cli *c);

#endif
