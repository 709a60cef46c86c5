/* Unit tests for text.h: printable UTF-8 accepted, controls (C0, DEL, C1)
 * and malformed UTF-8 (overlong, surrogates, past U+10FFFF, cut short)
 * refused, and cleaned to '?' one byte at a time. */
#include "check_util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static bool ok(const char *s)
{
    return txt_printable((const uint8_t *)s, strlen(s));
}

START_TEST(test_printable)
{
    ck_assert(ok(""));
    ck_assert(ok("partition 1 (gpt): ext4 \"root\", read whole"));
    ck_assert(ok("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80")); /* é, €, an emoji */
    ck_assert(!ok("tab\there"));
    ck_assert(!ok("esc\x1b[2J"));
    ck_assert(!ok("del\x7f"));
    ck_assert(!ok("c1 \xc2\x9b" "2J")); /* U+009B, CSI */
    ck_assert(!ok("c1 \xc2\x85"));      /* U+0085, NEL */
    ck_assert(ok("\xc2\xa0"));          /* U+00A0, the first after C1 */
    ck_assert(!ok("\xc0\x80"));         /* overlong NUL */
    ck_assert(!ok("\xe0\x80\xaf"));     /* overlong '/' */
    ck_assert(!ok("\xed\xa0\x80"));     /* a surrogate */
    ck_assert(!ok("\xf4\x90\x80\x80")); /* past U+10FFFF */
    ck_assert(!ok("\xe2\x82"));         /* cut short */
    ck_assert(!ok("\x80"));             /* a lone continuation byte */
    ck_assert(!ok("\xfe"));
}
END_TEST

START_TEST(test_clean)
{
    char a[] = "a\tb\x1b[0m\xc2\x9b\xc3\xa9\xe2\x82";
    ck_assert_str_eq(txt_clean(a), "a?b?[0m??\xc3\xa9??");
    ck_assert(ok(a));
    char b[] = "plain";
    ck_assert_str_eq(txt_clean(b), "plain");
}
END_TEST

/* Sizes as people read them: three significant digits in the largest
 * binary unit reached, bytes below 1 KiB. */
START_TEST(test_size)
{
    static const struct {
        double v;
        const char *want;
    } c[] = {
        {0, "0 B"},           {512, "512 B"},        {1023, "1023 B"},
        {1024, "1.00 KiB"},   {1536, "1.50 KiB"},    {10234, "9.99 KiB"},
        {10240, "10.0 KiB"},  {102400, "100 KiB"},   {33554432, "32.0 MiB"},
        {1099511627776.0, "1.00 TiB"}, {18446744073709551615.0, "16.0 EiB"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char b[TXT_SIZE_LEN];
        ck_assert_str_eq(txt_size(b, sizeof b, c[i].v), c[i].want);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("utf8");
    tcase_add_test(tc, test_printable);
    tcase_add_test(tc, test_clean);
    tcase_add_test(tc, test_size);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
