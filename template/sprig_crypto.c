/*
 * sprig_crypto.c - Sprig's encodings and digests (crypto.go and strings.go's
 * base64): b64enc/b64dec, sha1sum, sha256sum, sha512sum (Sprig 3.3.0 on),
 * adler32sum, uuidv4.
 */
#define _GNU_SOURCE
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>

#include "sprig_int.h"
#include "wh_go.h"

FN(fn_b64enc)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);

    wh_go_base64(b, a[0].u.s, a[0].len);
    return tm_ret_buf(ctx, out, b);
}

/* base64.StdEncoding.DecodeString; an error answers "illegal base64 data
 * at input byte N" as Sprig does. */
FN(fn_b64dec)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    long bad = wh_go_base64_decode(b, a[0].u.s, a[0].len, 0);

    if (bad >= 0)
        return wh_tmpl_printf(ctx, out, "illegal base64 data at input byte %ld", bad);
    return tm_ret_buf(ctx, out, b);
}

static wh_code digest_hex(wh_tmpl_ctx *ctx, const EVP_MD *md, const wh_tmpl_value *s, wh_tmpl_value *out)
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned dl = 0, i;
    char hex[2 * EVP_MAX_MD_SIZE + 1];

    if (!EVP_Digest(s->u.s, s->len, d, &dl, md, NULL))
        return wh_tmpl_errorf(ctx, "digest failed");
    for (i = 0; i < dl; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return wh_tmpl_strdup(ctx, hex, 2 * dl, out);
}

FN(fn_sha256sum)
{
    return digest_hex(ctx, EVP_sha256(), &a[0], out);
}

FN(fn_sha512sum)
{
    return digest_hex(ctx, EVP_sha512(), &a[0], out);
}

FN(fn_sha1sum)
{
    return digest_hex(ctx, EVP_sha1(), &a[0], out);
}

FN(fn_adler32sum)
{
    uint32_t s1 = 1, s2 = 0;
    size_t i;

    for (i = 0; i < a[0].len; i++) {
        s1 = (s1 + (unsigned char)a[0].u.s[i]) % 65521;
        s2 = (s2 + s1) % 65521;
    }
    return wh_tmpl_printf(ctx, out, "%u", (s2 << 16) | s1);
}

FN(fn_uuidv4)
{
    unsigned char u[16];

    if (RAND_bytes(u, sizeof(u)) != 1)
        return wh_tmpl_errorf(ctx, "no randomness available");
    u[6] = (u[6] & 0x0f) | 0x40;
    u[8] = (u[8] & 0x3f) | 0x80;
    return wh_tmpl_printf(ctx, out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                          u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

const wh_tmpl_func tm_sprig_crypto_funcs[] = {
    {"adler32sum", fn_adler32sum, "s", WH_TMPL_FN_PURE},
    {"b64dec", fn_b64dec, "s", WH_TMPL_FN_PURE},
    {"b64enc", fn_b64enc, "s", WH_TMPL_FN_PURE},
    {"sha1sum", fn_sha1sum, "s", WH_TMPL_FN_PURE},
    {"sha256sum", fn_sha256sum, "s", WH_TMPL_FN_PURE},
    {"sha512sum", fn_sha512sum, "s", WH_TMPL_FN_PURE},
    {"uuidv4", fn_uuidv4, "", 0},
};
const size_t tm_sprig_crypto_nfuncs = sizeof(tm_sprig_crypto_funcs) / sizeof(tm_sprig_crypto_funcs[0]);
