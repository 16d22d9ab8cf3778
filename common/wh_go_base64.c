/*
 * wh_go_base64.c - encoding/base64's StdEncoding (see wh_go.h), the one
 * base64 of the tree: the AdmissionResponse's patch, caBundle fields,
 * kubeconfig's *-data fields, Sprig's b64enc / b64dec and `webhookctl check`
 * all encode and decode through it.  Decoding follows Go's decodeQuantum so
 * that errors name the byte Go names.
 */
#include "wh_go.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void wh_go_base64(wh_buf *out, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i, n = 4 * ((len + 2) / 3);
    char *dst;

    wh_buf_reserve(out, n);
    dst = out->data + out->len;
    for (i = 0; i + 2 < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        *dst++ = alphabet[v >> 18];
        *dst++ = alphabet[(v >> 12) & 63];
        *dst++ = alphabet[(v >> 6) & 63];
        *dst++ = alphabet[v & 63];
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
