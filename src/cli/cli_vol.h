/* cli_vol.h — a backup opened at random for a command (--mount, --partition):
 * its volume (restore/vol.h) with the gzip index of a file without spigz's
 * index kept where cli_gzx.h says, a progress line while one is built, and
 * the partitions the kernel would find in its image.
 *
 * Contract: the CLI's main thread; messages are the caller's (errors come
 * back in the sp_err or as a sentence in `why`), except the progress line
 * and -v's note on the gzip index, which are printed here as the mount
 * always printed them.  The caller closes the volume (vol_close) and the
 * descriptor after it.
 */
#ifndef SPIGZ_CLI_VOL_H
#define SPIGZ_CLI_VOL_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "err.h"
#include "lay.h"
#include "vol.h"

/* Open the volume of the backup `name` open on fd (a regular file).
 * hold_ahead: read-ahead held (vol_opts), for a process that forks later.
 * 0 with *out, or -1 with *err set (err->msg names the cause; an
 * --index-file that cannot be placed gives SP_ERR_SYS and errno's text). */
int cli_vol_open(struct cli *c, const char *name, int fd, bool hold_ahead, struct vol **out,
                 struct sp_err *err);

/* The partitions of the volume's image, as the kernel would number them
 * (lay_kernel_parts: a GPT, or an MBR with its logicals).  0 with *p
 * (malloc'd, the caller frees; NULL when *n is 0), or -1 out of memory.
 * A table that could not be read (a damaged piece) is no error: *n may be
 * 0, and *table_err holds the first failed read (kind SP_OK when none). */
int cli_vol_parts(struct vol *v, struct lay_kpart **p, size_t *n, struct sp_err *table_err);

#endif
