/*
 * sprig_regex.c - Sprig's regex.go: regexMatch/Find/FindAll/ReplaceAll/Split
 * with RE2 syntax mapped onto POSIX extended regular expressions.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <regex.h>
#include <string.h>

#include "sprig_int.h"

/* Translate the RE2 constructs charts use (\d \w \s \D \W \S, (?i) prefix,
 * non-greedy markers are not supported) into POSIX ERE. */
static int compile_re(wh_tmpl_ctx *ctx, const wh_tmpl_value *pat, regex_t *re)
{
    wh_buf b = WH_BUF_INIT;
    size_t i = 0;
    int flags = REG_EXTENDED, rc, in_class = 0;

    if (pat->len >= 4 && memcmp(pat->u.s, "(?i)", 4) == 0) {
        flags |= REG_ICASE;
        i = 4;
    }
    for (; i < pat->len; i++) {
        char c = pat->u.s[i];
        if (c == '\\' && i + 1 < pat->len) {
            char d = pat->u.s[++i];
            const char *cls = NULL;
            switch (d) {
            case 'd':
                cls = "0-9";
                break;
            case 'w':
                cls = "0-9A-Za-z_";
                break;
            case 's':
                cls = " \t\n\f\r";
                break;
            case 'D':
                cls = "^0-9";
                break;
            case 'W':
                cls = "^0-9A-Za-z_";
                break;
            case 'S':
                cls = "^ \t\n\f\r";
                break;
            case 'n':
                wh_buf_putc(&b, '\n');
                continue;
            case 't':
                wh_buf_putc(&b, '\t');
                continue;
            default:
                break;
            }
            if (cls != NULL) {
                if (in_class && cls[0] == '^') {
                    wh_buf_free(&b);
                    return wh_tmpl_errorf(ctx, "unsupported regular expression: %.*s", (int)pat->len, pat->u.s);
                }
                if (!in_class)
                    wh_buf_putc(&b, '[');
                wh_buf_puts(&b, cls);
                if (!in_class)
                    wh_buf_putc(&b, ']');
                continue;
            }
            if (in_class) {
                wh_buf_putc(&b, d);
            } else {
                wh_buf_putc(&b, '\\');
                wh_buf_putc(&b, d);
            }
            continue;
        }
        if (c == '[' && !in_class) {
            in_class = 1;
            wh_buf_putc(&b, c);
            if (i + 1 < pat->len && pat->u.s[i + 1] == '^') {
                wh_buf_putc(&b, '^');
                i++;
            }
            if (i + 1 < pat->len && pat->u.s[i + 1] == ']') {
                wh_buf_putc(&b, ']');
                i++;
            }
            continue;
        }
        if (c == ']' && in_class)
            in_class = 0;
        if (c == '?' && i > 0 && (pat->u.s[i - 1] == '*' || pat->u.s[i - 1] == '+' || pat->u.s[i - 1] == '?') &&
            !in_class) {
            wh_buf_free(&b);
            return wh_tmpl_errorf(ctx, "unsupported regular expression (non-greedy): %.*s", (int)pat->len, pat->u.s);
        }
        wh_buf_putc(&b, c);
    }
    wh_buf_append(&b, "", 0);
    rc = regcomp(re, b.data, flags);
    wh_buf_free(&b);
    if (rc != 0)
        return wh_tmpl_errorf(ctx, "error parsing regexp: %.*s", (int)pat->len, pat->u.s);
    return WH_OK;
}

/* run with the subject NUL-terminated in the arena */
static const char *cstr(wh_tmpl_ctx *ctx, const wh_tmpl_value *s)
{
    return tm_strndup(ctx->arena, s->u.s, s->len);
}

static wh_code regex_match(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, int must, wh_tmpl_value *out)
{
    regex_t re;
    const char *s;
    wh_code rc = compile_re(ctx, &a[0], &re);

    if (rc != WH_OK)
        return sprig_or_zero(ctx, rc, must, wh_tmpl_bool(0), out);
    s = cstr(ctx, &a[1]);
    *out = wh_tmpl_bool(regexec(&re, s, 0, NULL, 0) == 0);
    regfree(&re);
    return WH_OK;
}

FN(fn_regexmatch)
{
    return regex_match(ctx, a, 0, out);
}

FN(fn_mustregexmatch)
{
    return regex_match(ctx, a, 1, out);
}

