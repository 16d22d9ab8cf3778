/*
 * sprig_strings.c - Sprig's strings.go: trim, case, split/join, quote, indent,
 * substr, repeat, plural, abbrev, wrap, swapcase, toString(s), ... with Go's
 * Unicode rules (see sprig.c for the family).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <wctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprig_int.h"
#include "wh_go.h"

static int is_space_byte(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

FN(fn_trim)
{
    const char *s = a[0].u.s;
    size_t len = a[0].len;

    wh_go_trim_space(&s, &len);
    *out = wh_tmpl_strn(s, len);
    return WH_OK;
}

static int rune_in(const char *set, size_t setlen, const char *s, size_t len, size_t *w)
{
    unsigned r, c;
    size_t i = 0, k;

    *w = tm_utf8_decode(s, len, &r);
    if (*w == 0) {
        *w = 1;
        r = 0xfffd;
    }
    while (i < setlen) {
        k = tm_utf8_decode(set + i, setlen - i, &c);
        if (k == 0) {
            k = 1;
            c = 0xfffd;
        }
        if (c == r)
            return 1;
        i += k;
    }
    return 0;
}

/* strings.Trim(b, a) */
FN(fn_trimall)
{
    const char *cut = a[0].u.s, *s = a[1].u.s;
    size_t cl = a[0].len, len = a[1].len, w;

    if (len == 0 || cl == 0) {
        *out = a[1];
        out->type = NULL;
        return WH_OK;
    }
    while (len > 0 && rune_in(cut, cl, s, len, &w)) {
        s += w;
        len -= w;
    }
    while (len > 0) {
        size_t k;
        for (k = 1; k <= 4 && k <= len; k++) {
            unsigned r;
            if (tm_utf8_decode(s + len - k, k, &r) == k || (k == 1 && ((unsigned char)s[len - 1] < 0x80 || 1)))
                if (tm_utf8_decode(s + len - k, k, &r) == k)
                    break;
        }
        if (k > 4 || k > len)
            k = 1;
        if (!rune_in(cut, cl, s + len - k, k, &w))
            break;
        len -= k;
    }
    *out = wh_tmpl_strn(s, len);
    return WH_OK;
}

FN(fn_trimprefix)
{
    if (a[1].len >= a[0].len && memcmp(a[1].u.s, a[0].u.s, a[0].len) == 0)
        *out = wh_tmpl_strn(a[1].u.s + a[0].len, a[1].len - a[0].len);
    else
        *out = wh_tmpl_strn(a[1].u.s, a[1].len);
    return WH_OK;
}

FN(fn_trimsuffix)
{
    if (a[1].len >= a[0].len && memcmp(a[1].u.s + a[1].len - a[0].len, a[0].u.s, a[0].len) == 0)
        *out = wh_tmpl_strn(a[1].u.s, a[1].len - a[0].len);
    else
        *out = wh_tmpl_strn(a[1].u.s, a[1].len);
    return WH_OK;
}

/* strings.ToUpper / ToLower: rune by rune (invalid bytes become U+FFFD) */
static wh_code map_case(wh_tmpl_ctx *ctx, const wh_tmpl_value *s, int upper, wh_tmpl_value *out)
{
    locale_t loc = ctx->set->ctype;
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i = 0;

    while (i < s->len) {
        unsigned char c = (unsigned char)s->u.s[i];
        unsigned r;
        size_t w;
        if (c < 0x80) {
            wh_buf_putc(b, (char)(upper ? toupper(c) : tolower(c)));
            i++;
            continue;
        }
        w = tm_utf8_decode(s->u.s + i, s->len - i, &r);
        if (w == 0) {
            w = 1;
            r = 0xfffd;
        } else if (loc != (locale_t)0) {
            r = (unsigned)(upper ? towupper_l((wint_t)r, loc) : towlower_l((wint_t)r, loc));
        }
        tm_put_rune(b, r);
        i += w;
    }
    return tm_ret_buf(ctx, out, b);
}

