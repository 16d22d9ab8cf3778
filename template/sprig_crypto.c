/*
 * sprig_crypto.c - Sprig's encodings, digests and randomness (crypto.go and
 * strings.go's base32/base64): b32enc/b32dec, b64enc/b64dec, sha1sum,
 * sha256sum, sha512sum (Sprig 3.3.0 on), adler32sum, uuidv4, rand*, and
 * encryptAES/decryptAES.
 */
#define _GNU_SOURCE
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

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

static const char b32_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/* base32.StdEncoding.EncodeToString */
FN(fn_b32enc)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    const unsigned char *p = (const unsigned char *)a[0].u.s;
    size_t len = a[0].len, i, k, take;
    static const size_t chars[] = {0, 2, 4, 5, 7, 8};

    for (i = 0; i < len; i += 5) {
        unsigned char q[5] = {0};
        uint64_t bits = 0;
        take = len - i < 5 ? len - i : 5;
        memcpy(q, p + i, take);
        for (k = 0; k < 5; k++)
            bits = bits << 8 | q[k];
        for (k = 0; k < 8; k++)
            wh_buf_putc(b, k < chars[take] ? b32_alphabet[(bits >> (35 - 5 * k)) & 31] : '=');
    }
    return tm_ret_buf(ctx, out, b);
}

static int b32_value(unsigned char c)
{
    const char *at = c != 0 ? strchr(b32_alphabet, c) : NULL;
    return at != NULL ? (int)(at - b32_alphabet) : -1;
}

/* base32.StdEncoding.DecodeString (CR and LF dropped first, offsets counted
 * without them): the position of the first bad byte, or -1 */
static long b32_decode(wh_buf *b, const char *in, size_t inlen, char *src)
{
    size_t olen = 0, pos = 0, i, k;

    for (i = 0; i < inlen; i++)
        if (in[i] != '\r' && in[i] != '\n')
            src[olen++] = in[i];
    while (pos < olen) {
        unsigned char v[8] = {0};
        size_t j = 0, dlen = 8, left;
        int end = 0;
        uint64_t bits = 0;
        while (j < 8) {
            if (pos == olen)
                return (long)(olen - j);
            left = olen - pos - 1;
            if (src[pos] == '=' && j >= 2 && left < 8) {
                pos++;
                if (left + j < 7)
                    return (long)olen;
                for (k = 0; k < 7 - j; k++)
                    if (left > k && src[pos + k] != '=')
                        return (long)(pos + k - 1); /* Go's offset, one short */
                dlen = j;
                end = 1;
                if (dlen == 1 || dlen == 3 || dlen == 6)
                    return (long)(pos - 1);
                break;
            }
            if (b32_value((unsigned char)src[pos]) < 0)
                return (long)pos;
            v[j++] = (unsigned char)b32_value((unsigned char)src[pos++]);
        }
        for (k = 0; k < 8; k++)
            bits = bits << 5 | v[k];
        /* 2, 4, 5, 7, 8 characters carry 1, 2, 3, 4, 5 bytes */
        for (k = 0; k < (dlen * 5) / 8; k++)
            wh_buf_putc(b, (char)(bits >> (32 - 8 * k)));
        if (end)
            break;
    }
    return -1;
}

/* Sprig answers a bad input with the decoder's error text */
FN(fn_b32dec)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    char *src = wh_tmpl_alloc(ctx, a[0].len + 1);
    long bad = b32_decode(b, a[0].u.s, a[0].len, src);

    if (bad >= 0)
        return wh_tmpl_printf(ctx, out, "illegal base32 data at input byte %ld", bad);
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

/* ---- random (crypto-strength, as goutils' CryptoRandom* and crypto/rand) ---- */

/* a uniform number below n (n > 0), by rejection */
static wh_code rand_below(wh_tmpl_ctx *ctx, uint64_t n, uint64_t *r)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, v;

    do {
        if (RAND_bytes((unsigned char *)&v, sizeof(v)) != 1)
            return wh_tmpl_errorf(ctx, "no randomness available");
    } while (v >= limit);
    *r = v % n;
    return WH_OK;
}

