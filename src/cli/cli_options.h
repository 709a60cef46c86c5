/* cli_options.h — the command line's options (cli_options.c).
 *
 * gzip's options and pigz's, plus spigz's own: short ones bundled (-dc),
 * long ones abbreviated to any unique prefix, GZIP's (those gzip takes
 * there) before argv's, "--" ending them.  --help, --version and
 * --license print and exit 0; a usage error says why and exits 1.
 *
 * Contract: main thread, once, before any input; it prints and may exit,
 * as the command line alone does.  The strings c keeps point into argv and
 * GZIP's copy, which live as long as the process.
 */
#ifndef SPIGZ_CLI_OPTIONS_H
#define SPIGZ_CLI_OPTIONS_H

#include "cli.h"

/* Parse GZIP and argv into c (c holds the defaults, and the mode the
 * program's name gives), check the options against each other, and put
 * the file operands in files (argc entries at most).  Returns how many. */
int cli_options(struct cli *c, int argc, char **argv, char **files);

#endif
