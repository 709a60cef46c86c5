/* cmd_decompress.c — decompress (-d) and test (-t) one input, gzip's way:
 * FILE.gz -> FILE (suffix rules, -S, -N), -c, -o OUT, stdin; and what -l
 * (cmd_list.c) and --compare (cmd_compare.c) share with them
 * (cmd_decompress.h). */
#include "config.h"
#include "cli.h"
#include "cli_path.h"
#include "cli_progress.h"
#include "cli_report.h"
#include "cli_vol.h"
#include "cmd_decompress.h"
#include "dec.h"
#include "io.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void cd_larger_device(struct cli *c, const char *dev, int fd, uint64_t image,
                             uint64_t size);

/* ---- names ---- */

/* The output name for a compressed file name, gzip's way: strip the chosen
 * suffix or a known one (.tgz and .taz become .tar).  NULL if none fits. */
char *cd_out_name(const struct cli *c, const char *path)
{
    static const char *const known[][2] = {{".gz", ""}, {"-gz", ""}, {".z", ""}, {"-z", ""},
                                           {"_z", ""}, {".tgz", ".tar"}, {".taz", ".tar"}};
    const char *cut = NULL, *add = "";
    if (cli_has_suffix(path, c->suffix))
        cut = c->suffix;
    for (size_t i = 0; cut == NULL && i < sizeof known / sizeof known[0]; i++)
        if (cli_has_suffix(path, known[i][0])) {
            cut = known[i][0];
            add = known[i][1];
        }
    if (cut == NULL || strlen(cli_base(path)) == strlen(cut))
        return NULL;
    size_t keep = strlen(path) - strlen(cut);
    char *out = malloc(keep + strlen(add) + 1);
    if (out != NULL) {
        memcpy(out, path, keep);
        strcpy(out + keep, add);
    }
    return out;
}

/* name in path's directory (malloc'd), or NULL. */
static char *cd_beside(const char *path, const char *name)
{
    size_t dir = (size_t)(cli_base(path) - path);
    char *out = malloc(dir + strlen(name) + 1);
    if (out != NULL) {
        memcpy(out, path, dir);
        strcpy(out + dir, name);
    }
    return out;
}

/* -N: the stored name (its last component only), next to the input. */
static char *cd_stored_name(const char *path, const struct gz_info *h)
{
    const char *stored = cli_base(h->name);
    if (stored[0] == '\0' || strcmp(stored, ".") == 0 || strcmp(stored, "..") == 0)
        return NULL;
    return cd_beside(path, stored);
}

/* -lN: the stored name as gzip lists it, next to the input: its last
 * component as gnulib's last_component() finds it (trailing slashes kept),
 * even when it is empty, "." or "..", which -dN would not use. */
char *cd_list_stored_name(const char *path, const struct gz_info *h)
{
    const char *base = h->name;
    while (*base == '/')
        base++;
    bool slash = false;
    for (const char *p = base; *p != '\0'; p++) {
        if (*p == '/') {
            slash = true;
        } else if (slash) {
            base = p;
            slash = false;
        }
    }
    return cd_beside(path, base);
}

/* -N: a stored name longer than the output's file system allows is cut to
 * fit, as gzip does (status 2, "name truncated"); a name gzip makes from
 * the input's always fits. */
static void cd_fit_name(struct cli *c, char *out)
{
    char *base = (char *)cli_base(out);
    char save = *base;
    *base = '\0';
    long max = pathconf(out[0] != '\0' ? out : ".", _PC_NAME_MAX);
    *base = save;
    if (max <= 0)
        max = NAME_MAX;
    if (strlen(base) > (size_t)max) {
        base[max] = '\0';
        cli_warn(c, "%s: warning, name truncated", out);
    }
}

/* ---- running the core ---- */

double cd_ratio(uint64_t in, uint64_t out)
{
    return out == 0 ? 0.0 : 100.0 * ((double)out - (double)in) / (double)out;
}

/* --salvage: what was damaged (zeros in the output), status 1, the map.
 * The output is kept: it holds everything that was intact. */
