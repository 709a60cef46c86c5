/* idx_fmt.c — see idx_fmt.h. */
#include "idx_fmt.h"

const uint8_t idx_hdr[10] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff};
const uint8_t idx_end[10] = {0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0};
