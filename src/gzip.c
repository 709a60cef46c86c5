/* gzip.c — see gzip.h. */
#include "gzip.h"

#include <string.h>

static void gz_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

size_t gz_header(uint8_t *buf, const char *name, uint32_t mtime, int level)
{
    buf[0] = 0x1f;
    buf[1] = 0x8b;
    buf[2] = 8;                      /* CM = deflate */
    buf[3] = name != NULL ? 0x08 : 0; /* FNAME */
    gz_le32(buf + 4, mtime);
    buf[8] = level >= 9 ? 2 : level == 1 ? 4 : 0; /* XFL: slowest, fastest */
    buf[9] = 3;                      /* OS = Unix */
    size_t n = 10;
    if (name != NULL) {
        size_t len = strlen(name);
        memcpy(buf + n, name, len + 1);
        n += len + 1;
    }
    return n;
}

void gz_end(uint8_t buf[GZ_END_LEN], uint32_t crc, uint64_t length)
{
    buf[0] = 0x03; /* BFINAL = 1, BTYPE = fixed, then end-of-block (7 zero bits) */
    buf[1] = 0x00;
    gz_le32(buf + 2, crc);
    gz_le32(buf + 6, (uint32_t)length);
}
