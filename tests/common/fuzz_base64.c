/*
 * fuzz_base64.c - libFuzzer target for Go's base64.StdEncoding as webhookd
 * reads it (common/wh_go_base64.c): Secrets' and kubeconfigs' *-data
 * fields, caBundles, JWKS x5c.
 *
 * Input: the first byte picks strict or lenient decoding, the rest is the
 * text.  Oracles: any bytes encode and decode back to themselves (in both
 * modes); a text that decodes (-1) holds, once CR/LF (and, lenient, spaces
 * and tabs) are dropped, the encoding of what it decoded to, but for the
 * unused bits of its last quantum, which Go ignores; a refusal names an
 * offset inside the text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_go.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int skipped(unsigned char c, int lenient)
{
    return c == '\r' || c == '\n' || (lenient && (c == ' ' || c == '\t'));
}

static int digit(char c)
{
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c != '\0' ? strchr(alphabet, c) : NULL;

    return p != NULL ? (int)(p - alphabet) : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int flags = size > 0 && (data[0] & 1) ? WH_GO_BASE64_LENIENT : 0, lenient = flags != 0;
    const char *text = size > 0 ? (const char *)data + 1 : "";
    size_t len = size > 0 ? size - 1 : 0;
    wh_buf enc = WH_BUF_INIT, dec = WH_BUF_INIT, back = WH_BUF_INIT, kept = WH_BUF_INIT;
    long r;

    wh_go_base64(&enc, text, len);
    if (wh_go_base64_decode(&back, enc.data != NULL ? enc.data : "", enc.len, flags) != -1 || back.len != len ||
        (len > 0 && memcmp(back.data, text, len) != 0))
        abort();

    r = wh_go_base64_decode(&dec, text, len, flags);
    if (r < -1 || r > (long)len || (r == -1 && len == 0 && dec.len != 0))
        abort();
    if (r == -1) {
        size_t data_chars, exact;
        for (size_t i = 0; i < len; i++)
            if (!skipped((unsigned char)text[i], lenient))
                wh_buf_putc(&kept, text[i]);
        wh_buf_reset(&enc);
        wh_go_base64(&enc, dec.data, dec.len);
        wh_buf_append(&kept, "", 0); /* both NUL-terminated, even when empty */
        wh_buf_append(&enc, "", 0);
        data_chars = enc.len - (dec.len % 3 == 0 ? 0 : 3 - dec.len % 3);
        exact = data_chars - (dec.len % 3 != 0); /* the last one may differ in its unused bits */
        if (!(kept.len == enc.len || (lenient && kept.len == data_chars)) || memcmp(kept.data, enc.data, exact) != 0 ||
            (exact < data_chars &&
             (digit(kept.data[exact]) & (dec.len % 3 == 1 ? 0x30 : 0x3c)) != digit(enc.data[exact])) ||
            strspn(kept.data + data_chars, "=") != kept.len - data_chars) {
            fprintf(stderr, "fuzz_base64: %.*s decoded, re-encoded %s\n", (int)len, text, enc.data);
            abort();
        }
    }
    wh_buf_free(&enc);
    wh_buf_free(&dec);
    wh_buf_free(&back);
    wh_buf_free(&kept);
    return 0;
}
