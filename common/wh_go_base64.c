/*
 * wh_go_base64.c - encoding/base64's StdEncoding (see wh_go.h), the one
 * base64 of the tree: the AdmissionResponse's patch, caBundle fields,
 * kubeconfig's *-data fields, Sprig's b64enc / b64dec and `webhookctl check`
 * all encode and decode through it.  Decoding follows Go's decodeQuantum so
 * that errors name the byte Go names.
 */
#include "wh_go.h"

#include <stdint.h>
#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The two characters of every 12-bit group, built at compile time: the
 * encoder writes a patch of several KB per admission, and two lookups per
 * three bytes cost a third of four (callgrind: 11 -> ~3 instructions a byte). */
#define B64C(v) ((v) < 26 ? 'A' + (v) : (v) < 52 ? 'a' + (v)-26 : (v) < 62 ? '0' + (v)-52 : (v) == 62 ? '+' : '/')
#define B64P(v)                                                                                                        \
    {                                                                                                                  \
        (char)B64C((v) >> 6), (char)B64C((v)&63)                                                                       \
    }
#define B64P4(v) B64P(v), B64P((v) + 1), B64P((v) + 2), B64P((v) + 3)
#define B64P16(v) B64P4(v), B64P4((v) + 4), B64P4((v) + 8), B64P4((v) + 12)
#define B64P64(v) B64P16(v), B64P16((v) + 16), B64P16((v) + 32), B64P16((v) + 48)
#define B64P256(v) B64P64(v), B64P64((v) + 64), B64P64((v) + 128), B64P64((v) + 192)
#define B64P1024(v) B64P256(v), B64P256((v) + 256), B64P256((v) + 512), B64P256((v) + 768)
static const char pairs[4096][2] = {B64P1024(0), B64P1024(1024), B64P1024(2048), B64P1024(3072)};

void wh_go_base64(wh_buf *out, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i = 0, n = 4 * ((len + 2) / 3);
    char *dst;

    wh_buf_reserve(out, n);
    dst = out->data + out->len;
    /* Six bytes at a time from one 8-byte load (big-endian order: the first
     * byte is the highest), while 8 bytes are readable. */
    for (; i + 8 <= len; i += 6) {
        uint64_t w;
        memcpy(&w, p + i, 8);
#if __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        memcpy(dst, pairs[(w >> 52) & 4095], 2);
        memcpy(dst + 2, pairs[(w >> 40) & 4095], 2);
        memcpy(dst + 4, pairs[(w >> 28) & 4095], 2);
        memcpy(dst + 6, pairs[(w >> 16) & 4095], 2);
        dst += 8;
    }
    for (; i + 2 < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        memcpy(dst, pairs[v >> 12], 2);
        memcpy(dst + 2, pairs[v & 4095], 2);
        dst += 4;
    }
    if (i < len) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0);
        *dst++ = alphabet[v >> 18];
        *dst++ = alphabet[(v >> 12) & 63];
        *dst++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        *dst++ = '=';
    }
    out->len += n;
    out->data[out->len] = '\0';
}

static int digit_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

long wh_go_base64_decode(wh_buf *out, const char *in, size_t len, int flags)
{
    const unsigned char *src = (const unsigned char *)in;
    const int lenient = (flags & WH_GO_BASE64_LENIENT) != 0;
    size_t si = 0;
#define is_newline(c) ((c) == '\n' || (c) == '\r' || (lenient && ((c) == ' ' || (c) == '\t')))

    wh_buf_reserve(out, len / 4 * 3 + 3);
    for (;;) {
        int dbuf[4] = {0, 0, 0, 0}, dlen = 4, j;
        long bad = -1;
        unsigned val;
        for (j = 0; j < 4; j++) {
            int v;
            unsigned char c;
            if (si == len) {
                if (j == 0)
                    return -1;
                if (!lenient || j < 2)
                    return (long)(si - (size_t)j); /* a quantum cut short */
                dlen = j;
                break;
            }
            c = src[si++];
            if ((v = digit_value(c)) >= 0) {
                dbuf[j] = v;
                continue;
            }
            if (is_newline(c)) {
                j--;
                continue;
            }
            if (c != '=' || j < 2)
                return (long)(si - 1);
            if (j == 2) { /* "xx=" needs a second '=' */
                while (si < len && is_newline(src[si]))
                    si++;
                if (si == len)
                    return (long)len;
                if (src[si] != '=')
                    return (long)si - 1;
                si++;
            }
            while (si < len && is_newline(src[si]))
                si++;
            if (si < len) /* nothing may follow the padding */
                bad = (long)si;
            dlen = j;
            break;
        }
        val = (unsigned)dbuf[0] << 18 | (unsigned)dbuf[1] << 12 | (unsigned)dbuf[2] << 6 | (unsigned)dbuf[3];
        if (dlen >= 2)
            wh_buf_putc(out, (char)(val >> 16));
        if (dlen >= 3)
            wh_buf_putc(out, (char)(val >> 8));
        if (dlen >= 4)
            wh_buf_putc(out, (char)val);
        if (bad >= 0)
            return bad;
        if (dlen < 4)
            return -1;
    }
#undef is_newline
}