/* all matches of re in s: pairs of offsets, up to max (-1 = all) */
static wh_code regex_each(wh_tmpl_ctx *ctx, regex_t *re, const char *s, size_t len, long max, regmatch_t *m,
                          size_t *count)
{
    size_t off = 0, k = 0;
    int prev_empty_end = -1;

    while (off <= len && (max < 0 || (long)k < max)) {
        regmatch_t r[1];
        if (regexec(re, s + off, 1, r, off > 0 ? REG_NOTBOL : 0) != 0)
            break;
        if (r[0].rm_so == r[0].rm_eo && (long)(off + (size_t)r[0].rm_so) == prev_empty_end) {
            off++;
            continue;
        }
        m[k].rm_so = (regoff_t)(off + (size_t)r[0].rm_so);
        m[k].rm_eo = (regoff_t)(off + (size_t)r[0].rm_eo);
        k++;
        if (k >= 4096)
            break;
        if (r[0].rm_eo == r[0].rm_so) {
            prev_empty_end = (int)(off + (size_t)r[0].rm_eo);
            off += (size_t)r[0].rm_eo + 1;
        } else {
            off += (size_t)r[0].rm_eo;
            prev_empty_end = (int)off;
        }
    }
    *count = k;
    return WH_OK;
}

static wh_code regex_find(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, int all, int must, wh_tmpl_value *out)
{
    regex_t re;
    regmatch_t *m;
    size_t cnt, i;
    const char *s;
    wh_code rc = compile_re(ctx, &a[0], &re);

    if (rc != WH_OK)
        return sprig_or_zero(ctx, rc, must,
                             all ? wh_tmpl_list_new(ctx, 0, &wh_tmpl_type_string_slice) : wh_tmpl_strn("", 0), out);
    s = cstr(ctx, &a[1]);
    m = wh_tmpl_alloc(ctx, 4096 * sizeof(*m));
    regex_each(ctx, &re, s, a[1].len, all ? (long)a[2].u.i : 1, m, &cnt);
    regfree(&re);
    if (!all) {
        *out = cnt ? wh_tmpl_strn(s + m[0].rm_so, (size_t)(m[0].rm_eo - m[0].rm_so)) : wh_tmpl_strn("", 0);
        return WH_OK;
    }
    *out = wh_tmpl_list_new(ctx, cnt, &wh_tmpl_type_string_slice);
    if (cnt == 0) {
        *out = wh_tmpl_json_typed(NULL, &wh_tmpl_type_string_slice);
        return WH_OK;
    }
    for (i = 0; i < cnt; i++)
        if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_strn(s + m[i].rm_so, (size_t)(m[i].rm_eo - m[i].rm_so)))))
            return rc;
    return WH_OK;
}

FN(fn_regexfind)
{
    return regex_find(ctx, a, n, 0, 0, out);
}

FN(fn_mustregexfind)
{
    return regex_find(ctx, a, n, 0, 1, out);
}

FN(fn_regexfindall)
{
    return regex_find(ctx, a, n, 1, 0, out);
}

FN(fn_mustregexfindall)
{
    return regex_find(ctx, a, n, 1, 1, out);
}

/* Go's Regexp.ReplaceAllString ($1, ${1}, $name unsupported -> empty) or literal */
static wh_code regex_replace(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, int literal, int must, wh_tmpl_value *out)
{
    regex_t re;
    const char *s;
    wh_buf *b;
    size_t off = 0;
    wh_code rc = compile_re(ctx, &a[0], &re);
    int prev_end = -1;

    if (rc != WH_OK)
        return sprig_or_zero(ctx, rc, must, wh_tmpl_strn("", 0), out);
    s = cstr(ctx, &a[1]);
    b = wh_tmpl_tmpbuf(ctx);
    while (off <= a[1].len) {
        regmatch_t m[10];
        size_t so, eo, k;
        if (regexec(&re, s + off, 10, m, off > 0 ? REG_NOTBOL : 0) != 0)
            break;
        so = off + (size_t)m[0].rm_so;
        eo = off + (size_t)m[0].rm_eo;
        if (so == eo && (int)so == prev_end) {
            if (off < a[1].len)
                wh_buf_putc(b, s[off]);
            off++;
            continue;
        }
        wh_buf_append(b, s + off, so - off);
        if (literal) {
            wh_buf_append(b, a[2].u.s, a[2].len);
        } else {
            const char *t = a[2].u.s;
            size_t tl = a[2].len;
            for (k = 0; k < tl; k++) {
                if (t[k] == '$' && k + 1 < tl) {
                    size_t j = k + 1, num = 0;
                    int brace = t[j] == '{', digits = 0;
                    if (t[j] == '$') {
                        wh_buf_putc(b, '$');
                        k = j;
                        continue;
                    }
                    if (brace)
                        j++;
                    while (j < tl && t[j] >= '0' && t[j] <= '9') {
                        num = num * 10 + (size_t)(t[j] - '0');
                        j++;
                        digits++;
                    }
                    if (digits > 0 && (!brace || (j < tl && t[j] == '}')) &&
                        (brace || j >= tl || !(isalnum((unsigned char)t[j]) || t[j] == '_'))) {
                        if (num < 10 && m[num].rm_so >= 0)
                            wh_buf_append(b, s + off + m[num].rm_so, (size_t)(m[num].rm_eo - m[num].rm_so));
                        k = brace ? j : j - 1;
                        continue;
                    }
                    /* a name: Go expands an unknown name to "" */
                    j = k + 1 + (size_t)brace;
                    while (j < tl && (isalnum((unsigned char)t[j]) || t[j] == '_'))
                        j++;
                    if (j > k + 1 + (size_t)brace && (!brace || (j < tl && t[j] == '}'))) {
                        k = brace ? j : j - 1;
                        continue;
                    }
                }
                wh_buf_putc(b, t[k]);
            }
        }
        prev_end = (int)eo;
        if (eo == so) {
            if (so < a[1].len)
                wh_buf_putc(b, s[so]);
            off = so + 1;
        } else {
            off = eo;
        }
    }
    if (off < a[1].len)
        wh_buf_append(b, s + off, a[1].len - off);
    regfree(&re);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_regexreplaceall)
{
    wh_tmpl_value x[3] = {a[0], a[1], a[2]};
    return regex_replace(ctx, x, 0, 0, out);
}

