/* cli_options.c — the command line's options: gzip's and pigz's, plus
 * spigz's own, from GZIP and from argv; their values checked; --help,
 * --version, --license.  See cli_options.h. */
#include "config.h"
#include "cli.h"
#include "cli_progress.h"
#include "cli_options.h"
#include "compress.h"
#include "engine.h"
#include "lay.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static void cli_help(void)
{
    printf(
"Usage: %s [OPTION]... [FILE]...\n"
"Compress or decompress FILEs, devices or standard input in the gzip format,\n"
"fast on disk images that are mostly zeros: zero runs cost almost nothing,\n"
"holes are never read, and restores are parallel and sparse.\n"
"With no FILE, or when FILE is -, read standard input and write standard output.\n"
"\n"
"Backup (the default: compress):\n"
"  -0 ... -9            compression level (default 6); -10 ... -12 with\n"
"                       libdeflate; --fast is -1, --best is -9; -V shows\n"
"                       which library makes each level\n"
"  -p, --processes N    threads, 1..1024 (default, and 0: online CPUs)\n"
"  -b, --blocksize KiB  data chunk size in KiB (default 1024)\n"
"      --zero-run KiB   shortest zero run coded as a zero run (default %u)\n"
"      --rsyncable      end data chunks where the content says, so that a\n"
"                       change moves only the compressed bytes near it\n"
"      --no-index       compress without the index; decompress without using it\n"
"  -n, --no-name        compress: do not store the name and time stamp, nor\n"
"                       the host and source in the manifest; decompress: do\n"
"                       not restore them (the default)\n"
"  -N, --name           compress: store them (the default for files);\n"
"                       decompress: restore them\n"
"  -m, -M               the time stamp alone, as -n and -N\n"
"\n"
"Restore:\n"
"  -d, --decompress     decompress (any gzip file; spigz files in parallel)\n"
"      --range OFF:LEN  decompress only LEN bytes from offset OFF (K, M, G, T\n"
"                       suffixes: powers of 1024; LEN may be 'end'); a range\n"
"                       past the end of the image is an error\n"
"      --partition N    decompress only the image's partition N, numbered as\n"
"                       the kernel numbers them (GPT; MBR, logicals from 5)\n"
"      --sparse=WHEN    leave holes for zero blocks when decompressing: auto\n"
"                       (regular files; the default), always, never\n"
"      --salvage        decompress: restore every intact part of a damaged file,\n"
"                       damaged ranges as zeros, listed (status 1)\n"
"\n"
"Inspect and verify:\n"
"  -t, --test           check compressed files (and a backup's image digest)\n"
"  -l, --list           list compressed and uncompressed sizes, and a backup's\n"
"                       manifest: source, options, partitions, filesystems\n"
"      --compare BACKUP TARGET  write nothing; compare the backup's content with\n"
"                       a file, device or FIFO: status 0 identical,\n"
"                       1 different, 2 trouble (as cmp); what a --free=zero\n"
"                       backup's free map calls free is not compared\n"
"      --estimate[=full]  write nothing; predict the compressed size, the\n"
"                       zero/data split and the time, from a sample of the\n"
"                       input (full: read every block, sample the compression)\n"
"      --map            write nothing; draw where data and zeros lie\n"
"      --seed N         the estimate's sample (default 1)\n"
"      --mount BACKUP DIR  serve the backup read-only under DIR, without\n"
"                       restoring it: DIR/disk (the image) and DIR/p1, p2...\n"
"                       (its partitions); a daemon, -f in the foreground;\n"
"                       ends with fusermount3 -u DIR\n"
"      --cache=SIZE     --mount: decoded pieces kept in memory (default 64M)\n"
"      --index-file=PATH  for --mount and --export-index=FMT: a gzip file\n"
"                       without spigz's index gets one built in one pass,\n"
"                       saved at PATH (by default FILE.gz.gzx beside it, if\n"
"                       the folder is writable), reused while it matches\n"
"      --export-index=FMT  write the index of a gzip FILE for another tool:\n"
"                       gztool (to FILE.gzi), indexed_gzip (to FILE.gzidx);\n"
"                       -o OUT or -c to choose; nothing is decompressed\n"
"\n"
"Disks:\n"
"      --free=zero      code the blocks each filesystem of a disk, partition\n"
"                       or image calls free as zeros, unread (ext2/3/4, NTFS,\n"
"                       FAT, exFAT, swap; others are read whole); restored,\n"
"                       free space is zeros.  --free=keep (the default)\n"
"                       reads every byte as it is\n"
"      --force-mounted  with --free=zero, map a filesystem mounted read-write\n"
"      --exclude=volatile  with --free=zero, store Windows' pagefile.sys,\n"
"                       hiberfil.sys and swapfile.sys as zeros (NTFS: the files\n"
"                       stay, with their sizes; Windows recreates them)\n"
"      --rescue         survive read errors: retry down to the sector, code\n"
"                       what stays unreadable as zeros and list it (status 2)\n"
"      --bad-map FILE   write the unreadable (--rescue) or damaged (--salvage)\n"
"                       ranges as a GNU ddrescue mapfile; never over an input,\n"
"                       the output or (without -f) an existing file: refused\n"
"                       with status 1 (2 with --compare), as a map that\n"
"                       cannot be written\n"
"      --nocache        drop what was read from the page cache (devices always)\n"
"      --discard        decompress onto a device: zero spans by discard, where\n"
"                       the device guarantees that discarded blocks read as zeros\n"
"      --direct         decompress onto a device past the page cache (O_DIRECT)\n"
"\n"
"Output and reports:\n"
"  -c, --stdout, --to-stdout  write to standard output, keep input files\n"
"  -o, --output OUT     write to OUT (one input; - is stdout), keep the input\n"
"  -k, --keep           keep (don't delete) input files\n"
"  -r, --recursive      operate on the files in directories, recursively\n"
"  -f, --force          overwrite outputs; compress links and files with links;\n"
"                       with -dc, copy data that is not gzip unchanged\n"
"  -S, --suffix SUF     use suffix SUF instead of .gz\n"
"      --synchronous    sync each output file and its directory (safer, slower)\n"
"  -v, --verbose        report each file\n"
"  -q, --quiet, --silent  suppress warnings\n"
"      --format=FMT     estimate, map, -l, --compare and end-of-run report:\n"
"                       text (the default), json, kv; json and kv report each\n"
"                       file done on stderr\n"
"      --progress[=log[:N|:N%%]]  show progress on stderr even when it is not a\n"
"                       terminal; log: a plain line every 10%% (N seconds, N%%)\n"
"      --no-progress    never show progress (the default when stderr is not a\n"
"                       terminal)\n"
"      --size N         the input's size for the progress line (K, M, G, T\n"
"                       suffixes), for a pipe, which has none: percent and ETA\n"
"  -a, --ascii          accepted and ignored, as gzip here\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and the data engine and exit\n"
"  -L, --license        show the license and exit\n"
"\n"
"Examples:\n"
"  spigz -c /dev/sda > sda.img.gz          back up a disk\n"
"  spigz --free=zero -c /dev/sda > sda.gz  free space coded as zeros, unread\n"
"  spigz --estimate /dev/sda               its size and time, before starting\n"
"  spigz -d -o /dev/sdb sda.img.gz         restore (refused if sdb is in use)\n"
"  spigz -dc --range 1M:9M sda.img.gz > p  9 MiB of it, through the index\n"
"  spigz --mount sda.img.gz /mnt/b         open it without restoring it\n"
"\n"
"Block and character devices are read by name and never removed; they need\n"
"-c or -o.  An existing device or FIFO given to -o is written into.\n"
"Decompression reads gzip, pack (.z) and compress (.Z) input, as gzip does.\n"
"GZIP in the environment may hold -1..-9, -n, -N, -q, -v, --fast, --best,\n"
"--rsyncable, as for gzip.  Exit status: 0 success, 1 error, 2 warning.\n",
        cli_prog, (unsigned)(CMP_ZMIN_DEFAULT >> 10));
}