FN(fn_upper)
{
    return map_case(ctx, &a[0], 1, out);
}

FN(fn_lower)
{
    return map_case(ctx, &a[0], 0, out);
}

/* strings.Title: the first letter of each word in title case; words are
 * separated by spaces and ASCII punctuation */
FN(fn_title)
{
    locale_t loc = ctx->set->ctype;
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i = 0;
    int prev_sep = 1;

    while (i < a[0].len) {
        unsigned char c = (unsigned char)a[0].u.s[i];
        unsigned r;
        size_t w;
        int sep;
        if (c < 0x80) {
            wh_buf_putc(b, (char)(prev_sep ? toupper(c) : c));
            prev_sep = !(isalnum(c) || c == '_');
            i++;
            continue;
        }
        w = tm_utf8_decode(a[0].u.s + i, a[0].len - i, &r);
        if (w == 0) {
            w = 1;
            r = 0xfffd;
        }
        sep = loc != (locale_t)0 && iswspace_l((wint_t)r, loc);
        if (prev_sep && loc != (locale_t)0)
            r = (unsigned)towupper_l((wint_t)r, loc);
        tm_put_rune(b, r);
        prev_sep = sep;
        i += w;
    }
    return tm_ret_buf(ctx, out, b);
}

FN(fn_untitle)
{
    wh_code rc = wh_tmpl_strdup(ctx, a[0].u.s, a[0].len, out);
    if (rc == WH_OK && out->len > 0 && (unsigned char)out->u.s[0] < 0x80)
        ((char *)out->u.s)[0] = (char)tolower((unsigned char)out->u.s[0]);
    return rc;
}

FN(fn_trunc)
{
    int64_t c = a[0].u.i;
    long len = (long)a[1].len;

    if (c < 0 && len + c > 0)
        *out = wh_tmpl_strn(a[1].u.s + len + c, (size_t)(-c));
    else if (c >= 0 && len > c)
        *out = wh_tmpl_strn(a[1].u.s, (size_t)c);
    else
        *out = wh_tmpl_strn(a[1].u.s, a[1].len);
    return WH_OK;
}

FN(fn_substr)
{
    int64_t start = a[0].u.i, end = a[1].u.i, len = a[2].len;

    if (start < 0) {
        if (end < 0 || end > len)
            return wh_tmpl_errorf(ctx, "runtime error: slice bounds out of range [:%lld] with length %lld",
                                  (long long)end, (long long)len);
        *out = wh_tmpl_strn(a[2].u.s, (size_t)end);
        return WH_OK;
    }
    if (end < 0 || end > len) {
        if (start > len)
            return wh_tmpl_errorf(ctx, "runtime error: slice bounds out of range [%lld:%lld]", (long long)start,
                                  (long long)len);
        *out = wh_tmpl_strn(a[2].u.s + start, (size_t)(len - start));
        return WH_OK;
    }
    if (start > end)
        return wh_tmpl_errorf(ctx, "runtime error: slice bounds out of range [%lld:%lld]", (long long)start,
                              (long long)end);
    *out = wh_tmpl_strn(a[2].u.s + start, (size_t)(end - start));
    return WH_OK;
}

FN(fn_repeat)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    int64_t i;

    if (a[0].u.i < 0)
        return wh_tmpl_errorf(ctx, "strings: negative Repeat count");
    if (a[1].len != 0 && (uint64_t)a[0].u.i > (64u << 20) / a[1].len)
        return wh_tmpl_errorf(ctx, "strings: Repeat output length overflow");
    for (i = 0; i < a[0].u.i; i++)
        wh_buf_append(b, a[1].u.s, a[1].len);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_nospace)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i = 0, w;

    while (i < a[0].len) {
        if ((w = wh_go_space_len(a[0].u.s + i, a[0].len - i)) != 0) {
            i += w;
            continue;
        }
        wh_buf_putc(b, a[0].u.s[i++]);
    }
    return tm_ret_buf(ctx, out, b);
}

