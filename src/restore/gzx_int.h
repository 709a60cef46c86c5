/* gzx_int.h — what gzx.c (the build pass), gzx_read.c (reads and their
 * cache) and gzx_file.c (the saved index) share.  Not for other modules. */
#ifndef SPIGZ_GZX_INT_H
#define SPIGZ_GZX_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "err.h"
#include "gzx.h"

/* An access point.  member: at a member's header (coff its first byte,
 * bits 0, no window); else at a block boundary: the deflate stream goes on
 * at bit (8 - bits) of byte coff - 1 when bits > 0, else at byte coff, and
 * zwin holds the member's last wlen (<= 32 KiB) content bytes before uoff,
 * deflated with compress2() (zlib format, zlen bytes). */
struct gzx_point {
    uint64_t uoff, coff;
    uint32_t wlen, zlen;
    uint8_t bits;
    bool member;
    uint8_t *zwin;
};

/* Which gzip file an index belongs to: the saved index's check. */
struct gzx_id {
    uint64_t size;
    int64_t mtime_ns;
    uint32_t head_crc, tail_crc; /* CRC-32 of the first and last min(size, 64 KiB) bytes */
};

/* A buffered sequential reader of the file, by pread: buf[at..have) are the
 * file's bytes from base + at; nothing past limit is read. */
struct gzx_rd {
    int fd;
    uint8_t *buf;
    size_t cap, have, at;
    uint64_t base, limit;
    int err; /* errno of a failed read, else 0 */
};

struct gzx_ent;
struct gzx_slot;

/* Read-ahead: two threads, each decoding one span ahead of a sequential
 * reader (so that two spans decode at once on two cores while the reader
 * copies); requests beyond the queue are dropped. */
#define GZX_RA_THREADS 2
#define GZX_RA_QUEUE 4

struct gzx {
    int fd;
    struct gzx_id id;
    uint64_t ino, dev;
    uint64_t total, data_end, nmembers;
    struct gzx_point *p;
    uint64_t np;
    uint32_t *crc; /* a CRC-32 per chunk */
    uint8_t *zero; /* a bit per chunk: all its bytes are zeros */
    uint64_t nchunks;
    uint64_t *run; /* first chunk of each run of zero or data chunks, then nchunks */
    uint64_t nrun;
    /* the cache (gzx_read.c), under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool sync; /* mu and cv initialised */
    struct gzx_ent **bucket;
    uint64_t nbucket;
    struct gzx_ent *head, *tail;
    uint64_t cap, bytes, max_ent, nent;
    struct gzx_slot *slots;
    /* read-ahead (gzx_read.c), under mu: chunks to decode ahead of a
     * sequential reader, and the threads that do, started at the first */
    uint64_t ra_req[GZX_RA_QUEUE];
    uint64_t ra_last; /* the chunk the last read began in */
    unsigned ra_nreq, ra_nthr;
    bool ra_stop;
    bool ra_held; /* gzx_hold_ahead */
    pthread_cond_t ra_cv;
    pthread_t ra_thr[GZX_RA_THREADS];
};

/* gzx.c */
int gzx_identify(int fd, struct gzx_id *id, uint64_t *ino, uint64_t *dev, struct sp_err *err);
void gzx_rd_seek(struct gzx_rd *r, uint64_t off);
int gzx_rd_fill(struct gzx_rd *r);
int gzx_rd_getc(void *ctx);
uint64_t gzx_rd_pos(const struct gzx_rd *r);
int gzx_header(struct gzx_rd *r, bool first, struct sp_err *err);
void gzx_free_tables(struct gzx *g);
uint64_t gzx_nchunks(uint64_t total);
static inline bool gzx_is_zero(const struct gzx *g, uint64_t c)
{
    return g->zero[c / 8] >> (c % 8) & 1;
}
/* The runs of zero or data chunks (g->run) from g->zero: 0, or -1. */
int gzx_runs(struct gzx *g);

/* gzx_read.c: the cache's tables for a new gzx (0, or -1 out of memory),
 * and their release. */
int gzx_cache_init(struct gzx *g, uint64_t cache_bytes);
void gzx_cache_free(struct gzx *g);

#endif