static void cli_version(void)
{
    printf("%s %s\n"
           "Copyright (C) 2026 the spigz authors.\n"
           "This is free software under the zlib license (%s -L shows it).\n"
           "There is NO WARRANTY, to the extent permitted by law.\n"
           "engines: %s; zlib %s\n",
           PACKAGE_NAME, PACKAGE_VERSION, cli_prog, eng_name(), zlibVersion());
    /* Which library makes each level's pieces (engine.h). */
    for (int l = 0; l <= eng_max_level(); l++) {
        const char *d = eng_level_desc(l);
        printf("  level %2d: %s\n", l, d != NULL ? d : "not in this build (no ISA-L)");
    }
    printf("--free=zero: %s\n", lay_filesystems());
#ifdef HAVE_FUSE3
    printf("--mount: libfuse3\n");
#else
    printf("--mount: not in this build (no libfuse3)\n");
#endif
}

static void cli_license(void)
{
    printf("%s %s\n"
           "Copyright (C) 2026 the spigz authors.\n"
           "\n"
           "This software is provided 'as-is', without any express or implied\n"
           "warranty.  In no event will the authors be held liable for any damages\n"
           "arising from the use of this software.\n"
           "\n"
           "Permission is granted to anyone to use this software for any purpose,\n"
           "including commercial applications, and to alter it and redistribute it\n"
           "freely, subject to the following restrictions:\n"
           "\n"
           "1. The origin of this software must not be misrepresented; you must not\n"
           "   claim that you wrote the original software. If you use this software\n"
           "   in a product, an acknowledgment in the product documentation would be\n"
           "   appreciated but is not required.\n"
           "2. Altered source versions must be plainly marked as such, and must not be\n"
           "   misrepresented as being the original software.\n"
           "3. This notice may not be removed or altered from any source distribution.\n",
           PACKAGE_NAME, PACKAGE_VERSION);
}

