/* text.h — text that reaches a terminal from untrusted bytes (filesystem
 * labels, an index's notes): UTF-8 that holds no control character.
 *
 * A label read from a disk, or a note read from a backup, is printed to a
 * terminal; raw, it could carry escape sequences (C0 controls, DEL, and
 * the C1 controls U+0080..U+009F, which terminals also obey).  Contract:
 * pure functions of their arguments, any thread.
 */
#ifndef SPIGZ_TEXT_H
#define SPIGZ_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether p[0..n) is valid UTF-8 (shortest forms, no surrogates, at most
 * U+10FFFF) holding no control character (below 0x20, 0x7F, U+0080 to
 * U+009F). */
bool txt_printable(const uint8_t *p, size_t n);

/* Make the NUL-terminated s printable in place: each byte that does not
 * start a printable character (a control, a byte of invalid UTF-8) becomes
 * '?'.  Returns s. */
char *txt_clean(char *s);

/* v bytes in binary units with three significant digits, as people read
 * sizes: "512 B", "1.20 KiB", "33.0 MiB", "977 GiB" (the largest unit v
 * reaches, up to EiB; a number and a unit, never more than 16 bytes with
 * the NUL).  For the progress line, reports and errors alike (an error
 * shows it beside the exact bytes).  Returns b. */
#define TXT_SIZE_LEN 16
char *txt_size(char *b, size_t n, double v);

#endif
