/* cli.h — the command line's shared state and helpers.
 *
 * The CLI (spigz.c: main and the inputs; cli_options.c: options; the
 * cmd_*.c files: one input each; cli.c: what they share) is the only part
 * of spigz that prints or exits.  It keeps
 * gzip's conventions: messages "spigz: NAME: cause", exit status 0 (ok), 1
 * (error) or 2 (warning, when no error), errors winning; the other files
 * are still processed after one fails.
 *
 * Contract: main thread only.  A named output is created by cli_out_create()
 * under a temporary name and ended by cli_out_finish(), which renames it:
 * between the two a SIGINT, SIGTERM, SIGHUP, SIGXCPU or SIGXFSZ removes it.
 * Inputs, outputs and --bad-map's file are reached through descriptors of
 * their directories, opened once (cli_path.h): the input is removed, the
 * output renamed, relative to them, never by re-resolving a path.
 */
#ifndef SPIGZ_CLI_H
#define SPIGZ_CLI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>

#include "err.h"
#include "osink.h"
#include "xidx.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define EXIT_WARN 2

enum cli_mode { MODE_COMPRESS, MODE_DECOMPRESS, MODE_TEST, MODE_LIST, MODE_ESTIMATE,
                MODE_COMPARE, MODE_EXPORT, MODE_MOUNT };
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
    int at_dir;                  /* walking: the directory holding the file
                                    operand being processed (its last
                                    component is the name there) */
    bool rsyncable;              /* --rsyncable */
    bool free_zero;              /* --free=zero */
    bool force_mounted;          /* --force-mounted */
    bool exclude_volatile;       /* --exclude=volatile */
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
    unsigned partition;          /* --partition N (1..256; 0: none), made a range */
    uint64_t range_off, range_len;
    enum cli_progress progress;  /* --progress, --no-progress */
    uint64_t size;               /* --size: the input's total for the display, 0: none */
    bool est_full;               /* --estimate=full */
    bool est_size;               /* --estimate given: print the size estimate */
    bool est_map;                /* --map */
    uint64_t seed;               /* --seed */
    enum cli_format format;      /* --format */
    enum xidx_fmt export_fmt;    /* --export-index=FORMAT (MODE_EXPORT) */
    uint64_t cache_bytes;        /* --cache (MODE_MOUNT), 0: the reader's default */
    const char *index_file;      /* --index-file: a gzip file's saved index (cli_gzx.h) */
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
    int dir_fd;            /* in_path's directory (cli_open_input), or
                              AT_FDCWD */
    const char *in_base;   /* in_path's name in dir_fd */
    dev_t name_dev;        /* what that name was when it was opened (the */
    ino_t name_ino;        /* link itself for a link followed): removed
                              only while it still is */
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
/* With on (--format=json), every message below goes to stderr as one JSON
 * object a line, {"level":"info|warning|error","program":..,"message":..},
 * as the per-file reports do; else "PROG: message". */