/* After --help, --version or --license: status 1 if stdout took it badly
 * (full, closed), as gzip. */
static void cli_exit_printed(void) __attribute__((noreturn));
static void cli_exit_printed(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_msg("stdout: %s", strerror(errno != 0 ? errno : EIO));
        exit(EXIT_ERR);
    }
    exit(EXIT_OK);
}

static void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", cli_prog);
    va_end(ap);
    exit(EXIT_ERR);
}

/* ---- option values ---- */

static uint64_t cli_number(const char *opt, const char *s, uint64_t lo, uint64_t hi)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < lo || v > hi)
        cli_usage_error("invalid %s value '%s' (expected %llu..%llu)", opt, s,
                        (unsigned long long)lo, (unsigned long long)hi);
    return v;
}

/* A byte count s[0..end) with an optional K, M, G or T (powers of 1024)
 * and nothing else; -1 if bad or over 64 bits. */
static int cli_size(const char *s, const char *end, uint64_t *v)
{
    uint64_t x = 0;
    const char *p = s;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (x > (UINT64_MAX - 9) / 10)
            return -1;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    if (p == s)
        return -1;
    int shift = 0;
    if (p < end) {
        static const char units[] = "KMGT";
        int u = 0;
        while (u < 4 && (*p | 0x20) != (units[u] | 0x20))
            u++;
        if (u == 4 || p + 1 != end)
            return -1;
        shift = 10 * (u + 1);
    }
    if (shift > 0 && x > (UINT64_MAX >> shift))
        return -1;
    *v = x << shift;
    return 0;
}

static void cli_range(struct cli *c, const char *s)
{
    const char *colon = strchr(s, ':');
    if (colon == NULL || cli_size(s, colon, &c->range_off) != 0)
        cli_usage_error("invalid --range '%s' (expected OFFSET:LENGTH)", s);
    if (strcmp(colon + 1, "end") == 0)
        c->range_len = UINT64_MAX;
    else if (cli_size(colon + 1, colon + 1 + strlen(colon + 1), &c->range_len) != 0)
        cli_usage_error("invalid --range '%s' (expected OFFSET:LENGTH)", s);
    c->range = true;
}

static void cli_sparse(struct cli *c, const char *s)
{
    if (strcmp(s, "auto") == 0)
        c->sparse = OSINK_SPARSE_AUTO;
    else if (strcmp(s, "always") == 0)
        c->sparse = OSINK_SPARSE_ALWAYS;
    else if (strcmp(s, "never") == 0)
        c->sparse = OSINK_SPARSE_NEVER;
    else
        cli_usage_error("invalid --sparse '%s' (expected auto, always or never)", s);
}

/* --free=keep (the default: free space read as it is) or zero. */
static void cli_free(struct cli *c, const char *s)
{
    const char *why;
    if (strcmp(s, "keep") == 0)
        c->free_zero = false;
    else if (strcmp(s, "zero") != 0)
        cli_usage_error("invalid --free '%s' (expected zero or keep)", s);
    else if (!lay_available(&why))
        cli_usage_error("%s", why);
    else
        c->free_zero = true;
}

/* ---- option parsing ---- */

enum { OPT_NONE, OPT_ARG, OPT_OPTIONAL };

struct cli_long {
    const char *name;
    char key;      /* equivalent short option, or a private code */
    int arg;
};

#define KEY_ZERO_RUN 1
#define KEY_FAST 2
#define KEY_BEST 3
#define KEY_NO_INDEX 4
#define KEY_SPARSE 5
#define KEY_RANGE 6
#define KEY_ESTIMATE 7
#define KEY_MAP 8
#define KEY_SEED 9
#define KEY_FORMAT 10
#define KEY_PROGRESS 11
#define KEY_NO_PROGRESS 12
#define KEY_RSYNCABLE 13
#define KEY_FREE 14
#define KEY_FORCE_MOUNTED 15
#define KEY_RESCUE 16
#define KEY_BAD_MAP 17
#define KEY_NOCACHE 18
#define KEY_SALVAGE 19
#define KEY_DISCARD 20
#define KEY_COMPARE 21
#define KEY_DIRECT 22
#define KEY_SIZE 23
#define KEY_EXPORT_INDEX 24
#define KEY_SYNCHRONOUS 25
#define KEY_MOUNT 26
#define KEY_CACHE 27
#define KEY_INDEX_FILE 28
#define KEY_PARTITION 29
#define KEY_EXCLUDE 30

