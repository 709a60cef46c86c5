/* cmd_decompress.h — what -d and -t (cmd_decompress.c), -l (cmd_list.c)
 * and --compare (cmd_compare.c) share.
 *
 * Contract: as cli.h's: main thread only; these print and set the exit
 * status, as the command line does.  Names are malloc'd: the caller frees
 * them.
 */
#ifndef SPIGZ_CMD_DECOMPRESS_H
#define SPIGZ_CMD_DECOMPRESS_H

#include <stdint.h>

#include "cli.h"
#include "dec.h"
#include "gzip.h"
#include "osink.h"

/* The output name for a compressed file name, gzip's way: strip the chosen
 * suffix or a known one (.tgz and .taz become .tar).  NULL if none fits. */
char *cd_out_name(const struct cli *c, const char *path);

/* -lN: the stored name as gzip lists it, next to the input. */
char *cd_list_stored_name(const char *path, const struct gz_info *h);

/* gzip's ratio, in percent: what compression saved of out. */
double cd_ratio(uint64_t in, uint64_t out);

/* Decompress j into the sink o, with progress; prints errors, warnings and
 * --salvage's findings, writes --bad-map.  0, or -1 (said). */
int cd_run(struct cli *c, struct cli_job *j, struct osink *o, struct dec_stats *st);

/* -l of j (cmd_list.c). */
void cd_list(struct cli *c, struct cli_job *j);

#endif
