/* cli_progress.c — the live progress line; see cli_progress.h for what it
 * shows and when.
 *
 * One display thread per run.  It sleeps on a condition variable (monotonic
 * clock) until the next draw is due or cli_prog_stop() wakes it, reads the
 * counters (relaxed atomics) and writes the whole update with one write(2)
 * on stderr: no stdio, so it never shares a FILE lock or buffer with the
 * main thread, which prints nothing while a display runs anyway (callers
 * stop it first).  It runs with every signal blocked, so the CLI's SIGINT
 * handler never interrupts a draw on this thread, and a write to a terminal
 * from a background job (TOSTOP) proceeds instead of stopping spigz with
 * SIGTTOU; so the thread also ends the line itself before it exits.  The
 * handler may call cli_prog_interrupted(), which only reads two atomics and
 * calls write(2).
 *
 * After cli_prog_start() returns, struct cli_prog belongs to the display
 * thread, except `stop` (under `mu`), until cli_prog_stop() has joined it.
 */
#include "config.h"
#include "cli_progress.h"
#include "io.h"
#include "text.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_SYS_IOCTL_H
#include <sys/ioctl.h>
#endif

#define CLI_PROG_DELAY_MS 500    /* no line for runs shorter than this */
#define CLI_PROG_PERIOD_MS 200   /* at most 5 draws a second */
#define CLI_PROG_RING 26         /* rate window: 25 periods = 5 s */
#define CLI_PROG_LABEL_MIN 12    /* shorten the name to this before dropping fields */
#define CLI_PROG_LINE 512        /* longest line drawn */
#define CLI_PROG_FIELDS 8         /* fields of a line at most */
#define CLI_PROG_FIELD 96         /* bytes of a field at most */

struct cli_prog_sample {
    double t;
    uint64_t in;
    uint64_t used;  /* of in, the bytes read (not skipped as free) */
};

struct cli_prog {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;                   /* under mu */
    struct sp_progress *p;
    enum cli_prog_kind kind;
    bool tty;                    /* stderr is a terminal */
    bool ansi;                   /* ... that takes ANSI cursor moves (TERM not dumb) */
    char label[256];             /* printable copy of the name */
    double t0;
    struct cli_prog_sample ring[CLI_PROG_RING];
    unsigned ring_n, ring_next;
    size_t shown;                /* columns of the line on screen, 0: none */
    unsigned draws;
    bool dead;                   /* a write failed: draw no more */
    double used_rate;            /* the last draw's: bytes read a second */
    struct cli_prog_log log;     /* log.on: plain lines (cli_progress.h) */
    double log_last;             /* when the last line was written */
    unsigned log_pct;            /* the percent step the last line reached */
};

static struct cli_prog_log cli_prog_log_cfg; /* --progress=log, set once */

void cli_prog_set_log(const struct cli_prog_log *log)
{
    cli_prog_log_cfg = *log;
}

/* What the signal handler needs, readable from any thread. */
static _Atomic int cli_prog_sig_shown; /* columns on screen, 0: none */
static _Atomic int cli_prog_sig_tty;
static _Atomic int cli_prog_sig_ansi;

static const char cli_prog_spaces[] =
    "                                                                ";
#define CLI_PROG_SPACES ((int)sizeof cli_prog_spaces - 1)

/* ---- time ---- */