static void cd_salvaged(struct cli *c, const struct cli_job *j, struct dec_stats *st)
{
    if (st->nbad > 0 || st->zero_repaired > 0 || st->shifted || st->trailer_damaged ||
        st->unverified > 0 || st->repaired > 0)
        cli_status(c, EXIT_ERR);
    if (st->repaired > 0 && !c->quiet)
        cli_msg("%s: damaged, but the CRC-32 confirms the output as written: nothing is "
                "missing", j->in_name);
    if (st->unverified > 0 && !c->quiet)
        cli_msg("%s: %u member%s could not be checked after the damage: bytes outside the "
                "listed ranges may be wrong too", j->in_name, st->unverified,
                st->unverified == 1 ? "" : "s");
    if (st->trailer_damaged && !c->quiet)
        cli_msg("%s: the data member's trailer is damaged: every piece was checked against "
                "the index instead", j->in_name);
    if (st->zero_repaired > 0 && !c->quiet)
        cli_msg("%s: %u zero piece%s damaged, restored from the index (zeros)", j->in_name,
                st->zero_repaired, st->zero_repaired == 1 ? " was" : "s were");
    cli_bad_report(c, j->in_name, st->bad, st->nbad,
                   st->indexed ? "damaged, restored as zeros"
                               : "damaged (zeros where bytes were lost; as decoded where only "
                                 "a CRC-32 disagrees)", true);
    if (st->nbad > 0)
        cli_status(c, EXIT_ERR);
    if (st->shifted && !c->quiet)
        cli_msg("%s: the output from offset %llu on follows lost data of unknown length: "
                "it may belong at a later offset", j->in_name,
                (unsigned long long)st->shifted_at);
    if (st->nunread > 0 && !c->quiet) {
        uint64_t sum = 0;
        for (size_t i = 0; i < st->nunread; i++)
            sum += st->unread[i].len;
        cli_msg("%s: %llu bytes of the disk could not be read when this backup was made: "
                "zeros (-l -v lists them)", j->in_name, (unsigned long long)sum);
    }
    if (c->bad_map != NULL && c->mode != MODE_COMPARE) {
        /* what the image lacks: damaged here, or unread at the backup */
        char what[300];
        snprintf(what, sizeof what, "%s -d: the ranges of %.200s that are damaged or were "
                 "not read", cli_prog, j->in_name);
        size_t n = 0;
        struct sp_range *all = cli_ranges_union(st->bad, st->nbad, st->unread, st->nunread, &n);
        if (all == NULL && n > 0)
            cli_error(c, "%s: out of memory", c->bad_map);
        else
            (void)cli_badmap_write(c, st->out_bytes, all, n, what);
        free(all);
    }
    free(st->bad);
    st->bad = NULL;
    free(st->unread);
    st->unread = NULL;
    cli_notes_say(c, j->in_name, st->notes, st->nnotes);
    dec_notes_free(st->notes, st->nnotes);
    st->notes = NULL;
    st->nnotes = 0;
}

/* SPIGZ_INFLATE=zlib: the sequential decoder inflates with zlib only. */
static bool cd_inflate_zlib(void)
{
    const char *v = getenv("SPIGZ_INFLATE");
    return v != NULL && strcmp(v, "zlib") == 0;
}

/* --partition N: the range of the image that partition N covers, as the
 * kernel would number it, read from the partition table in the backup
 * through its volume (cli_vol.h: a spigz index, else a gzip index built in
 * one pass and kept beside the file).  Then restored as that --range is:
 * onto a device too small for it, refused before a byte is written.
 * 0 with *off and *len, or -1 (printed). */
