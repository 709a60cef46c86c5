/* cli_report.c — the end-of-run summary line and the JSON/kv report; see
 * cli_report.h. */
#include "config.h"
#include "cli_report.h"
#include "cli_progress.h"

#include <string.h>
#include <time.h>

double cli_report_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The length of a valid UTF-8 sequence at s (2 to 4), or 0. */
static size_t cli_utf8_len(const unsigned char *s)
{
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (n == 0 || s[0] > 0xf4)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    /* no overlong forms, surrogates or code points past U+10FFFF */
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
        (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

void cli_json_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', f);
    while (*s != '\0') {
        size_t n = *s >= 0x80 ? cli_utf8_len(s) : 1;
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if (*s < 0x20 || *s == 0x7f || n == 0)
            fprintf(f, "\\u%04x", *s);
        else
            fwrite(s, 1, n, f);
        s += n > 0 ? n : 1;
    }
    putc('"', f);
}

/* 0.52 s, 3.21 s, 12.3 s, then m:ss and h:mm:ss. */
static void cli_report_time(char *b, size_t n, double s)
{
    if (s < 9.995)
        snprintf(b, n, "%.2f s", s < 0 ? 0 : s);
    else if (s < 59.95)
        snprintf(b, n, "%.1f s", s);
    else
        cli_prog_clock(b, n, s);
}

/* The uncompressed side: what the rate counts. */
static uint64_t cli_report_plain(const struct cli_report *r)
{
    return r->mode == MODE_COMPRESS ? r->in_bytes : r->out_bytes;
}

static double cli_report_rate(const struct cli_report *r)
{
    return r->seconds > 0 ? (double)cli_report_plain(r) / r->seconds : 0;
}

static void cli_report_text(const struct cli_report *r)
{
    char in[32], out[32], t[32], rate[32], ratio[32] = "";
    cli_prog_size(in, sizeof in, (double)r->in_bytes);
    cli_prog_size(out, sizeof out, (double)r->out_bytes);
    cli_report_time(t, sizeof t, r->seconds);
    cli_prog_size(rate, sizeof rate, cli_report_rate(r));
    if (r->mode == MODE_COMPRESS && r->in_bytes > 0)
        snprintf(ratio, sizeof ratio, " (%.1f%%)", 100.0 * (double)r->out_bytes / (double)r->in_bytes);
    else if (r->mode != MODE_COMPRESS && r->in_bytes > 0)
        snprintf(ratio, sizeof ratio, " (%.2fx)", (double)r->out_bytes / (double)r->in_bytes);
    /* the name as the progress line showed it: control characters as '?' */
    for (const char *p = r->in_name; *p != '\0'; p++)
        fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, stderr);
    fprintf(stderr, ": %s%s => %s%s in %s, %s/s", r->mode == MODE_TEST ? "OK, " : "", in, out,
            ratio, t, rate);
    if (r->mode == MODE_COMPRESS && r->in_bytes > 0)
        fprintf(stderr, ", zeros %u%%",
                (unsigned)(100.0 * (double)r->zero_bytes / (double)r->in_bytes));
    fputc('\n', stderr);
}

/* One key and value of the machine-readable report. */
struct cli_report_out {
    bool json, first;
};

static void cli_report_key(struct cli_report_out *o, const char *k)
{
    if (o->json)
        fprintf(stderr, "%s\"%s\":", o->first ? "" : ",", k);
    else
        fprintf(stderr, "%s=", k);
    o->first = false;
}

static void cli_report_str(struct cli_report_out *o, const char *k, const char *v)
{
    cli_report_key(o, k);
    if (o->json)
        cli_json_string(stderr, v);
    else
        fprintf(stderr, "%s\n", v);
}

static void cli_report_num(struct cli_report_out *o, const char *k, const char *fmt, double v)
{
    cli_report_key(o, k);
    fprintf(stderr, fmt, v);
    if (!o->json)
        fputc('\n', stderr);
}

static void cli_report_u64(struct cli_report_out *o, const char *k, uint64_t v)
{
    cli_report_key(o, k);
    fprintf(stderr, "%llu%s", (unsigned long long)v, o->json ? "" : "\n");
}

static void cli_report_machine(const struct cli *c, const struct cli_report *r)
{
    struct cli_report_out o = {c->format == FORMAT_JSON, true};
    static const char *const ops[] = {[MODE_COMPRESS] = "compress",
                                      [MODE_DECOMPRESS] = "decompress", [MODE_TEST] = "test"};
    if (o.json)
        fputc('{', stderr);
    cli_report_str(&o, "operation", ops[r->mode]);
    cli_report_str(&o, "file", r->in_name);
    if (r->out_name != NULL)
        cli_report_str(&o, "output", r->out_name);
    cli_report_u64(&o, "in_bytes", r->in_bytes);
    cli_report_u64(&o, "out_bytes", r->out_bytes);
    if (r->mode == MODE_COMPRESS) {
        cli_report_u64(&o, "level", (uint64_t)c->level);
        cli_report_u64(&o, "zero_bytes", r->zero_bytes);
        cli_report_u64(&o, "hole_bytes", r->hole_bytes);
        cli_report_u64(&o, "free_bytes", r->free_bytes);
        cli_report_u64(&o, "unreadable_bytes", r->bad_bytes);
    } else {
        cli_report_str(&o, "path", r->path != NULL ? r->path : "sequential");
    }
    cli_report_num(&o, "seconds", "%.3f", r->seconds);
    cli_report_num(&o, "bytes_per_second", "%.0f", cli_report_rate(r));
    fputs(o.json ? "}\n" : "\n", stderr);
}

void cli_report(const struct cli *c, const struct cli_report *r, bool displayed)
{
    if (c->format != FORMAT_TEXT)
        cli_report_machine(c, r);
    else if (displayed && !c->quiet && !c->walking)
        cli_report_text(r);
    fflush(stderr);
}
