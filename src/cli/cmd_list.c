/* cmd_list.c — list (-l) one input, gzip -l's way: its sizes, ratio and
 * name (-v: method, CRC-32, time), exact from a spigz file's index, as text
 * or --format=json/kv; and the totals line. */
#include "config.h"
#include "cli.h"
#include "cli_manifest.h"
#include "cli_report.h"
#include "cmd_decompress.h"
#include "dec.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* gzip -l's ratio leaves out the gzip header and trailer of a one-member
 * file, but of none when there are several (so does gzip 1.12). */
static uint64_t cd_list_frame(const struct dec_list *l)
{
    return l->have_header && l->members == 1 && !l->legacy ? l->hdr.len + 8 : 0;
}


static double cd_list_ratio(const struct dec_list *l)
{
    uint64_t frame = cd_list_frame(l);
    uint64_t deflated = l->compressed > frame ? l->compressed - frame : 0;
    if (l->exact)
        deflated = l->deflated;
    return cd_ratio(deflated, l->uncompressed);
}


static void cd_list_header(struct cli *c)
{
    if (c->listed++ > 0 || c->quiet || c->format != FORMAT_TEXT) /* gzip -lq: no heading */
        return;
    if (c->verbose)
        printf("method  crc     date  time  ");
    printf("         compressed        uncompressed  ratio uncompressed_name\n");
}

/* --format=json or kv: one object (or a block of key=value lines) per
 * file listed, and one for the totals ("totals": true, l NULL). */
static void cd_list_machine(const struct cli *c, uint64_t in, uint64_t out, double ratio,
                            const char *name, const struct dec_list *l, const char *file)
{
    bool json = c->format == FORMAT_JSON;
    const char *sep = json ? "," : "\n", *eq = json ? "\":" : "=", *q = json ? "\"" : "";
    if (json)
        putchar('{');
    if (l == NULL) {
        printf("%stotals%strue", q, eq);
    } else {
        printf("%sfile%s", q, eq);
        json ? cli_json_string(stdout, file) : (void)fputs(file, stdout);
        printf("%s%suncompressed_name%s", sep, q, eq);
        json ? cli_json_string(stdout, name) : (void)fputs(name, stdout);
    }
    printf("%s%scompressed%s%llu%s%suncompressed%s%llu%s%sratio%s%.1f", sep, q, eq,
           (unsigned long long)in, sep, q, eq, (unsigned long long)out, sep, q, eq, ratio);
    if (l != NULL) {
        printf("%s%sexact%s%s%s%smembers%s%u", sep, q, eq, l->exact ? "true" : "false", sep,
               q, eq, l->exact ? l->parts : l->members);
        if (!l->exact) /* the size above is the last member's: this is all of them */
            printf("%s%sall_members%s%llu", sep, q, eq, (unsigned long long)l->all);
        printf("%s%smethod%s%s%s%s%s%scrc%s", sep, q, eq, json ? "\"" : "", l->method,
               json ? "\"" : "", sep, q, eq);
        if (l->legacy) /* pack and LZW have no CRC-32 */
            fputs(json ? "null" : "", stdout);
        else
            printf(json ? "\"%08x\"" : "%08x", l->crc);
        printf("%s%smtime%s%u", sep, q, eq, l->mtime);
        /* the index's notes: a JSON array, or one note= line each */
        if (json && l->nnotes > 0) {
            fputs(",\"notes\":[", stdout);
            for (size_t i = 0; i < l->nnotes; i++) {
                if (i > 0)
                    putchar(',');
                cli_json_string(stdout, l->notes[i]);
            }
            putchar(']');
        }
        for (size_t i = 0; !json && i < l->nnotes; i++)
            printf("\nnote=%s", l->notes[i]);
        if (json && l->has_mf) {
            fputs(",\"manifest\":", stdout);
            cli_manifest_json(stdout, &l->mf);
        }
    }
    fputs(json ? "}\n" : "\n\n", stdout);
}

/* One line of -l; l is NULL for the totals.  The time shown is the
 * compressed file's (gzip -lv), the stored one with -N when there is one. */
static void cd_list_line(const struct cli *c, uint64_t in, uint64_t out, double ratio,
                         const char *name, const struct dec_list *l, const struct stat *st,
                         const char *file)
{
    if (c->format != FORMAT_TEXT) {
        cd_list_machine(c, in, out, ratio, name, l, file);
        return;
    }
    if (c->verbose && l != NULL) {
        char when[32] = "";
        time_t t = st->st_mtime;
        if (c->store_time && l->mtime != 0) /* -N or -M */
            t = (time_t)l->mtime;
        struct tm tm;
        if (localtime_r(&t, &tm) != NULL)
            strftime(when, sizeof when, "%b %e %H:%M", &tm);
        if (l->legacy) /* gzip prints its -1 */
            printf("%-5.5s ffffffffffffffff %12s ", l->method, when); /* gzip's "defla" */
        else
            printf("%-5.5s %08x %12s ", l->method, l->crc, when);
    } else if (c->verbose) {
        printf("%28s", "");
    }
    printf("%19llu %19llu %5.1f%% %s\n", (unsigned long long)in, (unsigned long long)out,
           ratio, name);
}

/* -l of a backup made with --rescue: -v lists what could not be read,
 * --bad-map maps it (so ddrescue can fill it in from the disk). */