static int contains_str(const wh_tmpl_value *hay, const wh_tmpl_value *needle)
{
    if (needle->len == 0)
        return 1;
    return memmem(hay->u.s, hay->len, needle->u.s, needle->len) != NULL;
}

FN(fn_contains)
{
    return sprig_ret_bool(out, contains_str(&a[1], &a[0]));
}

FN(fn_hasprefix)
{
    return sprig_ret_bool(out, a[1].len >= a[0].len && memcmp(a[1].u.s, a[0].u.s, a[0].len) == 0);
}

FN(fn_hassuffix)
{
    return sprig_ret_bool(out, a[1].len >= a[0].len && memcmp(a[1].u.s + a[1].len - a[0].len, a[0].u.s, a[0].len) == 0);
}

FN(fn_quote)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i, k = 0;
    wh_code rc;

    for (i = 0; i < n; i++) {
        const char *s;
        size_t len;
        if (a[i].kind == WH_TMPL_NIL || a[i].kind == WH_TMPL_INVALID)
            continue;
        if (k++ > 0)
            wh_buf_putc(b, ' ');
        if ((rc = sprig_strval(ctx, &a[i], &s, &len)) != WH_OK)
            return rc;
        wh_go_quote(b, s, len, '\"', 0);
    }
    return tm_ret_buf(ctx, out, b);
}

/* cat and squote: the non-nil arguments printed, space-separated, each
 * between `wrap` (none when 0). */
static wh_code sprint_joined(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, char wrap, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i, k = 0;
    wh_code rc;

    for (i = 0; i < n; i++) {
        if (a[i].kind == WH_TMPL_NIL || a[i].kind == WH_TMPL_INVALID)
            continue;
        if (k++ > 0)
            wh_buf_putc(b, ' ');
        if (wrap)
            wh_buf_putc(b, wrap);
        if ((rc = wh_tmpl_sprint(ctx, &a[i], b)) != WH_OK)
            return rc;
        if (wrap)
            wh_buf_putc(b, wrap);
    }
    return tm_ret_buf(ctx, out, b);
}

FN(fn_squote)
{
    return sprint_joined(ctx, a, n, '\'', out);
}

FN(fn_cat)
{
    return sprint_joined(ctx, a, n, 0, out);
}

static wh_code do_indent(wh_tmpl_ctx *ctx, int64_t spaces, const wh_tmpl_value *s, int nl, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i, start = 0;
    int64_t k;

    if (spaces < 0)
        return wh_tmpl_errorf(ctx, "strings: negative Repeat count");
    if (spaces > (1 << 20))
        return wh_tmpl_errorf(ctx, "indent too large");
    if (nl)
        wh_buf_putc(b, '\n');
    for (k = 0; k < spaces; k++)
        wh_buf_putc(b, ' ');
    for (i = 0; i < s->len; i++) {
        if (s->u.s[i] == '\n') {
            wh_buf_append(b, s->u.s + start, i + 1 - start);
            for (k = 0; k < spaces; k++)
                wh_buf_putc(b, ' ');
            start = i + 1;
        }
    }
    wh_buf_append(b, s->u.s + start, s->len - start);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_indent)
{
    return do_indent(ctx, a[0].u.i, &a[1], 0, out);
}

FN(fn_nindent)
{
    return do_indent(ctx, a[0].u.i, &a[1], 1, out);
}

