/* spigz.c — the command line: options (gzip's and pigz's, plus spigz's own),
 * help, version, and the loop over inputs.  See cli.h for what the CLI
 * guarantees; cmd_compress.c and cmd_decompress.c handle one input each.
 */
#include "config.h"
#include "cli.h"
#include "compress.h"
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
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
"  -c, --stdout, --to-stdout  write to standard output, keep input files\n"
"  -o, --output OUT     write to OUT (one input), keep the input\n"
"  -d, --decompress     decompress (any gzip file; spigz files in parallel)\n"
"  -t, --test           check compressed files\n"
"  -l, --list           list compressed and uncompressed sizes\n"
"  -k, --keep           keep (don't delete) input files\n"
"  -f, --force          overwrite outputs; compress links and files with links;\n"
"                       with -dc, copy data that is not gzip unchanged\n"
"  -0 ... -9            compression level (default 6); -10 ... -12 with\n"
"                       libdeflate; --fast is -1, --best is -9\n"
"  -p, --processes N    threads (default: online CPUs)\n"
"  -b, --blocksize KiB  data chunk size in KiB (default 1024)\n"
"      --zero-run KiB   shortest zero run coded as a zero run (default %u)\n"
"      --no-index       compress without the index; decompress without using it\n"
"      --sparse=WHEN    leave holes for zero blocks when decompressing: auto\n"
"                       (regular files; the default), always, never\n"
"      --estimate[=full]  write nothing; predict the compressed size, the\n"
"                       zero/data split and the time, from a sample of the\n"
"                       input (full: read every block, sample the compression)\n"
"      --map            write nothing; draw where data and zeros lie\n"
"      --seed N         the estimate's sample (default 1)\n"
"      --format=FMT     estimate and map output: text (default), json, kv\n"
"      --progress       show progress on stderr even when it is not a terminal\n"
"      --no-progress    never show progress (the default when stderr is not a\n"
"                       terminal)\n"
"      --range OFF:LEN  decompress only LEN bytes from offset OFF (K, M, G, T\n"
"                       suffixes: powers of 1024; LEN may be 'end')\n"
"  -n, --no-name        compress: do not store the name and time stamp;\n"
"                       decompress: do not restore them (the default)\n"
"  -N, --name           compress: store them (the default for files);\n"
"                       decompress: restore them\n"
"  -S, --suffix SUF     use suffix SUF instead of .gz\n"
"  -v, --verbose        report each file\n"
"  -q, --quiet          suppress warnings\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and the data engine and exit\n"
"\n"
"Block and character devices are read by name and never removed; they need\n"
"-c or -o.  Exit status: 0 success, 1 error, 2 warning.\n",
        cli_prog, (unsigned)(CMP_ZMIN_DEFAULT >> 10));
}

static void cli_version(void)
{
    printf("%s %s\ndata engine: %s; zlib %s\n", PACKAGE_NAME, PACKAGE_VERSION,
           eng_name(), zlibVersion());
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

/* A byte count with an optional K, M, G or T (powers of 1024); -1 if bad. */
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
        const char *units = "KMGT";
        const char *u = strchr(units, *p & ~0x20);
        if (u == NULL || *p == '\0' || p + 1 != end)
            return -1;
        shift = 10 * (int)(u - units + 1);
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
    {"estimate", KEY_ESTIMATE, OPT_OPTIONAL}, {"map", KEY_MAP, OPT_NONE},
    {"seed", KEY_SEED, OPT_ARG},    {"format", KEY_FORMAT, OPT_ARG},
    {"progress", KEY_PROGRESS, OPT_NONE}, {"no-progress", KEY_NO_PROGRESS, OPT_NONE},
};