FN(fn_mustregexreplaceall)
{
    return regex_replace(ctx, a, 0, 1, out);
}

FN(fn_regexreplaceallliteral)
{
    return regex_replace(ctx, a, 1, 0, out);
}

FN(fn_regexsplit)
{
    regex_t re;
    regmatch_t *m;
    size_t cnt, i, prev = 0;
    const char *s;
    long max = (long)a[2].u.i;
    wh_code rc;

    if ((rc = compile_re(ctx, &a[0], &re)) != WH_OK)
        return rc;
    s = cstr(ctx, &a[1]);
    m = wh_tmpl_alloc(ctx, 4096 * sizeof(*m));
    *out = wh_tmpl_list_new(ctx, 4, &wh_tmpl_type_string_slice);
    if (max == 0) {
        regfree(&re);
        *out = wh_tmpl_json_typed(NULL, &wh_tmpl_type_string_slice);
        return WH_OK;
    }
    regex_each(ctx, &re, s, a[1].len, -1, m, &cnt);
    regfree(&re);
    for (i = 0; i < cnt; i++) {
        if (max > 0 && wh_tmpl_len(out) == max - 1)
            break;
        if (m[i].rm_eo == 0)
            continue;
        if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_strn(s + prev, (size_t)m[i].rm_so - prev))) != WH_OK)
            return rc;
        prev = (size_t)m[i].rm_eo;
    }
    return wh_tmpl_list_push(ctx, out, wh_tmpl_strn(s + prev, a[1].len - prev));
}

FN(fn_regexquotemeta)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i;
    for (i = 0; i < a[0].len; i++) {
        if (strchr("\\.+*?()|[]{}^$", a[0].u.s[i]) != NULL && a[0].u.s[i] != 0)
            wh_buf_putc(b, '\\');
        wh_buf_putc(b, a[0].u.s[i]);
    }
    return tm_ret_buf(ctx, out, b);
}

const wh_tmpl_func tm_sprig_regex_funcs[] = {
    {"mustRegexFind", fn_mustregexfind, "ss", WH_TMPL_FN_PURE},
    {"mustRegexFindAll", fn_mustregexfindall, "ssi", WH_TMPL_FN_PURE},
    {"mustRegexMatch", fn_mustregexmatch, "ss", WH_TMPL_FN_PURE},
    {"mustRegexReplaceAll", fn_mustregexreplaceall, "sss", WH_TMPL_FN_PURE},
    {"mustRegexReplaceAllLiteral", fn_regexreplaceallliteral, "sss", WH_TMPL_FN_PURE},
    {"mustRegexSplit", fn_regexsplit, "ssi", WH_TMPL_FN_PURE},
    {"regexFind", fn_regexfind, "ss", WH_TMPL_FN_PURE},
    {"regexFindAll", fn_regexfindall, "ssi", WH_TMPL_FN_PURE},
    {"regexMatch", fn_regexmatch, "ss", WH_TMPL_FN_PURE},
    {"regexQuoteMeta", fn_regexquotemeta, "s", WH_TMPL_FN_PURE},
    {"regexReplaceAll", fn_regexreplaceall, "sss", WH_TMPL_FN_PURE},
    {"regexReplaceAllLiteral", fn_regexreplaceallliteral, "sss", WH_TMPL_FN_PURE},
    {"regexSplit", fn_regexsplit, "ssi", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_regex_nfuncs = sizeof(tm_sprig_regex_funcs) / sizeof(tm_sprig_regex_funcs[0]);