static const struct cli_long cli_longs[] = {
    {"stdout", 'c', OPT_NONE},      {"to-stdout", 'c', OPT_NONE},
    {"output", 'o', OPT_ARG},       {"keep", 'k', OPT_NONE},
    {"force", 'f', OPT_NONE},       {"processes", 'p', OPT_ARG},
    {"blocksize", 'b', OPT_ARG},    {"zero-run", KEY_ZERO_RUN, OPT_ARG},
    {"no-name", 'n', OPT_NONE},     {"name", 'N', OPT_NONE},
    {"suffix", 'S', OPT_ARG},       {"verbose", 'v', OPT_NONE},
    {"quiet", 'q', OPT_NONE},       {"help", 'h', OPT_NONE},
    {"version", 'V', OPT_NONE},     {"fast", KEY_FAST, OPT_NONE},
    {"best", KEY_BEST, OPT_NONE},   {"decompress", 'd', OPT_NONE},
    {"uncompress", 'd', OPT_NONE},  {"test", 't', OPT_NONE},
    {"list", 'l', OPT_NONE},        {"no-index", KEY_NO_INDEX, OPT_NONE},
    {"sparse", KEY_SPARSE, OPT_ARG}, {"range", KEY_RANGE, OPT_ARG},
    {"partition", KEY_PARTITION, OPT_ARG},
    {"estimate", KEY_ESTIMATE, OPT_OPTIONAL}, {"map", KEY_MAP, OPT_NONE},
    {"seed", KEY_SEED, OPT_ARG},    {"format", KEY_FORMAT, OPT_ARG},
    {"progress", KEY_PROGRESS, OPT_OPTIONAL}, {"no-progress", KEY_NO_PROGRESS, OPT_NONE},
    {"recursive", 'r', OPT_NONE},   {"license", 'L', OPT_NONE},
    {"rsyncable", KEY_RSYNCABLE, OPT_NONE},
    {"free", KEY_FREE, OPT_ARG},     {"force-mounted", KEY_FORCE_MOUNTED, OPT_NONE},
    {"exclude", KEY_EXCLUDE, OPT_ARG},
    {"rescue", KEY_RESCUE, OPT_NONE}, {"bad-map", KEY_BAD_MAP, OPT_ARG},
    {"nocache", KEY_NOCACHE, OPT_NONE}, {"salvage", KEY_SALVAGE, OPT_NONE},
    {"discard", KEY_DISCARD, OPT_NONE}, {"compare", KEY_COMPARE, OPT_NONE},
    {"direct", KEY_DIRECT, OPT_NONE}, {"size", KEY_SIZE, OPT_ARG},
    {"export-index", KEY_EXPORT_INDEX, OPT_ARG},
    {"silent", 'q', OPT_NONE},      {"ascii", 'a', OPT_NONE},
    {"synchronous", KEY_SYNCHRONOUS, OPT_NONE},
    {"mount", KEY_MOUNT, OPT_NONE}, {"cache", KEY_CACHE, OPT_ARG},
    {"index-file", KEY_INDEX_FILE, OPT_ARG},
};

/* The longest -S suffix gzip takes. */
#define CLI_SUFFIX_MAX 30

/* The short options. */
#define CLI_SHORTS "cobpSdtlkfnNvqhVLrmMa"

static bool cli_takes_arg(char key)
{
    return key == 'o' || key == 'p' || key == 'b' || key == 'S' || key == KEY_ZERO_RUN ||
           key == KEY_SPARSE || key == KEY_RANGE || key == KEY_PARTITION || key == KEY_SEED || key == KEY_FORMAT ||
           key == KEY_BAD_MAP || key == KEY_SIZE || key == KEY_EXPORT_INDEX || key == KEY_CACHE ||
           key == KEY_INDEX_FILE;
}

static void cli_estimate(struct cli *c, const char *arg)
{
    if (arg == NULL || strcmp(arg, "sample") == 0)
        c->est_full = false;
    else if (strcmp(arg, "full") == 0)
        c->est_full = true;
    else
        cli_usage_error("invalid --estimate '%s' (expected sample or full)", arg);
    c->est_size = true;
    c->mode = MODE_ESTIMATE;
}