static int cd_partition(struct cli *c, const struct cli_job *j, uint64_t *off, uint64_t *len)
{
    struct stat st;
    if (fstat(j->in_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        cli_error(c, "%s: --partition reads the backup's partition table at random: it must "
                     "be a file, not a pipe", j->in_name);
        return -1;
    }
    off_t here = lseek(j->in_fd, 0, SEEK_CUR);
    if (here != 0) { /* the volume reads the file from its start */
        cli_error(c, "%s: --partition reads the backup from its first byte: the input is "
                     "at offset %lld", j->in_name, (long long)here);
        return -1;
    }
    struct vol *v = NULL;
    struct sp_err err = {0}, terr;
    if (cli_vol_open(c, j->in_name, j->in_fd, false, &v, &err) != 0) {
        cli_error(c, "%s: %s", j->in_name, err.msg);
        return -1;
    }
    struct lay_kpart *p = NULL;
    size_t n = 0;
    int rc = cli_vol_parts(v, &p, &n, &terr);
    vol_close(v);
    if (lseek(j->in_fd, 0, SEEK_SET) != 0 || rc != 0) {
        cli_error(c, "%s: %s", j->in_name, rc != 0 ? "out of memory" : strerror(errno));
        free(p);
        return -1;
    }
    char have[400] = "";
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].number == c->partition) {
            *off = p[i].off;
            *len = p[i].len;
            free(p);
            return 0;
        }
        if (at < sizeof have - 16)
            at += (size_t)snprintf(have + at, sizeof have - at, "%sp%u", i ? ", " : "",
                                   p[i].number);
    }
    free(p);
    if (terr.kind != SP_OK)
        cli_error(c, "%s: no partition %u: the partition table could not be read (%s)",
                  j->in_name, c->partition, terr.msg);
    else if (n == 0)
        cli_error(c, "%s: no partition %u: the image holds no partition table the kernel "
                     "would read (GPT, MBR)", j->in_name, c->partition);
    else
        cli_error(c, "%s: no partition %u: the image has %s", j->in_name, c->partition, have);
    return -1;
}

int cd_run(struct cli *c, struct cli_job *j, struct osink *o, struct dec_stats *st)
{
    uint64_t part_off = 0, part_len = 0;
    if (c->partition != 0 && cd_partition(c, j, &part_off, &part_len) != 0)
        return -1;
    struct dec_opts d = {
        .threads = c->threads,
        .use_index = c->index,
        /* gzip -dcf (and -tf, which gzip runs as a -dc to nowhere) passes
         * what is not gzip through */
        .copy_non_gzip = c->force && ((c->to_stdout && c->mode == MODE_DECOMPRESS) ||
                                      c->mode == MODE_TEST),
        .lenient_end = c->force && (c->to_stdout || c->mode == MODE_TEST),
        .range = c->range || c->partition != 0,
        .range_off = c->partition != 0 ? part_off : c->range_off,
        .range_len = c->partition != 0 ? part_len : c->range_len,
        .salvage = c->salvage,
        /* -t asks whether every gzip reader takes the file: zlib, which
         * refuses every header gzip refuses (ISA-L builds codes from some
         * it does not, doc/GZIP.md).  SPIGZ_INFLATE=zlib: -d likewise. */
        .no_fast = c->mode == MODE_TEST || cd_inflate_zlib(),
        /* -t says "the image is the one backed up", not only "the CRCs
         * hold", where the manifest records its digest (--salvage's zeros
         * would differ from it by design) */
        .digest = c->mode == MODE_TEST && !c->salvage,
        /* --compare skips what a --free=zero backup calls free */
        .free_map = c->mode == MODE_COMPARE,
    };
    struct sp_err err = {0};
    /* --range reads an unknown part of the input: no total, no percent. */
    struct sp_progress prog = {.in_total = c->size != 0 ? c->size
                                         : d.range ? 0 : cli_prog_total(j->in_fd)};
    double t0 = cli_report_now();
    struct cli_prog *shown =
        cli_prog_start(cli_progress_wanted(c), j->in_name, &prog, CLI_PROG_DECOMPRESS);
    d.progress = shown != NULL || o->device ? &prog : NULL;
    if (o->device) /* a signal says how much of the device was written */
        cli_device_progress(&prog.out);
    int rc = dec_run(j->in_fd, o, &d, st, &err);
    cli_device_progress(NULL);
    cli_prog_stop(shown);
    j->seconds = cli_report_now() - t0;
    j->displayed = shown != NULL;
    /* gzip's notes, as it meets them (so before an error in the data) */
    for (unsigned i = 0; c->verbose && i < st->extras; i++)
        cli_msg("%s: extra field of %u bytes ignored", j->in_name, st->extra_len[i]);
    if (st->lzw_flags != 0)
        cli_warn(c, "%s: warning, unknown flags 0x%x", j->in_name, st->lzw_flags);
    if (st->zip_more)
        cli_warn(c, "%s has more than one entry--rest ignored", j->in_name);
    if (c->verbose && st->indexed && rc == 0)
        cli_msg("%s: decoded through its index", j->in_name);
    if (c->verbose && st->digest_checked && rc == 0)
        cli_msg("%s: the image's digest is the one recorded when the backup was made",
                j->in_name);
    if (st->index_warning[0] != '\0')
        cli_warn(c, "%s: index not used (%s): decoding sequentially", j->in_name,
                 st->index_warning);
    if (rc != 0) {
        const char *who = err.kind == SP_ERR_WRITE ? j->out_name : j->in_name;
        cli_error(c, "%s: %s", who, err.msg);
        cli_stop_on(c, &err);
        free(st->bad);
        free(st->unread);
        free(st->free);
        st->bad = st->unread = st->free = NULL;
        dec_notes_free(st->notes, st->nnotes);
        st->notes = NULL;
        st->nnotes = 0;
        return -1;
    }
    if (st->trailing_garbage)
        cli_warn(c, "%s: decompression OK, trailing garbage ignored", j->in_name);
    else if (st->trailing_zeros && c->verbose) /* gzip: a warning only with -v */
        cli_warn(c, "%s: decompression OK, trailing zero bytes ignored", j->in_name);
    cd_salvaged(c, j, st);
    return 0;
}