static double cli_prog_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct timespec cli_prog_abs(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* ---- formatting ---- */

/* Three significant digits: 1.20, 12.3, 123 (1023 at most before a unit). */
static void cli_prog_sig3(char *b, size_t n, double x)
{
    if (x < 9.995)
        snprintf(b, n, "%.2f", x);
    else if (x < 99.95)
        snprintf(b, n, "%.1f", x);
    else
        snprintf(b, n, "%.0f", x);
}

void cli_prog_size(char *b, size_t n, double v)
{
    txt_size(b, n, v);
}

/* m:ss under an hour, h:mm:ss after; --:-- when unknown. */
void cli_prog_clock(char *b, size_t n, double s)
{
    unsigned t = s > 0 && s < 1e8 ? (unsigned)s : 0;
    if (t < 3600)
        snprintf(b, n, "%u:%02u", t / 60, t % 60);
    else
        snprintf(b, n, "%u:%02u:%02u", t / 3600, t / 60 % 60, t % 60);
}

static void cli_prog_eta(char *b, size_t n, double s)
{
    char t[24];
    if (s < 0 || s >= 100 * 3600.0) {
        snprintf(b, n, "ETA --:--");
        return;
    }
    cli_prog_clock(t, sizeof t, s + 0.5);
    snprintf(b, n, "ETA %s", t);
}

/* ---- the rate: input bytes over the last 5 s (since the start before) ---- */

static void cli_prog_sample(struct cli_prog *d, double t, uint64_t in, uint64_t used)
{
    d->ring[d->ring_next] = (struct cli_prog_sample){t, in, used};
    d->ring_next = (d->ring_next + 1) % CLI_PROG_RING;
    if (d->ring_n < CLI_PROG_RING)
        d->ring_n++;
}

/* Record (t, in, used) and return bytes per second since the oldest sample
 * kept; d->used_rate gets the same of `used`. */
static double cli_prog_rate(struct cli_prog *d, double t, uint64_t in, uint64_t used)
{
    cli_prog_sample(d, t, in, used);
    unsigned oldest = d->ring_n < CLI_PROG_RING ? 0 : d->ring_next;
    const struct cli_prog_sample *o = &d->ring[oldest];
    double dt = t - o->t;
    d->used_rate = 0;
    if (dt < 0.05 || in < o->in)
        return 0;
    if (used >= o->used)
        d->used_rate = (double)(used - o->used) / dt;
    return (double)(in - o->in) / dt;
}

/* ---- the line ---- */

/* How much a field matters when the line is narrow: the higher, the sooner
 * it is dropped.  Up to CLI_PROG_CORE the fields go only after the name. */
enum cli_prog_prio {
    CLI_PROG_P_PCT,   /* percent, or the amount done when there is no total */
    CLI_PROG_P_RATE,
    CLI_PROG_P_ETA,
    CLI_PROG_CORE = CLI_PROG_P_ETA,
    CLI_PROG_P_BAD,   /* --rescue: what could not be read */
    CLI_PROG_P_DONE,  /* done/total */
    CLI_PROG_P_TIME,  /* elapsed */
    CLI_PROG_P_ZEROS,
    CLI_PROG_P_OTHER  /* the other side: out when compressing, in or out restoring */
};

struct cli_prog_line {
    char f[CLI_PROG_FIELDS][CLI_PROG_FIELD]; /* in the order shown */
    enum cli_prog_prio prio[CLI_PROG_FIELDS];
    unsigned n;
};

static char *cli_prog_field(struct cli_prog_line *l, enum cli_prog_prio prio)
{
    l->prio[l->n] = prio;
    return l->f[l->n++];
}

/* When the run ends (prog_eta), or that it is syncing. */
struct cli_prog_eta {
    double seconds;  /* -1: unknown */
    bool syncing;    /* the device's cache is being flushed: no rate, no ETA */
};

/* Percent, done/total, elapsed, rate and ETA of the measured counter; without
 * a total, done, elapsed and rate. */
static void cli_prog_amount(struct cli_prog_line *l, uint64_t done, uint64_t total,
                            double rate, double elapsed, const struct cli_prog_eta *e)
{
    char a[32], b[32];
    cli_prog_size(a, sizeof a, (double)done);
    if (total == 0) {
        snprintf(cli_prog_field(l, CLI_PROG_P_PCT), CLI_PROG_FIELD, "%s", a);
    } else {
        double pct = done >= total ? 100.0 : 100.0 * (double)done / (double)total;
        snprintf(cli_prog_field(l, CLI_PROG_P_PCT), CLI_PROG_FIELD, "%u%%", (unsigned)pct);
        cli_prog_size(b, sizeof b, (double)total);
        /* "33.0/64.1 MiB" when both are in one unit: the line is narrow */
        const char *ua = strchr(a, ' '), *ub = strchr(b, ' ');
        if (ua != NULL && ub != NULL && strcmp(ua, ub) == 0)
            snprintf(cli_prog_field(l, CLI_PROG_P_DONE), CLI_PROG_FIELD, "%.*s/%s",
                     (int)(ua - a), a, b);
        else
            snprintf(cli_prog_field(l, CLI_PROG_P_DONE), CLI_PROG_FIELD, "%s/%s", a, b);
    }
    cli_prog_clock(cli_prog_field(l, CLI_PROG_P_TIME), CLI_PROG_FIELD, elapsed);
    if (e->syncing) {
        snprintf(cli_prog_field(l, CLI_PROG_P_RATE), CLI_PROG_FIELD, "syncing");
        return;
    }
    cli_prog_size(a, sizeof a, rate);
    snprintf(cli_prog_field(l, CLI_PROG_P_RATE), CLI_PROG_FIELD, "%s/s", a);
    if (total != 0)
        cli_prog_eta(cli_prog_field(l, CLI_PROG_P_ETA), CLI_PROG_FIELD, e->seconds);
}

/* Whether the run is measured by its output: a restore whose whole output
 * is known (through a spigz index). */
static bool cli_prog_by_out(const struct cli_prog *d)
{
    return d->kind == CLI_PROG_DECOMPRESS &&
           atomic_load_explicit(&d->p->out_total, memory_order_relaxed) != 0;
}

/* The fields of one update, in the order shown.  `done` is the measured
 * counter (cli_prog_by_out: out, else in). */
static void cli_prog_fields(const struct cli_prog *d, struct cli_prog_line *l, uint64_t in,
                            uint64_t out, uint64_t zeros, double rate, double elapsed)
{
    bool by_out = cli_prog_by_out(d);
    uint64_t total = atomic_load_explicit(by_out ? &d->p->out_total : &d->p->in_total,
                                          memory_order_relaxed);
    uint64_t done = by_out ? out : in;
    char a[32], b[32];
    l->n = 0;
    /* ETA: with --free=zero, by the bytes left to read (prog_eta) */
    uint64_t skip_total = by_out ? 0 : atomic_load_explicit(&d->p->skip_total,
                                                            memory_order_relaxed);
    struct cli_prog_eta e = {
        prog_eta(total, done, skip_total, prog_get(d->p, PROG_SKIP), rate, d->used_rate),
        atomic_load_explicit(&d->p->syncing, memory_order_relaxed) != 0};
    cli_prog_amount(l, done, total, rate, elapsed, &e);
    uint64_t bad = prog_get(d->p, PROG_BAD);
    if (bad > 0) { /* --rescue: sectors that could not be read */
        cli_prog_size(a, sizeof a, (double)bad);
        snprintf(cli_prog_field(l, CLI_PROG_P_BAD), CLI_PROG_FIELD, "bad %s", a);
    }
    if (in == 0)
        return;
    if (d->kind != CLI_PROG_DECOMPRESS)
        snprintf(cli_prog_field(l, CLI_PROG_P_ZEROS), CLI_PROG_FIELD, "zeros %u%%",
                 (unsigned)(100.0 * (double)(zeros < in ? zeros : in) / (double)in));
    if (d->kind == CLI_PROG_COMPRESS) {
        cli_prog_sig3(a, sizeof a, 100.0 * (double)out / (double)in);
        snprintf(cli_prog_field(l, CLI_PROG_P_OTHER), CLI_PROG_FIELD, "out %s%%", a);
    } else if (by_out) {
        cli_prog_size(a, sizeof a, (double)in);
        snprintf(cli_prog_field(l, CLI_PROG_P_OTHER), CLI_PROG_FIELD, "in %s", a);
    } else if (d->kind == CLI_PROG_DECOMPRESS) {
        cli_prog_size(a, sizeof a, (double)out);
        cli_prog_sig3(b, sizeof b, (double)out / (double)in);
        snprintf(cli_prog_field(l, CLI_PROG_P_OTHER), CLI_PROG_FIELD, "out %s (%sx)", a, b);
    }
}

/* Columns for the line: the terminal's width, else 80; one less is used so
 * the cursor never wraps. */
static size_t cli_prog_width(const struct cli_prog *d)
{
#ifdef TIOCGWINSZ
    struct winsize ws;
    if (d->tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
#else
    (void)d;
#endif
    return 80;
}

/* A UTF-8 character's continuation byte. */
static bool cli_prog_cont(char ch)
{
    return ((unsigned char)ch & 0xc0) == 0x80;
}

/* Columns the kept fields take, a two-space separator before each. */
static size_t cli_prog_flen(const struct cli_prog_line *l, const bool *keep)
{
    size_t n = 0;
    for (unsigned i = 0; i < l->n; i++)
        n += keep[i] ? strlen(l->f[i]) + 2 : 0;
    return n;
}

/* Drop the least important kept field whose priority is above `floor`;
 * false when there is none (or one field is all that is left). */
static bool cli_prog_drop(const struct cli_prog_line *l, bool *keep, int floor)
{
    int worst = -1;
    unsigned kept = 0;
    for (unsigned i = 0; i < l->n; i++)
        if (keep[i]) {
            kept++;
            if ((int)l->prio[i] > floor && (worst < 0 || l->prio[i] >= l->prio[worst]))
                worst = (int)i;
        }
    if (worst < 0 || kept <= 1)
        return false;
    keep[worst] = false;
    return true;
}

/* "NAME  f0  f1 ..." within width - 1 columns.  When it is too wide: first
 * the name is shortened to CLI_PROG_LABEL_MIN and the least important fields
 * go, down to percent, rate and ETA; then the name goes; then those three,
 * down to the first.  A shortened name keeps its end ("...tail").  Returns
 * the length written. */
static size_t cli_prog_fit(const char *label, const struct cli_prog_line *l, size_t width,
                           char *buf, size_t cap)
{
    size_t avail = width > 1 ? width - 1 : 1, llen = strlen(label);
    size_t lmin = llen < CLI_PROG_LABEL_MIN ? llen : CLI_PROG_LABEL_MIN;
    bool keep[CLI_PROG_FIELDS];
    for (unsigned i = 0; i < l->n; i++)
        keep[i] = true;
    while (lmin + cli_prog_flen(l, keep) > avail && cli_prog_drop(l, keep, CLI_PROG_CORE))
        ;
    if (lmin + cli_prog_flen(l, keep) > avail)
        while (cli_prog_flen(l, keep) - 2 > avail && cli_prog_drop(l, keep, -1))
            ;
    size_t flen = cli_prog_flen(l, keep);
    size_t room = avail > flen ? avail - flen : 0, pos = 0;
    if (llen <= room) {
        pos = (size_t)snprintf(buf, cap, "%s", label);
    } else if (room >= 4) {
        const char *tail = label + llen - (room - 3);
        while (cli_prog_cont(*tail))
            tail++;
        pos = (size_t)snprintf(buf, cap, "...%s", tail);
    }
    for (unsigned i = 0; i < l->n && pos < cap; i++)
        if (keep[i])
            pos += (size_t)snprintf(buf + pos, cap - pos, "%s%s", pos > 0 ? "  " : "", l->f[i]);
    if (pos >= cap)
        pos = cap - 1;
    if (pos > avail)
        pos = avail;
    buf[pos] = '\0';
    return pos;
}

/* ---- output ---- */

static bool cli_prog_write(const char *p, size_t n)
{
    return io_write(STDERR_FILENO, p, n, NULL) == 0;
}

/* Append n spaces to buf at *pos (within cap). */
static void cli_prog_pad(char *buf, size_t cap, size_t *pos, size_t n)
{
    if (n > cap - *pos)
        n = cap - *pos;
    memset(buf + *pos, ' ', n);
    *pos += n;
}

/* The columns of n bytes of UTF-8: every byte but continuation bytes (a
 * wide character counts one: the line is kept a column short anyway). */
static size_t cli_prog_ncols(const char *p, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += !cli_prog_cont(p[i]);
    return c;
}

/* The way back to the start of the line on screen when the terminal is now
 * narrower than that line (it was resized: SIGWINCH).  A terminal that
 * rewraps its lines on a resize (VTE's, konsole, kitty, alacritty, tmux,
 * Windows Terminal, iTerm2) has folded the line over several rows, the
 * cursor after its end: "\r", up to its first row (ESC [ n A), and erase
 * to the end of the screen (ESC [ J), so no piece of it stays behind.
 * (A terminal that cuts lines instead, as xterm, loses the row above the
 * line to this; not rewrapping, it shows no debris to begin with.)  Returns
 * the length written in b (32 bytes are enough), or 0 when the line still
 * fits in one row: then "\r" and spaces over it do, as for every other
 * update.  No stdio: the signal handler uses it too. */
static size_t cli_prog_unwrap_seq(bool ansi, size_t shown, size_t cols, char *b)
{
    if (!ansi || cols == 0 || shown < cols)
        return 0;
    size_t up = (shown - 1) / cols, v = up, k = 0, nd = 0; /* rows above the cursor's */
    char digits[24];
    do
        digits[nd++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    b[k++] = '\r';
    if (up > 0) {
        b[k++] = '\033';
        b[k++] = '[';
        while (nd > 0)
            b[k++] = digits[--nd];
        b[k++] = 'A';
    }
    b[k++] = '\033';
    b[k++] = '[';
    b[k++] = 'J';
    return k;
}

static size_t cli_prog_unwrap(const struct cli_prog *d, size_t cols, char *buf)
{
    return cli_prog_unwrap_seq(d->ansi, d->shown, cols, buf);
}

/* One update: "\r", the line, spaces over the rest of the previous one (or,
 * after a resize, cli_prog_unwrap's way back); `end` adds "\n" (the last
 * update when stderr is not a terminal).  The width is read for each update
 * (TIOCGWINSZ), so a resize is taken up at the next one, at most 200 ms
 * later: no SIGWINCH handler is needed. */
/* Now's counters into l's fields (the rate sampled); *done is the
 * measured counter.  Returns the time. */
static double cli_prog_take(struct cli_prog *d, struct cli_prog_line *l, uint64_t *done)
{
    double t = cli_prog_now();
    uint64_t in = prog_get(d->p, PROG_IN), out = prog_get(d->p, PROG_OUT);
    uint64_t skipped = prog_get(d->p, PROG_SKIP);
    *done = cli_prog_by_out(d) ? out : in;
    cli_prog_fields(d, l, in, out, prog_get(d->p, PROG_ZEROS),
                    cli_prog_rate(d, t, *done, *done > skipped ? *done - skipped : 0), t - d->t0);
    return t;
}

static void cli_prog_draw(struct cli_prog *d, bool end)
{
    if (d->dead)
        return;
    struct cli_prog_line l;
    uint64_t done;
    cli_prog_take(d, &l, &done);
    char buf[2 * CLI_PROG_LINE + 40];
    size_t cols = cli_prog_width(d), width = cols > CLI_PROG_LINE ? CLI_PROG_LINE : cols;
    size_t pos = cli_prog_unwrap(d, cols, buf);
    bool unwrapped = pos > 0;
    if (!unwrapped)
        buf[pos++] = '\r';
    size_t len = cli_prog_fit(d->label, &l, width, buf + pos, CLI_PROG_LINE);
    size_t ncols = cli_prog_ncols(buf + pos, len);
    pos += len;
    if (!unwrapped && ncols < d->shown)
        cli_prog_pad(buf, sizeof buf - 1, &pos, d->shown - ncols);
    if (end)
        buf[pos++] = '\n';
    d->dead = !cli_prog_write(buf, pos);
    d->shown = end ? 0 : ncols;
    d->draws++;
    atomic_store_explicit(&cli_prog_sig_shown, (int)d->shown, memory_order_relaxed);
}

/* Blank the line on a terminal and go back to its start. */
static void cli_prog_erase(struct cli_prog *d)
{
    char buf[2 + CLI_PROG_LINE];
    size_t pos = cli_prog_unwrap(d, cli_prog_width(d), buf);
    if (pos == 0) {
        buf[pos++] = '\r';
        cli_prog_pad(buf, sizeof buf - 1, &pos, d->shown);
        buf[pos++] = '\r';
    }
    if (!d->dead)
        d->dead = !cli_prog_write(buf, pos);
    d->shown = 0;
    atomic_store_explicit(&cli_prog_sig_shown, 0, memory_order_relaxed);
}

/* --progress=log: one plain line of every field when one is due (end: the
 * last one, always). */
static void cli_prog_log_line(struct cli_prog *d, bool end)
{
    if (d->dead)
        return;
    struct cli_prog_line l;
    uint64_t done;
    double t = cli_prog_take(d, &l, &done);
    uint64_t total = atomic_load_explicit(cli_prog_by_out(d) ? &d->p->out_total
                                                           : &d->p->in_total,
                                          memory_order_relaxed);
    unsigned pct = total == 0 ? 0 : done >= total ? 100 : (unsigned)(100.0 * (double)done / (double)total);
    bool due;
    if (end)
        due = true;
    else if (d->log.every_pct > 0 && total > 0)
        due = pct / d->log.every_pct > d->log_pct / d->log.every_pct;
    else
        due = t - d->log_last >= (double)(d->log.every_s > 0 ? d->log.every_s : 60);
    if (!due)
        return;
    char buf[CLI_PROG_LINE + 300];
    size_t pos = (size_t)snprintf(buf, sizeof buf, "%s: %s:", d->log.prog, d->label);
    for (unsigned i = 0; i < l.n && pos < sizeof buf - 2; i++)
        pos += (size_t)snprintf(buf + pos, sizeof buf - 1 - pos, "  %s", l.f[i]);
    if (pos > sizeof buf - 2)
        pos = sizeof buf - 2;
    buf[pos++] = '\n';
    d->dead = !cli_prog_write(buf, pos);
    d->log_last = t;
    d->log_pct = pct;
    d->draws++;
}

/* ---- the thread ---- */

/* The end of the line, once stopped: blanked on a terminal, else a last
 * update and a newline; nothing if nothing was drawn. */
static void cli_prog_end(struct cli_prog *d)
{
    if (d->log.on) {
        if (d->draws > 0 || cli_prog_now() - d->t0 >= CLI_PROG_DELAY_MS / 1000.0)
            cli_prog_log_line(d, true);
        return;
    }
    if (d->draws > 0 && d->tty)
        cli_prog_erase(d);
    else if (d->draws > 0)
        cli_prog_draw(d, true);
}

static void *cli_prog_main(void *arg)
{
    struct cli_prog *d = arg;
    double due = d->t0 + CLI_PROG_DELAY_MS / 1000.0;
    pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        struct timespec ts = cli_prog_abs(due);
        int rc = pthread_cond_timedwait(&d->cv, &d->mu, &ts);
        if (d->stop || (rc != ETIMEDOUT && cli_prog_now() < due))
            continue;
        pthread_mutex_unlock(&d->mu);
        /* The next draw is a full period after this one starts. */
        due = cli_prog_now() + CLI_PROG_PERIOD_MS / 1000.0;
        if (d->log.on)
            cli_prog_log_line(d, false);
        else
            cli_prog_draw(d, false);
        pthread_mutex_lock(&d->mu);
    }
    pthread_mutex_unlock(&d->mu);
    cli_prog_end(d);
    return NULL;
}

/* A printable copy of the name (its end if it is long): control characters
 * become '?'. */
static void cli_prog_label(struct cli_prog *d, const char *label)
{
    size_t n = label != NULL ? strlen(label) : 0;
    if (n < sizeof d->label) {
        snprintf(d->label, sizeof d->label, "%s", n > 0 ? label : "");
    } else {
        const char *tail = label + n - (sizeof d->label - 4);
        while (cli_prog_cont(*tail))
            tail++;
        snprintf(d->label, sizeof d->label, "...%s", tail);
    }
    for (char *s = d->label; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

static int cli_prog_sync_init(struct cli_prog *d)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return -1;
    int rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0 && (rc = pthread_cond_init(&d->cv, &ca)) == 0 &&
        (rc = pthread_mutex_init(&d->mu, NULL)) != 0)
        pthread_cond_destroy(&d->cv);
    pthread_condattr_destroy(&ca);
    return rc == 0 ? 0 : -1;
}

/* The display thread starts with every signal blocked. */
static int cli_prog_spawn(struct cli_prog *d)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&d->th, NULL, cli_prog_main, d);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc == 0 ? 0 : -1;
}