/* --progress[=line|log[:N|:N%]]: the live line (the default), or plain
 * lines for logs every N seconds (60) or N percent. */
static void cli_progress_kind(const char *arg)
{
    struct cli_prog_log log = {.prog = cli_prog, .every_pct = 10};
    if (arg == NULL || strcmp(arg, "line") == 0) {
        cli_prog_set_log(&log); /* off */
        return;
    }
    log.on = true;
    if (strcmp(arg, "log") != 0) {
        char *end;
        if (strncmp(arg, "log:", 4) != 0 || arg[4] < '1' || arg[4] > '9')
            cli_usage_error("invalid --progress '%s' (expected line, log, log:SECONDS or "
                            "log:PERCENT%%)", arg);
        unsigned long v = strtoul(arg + 4, &end, 10);
        if (strcmp(end, "%") == 0 && v <= 100) {
            log.every_pct = (unsigned)v;
        } else if (*end == '\0' && v <= 86400) {
            log.every_pct = 0;
            log.every_s = (unsigned)v;
        } else {
            cli_usage_error("invalid --progress '%s' (expected line, log, log:SECONDS up to "
                            "86400 or log:PERCENT%% up to 100%%)", arg);
        }
    }
    cli_prog_set_log(&log);
}

static void cli_format(struct cli *c, const char *arg)
{
    if (strcmp(arg, "text") == 0)
        c->format = FORMAT_TEXT;
    else if (strcmp(arg, "json") == 0)
        c->format = FORMAT_JSON;
    else if (strcmp(arg, "kv") == 0)
        c->format = FORMAT_KV;
    else
        cli_usage_error("invalid --format '%s' (expected text, json or kv)", arg);
}

/* Whether the options being parsed come from the GZIP environment variable.
 * gzip 1.12 accepts only the levels and -n -N -q -v --fast --best
 * --rsyncable there (the others could change what a script's gzip command
 * does to its files); spigz accepts the same, its levels 0-12 included. */
static bool cli_in_env;

static void cli_env_check(char key, const char *spelled)
{
    bool ok = key == 'n' || key == 'N' || key == 'q' || key == 'v' || key == KEY_FAST ||
              key == KEY_BEST || key == KEY_RSYNCABLE;
    if (cli_in_env && !ok)
        cli_usage_error("%s: option not valid in GZIP environment variable", spelled);
}

