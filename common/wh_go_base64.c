/*
 * wh_go_base64.c - encoding/base64's StdEncoding (see wh_go.h), the one
 * base64 of the tree: the AdmissionResponse's patch, caBundle fields,
 * kubeconfig's *-data fields, Sprig's b64enc / b64dec and `webhookctl check`
 * all encode and decode through it.  Decoding follows Go's decodeQuantum so
 * that errors name the byte Go names.  The encoder copies the bytes where
 * their characters go and encodes them there from the end, 12 bytes a step
 * with SSSE3 where the CPU has it (the patch of every admission, several
 * KB), 3 otherwise and for the last bytes.
 */
#include "wh_go.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WH_BASE64_SSSE3 1
#endif

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The two characters of every 12-bit group, built at compile time: two
 * lookups per three bytes (callgrind: 11 -> ~4 instructions a byte where
 * SSSE3 is missing). */
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

#ifdef WH_BASE64_SSSE3
/* Blocks k = n-1 down to 0 of p in place: the 12 bytes at 12k (read as 16,
 * so 16 bytes must be readable there) become the 16 characters at 16k,
 * 12 bytes a step with SSSE3 (every x86-64 CPU since 2006 but a few early
 * AMD ones; checked at run time).
 *
 * Each 3 bytes a b c go to a 32-bit lane as the bytes b a c b, so that the
 * lane's low 16 bits are L = a:b and its high 16 bits H = b:c.  The four
 * 6-bit indices are L >> 10, (L >> 4) & 63, (H >> 6) & 63 and H & 63; each
 * half takes its own shift from one multiplication: the high half of a
 * 16-bit product by 2^6 (L) and 2^10 (H) shifts right by 10 and 6, the low
 * half of a product by 2^4 (L) and 2^8 (H) shifts left by 4 and 8, into the
 * second byte of each half.  An index then becomes its character by adding
 * an offset that depends only on its range: 'A' for 0..25, 'a' - 26 for
 * 26..51, '0' - 52 for 52..61, '+' - 62 and '/' - 63; a saturating
 * subtraction of 51 numbers the ranges from 52 up (1..12), minus the
 * all-ones of "above 25" adds one to everything from 26 (0, 1, 2..13), and
 * one byte shuffle looks the offset up. */
__attribute__((target("ssse3"))) static void encode_blocks_ssse3(unsigned char *p, size_t from, size_t n)
{
    const __m128i spread = _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    const __m128i offsets = _mm_setr_epi8('A', 'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                          '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 0, 0);

    while (n-- > from) {
        __m128i x = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 12 * n)), spread);
        __m128i right = _mm_mulhi_epu16(_mm_and_si128(x, _mm_set1_epi32(0x0fc0fc00)), _mm_set1_epi32(0x04000040));
        __m128i left = _mm_mullo_epi16(_mm_and_si128(x, _mm_set1_epi32(0x003f03f0)), _mm_set1_epi32(0x01000010));
        __m128i idx = _mm_or_si128(right, left);
        __m128i range = _mm_sub_epi8(_mm_subs_epu8(idx, _mm_set1_epi8(51)), _mm_cmpgt_epi8(idx, _mm_set1_epi8(25)));
        _mm_storeu_si128((__m128i *)(p + 16 * n), _mm_add_epi8(idx, _mm_shuffle_epi8(offsets, range)));
    }
}

/* The same 24 bytes a step with AVX2 (x86-64 CPUs since 2013): blocks
 * j = to-1 down to from (from >= 1) of 24 bytes at 24j become the 32
 * characters at 32j.  The 32 bytes read at 24j - 4 put the block's first
 * 12 bytes at 4..15 of the low lane and its last 12 at 0..11 of the high
 * one; the steps are then the SSSE3 ones per lane.  Nothing read is
 * overwritten before: block j writes from 32j >= 24j, and the blocks above
 * it wrote from 32(j + 1) >= 24j + 28. */