/* -vv: the path the restore took, and the inflater of a sequential one. */
static const char *cd_path(const struct dec_stats *s)
{
    static char buf[80];
    if (s->indexed)
        return "parallel, through the index";
    if (s->zlib_members == 0 && s->fast_members > 0)
        return "sequential, ISA-L";
    if (s->fast_members == 0)
        return "sequential, zlib";
    snprintf(buf, sizeof buf, "sequential, ISA-L for %u of %u members, zlib for the rest",
             s->fast_members, s->fast_members + s->zlib_members);
    return buf;
}

static void cd_report(struct cli *c, const struct cli_job *j, const struct dec_stats *s,
                      const char *what)
{
    struct cli_report r = {.mode = c->mode == MODE_TEST ? MODE_TEST : MODE_DECOMPRESS,
                           .in_name = j->in_name,
                           .out_name = c->mode == MODE_TEST ? NULL : j->out_name,
                           .in_bytes = s->in_bytes, .out_bytes = s->out_bytes,
                           .path = s->indexed ? "index" : "sequential",
                           .seconds = j->seconds};
    cli_report(c, &r, j->displayed);
    if (!c->verbose)
        return;
    if (c->mode == MODE_TEST) {
        if (j->in_path == NULL) /* gzip -tv from stdin */
            fprintf(stderr, " OK\n");
        else
            fprintf(stderr, "%s:\t OK\n", j->in_name);
        return;
    }
    if (j->in_path == NULL) { /* gzip -dv from stdin says nothing */
        if (c->verbose > 1)
            fprintf(stderr, "stdin:\t(%s)\n", cd_path(s));
        return;
    }
    fprintf(stderr, "%s:\t%5.1f%% -- %s %s", j->in_name, cd_ratio(s->in_bytes, s->out_bytes),
            what, j->out_name);
    if (c->verbose > 1)
        fprintf(stderr, " (%s)", cd_path(s));
    fputc('\n', stderr);
}

/* Test, or write to stdout: no file is created. */
static void cd_to_fd(struct cli *c, struct cli_job *j, int fd)
{
    struct osink o;
    struct sp_err err = {0};
    j->out_name = "stdout";
    j->out_fd = fd;
    if (fd >= 0 && cli_same_file(j, fd)) {
        cli_same_error(c, j->in_name, &j->st);
        return;
    }
    if (fd == STDOUT_FILENO && cli_stdout_device_busy(c))
        return;
    if (cli_badmap_begin(c, j, NULL) != 0)
        return;
    if (osink_open(&o, fd, c->sparse, &err) != 0) {
        cli_error(c, "stdout: %s", err.msg);
        return;
    }
    struct dec_stats st;
    if (cd_run(c, j, &o, &st) == 0)
        cd_report(c, j, &st, "replaced with");
}