static void cli_apply(struct cli *c, char key, const char *arg)
{
    switch (key) {
    case 'c': c->to_stdout = true; break;
    case 'o': c->output = arg; break;
    case 'd': c->mode = MODE_DECOMPRESS; break;
    case 't': c->mode = MODE_TEST; break;
    case 'l': c->mode = MODE_LIST; break;
    case 'k': c->keep = true; break;
    case 'f': c->force = true; break;
    case 'p': /* 0: every online CPU (zstd's -T0), as when -p is not given */
        c->threads = (unsigned)cli_number("-p", arg, 0, 1024);
        break;
    case 'b': c->chunk_kib = cli_number("-b", arg, 32, 512u << 10); break;
    case KEY_ZERO_RUN: c->zmin_kib = cli_number("--zero-run", arg, 4, 1u << 20); break;
    case KEY_NO_INDEX: c->index = false; break;
    case KEY_SPARSE: cli_sparse(c, arg); break;
    case KEY_RANGE: cli_range(c, arg); break;
    case KEY_PARTITION: c->partition = (unsigned)cli_number("--partition", arg, 1, 256); break;
    case KEY_ESTIMATE: cli_estimate(c, arg); break;
    case KEY_MAP: c->est_map = true; c->mode = MODE_ESTIMATE; break;
    case KEY_SEED: c->seed = cli_number("--seed", arg, 0, UINT64_MAX); break;
    case KEY_FORMAT: cli_format(c, arg); break;
    case KEY_PROGRESS: /* --no-progress wins whatever the order, as -q */
        cli_progress_kind(arg);
        if (c->progress != PROGRESS_OFF)
            c->progress = PROGRESS_ON;
        break;
    case KEY_NO_PROGRESS: c->progress = PROGRESS_OFF; break;
    case 'n': c->store_name = c->store_time = false; c->name_set = c->time_set = true; break;
    case 'N': c->store_name = c->store_time = true; c->name_set = c->time_set = true; break;
    case 'm': c->store_time = false; c->time_set = true; break;
    case 'M': c->store_time = true; c->time_set = true; break;
    case 'a': c->ascii = true; break; /* gzip's --ascii: no conversion here */
    case KEY_SYNCHRONOUS: c->synchronous = true; break;
    case 'S': c->suffix = arg; break;
    case 'v': c->verbose++; c->quiet = false; break;
    case 'q': c->quiet = true; c->verbose = 0; break;
    case 'h': cli_help(); cli_exit_printed();
    case 'V': cli_version(); cli_exit_printed();
    case 'L': cli_license(); cli_exit_printed();
    case 'r': c->recursive = true; break;
    case KEY_RSYNCABLE: c->rsyncable = true; break;
    case KEY_FREE: cli_free(c, arg); break;
    case KEY_FORCE_MOUNTED: c->force_mounted = true; break;
    case KEY_EXCLUDE: /* one kind so far: Windows' volatile files */
        if (strcmp(arg, "volatile") != 0)
            cli_usage_error("invalid --exclude '%s' (expected volatile)", arg);
        c->exclude_volatile = true;
        break;
    case KEY_RESCUE: c->rescue = true; break;
    case KEY_BAD_MAP: c->bad_map = arg; break;
    case KEY_NOCACHE: c->nocache = true; break;
    case KEY_SALVAGE: c->salvage = true; break;
    case KEY_DISCARD: c->discard = true; break;
    case KEY_COMPARE: c->mode = MODE_COMPARE; break;
    case KEY_DIRECT: c->direct = true; break;
    case KEY_EXPORT_INDEX:
        if (xidx_parse_fmt(arg, &c->export_fmt) != 0)
            cli_usage_error("invalid --export-index '%s' (expected gztool or indexed_gzip)", arg);
        c->mode = MODE_EXPORT;
        break;
    case KEY_MOUNT: c->mode = MODE_MOUNT; break;
    case KEY_INDEX_FILE: c->index_file = arg; break;
    case KEY_CACHE:
        if (cli_size(arg, arg + strlen(arg), &c->cache_bytes) != 0 || c->cache_bytes == 0)
            cli_usage_error("invalid --cache '%s' (expected a byte count, K, M, G or T "
                            "suffix)", arg);
        break;
    case KEY_SIZE: /* as pv -s: the display's total for an input that has none */
        if (cli_size(arg, arg + strlen(arg), &c->size) != 0 || c->size == 0)
            cli_usage_error("invalid --size '%s' (expected a byte count, K, M, G or T "
                            "suffix)", arg);
        break;
    case KEY_FAST: c->level = 1; break;
    case KEY_BEST: c->level = 9; break;
    default: cli_usage_error("invalid option -- '%c'", key);
    }
}

/* "--name[=value]" (a unique prefix is enough, as getopt_long): returns the
 * index of the next argument. */
static int cli_parse_long(struct cli *c, int argc, char **argv, int i)
{
    const char *s = argv[i] + 2;
    const char *eq = strchr(s, '=');
    size_t len = eq != NULL ? (size_t)(eq - s) : strlen(s);
    const struct cli_long *hit = NULL;
    int hits = 0;
    for (size_t k = 0; k < sizeof cli_longs / sizeof cli_longs[0]; k++) {
        if (strncmp(cli_longs[k].name, s, len) != 0)
            continue;
        if (strlen(cli_longs[k].name) == len) { /* exact beats prefixes */
            hit = &cli_longs[k];
            hits = 1;
            break;
        }
        if (hit == NULL || hit->key != cli_longs[k].key)
            hits++;
        hit = &cli_longs[k];
    }
    if (hits != 1)
        cli_usage_error("%s option '%s'", hits == 0 ? "unrecognized" : "ambiguous", argv[i]);
    char spelled[64];
    snprintf(spelled, sizeof spelled, "--%s", hit->name);
    cli_env_check(hit->key, spelled);
    const char *arg = NULL;
    if (hit->arg == OPT_ARG) {
        if (eq != NULL)
            arg = eq + 1;
        else if (i + 1 < argc)
            arg = argv[++i];
        else
            cli_usage_error("option '--%s' requires an argument", hit->name);
    } else if (hit->arg == OPT_OPTIONAL) {
        arg = eq != NULL ? eq + 1 : NULL; /* only "--opt=value", as getopt_long */
    } else if (eq != NULL) {
        cli_usage_error("option '--%s' doesn't allow an argument", hit->name);
    }
    cli_apply(c, hit->key, arg);
    return i + 1;
}

