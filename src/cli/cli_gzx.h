/* cli_gzx.h — where the index of a gzip file without spigz's index is kept
 * (restore/gzx.h, doc/FORMAT.md section 7), for the commands that open a
 * backup at random (--mount, the NBD plugin's front end).
 *
 * Beside the file as FILE.gz.gzx, when the folder is writable; with
 * --index-file PATH, at PATH (saved there whatever the folder of the gzip
 * file allows).  Elsewhere (a read-only folder, no --index-file) an index
 * found beside the file is still loaded, and a built one is kept in memory
 * only.
 *
 * Contract: fills the vol_opts index fields; the caller closes *dirfd
 * (when >= 0) after vol_open().  No messages: errno says why on failure.
 */
#ifndef SPIGZ_CLI_GZX_H
#define SPIGZ_CLI_GZX_H

#include <limits.h>
#include <stddef.h>

#include "vol.h"

#define CLI_GZX_SUFFIX ".gzx"

struct cli_gzx {
    int dirfd;                /* the index's folder, or -1; closed by cli_gzx_done */
    char name[NAME_MAX + 1];  /* the index's name in it */
};

/* Set o->idx_dirfd, idx_name and idx_save for the gzip file at gz_path, or
 * for index_file (--index-file; NULL without it).  0, or -1 (errno set: the
 * folder of index_file cannot be opened, or its name is too long).  Without
 * index_file a folder that cannot be opened is not an error: the index is
 * then built in memory. */
int cli_gzx_place(const char *gz_path, const char *index_file, struct cli_gzx *x,
                  struct vol_opts *o);

void cli_gzx_done(struct cli_gzx *x);

#endif