/* strings.Replace(src, old, new, -1) */
static wh_code replace_all(wh_tmpl_ctx *ctx, const wh_tmpl_value *src, const wh_tmpl_value *old,
                           const wh_tmpl_value *new_, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i = 0;

    if (old->len == 0) {
        /* insert `new` before every rune and at the end */
        unsigned r;
        while (i < src->len) {
            size_t w = tm_utf8_decode(src->u.s + i, src->len - i, &r);
            if (w == 0)
                w = 1;
            wh_buf_append(b, new_->u.s, new_->len);
            wh_buf_append(b, src->u.s + i, w);
            i += w;
        }
        wh_buf_append(b, new_->u.s, new_->len);
        return tm_ret_buf(ctx, out, b);
    }
    while (i < src->len) {
        const char *hit = memmem(src->u.s + i, src->len - i, old->u.s, old->len);
        if (hit == NULL)
            break;
        wh_buf_append(b, src->u.s + i, (size_t)(hit - (src->u.s + i)));
        wh_buf_append(b, new_->u.s, new_->len);
        i = (size_t)(hit - src->u.s) + old->len;
    }
    wh_buf_append(b, src->u.s + i, src->len - i);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_replace)
{
    return replace_all(ctx, &a[2], &a[0], &a[1], out);
}

FN(fn_plural)
{
    *out = a[2].u.i == 1 ? a[0] : a[1];
    return WH_OK;
}

FN(fn_tostring)
{
    const char *s;
    size_t len;
    wh_code rc = sprig_strval(ctx, &a[0], &s, &len);
    if (rc == WH_OK)
        *out = wh_tmpl_strn(s, len);
    return rc;
}

/* sprig's strslice */
static wh_code strslice(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_tmpl_value *out)
{
    wh_tmpl_value l;
    long i, len;
    wh_code rc;

    if (v->kind == WH_TMPL_LIST && tm_same_type(v, &wh_tmpl_type_string_slice, WH_TMPL_LIST)) {
        *out = *v;
        return WH_OK;
    }
    l = wh_tmpl_list_new(ctx, 4, &wh_tmpl_type_string_slice);
    if (v->kind == WH_TMPL_LIST) {
        len = wh_tmpl_len(v);
        for (i = 0; i < len; i++) {
            wh_tmpl_value e = wh_tmpl_list_at(v, (size_t)i);
            const char *s;
            size_t sl;
            if (sprig_is_nil(&e) && tm_elem_type(v) == NULL)
                continue;
            if ((rc = sprig_strval(ctx, &e, &s, &sl)) != WH_OK)
                return rc;
            if ((rc = wh_tmpl_list_push(ctx, &l, wh_tmpl_strn(s, sl))) != WH_OK)
                return rc;
        }
    } else if (!sprig_is_nil(v)) {
        const char *s;
        size_t sl;
        if ((rc = sprig_strval(ctx, v, &s, &sl)) != WH_OK ||
            (rc = wh_tmpl_list_push(ctx, &l, wh_tmpl_strn(s, sl))) != WH_OK)
            return rc;
    }
    *out = l;
    return WH_OK;
}

FN(fn_tostrings)
{
    return strslice(ctx, &a[0], out);
}

FN(fn_join)
{
    wh_tmpl_value l;
    wh_buf *b;
    long i, len;
    wh_code rc;

    if ((rc = strslice(ctx, &a[1], &l)) != WH_OK)
        return rc;
    b = wh_tmpl_tmpbuf(ctx);
    len = wh_tmpl_len(&l);
    for (i = 0; i < len; i++) {
        wh_tmpl_value e = wh_tmpl_list_at(&l, (size_t)i);
        if (i > 0)
            wh_buf_append(b, a[0].u.s, a[0].len);
        wh_buf_append(b, e.u.s, e.len);
    }
    return tm_ret_buf(ctx, out, b);
}

static int str_cmp(const void *x, const void *y)
{
    const wh_tmpl_value *p = x, *q = y;
    return tm_strcmp(p->u.s, p->len, q->u.s, q->len);
}

