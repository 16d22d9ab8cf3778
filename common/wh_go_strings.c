/*
 * wh_go_strings.c - Go's strings.TrimSpace, which istiod applies to annotation
 * values (ports, template names) and Sprig's trim and nospace to template strings: the
 * Unicode white space of unicode.IsSpace, not C's isspace (see wh_go.h).
 */
#include "wh_go.h"

/* The unicode.IsSpace runes: ASCII \t \n \v \f \r and space, U+0085,
 * U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000. */
static size_t space_at(const unsigned char *s, size_t n)
{
    if (n >= 1 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')))
        return 1;
    if (n >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0))
        return 2;
    if (n < 3)
        return 0;
    if ((s[0] == 0xE1 && s[1] == 0x9A && s[2] == 0x80) || (s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80) ||
        (s[0] == 0xE2 && s[1] == 0x81 && s[2] == 0x9F) ||
        (s[0] == 0xE2 && s[1] == 0x80 &&
         ((s[2] >= 0x80 && s[2] <= 0x8A) || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF)))
        return 3;
    return 0;
}

size_t wh_go_space_len(const char *s, size_t len)
{
    return space_at((const unsigned char *)s, len);
}

void wh_go_trim_space(const char **s, size_t *len)
{
    const unsigned char *p = (const unsigned char *)*s;
    size_t n = *len, w;

    while ((w = space_at(p, n)) != 0) {
        p += w;
        n -= w;
    }
    for (int shrunk = 1; shrunk;) {
        shrunk = 0;
        for (w = 1; w <= 3 && w <= n && !shrunk; w++)
            if (space_at(p + n - w, w) == w) {
                n -= w;
                shrunk = 1;
            }
    }
    *s = (const char *)p;
    *len = n;
}
