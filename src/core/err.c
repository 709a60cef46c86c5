/* err.c — see err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void sp_err_set(struct sp_err *e, enum sp_kind kind, int errnum,
                const char *fmt, ...)
{
    if (e == NULL || e->kind != SP_OK)
        return;
    e->kind = kind;
    e->errnum = errnum;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    if (errnum != 0 && n >= 0 && (size_t)n < sizeof e->msg)
        snprintf(e->msg + n, sizeof e->msg - (size_t)n, ": %s", strerror(errnum));
}
