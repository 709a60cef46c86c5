/* gzip.h — the gzip member framing (RFC 1952) around spigz's deflate stream.
 *
 * Writing: the header spigz writes and the stream's end and trailer.
 * Reading: a header parser that follows GNU gzip 1.12's verdicts (unknown
 * method, encrypted or reserved flags, header CRC when FHCRC is set).
 *
 * Contract: pure functions filling caller buffers; any thread.  The parser
 * reads through a callback so it works on a stream as on a buffer.
 */
#ifndef SPIGZ_GZIP_H
#define SPIGZ_GZIP_H

#include <stddef.h>
#include <stdint.h>

/* Largest header gz_write_header() writes: 10 bytes + name + NUL. */
#define GZ_HEADER_MAX(namelen) (10 + (namelen) + 1)

/* Write a member header into buf: deflate, no FHCRC, FNAME when name is
 * non-NULL (stored as given, NUL-terminated), MTIME as given (0: none), XFL
 * from the level as gzip sets it, OS = Unix.  Returns the length. */
size_t gz_write_header(uint8_t *buf, const char *name, uint32_t mtime, int level);

/* The end of the deflate stream (an empty final fixed block) and the
 * trailer: CRC-32 and ISIZE (length mod 2^32), little-endian.  10 bytes. */
#define GZ_END_LEN 10
void gz_end(uint8_t buf[GZ_END_LEN], uint32_t crc, uint64_t length);

/* ---- reading ---- */

#define GZ_FTEXT 0x01
#define GZ_FHCRC 0x02
#define GZ_FEXTRA 0x04
#define GZ_FNAME 0x08
#define GZ_FCOMMENT 0x10
#define GZ_FENCRYPTED 0x20 /* old gzip: encryption, never supported */
#define GZ_FRESERVED 0xc0

enum gz_status {
    GZ_OK = 0,
    GZ_TRUNCATED = -1, /* input ended inside the header */
    GZ_NOT_GZIP = -2,  /* wrong magic */
    GZ_BAD_METHOD = -3,
    GZ_ENCRYPTED = -4,
    GZ_BAD_FLAGS = -5,
    GZ_BAD_HCRC = -6,
    GZ_READ_ERROR = -7 /* the callback reported a read error */
};

#define GZ_NAME_MAX 1024 /* longer stored names are truncated, as gzip does */

struct gz_info {
    uint8_t method, flags, xfl, os;
    uint32_t mtime;
    char name[GZ_NAME_MAX]; /* stored FNAME, NUL-terminated; "" if none */
    uint64_t len;           /* header bytes, magic to FHCRC included */
    unsigned extra_len;     /* FEXTRA's XLEN, 0 without one */
    unsigned hcrc_stored, hcrc_computed;
};

/* The next input byte (0..255), -1 at the end of the input, -2 on error. */
typedef int (*gz_getc_fn)(void *ctx);

/* Read one member header, magic included.  Returns GZ_OK or a status. */
int gz_read_header(gz_getc_fn get, void *ctx, struct gz_info *h);

/* A message for a status, in GNU gzip's words where it has them. */
const char *gz_status_msg(int status, const struct gz_info *h, char *buf, size_t n);

#endif