FN(fn_sortalpha)
{
    wh_tmpl_value l, c;
    long i, len;
    wh_code rc;

    if (a[0].kind != WH_TMPL_LIST) {
        const char *s;
        size_t sl;
        c = wh_tmpl_list_new(ctx, 1, &wh_tmpl_type_string_slice);
        if ((rc = sprig_strval(ctx, &a[0], &s, &sl)) != WH_OK ||
            (rc = wh_tmpl_list_push(ctx, &c, wh_tmpl_strn(s, sl))) != WH_OK)
            return rc;
        *out = c;
        return WH_OK;
    }
    if ((rc = strslice(ctx, &a[0], &l)) != WH_OK)
        return rc;
    len = wh_tmpl_len(&l);
    c = wh_tmpl_list_new(ctx, (size_t)len, &wh_tmpl_type_string_slice);
    for (i = 0; i < len; i++)
        if ((rc = wh_tmpl_list_push(ctx, &c, wh_tmpl_list_at(&l, (size_t)i))) != WH_OK)
            return rc;
    if (len > 1)
        qsort(tm_list_items(&c), (size_t)len, sizeof(wh_tmpl_value), str_cmp);
    *out = c;
    return WH_OK;
}

/* strings.Split semantics; n < 0 = all */
static wh_code split_parts(wh_tmpl_ctx *ctx, const wh_tmpl_value *sep, const wh_tmpl_value *s, long n,
                           wh_tmpl_value *list)
{
    size_t i = 0;
    wh_code rc;

    *list = wh_tmpl_list_new(ctx, 4, &wh_tmpl_type_string_slice);
    if (n == 0)
        return WH_OK;
    if (sep->len == 0) {
        unsigned r;
        long k = 0;
        while (i < s->len) {
            size_t w = tm_utf8_decode(s->u.s + i, s->len - i, &r);
            if (w == 0)
                w = 1;
            if (n > 0 && k == n - 1)
                w = s->len - i;
            if ((rc = wh_tmpl_list_push(ctx, list, wh_tmpl_strn(s->u.s + i, w))) != WH_OK)
                return rc;
            i += w;
            k++;
        }
        return WH_OK;
    }
    for (;;) {
        const char *hit;
        if (n > 0 && wh_tmpl_len(list) == n - 1)
            hit = NULL;
        else
            hit = memmem(s->u.s + i, s->len - i, sep->u.s, sep->len);
        if (hit == NULL) {
            return wh_tmpl_list_push(ctx, list, wh_tmpl_strn(s->u.s + i, s->len - i));
        }
        if ((rc = wh_tmpl_list_push(ctx, list, wh_tmpl_strn(s->u.s + i, (size_t)(hit - (s->u.s + i))))) != WH_OK)
            return rc;
        i = (size_t)(hit - s->u.s) + sep->len;
    }
}

FN(fn_splitlist)
{
    return split_parts(ctx, &a[0], &a[1], -1, out);
}

