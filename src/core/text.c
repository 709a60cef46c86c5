/* text.c — see text.h. */
#include "config.h"
#include "text.h"

#include <stdio.h>
#include <string.h>

/* The length of the printable character at p (at most n bytes), or 0. */
static size_t txt_char(const uint8_t *p, size_t n)
{
    uint8_t c = p[0];
    if (c < 0x20 || c == 0x7F)
        return 0;
    if (c < 0x80)
        return 1;
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (len == 0 || c > 0xF4 || len > n)
        return 0;
    uint32_t v = c & (0x3F >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3F);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < least[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) ||
        (v >= 0x80 && v <= 0x9F))
        return 0;
    return len;
}

bool txt_printable(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = txt_char(p + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

char *txt_clean(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = txt_char((const uint8_t *)s + i, n - i);
        if (k == 0) {
            s[i++] = '?';
            continue;
        }
        i += k;
    }
    return s;
}

char *txt_size(char *b, size_t n, double v)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0) /* "512 B" */
        snprintf(b, n, "%.0f B", v);
    else /* three significant digits: 1.20, 12.3, 123 (1023 at most) */
        snprintf(b, n, "%.*f %s", v < 9.995 ? 2 : v < 99.95 ? 1 : 0, v, unit[u]);
    return b;
}