/* "-kc9", "-p2", "-p 2", "-11": digits run together form one level, as pigz. */
static int cli_parse_short(struct cli *c, int argc, char **argv, int i)
{
    const char *s = argv[i] + 1;
    while (*s != '\0') {
        if (*s >= '0' && *s <= '9') {
            const char *d = s;
            while (*s >= '0' && *s <= '9')
                s++;
            /* Digits run together are one level, as pigz's -11. */
            int lvl = s - d > 2 ? 100 : atoi(d);
            if (lvl > eng_max_level())
                cli_usage_error("invalid compression level -%.*s (0..%d with %s)", (int)(s - d),
                                d, eng_max_level(), eng_name());
            c->level = lvl;
            continue;
        }
        char key = *s++;
        char spelled[3] = {'-', key, '\0'};
        if (strchr(CLI_SHORTS, key) == NULL)
            cli_usage_error("invalid option -- '%c'", key);
        cli_env_check(key, spelled);
        if (!cli_takes_arg(key)) {
            cli_apply(c, key, NULL);
            continue;
        }
        if (*s != '\0')
            cli_apply(c, key, s);
        else if (i + 1 < argc)
            cli_apply(c, key, argv[++i]);
        else
            cli_usage_error("option requires an argument -- '%c'", key);
        break;
    }
    return i + 1;
}

/* Options anywhere before "--", as gzip; returns the files in files[]. */
static int cli_parse(struct cli *c, int argc, char **argv, char **files)
{
    int n = 0;
    bool opts = true;
    for (int i = 1; i < argc;) {
        const char *a = argv[i];
        if (opts && strcmp(a, "--") == 0) {
            opts = false;
            i++;
        } else if (opts && a[0] == '-' && a[1] == '-') {
            i = cli_parse_long(c, argc, argv, i);
        } else if (opts && a[0] == '-' && a[1] != '\0') {
            i = cli_parse_short(c, argc, argv, i);
        } else {
            files[n++] = argv[i++];
        }
    }
    return n;
}

/* GZIP="-9 -n": options before the command line's, as gzip 1.12 takes
 * them (whitespace-separated, no operands, only the options it allows),
 * with its warning unless -q ends up in force. */
static void cli_parse_env(struct cli *c)
{
    const char *env = getenv("GZIP");
    if (env == NULL)
        return;
    char *copy = strdup(env);
    char **words = calloc(strlen(env) / 2 + 2, sizeof *words);
    if (copy == NULL || words == NULL)
        cli_usage_error("out of memory");
    int n = 1; /* words[0] stands for the program, as argv[0] */
    for (char *w = strtok(copy, " \t\n"); w != NULL; w = strtok(NULL, " \t\n"))
        words[n++] = w;
    cli_in_env = true;
    for (int i = 1; i < n;) {
        const char *a = words[i];
        if (strcmp(a, "--") == 0 || a[0] != '-' || a[1] == '\0')
            cli_usage_error("%s: %s in GZIP environment variable", a,
                            strcmp(a, "--") == 0 ? "option not valid" : "non-option");
        i = a[1] == '-' ? cli_parse_long(c, n, words, i) : cli_parse_short(c, n, words, i);
    }
    cli_in_env = false;
    /* gzip warns unless GZIP itself asks for quiet (a -q on the command
     * line comes too late to silence it) */
    if (n > 1 && !c->quiet)
        cli_msg("warning: GZIP environment variable is deprecated; use an alias or script");
    /* the strings stay referenced by options: never freed */
    free(words);
}

static unsigned cli_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (unsigned)n;
}