/* Go would allocate whatever is asked; a template gets a megabyte */
#define RAND_MAX_COUNT (1 << 20)

/* `count` characters drawn from `set`; Sprig answers a negative count with "" */
static wh_code rand_string(wh_tmpl_ctx *ctx, int64_t count, const char *set, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t setlen = strlen(set);
    uint64_t r = 0;
    wh_code rc;

    if (count > RAND_MAX_COUNT)
        return wh_tmpl_errorf(ctx, "count %lld is over the limit of %d", (long long)count, RAND_MAX_COUNT);
    for (; count > 0; count--) {
        if ((rc = rand_below(ctx, setlen, &r)) != WH_OK)
            return rc;
        wh_buf_putc(b, set[r]);
    }
    return tm_ret_buf(ctx, out, b);
}

#define LETTERS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#define DIGITS "0123456789"

FN(fn_randalpha)
{
    return rand_string(ctx, a[0].u.i, LETTERS, out);
}

FN(fn_randalphanum)
{
    return rand_string(ctx, a[0].u.i, LETTERS DIGITS, out);
}

FN(fn_randnumeric)
{
    return rand_string(ctx, a[0].u.i, DIGITS, out);
}

/* printable ASCII, ' ' to '~' */
FN(fn_randascii)
{
    char set[96];
    int c;

    for (c = ' '; c <= '~'; c++)
        set[c - ' '] = (char)c;
    set[c - ' '] = 0;
    return rand_string(ctx, a[0].u.i, set, out);
}

/* `count` random bytes, base64 */
FN(fn_randbytes)
{
    int64_t count = a[0].u.i;
    unsigned char *buf;
    wh_buf *b;

    if (count < 0)
        return wh_tmpl_errorf(ctx, "runtime error: makeslice: len out of range");
    if (count > RAND_MAX_COUNT)
        return wh_tmpl_errorf(ctx, "count %lld is over the limit of %d", (long long)count, RAND_MAX_COUNT);
    buf = wh_tmpl_alloc(ctx, (size_t)count + 1);
    if (count > 0 && RAND_bytes(buf, (int)count) != 1)
        return wh_tmpl_errorf(ctx, "no randomness available");
    b = wh_tmpl_tmpbuf(ctx);
    wh_go_base64(b, (const char *)buf, (size_t)count);
    return tm_ret_buf(ctx, out, b);
}

/* rand.Intn(max-min) + min, with Go's wrapping int arithmetic */
FN(fn_randint)
{
    int64_t span = (int64_t)((uint64_t)a[1].u.i - (uint64_t)a[0].u.i);
    uint64_t r = 0;
    wh_code rc;

    if (span <= 0)
        return wh_tmpl_errorf(ctx, "invalid argument to Intn");
    if ((rc = rand_below(ctx, (uint64_t)span, &r)) != WH_OK)
        return rc;
    return sprig_ret_int(out, (int64_t)(r + (uint64_t)a[0].u.i));
}

/* ---- encryptAES / decryptAES: AES-256-CBC, the password's first 32 bytes
 * (zero-padded) as the key, a random IV in front, PKCS#7 padding added and
 * (without checking it) cut off by the last byte's value, base64 outside ---- */

/* CBC over whole blocks, no padding of OpenSSL's own; 0 on failure */
static int aes_cbc(const wh_tmpl_value *password, const unsigned char *iv, const unsigned char *in, size_t len,
                   unsigned char *out, int enc)
{
    unsigned char key[32] = {0};
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int n1 = 0, n2 = 0, ok;
    memcpy(key, password->u.s, password->len < sizeof(key) ? password->len : sizeof(key));
    ok = c && EVP_CipherInit_ex(c, EVP_aes_256_cbc(), NULL, key, iv, enc) && EVP_CIPHER_CTX_set_padding(c, 0) &&
         EVP_CipherUpdate(c, out, &n1, in, (int)len) && EVP_CipherFinal_ex(c, out + n1, &n2);
    EVP_CIPHER_CTX_free(c);
    return ok;
}