static void cd_to_file(struct cli *c, struct cli_job *j, const char *out_path, bool remove)
{
    j->out_name = out_path;
    bool named = c->output != NULL;
    if (cli_out_is_input(c, j, out_path, named))
        return;
    /* gzip reads the header before it looks at the output: an input that is
     * not gzip or cut is that error, whether the output exists or not */
    struct sp_err perr = {0};
    if (dec_probe(j->in_fd, &perr) != 0) {
        cli_error(c, "%s: %s", j->in_name, perr.msg);
        cli_stop_on(c, &perr);
        return;
    }
    if ((j->out_fd = cli_out_create(c, j, out_path, named)) < 0)
        return;
    struct osink o;
    struct sp_err err = {0};
    struct dec_stats st = {0}; /* read below even when the output failed to open */
    if (cli_badmap_begin(c, j, NULL) != 0) {
        cli_out_finish(c, j, false, false, NULL);
        return;
    }
    bool ok = osink_open(&o, j->out_fd, c->sparse, &err) == 0;
    if (!ok)
        cli_error(c, "%s: %s", out_path, err.msg);
    if (ok && c->discard && !o.device) {
        cli_error(c, "%s: --discard is for block devices", out_path);
        ok = false;
    }
    if (ok && c->direct && !o.device) {
        cli_error(c, "%s: --direct is for block devices", out_path);
        ok = false;
    }
    if (ok && c->direct && osink_set_direct(&o, &err) != 0) {
        cli_error(c, "%s: %s", out_path, err.msg);
        ok = false;
    }
    osink_set_discard(&o, c->discard);
    bool ran = ok;
    ok = ok && cd_run(c, j, &o, &st) == 0;
    if (ok && o.device && !c->range && c->partition == 0 && o.dev_size > st.out_bytes)
        cd_larger_device(c, out_path, j->out_fd, st.out_bytes, o.dev_size);
    uint64_t wrote = o.written + atomic_load(&o.offloaded);
    if (ran && !ok && o.device && wrote > 0) /* the device is not what it was, nor the image */
        cli_msg("%s: restore failed after %llu bytes of the image were written: the device "
                "holds a partial image", out_path, (unsigned long long)wrote);
    osink_close(&o);
    if (ok && o.device && c->verbose > 1)
        cli_msg("%s: %llu bytes zeroed by the device (%s)", out_path,
                (unsigned long long)atomic_load(&o.offloaded),
                c->discard ? "discard or BLKZEROOUT" : "BLKZEROOUT");
    /* -N: the stored time stamp, when there is one. */
    struct timespec mt = {0, 0}, *mtp = NULL;
    uint32_t stored = st.indexed ? st.hdr.mtime : st.last_mtime; /* any member's, as gzip */
    if (ok && c->store_time && stored != 0) { /* -N or -M */
        mt.tv_sec = (time_t)stored;
        mtp = &mt;
    }
    if (cli_out_finish(c, j, ok, remove && ok, mtp))
        cd_report(c, j, &st, remove ? "replaced with" : "created");
}

/* A whole image restored onto a larger device: said (not a warning: the
 * image is whole), and for a GPT, whose backup header the image put at
 * its own end, not the device's, the command that moves it there (the
 * kernel and fdisk complain of it until then; partclone and Clonezilla
 * leave it to sgdisk -e too).  The header is read back from the device
 * (aligned: the descriptor may be O_DIRECT), at LBA 1 of 512- or
 * 4096-byte sectors. */
static void cd_larger_device(struct cli *c, const char *dev, int fd, uint64_t image,
                             uint64_t size)
{
    char a[TXT_SIZE_LEN], b[TXT_SIZE_LEN], d[TXT_SIZE_LEN], self[64];
    if (c->quiet)
        return;
    cli_msg("%s: the device (%s) is larger than the image (%s): the %s after it is in no "
            "partition", dev, txt_size(a, sizeof a, (double)size),
            txt_size(b, sizeof b, (double)image), txt_size(d, sizeof d, (double)(size - image)));
    /* the output is open for writing only: the same open device again,
     * for reading, through its descriptor (not its name) */
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    int rfd = open(self, O_RDONLY | O_CLOEXEC);
    uint8_t *h = NULL;
    if (rfd < 0 || posix_memalign((void **)&h, 4096, 8192) != 0) {
        if (rfd >= 0)
            close(rfd);
        return;
    }
    if (io_pread_exact(rfd, h, 8192, 0) == 0 &&
        (memcmp(h + 512, "EFI PART", 8) == 0 || memcmp(h + 4096, "EFI PART", 8) == 0))
        cli_msg("%s: its GPT's backup header lies where the image ends, not at the device's "
                "end: `sfdisk --relocate gpt-bak-std %s` (or sgdisk -e) moves it there, then the "
                "last partition can grow "
                "(growpart, parted resizepart)", dev, dev);
    free(h);
    close(rfd);
}