struct cli_prog *cli_prog_start(bool show, const char *label, struct sp_progress *p,
                                enum cli_prog_kind kind)
{
    if (p == NULL || !show)
        return NULL;
    struct cli_prog *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->p = p;
    d->kind = kind;
    d->log = cli_prog_log_cfg;
    d->tty = isatty(STDERR_FILENO) && !d->log.on; /* a log's lines are never erased */
    const char *term = getenv("TERM");
    d->ansi = d->tty && term != NULL && *term != '\0' && strcmp(term, "dumb") != 0;
    cli_prog_label(d, label);
    d->t0 = cli_prog_now();
    cli_prog_sample(d, d->t0, prog_get(p, PROG_IN), 0);
    if (cli_prog_sync_init(d) != 0) {
        free(d);
        return NULL;
    }
    atomic_store_explicit(&cli_prog_sig_tty, d->tty, memory_order_relaxed);
    atomic_store_explicit(&cli_prog_sig_ansi, d->ansi, memory_order_relaxed);
    if (cli_prog_spawn(d) != 0) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        free(d);
        return NULL;
    }
    return d;
}

void cli_prog_stop(struct cli_prog *d)
{
    if (d == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->th, NULL);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

/* ---- helpers for the commands and the signal handler ---- */

uint64_t cli_prog_total(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 0;
    if (S_ISREG(st.st_mode)) {
        off_t at = lseek(fd, 0, SEEK_CUR);
        return at >= 0 && at < st.st_size ? (uint64_t)(st.st_size - at) : 0;
    }
    uint64_t bytes;
    if (S_ISBLK(st.st_mode) && io_size(fd, &st, &bytes) == 0)
        return bytes;
    return 0;
}

/* The terminal's width for the signal handler, 0 when unknown.  ioctl() is a
 * plain system call, taking no lock: safe in a handler. */
static size_t cli_prog_sig_cols(void)
{
#ifdef TIOCGWINSZ
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0)
        return ws.ws_col;
#endif
    return 0;
}

void cli_prog_interrupted(void)
{
    int n = atomic_load_explicit(&cli_prog_sig_shown, memory_order_relaxed);
    if (n <= 0)
        return;
    if (!atomic_load_explicit(&cli_prog_sig_tty, memory_order_relaxed)) {
        (void)!write(STDERR_FILENO, "\n", 1);
        return;
    }
    char b[32];
    size_t k = cli_prog_unwrap_seq(atomic_load_explicit(&cli_prog_sig_ansi, memory_order_relaxed),
                                   (size_t)n, cli_prog_sig_cols(), b); /* narrowed under it */
    if (k > 0) {
        (void)!write(STDERR_FILENO, b, k);
        return;
    }
    (void)!write(STDERR_FILENO, "\r", 1);
    for (; n > 0; n -= CLI_PROG_SPACES)
        (void)!write(STDERR_FILENO, cli_prog_spaces,
                     (size_t)(n < CLI_PROG_SPACES ? n : CLI_PROG_SPACES));
    (void)!write(STDERR_FILENO, "\r", 1);
}
