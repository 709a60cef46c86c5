/* xidx.h — export a spigz file's piece index for other random-access gzip
 * tools: gztool (its .gzi files) and Python's indexed_gzip (the files of
 * IndexedGzipFile.export_index / import_index).  doc/FORMAT.md section 6
 * gives both layouts and why each field has the value written here.
 *
 * Every spigz piece starts on a byte boundary between deflate blocks and
 * refers to nothing before itself (FORMAT.md section 1), so each piece is an
 * access point that needs no window: the export writes one point per piece,
 * plus one at the end of the deflate stream (the final `03 00` block, at
 * the content's end), with no window data at all.  That last point is what
 * keeps the tools from extending the index (gztool) or refusing offsets in
 * the last piece (indexed_gzip without auto_build).
 *
 * Contract:
 *  - xidx_write takes an index loaded by idx_load from the whole file (base
 *    0) and that file's size.  It checks the index is consistent (offsets
 *    increasing, ending where the data member ends; the file size the
 *    footer's) before writing a byte, so any struct idx it is given makes it
 *    write a complete index or return an error, never read out of bounds.
 *    A data member that does not start the file (base != 0: other members
 *    before it) is refused with SP_ERR_FORMAT: the tools count offsets from
 *    the file's first byte and would decode those members too.
 *  - It writes to fd (from its current position, with write(2); the fd
 *    stays open and is the caller's), nothing else: no allocation, no
 *    printing, no exit.  On failure it returns -1 with *err set (SP_ERR_WRITE
 *    with errno when a write fails; then part of the index may have been
 *    written: the caller removes the file); it returns 0 on success.
 *  - The struct idx is only read, so threads may share it; each call needs
 *    its own fd and err.
 */
#ifndef SPIGZ_XIDX_H
#define SPIGZ_XIDX_H

#include <stdint.h>

#include "err.h"
#include "gzx.h"
#include "idx.h"

enum xidx_fmt {
    XIDX_GZTOOL,        /* gztool 1.x, index version 0 ("gzipindx") */
    XIDX_INDEXED_GZIP   /* indexed_gzip >= 1.5, index file version 1 ("GZIDX") */
};

/* The format named "gztool", "indexed_gzip" or "indexed-gzip".  Returns 0
 * with *fmt set, or -1 (unknown name; *fmt unchanged). */
int xidx_parse_fmt(const char *name, enum xidx_fmt *fmt);

/* The canonical name of a format ("gztool", "indexed_gzip"), or NULL. */
const char *xidx_fmt_name(enum xidx_fmt fmt);

/* The exact size in bytes of the index xidx_write writes for x, or 0 when
 * it would refuse it for its size (more points than the format counts). */
uint64_t xidx_size(const struct idx *x, enum xidx_fmt fmt);

/* Write x, the index of a spigz file of file_size bytes, in format fmt. */
int xidx_write(const struct idx *x, uint64_t file_size, enum xidx_fmt fmt, int fd,
               struct sp_err *err);

/* The same for any other gzip file, from its gzip index (gzx.h): one point
 * per access point, at a member's start past its header with no window,
 * else with its window (gztool: the deflated window as gzx keeps it, a
 * zlib stream; indexed_gzip: the 32 KiB raw, a shorter window after
 * zeros, which the member's deflate never refers to).  Then, as for a spigz
 * file, a point at the content's end (compressed offset: the end of the last
 * member; no window), unless the last point is there already: without it
 * indexed_gzip refuses offsets past the last point and gztool extends the
 * index.  Neither decodes from it.  Reads the gzip file (gzx_xpoint) for the
 * members' headers.  0, or -1 with *err (SP_ERR_WRITE as above; the
 * header errors of gzx_xpoint; SP_ERR_FORMAT: more points than the format
 * counts, never for gzx's at most GZX_POINTS_MAX). */
uint64_t xidx_gzx_size(const struct gzx *g, enum xidx_fmt fmt);
int xidx_write_gzx(const struct gzx *g, uint64_t file_size, enum xidx_fmt fmt, int fd,
                   struct sp_err *err);

#endif