/* ---- one input ---- */

/* Whether a name exists as gzip 1.12 asks: through a link with -c or -f
 * (and -t, -l, which it runs as -c), as a link itself otherwise (which
 * is then refused as one).  So `gunzip -c FILE` with FILE a dangling link
 * finds FILE.gz, as gzip does. */
static int cd_exists(const struct cli *c, const char *path)
{
    struct stat st;
    bool follow = c->to_stdout || c->force || c->mode == MODE_TEST || c->mode == MODE_LIST;
    return follow ? stat(path, &st) : lstat(path, &st);
}

/* gzip -d FILE: when FILE does not exist, FILE with the -S suffix, .gz,
 * .z, -z or .Z (the first that exists, cd_exists).  NULL: use the name
 * as given (the message then names FILE with the -S suffix, as gzip's).
 * Not in a -r walk: its names come from the directory itself (one gone
 * meanwhile is reported as gone, never swapped for another). */
static char *cd_find_input(const struct cli *c, const char *path)
{
    static const char *const tries[] = {NULL, ".gz", ".z", "-z", ".Z"};
    if (c->walking > 0 || cd_exists(c, path) == 0 || errno != ENOENT)
        return NULL;
    char *has = cd_out_name(c, path); /* a compressed suffix already: no search */
    bool suffixed = has != NULL;
    free(has);
    if (suffixed)
        return NULL;
    /* one buffer long enough for every try: the longest is the -S suffix
     * or one of the fixed ones (at most 3 bytes) */
    size_t n = strlen(path), slen = strlen(c->suffix);
    char *p = malloc(n + (slen > 3 ? slen : 3) + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, path, n);
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        strcpy(p + n, tries[i] != NULL ? tries[i] : c->suffix);
        if (cd_exists(c, p) == 0)
            return p;
    }
    strcpy(p + n, c->suffix); /* the name gzip's message gives */
    return p;
}

static void cd_dispatch(struct cli *c, struct cli_job *j)
{
    if (c->mode == MODE_LIST) {
        cd_list(c, j);
    } else if (c->mode == MODE_TEST) {
        cd_to_fd(c, j, -1);
    } else if (c->to_stdout) {
        cd_to_fd(c, j, STDOUT_FILENO);
    } else if (c->output != NULL) {
        cd_to_file(c, j, c->output, false);
    } else {
        /* FILE.gz -> FILE, or -N's stored name (read from the header first). */
        char *out = NULL;
        struct gz_info h;
        if (c->store_name && c->name_set && dec_first_header(j->in_fd, &h) == 0 &&
            (out = cd_stored_name(j->in_path, &h)) != NULL)
            cd_fit_name(c, out);
        if (out == NULL)
            out = cd_out_name(c, j->in_path);
        if (out == NULL) {
            /* gzip warns (status 2) only with -v, or outside a directory
             * given with -r and without -q; else nothing at all */
            if (c->verbose || (!c->walking && !c->quiet))
                cli_warn(c, "%s: unknown suffix -- ignored", j->in_path);
            return;
        }
        cd_to_file(c, j, out, !c->keep);
        free(out);
    }
}

void cmd_decompress(struct cli *c, const char *path)
{
    struct cli_job j = {.in_name = "stdin", .in_fd = STDIN_FILENO, .dir_fd = -1};
    if (path == NULL || strcmp(path, "-") == 0) {
        if (fstat(STDIN_FILENO, &j.st) != 0) {
            cli_error(c, "stdin: %s", strerror(errno));
            return;
        }
        if (c->mode == MODE_DECOMPRESS && c->output == NULL)
            c->to_stdout = true; /* stdin has no name to strip */
        cd_dispatch(c, &j);
        return;
    }
    char *found = cd_find_input(c, path);
    j.in_name = found != NULL ? found : path;
    if (cli_open_input(c, j.in_name, &j) == 0) {
        cd_dispatch(c, &j);
        cli_close_input(&j);
    }
    free(found);
}