FN(fn_encryptaes)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t pad = 16 - a[1].len % 16, len = 16 + a[1].len + pad;
    unsigned char *buf;
    (void)n;

    if (a[1].len == 0)
        return wh_tmpl_strdup(ctx, "", 0, out);
    buf = wh_tmpl_alloc(ctx, 2 * len);
    memcpy(buf + len, a[1].u.s, a[1].len);
    memset(buf + len + a[1].len, (int)pad, pad);
    if (RAND_bytes(buf, 16) != 1)
        return wh_tmpl_errorf(ctx, "no randomness available");
    if (!aes_cbc(&a[0], buf, buf + len, len - 16, buf + 16, 1))
        return wh_tmpl_errorf(ctx, "encryptAES: cipher failure");
    wh_go_base64(b, buf, len);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_decryptaes)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    unsigned char *plain;
    size_t len, cut;
    long bad;
    (void)n;

    if (a[1].len == 0)
        return wh_tmpl_strdup(ctx, "", 0, out);
    if ((bad = wh_go_base64_decode(b, a[1].u.s, a[1].len, 0)) >= 0)
        return wh_tmpl_errorf(ctx, "illegal base64 data at input byte %ld", bad);
    /* what Go panics with when the text is too short or not whole blocks
     * (the capacity is DecodeString's buffer, base64.DecodedLen of the text) */
    if (b->len < 16)
        return wh_tmpl_errorf(ctx, "runtime error: slice bounds out of range [:16] with capacity %zu",
                              (size_t)a[1].len / 4 * 3);
    len = b->len - 16;
    if (len % 16 != 0)
        return wh_tmpl_errorf(ctx, "crypto/cipher: input not full blocks");
    if (len == 0)
        return wh_tmpl_errorf(ctx, "runtime error: index out of range [-1]");
    plain = wh_tmpl_alloc(ctx, len);
    if (!aes_cbc(&a[0], (unsigned char *)b->data, (unsigned char *)b->data + 16, len, plain, 0))
        return wh_tmpl_errorf(ctx, "decryptAES: cipher failure");
    cut = plain[len - 1];
    if (cut > len)
        return wh_tmpl_errorf(ctx, "runtime error: slice bounds out of range [:%lld]", (long long)len - (long long)cut);
    return wh_tmpl_strdup(ctx, (const char *)plain, len - cut, out);
}

const wh_tmpl_func tm_sprig_crypto_funcs[] = {
    {"adler32sum", fn_adler32sum, "s", WH_TMPL_FN_PURE},
    {"b32dec", fn_b32dec, "s", WH_TMPL_FN_PURE},
    {"b32enc", fn_b32enc, "s", WH_TMPL_FN_PURE},
    {"b64dec", fn_b64dec, "s", WH_TMPL_FN_PURE},
    {"b64enc", fn_b64enc, "s", WH_TMPL_FN_PURE},
    {"decryptAES", fn_decryptaes, "ss", WH_TMPL_FN_PURE},
    {"encryptAES", fn_encryptaes, "ss", 0},
    {"randAlpha", fn_randalpha, "i", 0},
    {"randAlphaNum", fn_randalphanum, "i", 0},
    {"randAscii", fn_randascii, "i", 0},
    {"randBytes", fn_randbytes, "i", 0},
    {"randInt", fn_randint, "ii", 0},
    {"randNumeric", fn_randnumeric, "i", 0},
    {"sha1sum", fn_sha1sum, "s", WH_TMPL_FN_PURE},
    {"sha256sum", fn_sha256sum, "s", WH_TMPL_FN_PURE},
    {"sha512sum", fn_sha512sum, "s", WH_TMPL_FN_PURE},
    {"uuidv4", fn_uuidv4, "", 0},
};
const size_t tm_sprig_crypto_nfuncs = sizeof(tm_sprig_crypto_funcs) / sizeof(tm_sprig_crypto_funcs[0]);
