/* cli_gzx.c — see cli_gzx.h. */
#include "cli_gzx.h"
#include "cli_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* dfd opened by cli_dir_of, kept as ours (AT_FDCWD duplicated: the
 * caller closes one descriptor either way). */
static int cli_gzx_dir(const char *path, int *dfd, const char **base)
{
    if (cli_dir_of(path, dfd, base) != 0)
        return -1;
    if (*dfd == AT_FDCWD && (*dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -1;
    return 0;
}

int cli_gzx_place(const char *gz_path, const char *index_file, struct cli_gzx *x,
                  struct vol_opts *o)
{
    const char *base;
    x->dirfd = -1;
    x->name[0] = 0;
    o->idx_dirfd = -1;
    o->idx_name = NULL;
    o->idx_save = false;
    if (index_file != NULL) {
        if (cli_gzx_dir(index_file, &x->dirfd, &base) != 0)
            return -1;
        if (base[0] == 0 || strlen(base) > NAME_MAX) {
            cli_gzx_done(x);
            errno = base[0] == 0 ? EISDIR : ENAMETOOLONG;
            return -1;
        }
        snprintf(x->name, sizeof x->name, "%s", base);
        o->idx_save = true;
    } else {
        if (cli_gzx_dir(gz_path, &x->dirfd, &base) != 0)
            return 0; /* in memory */
        if (base[0] == 0 || strlen(base) + strlen(CLI_GZX_SUFFIX) > NAME_MAX) {
            cli_gzx_done(x);
            return 0;
        }
        snprintf(x->name, sizeof x->name, "%s%s", base, CLI_GZX_SUFFIX);
        o->idx_save = faccessat(x->dirfd, ".", W_OK, AT_EACCESS) == 0;
    }
    o->idx_dirfd = x->dirfd;
    o->idx_name = x->name;
    return 0;
}

void cli_gzx_done(struct cli_gzx *x)
{
    if (x->dirfd >= 0)
        close(x->dirfd);
    x->dirfd = -1;
}
