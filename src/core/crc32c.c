/* crc32c.c — see crc32c.h. */
#include "config.h"
#include "crc32c.h"

#include <pthread.h>

static uint32_t crc32c_table[256];
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;

static void crc32c_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc32c_table[i] = c;
    }
}

uint32_t crc32c(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&crc32c_once, crc32c_init);
    const uint8_t *b = p;
    crc = ~crc;
    while (n--)
        crc = crc32c_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
    return ~crc;
}
