/*
 * wh_chars.h - the character-level steps every decoder of escapes and
 * numbers takes (the JSON reader, both YAML loaders, the template lexer, the
 * flag parser) and every encoder of them (wh_go_json.c): a hex digit's value,
 * a code point's UTF-8 bytes both ways, and the word-at-a-time test for the
 * bytes a JSON string cannot hold as they are (the reader's and the writer's
 * scans), written once.  Inline, because they sit in those inner loops.
 */
#ifndef WH_CHARS_H
#define WH_CHARS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Byte c in each of a word's 8 bytes. */
#define WH_BYTES8(c) (0x0101010101010101ULL * (unsigned char)(c))

/* The 8 bytes at p as a little-endian number whatever the machine: byte i
 * of the text is bits 8i..8i+7, so (__builtin_ctzll(m) >> 3) of a mask made
 * from it names the first flagged byte. */
static inline uint64_t wh_load8(const unsigned char *p)
{
    uint64_t x;

    memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

/* The high bit of each byte of x (wh_load8) that a JSON string cannot hold
 * as it is: a control, '"', '\\', or any byte from 0x80 (UTF-8, which the
 * caller checks).  Each term sets a byte's high bit when the byte is what it
 * looks for (a subtraction that borrows below 0, or the byte's own high bit);
 * a borrow only runs upwards from a flagged byte, so flags above the first
 * may be spurious but the first one is exact. */
static inline uint64_t wh_json_special8(uint64_t x)
{
    uint64_t m = (x - WH_BYTES8(0x20)) | x;

    m |= (x ^ WH_BYTES8('"')) - WH_BYTES8(1);
    m |= (x ^ WH_BYTES8('\\')) - WH_BYTES8(1);
    return m & WH_BYTES8(0x80);
}

/* The value of hex digit c (either case), or -1 when c is not one. */
static inline int wh_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Write the UTF-8 form of code point cp into u and return its length (1 to 4).
 * cp is not checked: refusing surrogates and values above 0x10FFFF is the
 * caller's (anything from 0x10000 up takes the 4-byte form). */
static inline size_t wh_utf8_encode(unsigned long cp, char u[4])
{
    if (cp < 0x80) {
        u[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    u[0] = (char)(0xf0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Length of the valid UTF-8 sequence at s (n bytes available), 0 when it is
 * not one (as Go's utf8.DecodeRune, which then answers RuneError: overlong
 * forms, surrogates and values above U+10FFFF are invalid).  *cp gets the
 * code point. */
static inline size_t wh_utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0];
    size_t len, i;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, c &= 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, c &= 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, c &= 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) || (len == 4 && (c < 0x10000 || c > 0x10ffff)))
        return 0;
    *cp = c;
    return len;
}

#endif
