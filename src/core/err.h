/* err.h — how the core reports failure.
 *
 * Contract: no function outside the CLI (spigz.c) prints or exits.  A failing
 * core function fills a struct sp_err and returns a negative value; the CLI
 * alone prints "spigz: NAME: message" and maps the kind to gzip's exit status.
 * An sp_err is owned by its caller and written by one thread at a time.
 */
#ifndef SPIGZ_ERR_H
#define SPIGZ_ERR_H

enum sp_kind {
    SP_OK = 0,
    SP_ERR_READ,     /* reading the input failed */
    SP_ERR_WRITE,    /* writing the output failed (disk full, broken pipe, ...),
                        or reading --compare's target (the output side) */
    SP_ERR_NOMEM,    /* an allocation failed */
    SP_ERR_SYS,      /* another system call failed (thread creation, ...) */
    SP_ERR_DATA,     /* the compressed input is invalid or truncated */
    SP_ERR_FORMAT,   /* the input is not in a format decoded here, or a member
                        header asks for what is not supported: the file is
                        refused, the run goes on (gzip's "not in gzip format",
                        "unknown method") */
    SP_ERR_CHECK,    /* the data decoded but its CRC-32 or length is not the
                        trailer's: the file is bad, the run goes on, as
                        gzip's does; SP_ERR_DATA (data that cannot be
                        decoded, or cut) and the I/O errors end the run, as
                        they end gzip's */
    SP_ERR_INTERNAL  /* a bug: an engine or invariant failed */
};

struct sp_err {
    enum sp_kind kind;
    int errnum;      /* errno at the failure, or 0 */
    char msg[256];   /* what failed and why, without the file name */
};

/* Record an error; the message gets ": strerror(errnum)" appended when
 * errnum is non-zero.  Keeps the first error: later calls do nothing. */
void sp_err_set(struct sp_err *e, enum sp_kind kind, int errnum,
                const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