static void cd_list_bad(struct cli *c, const struct cli_job *j, struct dec_list *l)
{
    cli_bad_report(c, j->in_name, l->bad, l->nbad,
                   "could not be read when the backup was made (zeros in it)", false);
    if (c->bad_map != NULL && l->exact)
        (void)cli_badmap_write(c, l->uncompressed, l->bad, l->nbad,
                               "spigz -l: the sectors the backup could not read");
    free(l->bad);
    l->bad = NULL;
}

void cd_list(struct cli *c, struct cli_job *j)
{
    struct dec_list l;
    struct sp_err err = {0};
    if (cli_badmap_begin(c, j, NULL) != 0)
        return;
    int rc = dec_list(j->in_fd, c->threads, c->force, &l, &err);
    /* gzip's totals take the frame of the last file read, listed or not */
    c->list_frame = cd_list_frame(&l);
    for (unsigned i = 0; c->verbose && i < l.extras; i++)
        cli_msg("%s: extra field of %u bytes ignored", j->in_name, l.extra_len[i]);
    if (l.lzw_flags != 0)
        cli_warn(c, "%s: warning, unknown flags 0x%x", j->in_name, l.lzw_flags);
    if (l.zip_more)
        cli_warn(c, "%s has more than one entry--rest ignored", j->in_name);
    if (c->verbose && rc == 0 && l.exact && l.parts == 1)
        cli_msg("%s: exact sizes from its index", j->in_name);
    else if (c->verbose && rc == 0 && l.exact)
        cli_msg("%s: exact sizes from the indexes of the %u spigz files it joins", j->in_name,
                l.parts);
    if (rc == 0)
        cd_list_bad(c, j, &l);
    if (rc == 0 && c->format == FORMAT_TEXT)
        cli_notes_say(c, j->in_name, l.notes, l.nnotes);
    if (rc != 0) {
        /* why the index did not give the sizes, then why decoding failed */
        if (l.index_warning[0] != '\0')
            cli_warn(c, "%s: index not used (%s)", j->in_name, l.index_warning);
        cli_error(c, "%s: %s", j->in_name, err.msg);
        cli_stop_on(c, &err);
        return;
    }
    if (l.index_warning[0] != '\0')
        cli_warn(c, "%s: index not used (%s)", j->in_name, l.index_warning);
    if (l.trailing_garbage)
        cli_warn(c, "%s: decompression OK, trailing garbage ignored", j->in_name);
    else if (l.trailing_zeros && c->verbose)
        cli_warn(c, "%s: decompression OK, trailing zero bytes ignored", j->in_name);
    char *name = NULL;
    if (c->store_name && c->name_set && l.have_header && (l.hdr.flags & GZ_FNAME))
        name = cd_list_stored_name(j->in_path != NULL ? j->in_path : "", &l.hdr);
    if (name == NULL && j->in_path != NULL)
        name = cd_out_name(c, j->in_path);
    cd_list_header(c);
    cd_list_line(c, l.compressed, l.uncompressed, cd_list_ratio(&l),
                 name != NULL ? name : j->in_path != NULL ? j->in_path : "stdout", &l, &j->st,
                 j->in_name);
    free(name);
    /* The manifest's block: to a person (stdout a terminal) or with -vv; a
     * script reading gzip -l's table (tail -1), or -lv's, gets gzip's
     * lines alone. */
    if (l.has_mf && c->format == FORMAT_TEXT && !c->quiet &&
        (c->verbose > 1 || isatty(STDOUT_FILENO)))
        cli_manifest_text(stdout, &l.mf, j->in_path != NULL ? (uint64_t)j->st.st_mtime : 0);
    mf_free(&l.mf);
    dec_notes_free(l.notes, l.nnotes);
    c->list_in += l.compressed;
    c->list_out += l.uncompressed;
    if (!l.exact && l.members > 1 && l.all != l.uncompressed && !c->quiet &&
        (c->verbose || isatty(STDERR_FILENO))) {
        /* concatenated gzip files (bgzip's, a spigz file read without its
         * index): gzip -l's number is the last member's, however small.
         * Said to a person (stderr a terminal, or -v); a script reading
         * stderr gets gzip's silence, and --format=json's all_members. */
        c->list_inexact = true;
        cli_msg("%s: %u members: the size shown is the last one's, as gzip -l shows it; "
                "all of them hold %llu bytes", j->in_name, l.members,
                (unsigned long long)l.all);
    } else if (!l.exact && l.maybe_wrapped) {
        c->list_inexact = true;
        if (c->verbose)
            cli_msg("%s: the size shown is gzip's (the last member's)", j->in_name);
    }
}

void cmd_list_totals(struct cli *c)
{
    /* gzip's totals leave out the frame of the last file read (even one
     * larger than all that was listed: the ratio then goes over 100%) */
    double out = (double)c->list_out;
    double ratio = 100.0 * (out - ((double)c->list_in - (double)c->list_frame)) / out;
    /* gzip: with more than one operand, once something of some size was
     * listed; not -q */
    if (c->operands > 1 && c->listed > 0 && c->list_out > 0 && (!c->quiet || c->format != FORMAT_TEXT))
        cd_list_line(c, c->list_in, c->list_out, ratio, "(totals)", NULL, NULL, NULL);
}