void cli_messages_json(bool on);
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_error(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_warn(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void cli_signals_install(void);

/* Open the output for the path: named (-o), links followed as a shell's
 * redirection does: an existing device or FIFO is written into as it is
 * (opened through the descriptor that was checked, then checked again);
 * else a temporary file in the directory the name resolves to.  Not named
 * (a name made from the input's, beside it in j->dir_fd): a temporary file
 * there.  An existing name (a dangling link too) is refused without -f, a
 * directory always; so is the input itself (cli_same_object).  Returns the
 * descriptor, or -1 (message printed, status set). */
int cli_out_create(struct cli *c, const struct cli_job *j, const char *path, bool named);

/* Whether the name base in the directory dir, or the existing object st
 * (NULL: none), is the output being written (by cli_out_create, until
 * cli_out_done). */
bool cli_out_is(const struct stat *dir, const char *base, const struct stat *st);

/* A temporary file the signal handler removes: slot 0 the output's, 1
 * --bad-map's.  name is copied; dfd stays the caller's until untracked.
 * Call with the signals blocked (cli_signals_hold). */
void cli_tmp_track(int slot, int dfd, const char *name);
void cli_tmp_untrack(int slot);
void cli_signals_hold(sigset_t *old);
void cli_signals_release(const sigset_t *old);

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
 * FIFOs, hard links), through its directory (c->at_dir when walking, else
 * opened here: j->dir_fd).  Returns 0 or -1 (message printed, status set). */
int cli_open_input(struct cli *c, const char *path, struct cli_job *j);

/* Close what cli_open_input opened. */
void cli_close_input(struct cli_job *j);

/* Finish a named output: metadata, fsync when the input goes, close, keep or
 * remove it, then remove the input (only once the output has its name, on
 * disk, and only while the input's name is still the file read: a warning
 * else).  Returns true when the output is kept. */
bool cli_out_finish(struct cli *c, struct cli_job *j, bool ok, bool remove_input,
                    const struct timespec *mtime);

bool cli_has_suffix(const char *name, const char *suf);

/* True when writing fd would overwrite the input (cli_same_object: its
 * regular file, named or stdin from it, or its block device). */
bool cli_same_file(const struct cli_job *j, int fd);

/* "NAME: input and output are the same file" (or device, for a block
 * device st): an error. */
void cli_same_error(struct cli *c, const char *name, const struct stat *st);

/* True (error printed, status set) when out_path names the input itself
 * (a named input, or stdin redirected from that file; its block device):
 * named, links followed; else in the input's directory. */
bool cli_out_is_input(struct cli *c, const struct cli_job *j, const char *out_path, bool named);

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

/* --mount BACKUP DIR: serve the backup read-only through FUSE until
 * unmounted (cmd_mount.c). */
void cmd_mount(struct cli *c, const char *backup, const char *dir);

/* What was said of an input while it was read (its layouts disagree, a
 * filesystem damaged or mounted), kept in the backup's index as notes
 * (idx.h) for -l, -t and -d to repeat.  Strings malloc'd; cli_notes_free(). */
struct cli_notes {
    char *v[64];
    size_t n;
};
void cli_notes_free(struct cli_notes *nt);

/* --free=zero: the map of the job's input (from its offset), reported per
 * partition (-v; warnings for what is read whole for a doubt), each
 * warning also added to notes when not NULL.  0 with *m filled (empty
 * without --free=zero; lay_free() it), or -1 (message printed, status
 * set). */
struct lay_map;
int cli_free_map(struct cli *c, const struct cli_job *j, struct lay_map *m,
                 struct cli_notes *notes);

/* A backup's notes, each "NAME: when this backup was made: NOTE" (unless
 * -q): what the index kept of what was said of its input. */
void cli_notes_say(const struct cli *c, const char *name, char *const *notes, size_t n);

/* --bad-map FILE (cli_badmap.c), before any work: refused when FILE is the
 * input j, the compare target (tst, or NULL), the output (cli_out_is, or
 * stdout when c->to_stdout), not a regular file, or exists without -f;
 * else created under a temporary name beside it.  Nothing without
 * --bad-map.  0, or -1 (message printed, status 1: never the 2 of sectors
 * --rescue could not read). */
int cli_badmap_begin(struct cli *c, const struct cli_job *j, const struct stat *tst);

/* Write [0, total) with the ranges bad[0..n) as ddrescue's mapfile into
 * the file cli_badmap_begin() created, then give it its name; `what` goes
 * in its header comment.  False (message printed, status 1) when it cannot
 * be written: nothing is left under either name. */
struct sp_range;
bool cli_badmap_write(struct cli *c, uint64_t total, const struct sp_range *bad, size_t n,
                      const char *what);

/* Remove the map's temporary file if it was not written (a run that failed
 * before it). */
void cli_badmap_end(void);

/* The union of two range lists, sorted, overlaps and touching ranges
 * joined: malloc'd (*n ranges), NULL when *n is 0 or out of memory. */
struct sp_range *cli_ranges_union(const struct sp_range *a, size_t na, const struct sp_range *b,
                                  size_t nb, size_t *n);

/* "NAME: B bytes in N ranges WHAT (first at offset X)": a warning (status
 * 2) with warn, else a note shown only with -v; with -v each range too
 * ("NAME: bad OFF+LEN", 100 at most; -vv all).  Nothing when n is 0. */
void cli_bad_report(struct cli *c, const char *name, const struct sp_range *bad, size_t n,
                    const char *what, bool warn);

/* Whether a progress line is shown (cli_prog_start's `show`): --progress,
 * or stderr a terminal unless the run writes to stdout on a terminal (-dc);
 * never with -q or --no-progress. */
bool cli_progress_wanted(const struct cli *c);

#endif
