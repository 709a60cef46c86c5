/* gzx.h — random access to any gzip file (one member or many: gzip, pigz,
 * `cat a.gz b.gz`) through an index of access points built in one
 * sequential pass: the backend vol.h uses for a file without spigz's index.
 *
 * The index (built by gzx_build, or loaded by gzx_load from a file that
 * gzx_save wrote, doc/FORMAT.md section 7):
 *  - access points, about every GZX_SPAN bytes of content, each at a
 *    deflate block boundary (its bit offset in the file and the last 32 KiB
 *    of the member's content before it, the window: deflated in memory and
 *    in the file, 0 to 32 KiB each), or at a member's header (no window);
 *    at most GZX_POINTS_MAX points: past that the span doubles and every
 *    other point goes, so the windows stay bounded on any file;
 *  - a CRC-32 of every GZX_CHUNK bytes of content (4 bytes a MiB), and a
 *    bit saying the chunk is all zeros.
 *
 * What is verified, and when:
 *  - gzx_build decodes every member, compares its CRC-32 and ISIZE with
 *    its trailer (SP_ERR_CHECK, naming the member's content range) and
 *    fails on invalid deflate (SP_ERR_DATA), so an index exists only for a
 *    file that gunzip decodes whole.  Bytes after the last member that do
 *    not start one (trailing zeros or garbage) are not content: gzip -d
 *    ignores them too (with a warning).  The file must not change during
 *    the pass (size and mtime compared at its end).
 *  - Every read decodes whole chunks from the nearest point before them
 *    and compares each chunk's CRC-32 with the one the build recorded
 *    before a byte of it is returned or cached; a mismatch or invalid
 *    deflate fails the read with SP_ERR_DATA naming the chunk's content
 *    range.  So a read returns the bytes the build pass decoded, or fails:
 *    with a CRC-32 a chunk, a damaged chunk passes only with probability
 *    2^-32.  What is not verified at read time: member trailers (the build
 *    did).  A loaded index is trusted as far as its own CRC-32 and the
 *    file's identity go (FORMAT.md 7.3): a forged index file with
 *    consistent CRCs can make reads return what its points decode to; a
 *    damaged one is rejected.
 *  - A chunk the pass saw all zeros is answered with zeros, never decoded
 *    again (a disk image's free space costs nothing to read): those are the
 *    bytes the pass decoded, whatever happened to the file since.
 *  - Before each decode, the file's size, mtime, inode and device are
 *    compared with those at open: a changed file fails (SP_ERR_DATA).
 *
 * Memory: the points (48 bytes each plus their deflated windows: at most
 * GZX_POINTS_MAX * ~32 KiB, in practice far less since windows of zeros or
 * text deflate well), the chunk CRCs and zero bits, a word per run of zero
 * or data chunks, the cache (cache_bytes of decoded
 * chunks, at most one chunk per GZX_CHUNK bytes of it, but always at least
 * one chunk held by each reader), and per concurrent read a decoder
 * (inflate state, a 256 KiB input buffer, a GZX_CHUNK scratch), kept in a
 * free list.  The build holds a 1 MiB input and a 256 KiB output buffer.
 *
 * Read-ahead: a read that follows the previous one (a sequential reader)
 * queues the next two spans for two threads of the gzx's, which decode them
 * into the cache while the reader copies (two cores decode at once); only
 * with a cache of at least 4 spans.  The threads start at the first such
 * read (not at open: a process may fork after opening) and end in
 * gzx_close; their decodes take decoders from the same free list.
 *
 * Contract: gzx_build, gzx_load, gzx_save and gzx_close from one thread
 * with no other call on the same gzx running; gzx_size, gzx_pread and
 * gzx_extent from any number of threads at once.  The caller owns fd (the
 * gzip file: a regular file, only pread, its offset never moved) and keeps
 * it open until gzx_close.  Never prints or exits.
 */
#ifndef SPIGZ_GZX_H
#define SPIGZ_GZX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "progress.h"

/* A point every 4 MiB of content: a random read decodes 2 MiB on average
 * before its bytes (~7 ms at zlib's ~300 MB/s), and the windows cost at most
 * 32 KiB per 4 MiB (0.8%), as gztool's and indexed_gzip's defaults do
 * (10 MiB and 1 MiB). */
#define GZX_SPAN ((uint64_t)4 << 20)
/* 32768 points: 128 GiB of content at GZX_SPAN, and at most 1 GiB of
 * windows even when none deflates. */
#define GZX_POINTS_MAX 32768u
/* Reads decode and check content by 1 MiB chunks: the unit of the cache
 * and of the CRC table. */
#define GZX_CHUNK ((uint64_t)1 << 20)
#define GZX_WINDOW 32768u
#define GZX_CACHE_DEFAULT ((uint64_t)64 << 20)
/* Head and tail of the gzip file whose CRC-32 the saved index holds. */
#define GZX_ID_BYTES 65536u

