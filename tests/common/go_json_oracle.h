/*
 * go_json_oracle.h - Go's encoding/json string escaping written the plain
 * way, one byte (or rune) at a time, as the oracle the word-at-a-time
 * escaper of common/wh_go_json.c is compared with (test_go.c's
 * json_string_differential, fuzz_go_json.c).  It follows Go's
 * encodeState.string and utf8.DecodeRune directly (the table of valid
 * second bytes per first byte) rather than sharing wh_chars.h's decoder, so
 * that the two can disagree.
 */
#ifndef WH_TESTS_GO_JSON_ORACLE_H
#define WH_TESTS_GO_JSON_ORACLE_H

#include <stddef.h>
#include <stdio.h>

#include "wh_go.h"

/* utf8.DecodeRune's length of the rune at s (n bytes), 0 when invalid (Go
 * answers RuneError, 1); *cp gets the rune. */
static inline size_t oracle_rune(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0], lo = 0x80, hi = 0xbf;
    size_t size, i;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c < 0xc2 || c > 0xf4)
        return 0;
    size = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (c == 0xe0)
        lo = 0xa0; /* overlong */
    else if (c == 0xed)
        hi = 0x9f; /* surrogates */
    else if (c == 0xf0)
        lo = 0x90; /* overlong */
    else if (c == 0xf4)
        hi = 0x8f; /* above U+10FFFF */
    if (n < size || s[1] < lo || s[1] > hi)
        return 0;
    for (i = 2; i < size; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    *cp = size == 2   ? (c & 0x1f) << 6 | (s[1] & 0x3f)
          : size == 3 ? (c & 0x0f) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3f)
                      : (c & 0x07) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 | (s[3] & 0x3f);
    return size;
}

/* The quoted JSON string of s as Go writes it under `flags` (WH_GO_JSON_HTML,
 * WH_GO_JSON_MINIMAL): what wh_go_json_string must append. */
static inline void oracle_json_string(wh_buf *out, const void *text, size_t len, int flags)
{
    const unsigned char *s = text;
    size_t i = 0, n;
    unsigned cp;

    wh_buf_putc(out, '"');
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            if (c == '"' || c == '\\') {
                wh_buf_putc(out, '\\');
                wh_buf_putc(out, (char)c);
            } else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
                wh_buf_putc(out, '\\');
                wh_buf_putc(out, c == '\b' ? 'b' : c == '\f' ? 'f' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
            } else if (c < 0x20 || ((flags & WH_GO_JSON_HTML) && (c == '<' || c == '>' || c == '&'))) {
                wh_buf_printf(out, "\\u%04x", c);
            } else {
                wh_buf_putc(out, (char)c);
            }
            continue;
        }
        if ((n = oracle_rune(s + i, len - i, &cp)) == 0) {
            wh_buf_puts(out, "\\ufffd");
            i++;
        } else if ((cp == 0x2028 || cp == 0x2029) && !(flags & WH_GO_JSON_MINIMAL)) {
            wh_buf_printf(out, "\\u%04x", cp);
            i += n;
        } else {
            wh_buf_append(out, s + i, n);
            i += n;
        }
    }
    wh_buf_putc(out, '"');
}

#endif
