/* cli_manifest.h — a backup's manifest (doc/FORMAT.md §2.2): made from the
 * command, the input and its layout before the compressor runs, and shown
 * by -l as a readable block (stdout a terminal, or -vv) or a JSON object.
 *
 * What goes in (FORMAT.md lists the keys): spigz's version and the
 * options that shape the output, always; the partition table and the
 * filesystems (libblkid's reading, types named by libfdisk) of a seekable
 * input, with --free=zero what each filesystem used and the free map
 * itself; and, for an input named on the command line unless -n, where
 * from: the host, the source's path, kind, size, a file's modification
 * time, and for a device its model, serial and sector sizes (sysfs), and
 * the layout of a plain backup.  Nothing else: the same content gives the
 * same bytes from a pipe, stdin, a file (-n) or a device (-n), whatever -p,
 * and no clock is read (the date a backup was made is its file's own
 * modification time, which -l shows).  The compressor adds the digest.
 *
 * Contract: main thread; prints nothing but what the show functions are
 * asked to print.
 */
#ifndef SPIGZ_CLI_MANIFEST_H
#define SPIGZ_CLI_MANIFEST_H

#include <stdio.h>

#include "cli.h"
#include "lay.h"
#include "mf.h"

/* Fill *m (empty) for job j; map is --free=zero's (nparts 0 without it).
 * 0, or -1 out of memory (*m freed). */
int cli_manifest_make(const struct cli *c, const struct cli_job *j, const struct lay_map *map,
                      struct mf *m);

/* The index payload bytes the manifest m takes once the compressor has
 * added the image digest (its length's LEB128 included): what the
 * estimate prices. */
size_t cli_manifest_payload(const struct mf *m);

/* A readable block, each line indented, for -l; written: the backup
 * file's modification time (when it was made, as far as the file system
 * says), 0 when unknown. */
void cli_manifest_text(FILE *f, const struct mf *m, uint64_t written);

/* A JSON object (no newline): dotted keys as nested objects. */
void cli_manifest_json(FILE *f, const struct mf *m);

#endif