struct gzx_opts {
    uint64_t cache_bytes;     /* decoded chunks kept; 0: GZX_CACHE_DEFAULT */
    struct sp_progress *prog; /* gzx_build: PROG_IN by compressed bytes read, in_total set */
    /* gzx_build's spacing and point limit; 0: GZX_SPAN, GZX_POINTS_MAX (at
     * most that).  For tests and the fuzzer: many points on small files. */
    uint64_t span;
    uint32_t points_max;
    bool hold_ahead; /* no read-ahead until gzx_hold_ahead(g, false) (ra.h says why) */
};

struct gzx;

/* Build the index of the gzip file on fd in one pass.  0 with *out, or -1
 * with *err: SP_ERR_FORMAT (not gzip: the message says why), SP_ERR_DATA
 * (invalid or truncated deflate, a bad member header, the file changed),
 * SP_ERR_CHECK (a member's CRC-32 or ISIZE), SP_ERR_READ, SP_ERR_NOMEM. */
int gzx_build(int fd, const struct gzx_opts *o, struct gzx **out, struct sp_err *err);

/* Load the index saved as name in directory dirfd for the gzip file on fd.
 * 1 with *out; 0 when there is none or it is rejected (why says why: none,
 * it cannot be opened or is a link, a different or changed gzip file, a
 * damaged or foreign index file); -1 on another error (*err: SP_ERR_READ,
 * SP_ERR_NOMEM). */
int gzx_load(int fd, const struct gzx_opts *o, int dirfd, const char *name, struct gzx **out,
             char *why, size_t whylen, struct sp_err *err);

/* The same from idxfd, an open index file (read with pread from 0). */
int gzx_load_fd(int fd, const struct gzx_opts *o, int idxfd, struct gzx **out, char *why,
                size_t whylen, struct sp_err *err);

/* Save the index as name in dirfd: written to a new temporary name there
 * (".gzx-PID-N.tmp"), with the gzip file's permission bits (its windows are
 * pieces of the content), fsync'd, then renamed over name (never a partial
 * file under name); refused when name is the gzip file itself (the same
 * inode: the index would replace the file it indexes).  name is a plain name (no '/').  0, or -1 with *err
 * (SP_ERR_WRITE with errno; the temporary file removed). */
int gzx_save(const struct gzx *g, int dirfd, const char *name, struct sp_err *err);

/* Hold (no read-ahead thread started, nothing queued) or release read-ahead
 * (ra.h: ra_hold_ahead, for a caller that forks after reading).  Any thread. */
void gzx_hold_ahead(struct gzx *g, bool hold);

/* The same, written to idxfd from offset 0 (the caller truncates). */
int gzx_save_fd(const struct gzx *g, int idxfd, struct sp_err *err);

/* The content's length: the members' decoded bytes, end to end. */
uint64_t gzx_size(const struct gzx *g);

/* Access points, gzip members, for a display. */
uint64_t gzx_npoints(const struct gzx *g);
uint64_t gzx_nmembers(const struct gzx *g);

/* The file offset just after the last member's trailer. */
uint64_t gzx_data_end(const struct gzx *g);

/* Read up to len bytes at off: the bytes read (fewer only at the end; 0 at
 * or past it), or -1 with *err (SP_ERR_DATA naming the chunk's content
 * range, SP_ERR_READ, SP_ERR_NOMEM); buf's content is then undefined. */
int64_t gzx_pread(struct gzx *g, void *buf, size_t len, uint64_t off, struct sp_err *err);

/* The run of zero chunks, or of data chunks, holding off: 0 with *len
 * (bytes from off to the run's end) and *zero, or -1 at or past the end.
 * A zero run reads as zeros (the pass saw them); a data run may hold zeros
 * too. */
int gzx_extent(const struct gzx *g, uint64_t off, uint64_t *len, bool *zero);

/* Access point k (< gzx_npoints) as another tool resumes there (zran's
 * convention): raw inflate from byte coff of the file, primed first with
 * the top `bits` bits of byte coff - 1 when bits > 0, with the window (zwin:
 * zlen bytes of a zlib stream of wlen bytes, compress2's; NULL for 0) as
 * its dictionary.  A point at a member's header is given past the header
 * (bits 0, no window), which is read for that.  0, or -1 with *err (the
 * header cannot be read or is not valid: SP_ERR_READ, SP_ERR_DATA).  The
 * window stays the gzx's. */
struct gzx_xpoint {
    uint64_t uoff, coff;
    unsigned bits;
    uint32_t wlen, zlen;
    const uint8_t *zwin;
};
int gzx_xpoint(const struct gzx *g, uint64_t k, struct gzx_xpoint *x, struct sp_err *err);

void gzx_close(struct gzx *g);

#endif