__attribute__((target("avx2"))) static void encode_blocks_avx2(unsigned char *p, size_t from, size_t to)
{
    const __m256i spread = _mm256_setr_epi8(5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15, 14, /* low lane */
                                            1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    const __m256i offsets = _mm256_setr_epi8('A', 'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                             '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 0, 0, 'A',
                                             'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                             '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 0, 0);

    while (to-- > from) {
        __m256i x = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p + 24 * to - 4)), spread);
        __m256i right =
            _mm256_mulhi_epu16(_mm256_and_si256(x, _mm256_set1_epi32(0x0fc0fc00)), _mm256_set1_epi32(0x04000040));
        __m256i left =
            _mm256_mullo_epi16(_mm256_and_si256(x, _mm256_set1_epi32(0x003f03f0)), _mm256_set1_epi32(0x01000010));
        __m256i idx = _mm256_or_si256(right, left);
        __m256i range =
            _mm256_sub_epi8(_mm256_subs_epu8(idx, _mm256_set1_epi8(51)), _mm256_cmpgt_epi8(idx, _mm256_set1_epi8(25)));
        _mm256_storeu_si256((__m256i *)(p + 32 * to), _mm256_add_epi8(idx, _mm256_shuffle_epi8(offsets, range)));
    }
}
#endif

/* The len bytes at p become their 4 * ((len + 2) / 3) characters in the same
 * place (room for them at p).  From the end backwards: the characters of
 * group g (4g..4g+3) cover only bytes of groups from g on, whose bytes have
 * been read by then. */
static void encode_in_place(unsigned char *p, size_t len)
{
    size_t groups = len / 3, simd = 0, g;

    if (len % 3 != 0) { /* the last quantum, padded */
        unsigned char *t = p + 3 * groups;
        unsigned v = (unsigned)t[0] << 16 | (len % 3 == 2 ? (unsigned)t[1] << 8 : 0);
        char *q = (char *)p + 4 * groups;
        q[0] = alphabet[v >> 18];
        q[1] = alphabet[(v >> 12) & 63];
        q[2] = len % 3 == 2 ? alphabet[(v >> 6) & 63] : '=';
        q[3] = '=';
    }
#ifdef WH_BASE64_SSSE3
    if (len >= 16 && __builtin_cpu_supports("ssse3"))
        simd = (len - 4) / 12; /* the blocks whose 16-byte read stays inside */
#endif
    for (g = groups; g-- > 4 * simd;) {
        const unsigned char *t = p + 3 * g;
        unsigned v = (unsigned)t[0] << 16 | (unsigned)t[1] << 8 | t[2];
        memcpy(p + 4 * g, pairs[v >> 12], 2);
        memcpy(p + 4 * g + 2, pairs[v & 4095], 2);
    }
#ifdef WH_BASE64_SSSE3
    /* SSSE3 blocks 2j and 2j + 1 are AVX2 block j, whose 32-byte read
     * from 24j - 4 ends where block 2j + 1's does: AVX2 takes the pairs
     * from j = 1 up, SSSE3 an odd block above them and blocks 0 and 1. */
    if (simd >= 4 && __builtin_cpu_supports("avx2")) {
        encode_blocks_ssse3(p, simd & ~(size_t)1, simd);
        encode_blocks_avx2(p, 1, simd / 2);
        simd = 2;
    }
    if (simd != 0)
        encode_blocks_ssse3(p, 0, simd);
#endif
}

void wh_go_base64(wh_buf *out, const void *data, size_t len)
{
    size_t n = 4 * ((len + 2) / 3);

    wh_buf_reserve(out, n);
    if (len != 0)
        memcpy(out->data + out->len, data, len);
    encode_in_place((unsigned char *)out->data + out->len, len);
    out->len += n;
    out->data[out->len] = '\0';
}

static int digit_value(unsigned char c, int url)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (url ? '-' : '+'))
        return 62;
    if (c == (url ? '_' : '/'))
        return 63;
    return -1;
}

long wh_go_base64_decode(wh_buf *out, const char *in, size_t len, int flags)
{
    const unsigned char *src = (const unsigned char *)in;
    const int lenient = (flags & WH_GO_BASE64_LENIENT) != 0, url = (flags & WH_GO_BASE64_URL) != 0;
    const int raw = (flags & WH_GO_BASE64_RAW) != 0;
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
                if (!(lenient || raw) || j < 2)
                    return (long)(si - (size_t)j); /* a quantum cut short */
                dlen = j;
                break;
            }
            c = src[si++];
            if ((v = digit_value(c, url)) >= 0) {
                dbuf[j] = v;
                continue;
            }
            if (is_newline(c)) {
                j--;
                continue;
            }
            if (c != '=' || raw || j < 2) /* without padding '=' is just another stranger */
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