/* Checks that need all the options. */
static void cli_validate(struct cli *c, int nfiles)
{
    if (c->threads == 0)
        c->threads = cli_online_cpus();
    c->chunk_kib = (c->chunk_kib + 3) & ~(uint64_t)3; /* whole 4 KiB blocks */
    c->zmin_kib = (c->zmin_kib + 3) & ~(uint64_t)3;
    /* gzip 1.12 refuses a suffix over 30 bytes (its MAX_SUFFIX), in every
     * mode; a '/' is spigz's refusal (doc/GZIP.md) */
    if (c->suffix[0] == '\0' || strlen(c->suffix) > CLI_SUFFIX_MAX ||
        strchr(c->suffix, '/') != NULL)
        cli_usage_error("invalid suffix '%s'", c->suffix);
    /* Only compression makes pieces; a build without ISA-L has no -1 to -3
     * (engine.h) and says so rather than give other bytes under their names. */
    if ((c->mode == MODE_COMPRESS || c->mode == MODE_ESTIMATE) && eng_level_desc(c->level) == NULL)
        cli_usage_error("level %d is made by ISA-L, which this %s was built without "
                        "(configure --without-isal): use -4 or above", c->level, cli_prog);
    if (c->output != NULL && (c->to_stdout || nfiles > 1 || c->recursive))
        cli_usage_error("-o takes one input and excludes -c");
    if (c->output != NULL && (c->mode == MODE_TEST || c->mode == MODE_LIST))
        cli_usage_error("-o makes no sense with -t or -l");
    if (c->output != NULL && strcmp(c->output, "-") == 0) { /* -o -: stdout, as for operands */
        c->output = NULL;
        c->to_stdout = true;
    }
    if (c->mode == MODE_EXPORT && (nfiles > 1 || c->recursive) && (c->output || c->to_stdout))
        cli_usage_error("--export-index with -c or -o takes one input");
    if (c->partition != 0 && c->range)
        cli_usage_error("--partition and --range: one or the other");
    if (c->partition != 0 && (c->mode != MODE_DECOMPRESS || (!c->to_stdout && c->output == NULL)))
        cli_usage_error("--partition needs -d and -c or -o");
    if (c->partition != 0 && (nfiles > 1 || c->recursive))
        cli_usage_error("--partition takes one backup");
    if (c->range && c->mode != MODE_DECOMPRESS)
        cli_usage_error("--range needs -d");
    if (c->exclude_volatile && (!c->free_zero ||
                                (c->mode != MODE_COMPRESS && c->mode != MODE_ESTIMATE)))
        cli_usage_error("--exclude=volatile is for a backup (or an estimate) with --free=zero: "
                        "it reads the NTFS volumes' maps");
    if (c->range && !c->to_stdout && c->output == NULL)
        cli_usage_error("--range needs -c or -o");
    if (c->mode == MODE_ESTIMATE && (c->output != NULL || c->to_stdout))
        cli_usage_error("--estimate and --map write no output: -c and -o make no sense");
    if (c->mode == MODE_COMPARE && nfiles != 2)
        cli_usage_error("--compare takes a backup and the file or device to compare it with");
    if (c->mode == MODE_COMPARE && (c->output != NULL || c->to_stdout || c->range))
        cli_usage_error("--compare writes nothing: -c, -o and --range make no sense");
    if (c->mode == MODE_MOUNT && nfiles != 2)
        cli_usage_error("--mount takes a backup and the directory to mount it on");
    if (c->mode == MODE_MOUNT && (c->output != NULL || c->to_stdout || c->range || c->recursive))
        cli_usage_error("--mount writes nothing: -c, -o, -r and --range make no sense");
    if (c->cache_bytes != 0 && c->mode != MODE_MOUNT)
        cli_usage_error("--cache is for --mount");
    if (c->index_file != NULL && c->mode != MODE_MOUNT && c->mode != MODE_EXPORT)
        cli_usage_error("--index-file is for --mount and --export-index");
    if (c->index_file != NULL && c->mode == MODE_EXPORT && (nfiles > 1 || c->recursive))
        cli_usage_error("--index-file takes one input");
    if (c->rescue && c->mode != MODE_COMPRESS)
        cli_usage_error("--rescue is for compressing (decompress with --salvage)");
    if (c->salvage && c->mode != MODE_DECOMPRESS && c->mode != MODE_TEST)
        cli_usage_error("--salvage needs -d or -t");
    if (c->discard && c->mode != MODE_DECOMPRESS)
        cli_usage_error("--discard needs -d");
    if (c->direct && c->mode != MODE_DECOMPRESS)
        cli_usage_error("--direct needs -d");
    if (c->bad_map != NULL && c->mode == MODE_COMPRESS && !c->rescue)
        cli_usage_error("--bad-map needs --rescue when compressing");
    if (c->bad_map != NULL && (nfiles > (c->mode == MODE_COMPARE ? 2 : 1) || c->recursive))
        cli_usage_error("--bad-map takes one input");
    if (c->bad_map != NULL && c->mode != MODE_COMPRESS && c->mode != MODE_DECOMPRESS &&
        c->mode != MODE_TEST && c->mode != MODE_LIST && c->mode != MODE_COMPARE)
        cli_usage_error("--bad-map makes no sense with --estimate or --map");
    /* gzip 1.12 on a system without text files says so, once the options
     * are known (-a -q is silent), and goes on with status 0 */
    if (c->ascii && !c->quiet)
        cli_msg("option --ascii ignored on this system");
}

int cli_options(struct cli *c, int argc, char **argv, char **files)
{
    cli_parse_env(c);
    int nfiles = cli_parse(c, argc, argv, files);
    cli_validate(c, nfiles);
    /* Decompression restores no name or time by default; -N asks for both,
     * -M for the time (gzip's no_name and no_time). */
    if (c->mode != MODE_COMPRESS && c->mode != MODE_ESTIMATE && !c->name_set)
        c->store_name = false;
    if (c->mode != MODE_COMPRESS && c->mode != MODE_ESTIMATE && !c->time_set)
        c->store_time = false;
    return nfiles;
}