static bool cli_takes_arg(char key)
{
    return key == 'o' || key == 'p' || key == 'b' || key == 'S' || key == KEY_ZERO_RUN ||
           key == KEY_SPARSE || key == KEY_RANGE || key == KEY_SEED || key == KEY_FORMAT;
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
    case 'p': c->threads = (unsigned)cli_number("-p", arg, 1, 1024); break;
    case 'b': c->chunk_kib = cli_number("-b", arg, 32, 512u << 10); break;
    case KEY_ZERO_RUN: c->zmin_kib = cli_number("--zero-run", arg, 4, 1u << 20); break;
    case KEY_NO_INDEX: c->index = false; break;
    case KEY_SPARSE: cli_sparse(c, arg); break;
    case KEY_RANGE: cli_range(c, arg); break;
    case KEY_ESTIMATE: cli_estimate(c, arg); break;
    case KEY_MAP: c->est_map = true; c->mode = MODE_ESTIMATE; break;
    case KEY_SEED: c->seed = cli_number("--seed", arg, 0, UINT64_MAX); break;
    case KEY_FORMAT: cli_format(c, arg); break;
    case KEY_PROGRESS: /* --no-progress wins whatever the order, as -q */
        if (c->progress != PROGRESS_OFF)
            c->progress = PROGRESS_ON;
        break;
    case KEY_NO_PROGRESS: c->progress = PROGRESS_OFF; break;
    case 'n': c->store_name = false; c->name_set = true; break;
    case 'N': c->store_name = true; c->name_set = true; break;
    case 'S': c->suffix = arg; break;
    case 'v': c->verbose++; c->quiet = false; break;
    case 'q': c->quiet = true; c->verbose = 0; break;
    case 'h': cli_help(); exit(EXIT_OK);
    case 'V': cli_version(); exit(EXIT_OK);
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
            int lvl = 0;
            while (*s >= '0' && *s <= '9' && lvl < 100)
                lvl = lvl * 10 + (*s++ - '0');
            if (lvl > eng_max_level())
                cli_usage_error("level %d is not available (engine %s: 0..%d)",
                                lvl, eng_name(), eng_max_level());
            c->level = lvl;
            continue;
        }
        char key = *s++;
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
    if (c->suffix[0] == '\0' || strchr(c->suffix, '/') != NULL)
        cli_usage_error("invalid suffix '%s'", c->suffix);
    if (c->output != NULL && (c->to_stdout || nfiles > 1))
        cli_usage_error("-o takes one input and excludes -c");
    if (c->output != NULL && (c->mode == MODE_TEST || c->mode == MODE_LIST))
        cli_usage_error("-o makes no sense with -t or -l");
    if (c->range && c->mode != MODE_DECOMPRESS)
        cli_usage_error("--range needs -d");
    if (c->range && !c->to_stdout && c->output == NULL)
        cli_usage_error("--range needs -c or -o");
    if (c->mode == MODE_ESTIMATE && (c->output != NULL || c->to_stdout))
        cli_usage_error("--estimate and --map write no output: -c and -o make no sense");
}

/* gzip refuses to write compressed data to a terminal, or to read it from one. */
static bool cli_terminal_refused(const struct cli *c, char **files, int nfiles)
{
    if (c->force)
        return false;
    bool uses_stdin = nfiles == 0;
    for (int i = 0; i < nfiles; i++)
        uses_stdin = uses_stdin || strcmp(files[i], "-") == 0;
    if (c->mode == MODE_ESTIMATE)
        return false; /* reads anything, writes only a report */
    if (c->mode == MODE_COMPRESS) {
        bool uses_stdout = c->output == NULL && (c->to_stdout || uses_stdin);
        if (uses_stdout && isatty(STDOUT_FILENO)) {
            cli_msg("compressed data not written to a terminal. Use -f to force compression.");
            fprintf(stderr, "For help, type: %s -h\n", cli_prog);
            return true;
        }
    } else if (uses_stdin && isatty(STDIN_FILENO)) {
        cli_msg("compressed data not read from a terminal. Use -f to force decompression.");
        fprintf(stderr, "For help, type: %s -h\n", cli_prog);
        return true;
    }
    return false;
}

/* A closed 0, 1 or 2 would be reused by the first open(): the input would
 * become "stdout".  Occupy them with /dev/null opened so that using them fails
 * as it would have (reads give EOF, writes EBADF). */
static void cli_reserve_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int nfd = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            if (nfd >= 0 && nfd != fd)
                close(nfd);
        }
}

int main(int argc, char **argv)
{
    cli_reserve_std_fds();
    struct cli c = {.level = 6, .store_name = true, .index = true, .suffix = ".gz",
                    .chunk_kib = CMP_CHUNK_DEFAULT >> 10,
                    .zmin_kib = CMP_ZMIN_DEFAULT >> 10, .sparse = OSINK_SPARSE_AUTO,
                    .seed = 1};
    char **files = calloc((size_t)argc + 1, sizeof *files);
    if (files == NULL) {
        cli_msg("out of memory");
        return EXIT_ERR;
    }
    int nfiles = cli_parse(&c, argc, argv, files);
    cli_validate(&c, nfiles);
    /* Decompression stores no name by default; -N asks to restore it. */
    if (c.mode != MODE_COMPRESS && c.mode != MODE_ESTIMATE && !c.name_set)
        c.store_name = false;
    if (cli_terminal_refused(&c, files, nfiles)) {
        free(files);
        return EXIT_ERR;
    }
    cli_signals_install();
    void (*run)(struct cli *, const char *) =
        c.mode == MODE_COMPRESS ? cmd_compress
        : c.mode == MODE_ESTIMATE ? cmd_estimate : cmd_decompress;
    if (nfiles == 0)
        run(&c, NULL);
    for (int i = 0; i < nfiles; i++)
        run(&c, files[i]);
    if (c.mode == MODE_LIST)
        cmd_list_totals(&c);
    free(files);
    if (fflush(stdout) != 0)
        cli_error(&c, "stdout: %s", strerror(errno));
    return c.status;
}
