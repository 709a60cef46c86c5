/* lay_swap.c — Linux swap: only the header page holds data.
 *
 * A swap area (mkswap's version 1 header, "SWAPSPACE2" in the last 10 bytes
 * of its first page) holds nothing after the header page that outlives the
 * system that swapped to it.  A hibernation image (libblkid's "swsuspend",
 * the signature replaced) is data, and is not mapped: only "swap" comes
 * here.  The header is in the byte order of the machine that wrote it;
 * libblkid accepts both, and so does this.  Pages past last_page, when the
 * partition is longer, are read as they are.
 */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"
#include "le.h"

#include <stdio.h>
#include <string.h>

static uint32_t lay_swap_u32(const uint8_t *p, bool big)
{
    return big ? be_get32(p) : le_get32(p);
}

int lay_swap_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why, size_t wn)
{
    static const uint32_t pages[] = {4096, 8192, 16384, 32768, 65536};
    uint8_t magic[10], info[8];
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        uint64_t ps = pages[i];
        if (lay_dev_read(d, ps - 10, magic, sizeof magic) != 0)
            break;
        if (memcmp(magic, "SWAPSPACE2", 10) != 0)
            continue;
        if (lay_dev_read(d, 1024, info, sizeof info) != 0)
            break;
        bool big = lay_swap_u32(info, false) != 1;
        if (lay_swap_u32(info, big) != 1) {
            snprintf(why, wn, "swap header version %u is not known", lay_swap_u32(info, false));
            return 0;
        }
        uint64_t last = lay_swap_u32(info + 4, big);
        if (last == 0) {
            snprintf(why, wn, "its swap header counts no page");
            return 0;
        }
        *fs_len = (last + 1) * ps;
        return lay_used_add(u, 0, ps) != 0 ? -1 : 1;
    }
    snprintf(why, wn, "no version 1 swap header found");
    return 0;
}
