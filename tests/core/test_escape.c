/* sv_escape_text and the messages of sv_error: text from files and command
 * lines (keys, strings, file names) never reaches the terminal raw. */
#include <stdio.h>
#include <string.h>

#include "solvent/core.h"
#include "sv_test.h"

static const char *esc(const char *s, size_t cap)
{
    static char buf[256];
    return sv_escape_text(s, buf, cap < sizeof buf ? cap : sizeof buf);
}

static void test_kept_as_is(void **state)
{
    (void)state;
    assert_string_equal(esc("plain ASCII: {\"x\": [1, 2]} \\ ok", 256), "plain ASCII: {\"x\": [1, 2]} \\ ok");
    assert_string_equal(esc("\xc2\xb5m and 3 \xc3\x97 4 and \xf0\x9f\x99\x82", 256),
                        "\xc2\xb5m and 3 \xc3\x97 4 and \xf0\x9f\x99\x82"); /* µm, ×, an emoji */
    assert_string_equal(esc("", 256), "");
    assert_string_equal(esc(NULL, 256), "");
}

static void test_controls_escaped(void **state)
{
    (void)state;
    assert_string_equal(esc("a\x1b[2J\x1b]0;title\x07z", 256), "a\\x1b[2J\\x1b]0;title\\x07z");
    assert_string_equal(esc("two\nlines\tand\rreturn", 256), "two\\nlines\\tand\\rreturn");
    assert_string_equal(esc("del\x7f", 256), "del\\x7f");
    assert_string_equal(esc("c1 \xc2\x9b" "31m", 256), "c1 \\u009b31m");          /* CSI as one code point */
    assert_string_equal(esc("bidi \xe2\x80\xae" "txt", 256), "bidi \\u202etxt"); /* right-to-left override */
}

static void test_invalid_utf8_escaped(void **state)
{
    (void)state;
    assert_string_equal(esc("\xff\xfe", 256), "\\xff\\xfe");
    assert_string_equal(esc("\xc0\xaf", 256), "\\xc0\\xaf");                 /* overlong '/' */
    assert_string_equal(esc("\xed\xa0\x80", 256), "\\xed\\xa0\\x80");        /* a surrogate */
    assert_string_equal(esc("\xe2\x82 cut", 256), "\\xe2\\x82 cut");         /* truncated sequence */
    assert_string_equal(esc("\xf4\x90\x80\x80", 256), "\\xf4\\x90\\x80\\x80"); /* beyond U+10FFFF */
    assert_string_equal(esc("\x80lone", 256), "\\x80lone");
}

static void test_cut_and_idempotent(void **state)
{
    (void)state;
    assert_string_equal(esc("abcdefghij", 11), "abcdefghij");
    assert_string_equal(esc("abcdefghijk", 11), "abcdefg...");
    assert_string_equal(esc("abcdef\x1b", 10), "abcdef...");      /* never half an escape */
    assert_string_equal(esc("abcde\xc2\xb5\xc2\xb5xy", 10), "abcde..."); /* never half a character */
    assert_string_equal(esc("abc", 3), "");
    char once[256], twice[256];
    const char *nasty = "k\x1b\n\xff\xc2\x9b\xe2\x80\xae\xc2\xb5 end";
    sv_escape_text(nasty, once, sizeof once);
    sv_escape_text(once, twice, sizeof twice);
    assert_string_equal(once, twice);
}

static void test_sv_error_escapes(void **state)
{
    (void)state;
    sv_error(SV_ERR_PARSE, "p.json: field \"%s\": unknown", "a\x1b[31mred\nsecond line\xff");
    assert_string_equal(sv_last_error(), "p.json: field \"a\\x1b[31mred\\nsecond line\\xff\": unknown");
    /* the last message as an argument of the next one (formatted apart) */
    sv_error(SV_ERR_IO, "first %d", 1);
    sv_error(SV_ERR_IO, "second: %s", sv_last_error());
    assert_string_equal(sv_last_error(), "second: first 1");
    sv_clear_error();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_as_is),           cmocka_unit_test(test_controls_escaped),
        cmocka_unit_test(test_invalid_utf8_escaped), cmocka_unit_test(test_cut_and_idempotent),
        cmocka_unit_test(test_sv_error_escapes),
    };
    return cmocka_run_group_tests_name("escape", tests, NULL, NULL);
}