static wh_code parts_to_map(wh_tmpl_ctx *ctx, const wh_tmpl_value *parts, wh_tmpl_value *out)
{
    long i, len = wh_tmpl_len(parts);
    wh_code rc;

    *out = wh_tmpl_map_new(ctx, &wh_tmpl_type_map_string_string);
    for (i = 0; i < len; i++) {
        char key[32];
        int kl = snprintf(key, sizeof(key), "_%ld", i);
        if ((rc = wh_tmpl_map_set(ctx, out, key, (size_t)kl, wh_tmpl_list_at(parts, (size_t)i))) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_split)
{
    wh_tmpl_value parts;
    wh_code rc = split_parts(ctx, &a[0], &a[1], -1, &parts);
    return rc != WH_OK ? rc : parts_to_map(ctx, &parts, out);
}

FN(fn_splitn)
{
    wh_tmpl_value parts;
    wh_code rc = split_parts(ctx, &a[0], &a[2], (long)a[1].u.i, &parts);
    return rc != WH_OK ? rc : parts_to_map(ctx, &parts, out);
}

FN(fn_initials)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i;
    int at_start = 1;

    for (i = 0; i < a[0].len; i++) {
        char c = a[0].u.s[i];
        if (is_space_byte(c)) {
            at_start = 1;
            continue;
        }
        if (at_start)
            wh_buf_putc(b, c);
        at_start = 0;
    }
    return tm_ret_buf(ctx, out, b);
}

/* goutils.AbbreviateFull: at most `width` bytes, "..." marking what was cut,
 * the cut starting near `offset`.  Sprig leaves the string alone when the
 * width is too small for the marker (4, or 7 with a left offset), which are
 * AbbreviateFull's only errors. */
static wh_code abbreviate(wh_tmpl_ctx *ctx, const wh_tmpl_value *s, int64_t offset, int64_t width, wh_tmpl_value *out)
{
    size_t len = s->len, keep;
    wh_buf *b;

    if (width < 4 || (offset > 0 && width < 7) || (uint64_t)width >= len) {
        *out = wh_tmpl_strn(s->u.s, s->len);
        return WH_OK;
    }
    keep = (size_t)width - 3;
    if (offset > (int64_t)len)
        offset = (int64_t)len;
    if ((int64_t)len - offset < (int64_t)keep)
        offset = (int64_t)(len - keep);
    b = wh_tmpl_tmpbuf(ctx);
    if (offset <= 4) {
        wh_buf_append(b, s->u.s, keep);
        wh_buf_append(b, "...", 3);
    } else if ((size_t)offset + keep < len) {
        /* the rest abbreviated again from its start, behind the marker */
        wh_buf_append(b, "...", 3);
        if (len - (size_t)offset <= keep) {
            wh_buf_append(b, s->u.s + offset, len - (size_t)offset);
        } else {
            wh_buf_append(b, s->u.s + offset, keep - 3);
            wh_buf_append(b, "...", 3);
        }
    } else {
        wh_buf_append(b, "...", 3);
        wh_buf_append(b, s->u.s + len - keep, keep);
    }
    return tm_ret_buf(ctx, out, b);
}

FN(fn_abbrev)
{
    return abbreviate(ctx, &a[1], 0, a[0].u.i, out);
}

FN(fn_abbrevboth)
{
    return abbreviate(ctx, &a[2], a[0].u.i, a[1].u.i, out);
}

/* goutils.WrapCustom: lines of at most `width` bytes broken at spaces (the
 * space dropped, leading spaces of a line skipped); a longer word is cut
 * (wrapWith) or left whole (wrap) */
static wh_code wrap_text(wh_tmpl_ctx *ctx, int64_t width, const char *nl, size_t nllen, int cut_long, const char *s,
                         size_t len, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t off = 0, w, sp, k;
    int found;

    if (nllen == 0) {
        nl = "\n";
        nllen = 1;
    }
    w = width < 1 ? 1 : (uint64_t)width > len ? len + 1 : (size_t)width;
    while (len - off > w) {
        if (s[off] == ' ') {
            off++;
            continue;
        }
        /* the last space in the next w+1 bytes */
        found = 0;
        for (k = off + w + 1; k > off; k--)
            if (s[k - 1] == ' ') {
                sp = k - 1;
                found = 1;
                break;
            }
        if (!found && cut_long) {
            wh_buf_append(b, s + off, w);
            wh_buf_append(b, nl, nllen);
            off += w;
            continue;
        }
        if (!found) {
            const char *next = memchr(s + off + w, ' ', len - off - w);
            if (next == NULL)
                break;
            sp = (size_t)(next - s);
        }
        wh_buf_append(b, s + off, sp - off);
        wh_buf_append(b, nl, nllen);
        off = sp + 1;
    }
    wh_buf_append(b, s + off, len - off);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_wrap)
{
    return wrap_text(ctx, a[0].u.i, "", 0, 0, a[1].u.s, a[1].len, out);
}

FN(fn_wrapwith)
{
    return wrap_text(ctx, a[0].u.i, a[1].u.s, a[1].len, 1, a[2].u.s, a[2].len, out);
}

/* goutils.SwapCase: upper (and title) case to lower, lower to upper (title
 * case after white space, which is upper case but for Unicode's few digraphs) */
FN(fn_swapcase)
{
    locale_t loc = ctx->set->ctype;
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i = 0, w;
    unsigned r;

    while (i < a[0].len) {
        w = tm_utf8_decode(a[0].u.s + i, a[0].len - i, &r);
        if (w == 0) {
            w = 1;
            r = 0xfffd;
        }
        if (r < 0x80) {
            if (isupper((int)r))
                r = (unsigned)tolower((int)r);
            else if (islower((int)r))
                r = (unsigned)toupper((int)r);
        } else if (loc != (locale_t)0) {
            if (iswupper_l((wint_t)r, loc))
                r = (unsigned)towlower_l((wint_t)r, loc);
            else if (iswlower_l((wint_t)r, loc))
                r = (unsigned)towupper_l((wint_t)r, loc);
        }
        tm_put_rune(b, r);
        i += w;
    }
    return tm_ret_buf(ctx, out, b);
}

const wh_tmpl_func tm_sprig_strings_funcs[] = {
    {"abbrev", fn_abbrev, "is", WH_TMPL_FN_PURE},
    {"abbrevboth", fn_abbrevboth, "iis", WH_TMPL_FN_PURE},
    {"cat", fn_cat, "v*", WH_TMPL_FN_PURE},
    {"contains", fn_contains, "ss", WH_TMPL_FN_PURE},
    {"hasPrefix", fn_hasprefix, "ss", WH_TMPL_FN_PURE},
    {"hasSuffix", fn_hassuffix, "ss", WH_TMPL_FN_PURE},
    {"indent", fn_indent, "is", WH_TMPL_FN_PURE},
    {"initials", fn_initials, "s", WH_TMPL_FN_PURE},
    {"join", fn_join, "sv", WH_TMPL_FN_PURE},
    {"lower", fn_lower, "s", WH_TMPL_FN_PURE},
    {"nindent", fn_nindent, "is", WH_TMPL_FN_PURE},
    {"nospace", fn_nospace, "s", WH_TMPL_FN_PURE},
    {"plural", fn_plural, "ssi", WH_TMPL_FN_PURE},
    {"quote", fn_quote, "v*", WH_TMPL_FN_PURE},
    {"repeat", fn_repeat, "is", WH_TMPL_FN_PURE},
    {"replace", fn_replace, "sss", WH_TMPL_FN_PURE},
    {"sortAlpha", fn_sortalpha, "v", WH_TMPL_FN_PURE},
    {"split", fn_split, "ss", WH_TMPL_FN_PURE},
    {"splitList", fn_splitlist, "ss", WH_TMPL_FN_PURE},
    {"splitn", fn_splitn, "sis", WH_TMPL_FN_PURE},
    {"squote", fn_squote, "v*", WH_TMPL_FN_PURE},
    {"substr", fn_substr, "iis", WH_TMPL_FN_PURE},
    {"swapcase", fn_swapcase, "s", WH_TMPL_FN_PURE},
    {"title", fn_title, "s", WH_TMPL_FN_PURE},
    {"toString", fn_tostring, "v", WH_TMPL_FN_PURE},
    {"toStrings", fn_tostrings, "v", WH_TMPL_FN_PURE},
    {"trim", fn_trim, "s", WH_TMPL_FN_PURE},
    {"trimAll", fn_trimall, "ss", WH_TMPL_FN_PURE},
    {"trimPrefix", fn_trimprefix, "ss", WH_TMPL_FN_PURE},
    {"trimSuffix", fn_trimsuffix, "ss", WH_TMPL_FN_PURE},
    {"trimall", fn_trimall, "ss", WH_TMPL_FN_PURE},
    {"trunc", fn_trunc, "is", WH_TMPL_FN_PURE},
    {"untitle", fn_untitle, "s", WH_TMPL_FN_PURE},
    {"upper", fn_upper, "s", WH_TMPL_FN_PURE},
    {"wrap", fn_wrap, "is", WH_TMPL_FN_PURE},
    {"wrapWith", fn_wrapwith, "iss", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_strings_nfuncs = sizeof(tm_sprig_strings_funcs) / sizeof(tm_sprig_strings_funcs[0]);
