/*
 * fmt.c - Go's fmt.Sprintf / Sprint / Sprintln over template values: the
 * verbs, flags, width and precision templates use, and fmt's complaints
 * (%!d(string=x), %!s(MISSING), %!(EXTRA ...)) where arguments do not fit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "tmpl_int.h"
#include "wh_go.h"

typedef struct spec {
    int minus, plus, sharp, zero, space;
    int width, prec; /* -1 = absent */
    char verb;
} spec;

static size_t rune_count(const char *s, size_t len)
{
    size_t n = 0, i = 0;
    unsigned r;

    while (i < len) {
        size_t w = tm_utf8_decode(s + i, len - i, &r);
        i += w ? w : 1;
        n++;
    }
    return n;
}

/* Append s padded to the width (in runes). */
static void pad(wh_buf *out, const spec *sp, const char *s, size_t len, int zero_ok)
{
    size_t n = sp->width > 0 ? rune_count(s, len) : 0, i;

    if (sp->width <= 0 || n >= (size_t)sp->width) {
        wh_buf_append(out, s, len);
        return;
    }
    if (sp->minus) {
        wh_buf_append(out, s, len);
        for (i = n; i < (size_t)sp->width; i++)
            wh_buf_putc(out, ' ');
        return;
    }
    if (sp->zero && zero_ok) {
        /* zeros go after the sign */
        size_t skip = (len > 0 && (s[0] == '-' || s[0] == '+' || s[0] == ' ')) ? 1 : 0;
        wh_buf_append(out, s, skip);
        for (i = n; i < (size_t)sp->width; i++)
            wh_buf_putc(out, '0');
        wh_buf_append(out, s + skip, len - skip);
        return;
    }
    for (i = n; i < (size_t)sp->width; i++)
        wh_buf_putc(out, ' ');
    wh_buf_append(out, s, len);
}

static void fmt_string(wh_buf *out, const spec *sp, const char *s, size_t len)
{
    wh_buf tmp = WH_BUF_INIT;
    size_t i;

    if (sp->prec >= 0) {
        /* truncate to prec runes */
        size_t n = 0, k = 0;
        unsigned r;
        while (k < len && n < (size_t)sp->prec) {
            size_t w = tm_utf8_decode(s + k, len - k, &r);
            k += w ? w : 1;
            n++;
        }
        len = k;
    }
    switch (sp->verb) {
    case 'q':
        if (sp->sharp) {
            int can = 1;
            for (i = 0; i < len; i++)
                if (s[i] == '`' || ((unsigned char)s[i] < ' ' && s[i] != '\t') || s[i] == 0x7f)
                    can = 0;
            if (can) {
                wh_buf_putc(&tmp, '`');
                wh_buf_append(&tmp, s, len);
                wh_buf_putc(&tmp, '`');
                break;
            }
        }
        wh_go_quote(&tmp, s, len, '"', sp->plus);
        break;
    case 'x':
    case 'X': {
        const char *hex = sp->verb == 'x' ? "0123456789abcdef" : "0123456789ABCDEF";
        for (i = 0; i < len; i++) {
            unsigned char c = (unsigned char)s[i];
            if (sp->space && i > 0)
                wh_buf_putc(&tmp, ' ');
            if (sp->sharp && (sp->space || i == 0))
                wh_buf_puts(&tmp, sp->verb == 'x' ? "0x" : "0X");
            wh_buf_putc(&tmp, hex[c >> 4]);
            wh_buf_putc(&tmp, hex[c & 15]);
        }
        break;
    }
    default:
        wh_buf_append(&tmp, s, len);
    }
    pad(out, sp, tmp.data ? tmp.data : "", tmp.len, 0);
    wh_buf_free(&tmp);
}

static void fmt_integer(wh_buf *out, const spec *sp, uint64_t mag, int neg, int is_signed)
{
    char digits[80];
    int n = 0, base = 10, i;
    const char *dg = "0123456789abcdefx";
    wh_buf tmp = WH_BUF_INIT;
    spec s2 = *sp;

    (void)is_signed;
    switch (sp->verb) {
    case 'b':
        base = 2;
        break;
    case 'o':
    case 'O':
        base = 8;
        break;
    case 'x':
        base = 16;
        break;
    case 'X':
        base = 16;
        dg = "0123456789ABCDEFX";
        break;
    case 'c':
        tm_put_rune(&tmp, mag > 0x10ffff ? 0xfffd : (unsigned)mag);
        pad(out, sp, tmp.data, tmp.len, 0);
        wh_buf_free(&tmp);
        return;
    case 'q': {
        wh_buf r = WH_BUF_INIT;
        tm_put_rune(&r, mag > 0x10ffff ? 0xfffd : (unsigned)mag);
        wh_go_quote(&tmp, r.data, r.len, '\'', sp->plus);
        wh_buf_free(&r);
        pad(out, sp, tmp.data, tmp.len, 0);
        wh_buf_free(&tmp);
        return;
    }
    case 'U':
        wh_buf_printf(&tmp, "U+%04llX", (unsigned long long)mag);
        if (sp->sharp && mag <= 0x10ffff && wh_go_is_print((unsigned)mag)) {
            wh_buf_puts(&tmp, " '");
            tm_put_rune(&tmp, (unsigned)mag);
            wh_buf_putc(&tmp, '\'');
        }
        pad(out, sp, tmp.data, tmp.len, 0);
        wh_buf_free(&tmp);
        return;
    default:
        break;
    }
    if (mag == 0 && sp->prec == 0) {
        n = 0;
    } else {
        do {
            digits[n++] = dg[mag % (unsigned)base];
            mag /= (unsigned)base;
        } while (mag != 0);
    }
    for (i = n; i < sp->prec && i < 70; i++)
        digits[n++] = '0';
    if (sp->sharp) {
        if (base == 8 && (n == 0 || digits[n - 1] != '0'))
            digits[n++] = '0';
        else if (base == 16) {
            digits[n++] = dg[16];
            digits[n++] = '0';
        } else if (base == 2) {
            digits[n++] = 'b';
            digits[n++] = '0';
        }
    }
    if (sp->verb == 'O') {
        digits[n++] = 'o';
        digits[n++] = '0';
    }
    if (neg)
        wh_buf_putc(&tmp, '-');
    else if (sp->plus)
        wh_buf_putc(&tmp, '+');
    else if (sp->space)
        wh_buf_putc(&tmp, ' ');
    for (i = n - 1; i >= 0; i--)
        wh_buf_putc(&tmp, digits[i]);
    if (sp->prec >= 0)
        s2.zero = 0;
    pad(out, &s2, tmp.data ? tmp.data : "", tmp.len, 1);
    wh_buf_free(&tmp);
}

static void fmt_float(wh_buf *out, const spec *sp, double f)
{
    wh_buf tmp = WH_BUF_INIT;
    char verb = sp->verb == 'v' ? 'g' : sp->verb;
    spec s2 = *sp;

    if (isnan(f) || isinf(f)) {
        if (isnan(f))
            wh_buf_puts(&tmp, sp->plus ? "+NaN" : sp->space ? " NaN" : "NaN");
        else if (f > 0)
            wh_buf_puts(&tmp, sp->plus ? "+Inf" : sp->space ? " Inf" : "+Inf");
        else
            wh_buf_puts(&tmp, "-Inf");
        if (!sp->plus && !sp->space && f > 0 && !isnan(f)) {
            /* Go prints +Inf for %v and %f alike */
        }
        s2.zero = 0;
        pad(out, &s2, tmp.data, tmp.len, 0);
        wh_buf_free(&tmp);
        return;
    }
    if (sp->plus && !signbit(f))
        wh_buf_putc(&tmp, '+');
    else if (sp->space && !signbit(f))
        wh_buf_putc(&tmp, ' ');
    switch (verb) {
    case 'x':
    case 'X': {
        /* strconv's hexadecimal float: 0x1.8p+00 (two exponent digits at least) */
        char buf[128], *p;
        if (sp->prec >= 0)
            snprintf(buf, sizeof(buf), verb == 'x' ? "%.*a" : "%.*A", sp->prec > 30 ? 30 : sp->prec, f);
        else
            snprintf(buf, sizeof(buf), verb == 'x' ? "%a" : "%A", f);
        p = strpbrk(buf, "pP");
        if (p != NULL && (p[1] == '+' || p[1] == '-') && p[2] != 0 && p[3] == 0) {
            p[4] = 0;
            p[3] = p[2];
            p[2] = '0';
        }
        wh_buf_puts(&tmp, buf);
        break;
    }
    case 'g':
    case 'G':
        if (sp->prec < 0) {
            size_t st = tmp.len;
            wh_go_float(&tmp, f, 'g', -1);
            if (verb == 'G') {
                size_t i;
                for (i = st; i < tmp.len; i++)
                    if (tmp.data[i] == 'e')
                        tmp.data[i] = 'E';
            }
        } else {
            char fmtb[16], buf[512];
            snprintf(fmtb, sizeof(fmtb), "%%%s.%d%c", sp->sharp ? "#" : "", sp->prec > 300 ? 300 : sp->prec, verb);
            snprintf(buf, sizeof(buf), fmtb, f);
            wh_buf_puts(&tmp, buf);
        }
        break;
    case 'e':
    case 'E':
    case 'f':
    case 'F': {
        char fmtb[16], buf[512];
        int prec = sp->prec < 0 ? 6 : sp->prec > 300 ? 300 : sp->prec;
        if (fabs(f) > 1e300 && (verb == 'f' || verb == 'F')) {
            char *big;
            size_t n = (size_t)snprintf(NULL, 0, "%.*f", prec, f) + 1;
            if ((big = wh_malloc(n)) != NULL) {
                snprintf(big, n, "%.*f", prec, f);
                wh_buf_puts(&tmp, big);
                free(big);
            }
            break;
        }
        snprintf(fmtb, sizeof(fmtb), "%%%s.%d%c", sp->sharp ? "#" : "", prec, verb);
        snprintf(buf, sizeof(buf), fmtb, f);
        wh_buf_puts(&tmp, buf);
        break;
    }
    default:
        break;
    }
    pad(out, &s2, tmp.data ? tmp.data : "", tmp.len, 1);
    wh_buf_free(&tmp);
}

static wh_code fmt_value(wh_tmpl_ctx *ctx, wh_buf *out, const spec *sp, const wh_tmpl_value *v, int depth);

/* fmt's %!verb(type=value): the value printed with %v and the same flags */
static void bad_verb(wh_tmpl_ctx *ctx, wh_buf *out, const spec *sp, const wh_tmpl_value *v)
{
    spec s2 = *sp;

    wh_buf_printf(out, "%%!%c(", sp->verb);
    if (v->kind == WH_TMPL_NIL || v->kind == WH_TMPL_INVALID) {
        wh_buf_puts(out, "<nil>");
    } else {
        wh_buf_puts(out, tm_type_name(v));
        wh_buf_putc(out, '=');
        s2.verb = 'v';
        fmt_value(ctx, out, &s2, v, 1);
    }
    wh_buf_putc(out, ')');
}

static wh_code fmt_value(wh_tmpl_ctx *ctx, wh_buf *out, const spec *sp, const wh_tmpl_value *v, int depth)
{
    char verb = sp->verb;
    wh_code rc = WH_OK;

    if (verb == 'T') {
        spec s2 = *sp;
        const char *t = (v->kind == WH_TMPL_NIL || v->kind == WH_TMPL_INVALID) ? "<nil>" : tm_type_name(v);
        s2.verb = 's';
        fmt_string(out, &s2, t, strlen(t));
        return WH_OK;
    }
    if (verb == 'p') {
        bad_verb(ctx, out, sp, v);
        return WH_OK;
    }
    /* Stringer */
    if (v->type != NULL && v->type->format != NULL && strchr("vsxXq", verb) != NULL &&
        !(v->kind == WH_TMPL_HOST && v->type->pointer && v->u.host == NULL)) {
        wh_buf s = WH_BUF_INIT;
        if ((rc = v->type->format(ctx, v, &s)) == WH_OK) {
            spec s2 = *sp;
            if (s2.verb == 'v')
                s2.verb = 's';
            fmt_string(out, &s2, s.data ? s.data : "", s.len);
        }
        wh_buf_free(&s);
        return rc;
    }
    switch (v->kind) {
    case WH_TMPL_INVALID:
    case WH_TMPL_NIL:
        if (verb == 'v' || depth > 0) { /* a nil element prints <nil> whatever the verb */
            spec s2 = *sp;
            s2.verb = 's';
            fmt_string(out, &s2, "<nil>", 5);
        } else {
            bad_verb(ctx, out, sp, v);
        }
        return WH_OK;
    case WH_TMPL_BOOL:
        if (verb == 'v' || verb == 't') {
            spec s2 = *sp;
            s2.verb = 's';
            s2.prec = -1;
            fmt_string(out, &s2, v->u.b ? "true" : "false", v->u.b ? 4 : 5);
        } else {
            bad_verb(ctx, out, sp, v);
        }
        return WH_OK;
    case WH_TMPL_INT:
    case WH_TMPL_UINT: {
        int neg = v->kind == WH_TMPL_INT && v->u.i < 0;
        uint64_t mag = v->kind == WH_TMPL_UINT ? v->u.u : neg ? (uint64_t)0 - (uint64_t)v->u.i : (uint64_t)v->u.i;
        if (strchr("vdbboOxXcqU", verb) != NULL) {
            spec s2 = *sp;
            if (s2.verb == 'v')
                s2.verb = 'd';
            if (s2.verb == 'v' || s2.verb == 'd')
                s2.sharp = 0;
            fmt_integer(out, &s2, mag, neg, v->kind == WH_TMPL_INT);
        } else {
            bad_verb(ctx, out, sp, v);
        }
        return WH_OK;
    }
    case WH_TMPL_FLOAT:
        if (strchr("vgGeEfFxX", verb) != NULL)
            fmt_float(out, sp, v->u.f);
        else
            bad_verb(ctx, out, sp, v);
        return WH_OK;
    case WH_TMPL_STRING:
        if (strchr("vsqxX", verb) != NULL)
            fmt_string(out, sp, v->u.s, v->len);
        else
            bad_verb(ctx, out, sp, v);
        return WH_OK;
    case WH_TMPL_LIST: {
        long n = wh_tmpl_len(v), i;
        wh_buf_putc(out, '[');
        for (i = 0; i < n && rc == WH_OK; i++) {
            wh_tmpl_value e = wh_tmpl_list_at(v, (size_t)i);
            if (i > 0)
                wh_buf_putc(out, ' ');
            rc = fmt_value(ctx, out, sp, &e, depth + 1);
        }
        wh_buf_putc(out, ']');
        return rc;
    }
    case WH_TMPL_MAP: {
        wh_tmpl_kv *ents;
        size_t n, i;
        if ((rc = wh_tmpl_map_entries(ctx, v, &ents, &n)) != WH_OK)
            return rc;
        wh_buf_puts(out, "map[");
        for (i = 0; i < n && rc == WH_OK; i++) {
            wh_tmpl_value k = wh_tmpl_strn(ents[i].key, ents[i].key_len);
            if (i > 0)
                wh_buf_putc(out, ' ');
            if ((rc = fmt_value(ctx, out, sp, &k, depth + 1)) == WH_OK) {
                wh_buf_putc(out, ':');
                rc = fmt_value(ctx, out, sp, &ents[i].val, depth + 1);
            }
        }
        wh_buf_putc(out, ']');
        return rc;
    }
    case WH_TMPL_HOST:
        return tm_print_value(ctx, v, out, depth == 0);
    }
    return WH_OK;
}

/* An argument in fmt's complaints: "<nil>", else TYPE=VALUE. */
static void put_typed(wh_tmpl_ctx *ctx, wh_buf *out, const wh_tmpl_value *v)
{
    if (v->kind == WH_TMPL_NIL || v->kind == WH_TMPL_INVALID) {
        wh_buf_puts(out, "<nil>");
    } else {
        wh_buf_puts(out, tm_type_name(v));
        wh_buf_putc(out, '=');
        tm_print_value(ctx, v, out, 0);
    }
}

wh_code tm_sprintf(wh_tmpl_ctx *ctx, wh_buf *out, const char *f, size_t flen, const wh_tmpl_value *args, size_t nargs)
{
    size_t i = 0, argi = 0;
    wh_code rc;

    while (i < flen) {
        spec sp;
        size_t start = i;
        while (i < flen && f[i] != '%')
            i++;
        if (i > start)
            wh_buf_append(out, f + start, i - start);
        if (i >= flen)
            break;
        i++; /* '%' */
        memset(&sp, 0, sizeof(sp));
        sp.width = sp.prec = -1;
        for (; i < flen; i++) {
            char c = f[i];
            if (c == '#')
                sp.sharp = 1;
            else if (c == '0')
                sp.zero = !sp.minus;
            else if (c == '+')
                sp.plus = 1;
            else if (c == '-') {
                sp.minus = 1;
                sp.zero = 0;
            } else if (c == ' ')
                sp.space = 1;
            else
                break;
        }
        /* width */
        if (i < flen && f[i] == '*') {
            i++;
            if (argi >= nargs) {
                wh_buf_puts(out, "%!(BADWIDTH)");
            } else if (args[argi].kind == WH_TMPL_INT) {
                long long w = args[argi].u.i;
                if (w < 0) {
                    sp.minus = 1;
                    sp.zero = 0;
                    w = -w;
                }
                if (w > 1000000) {
                    wh_buf_puts(out, "%!(BADWIDTH)");
                } else {
                    sp.width = (int)w;
                }
                argi++;
            } else {
                wh_buf_puts(out, "%!(BADWIDTH)");
                argi++;
            }
        } else {
            int w = 0, any = 0;
            while (i < flen && f[i] >= '0' && f[i] <= '9') {
                if (w < 1000000)
                    w = w * 10 + (f[i] - '0');
                any = 1;
                i++;
            }
            if (any)
                sp.width = w;
        }
        if (i < flen && f[i] == '.') {
            i++;
            if (i < flen && f[i] == '*') {
                i++;
                if (argi < nargs && args[argi].kind == WH_TMPL_INT && args[argi].u.i >= 0 &&
                    args[argi].u.i <= 1000000) {
                    sp.prec = (int)args[argi].u.i;
                } else {
                    wh_buf_puts(out, "%!(BADPREC)");
                }
                argi++;
            } else {
                int pr = 0;
                while (i < flen && f[i] >= '0' && f[i] <= '9') {
                    if (pr < 1000000)
                        pr = pr * 10 + (f[i] - '0');
                    i++;
                }
                sp.prec = pr;
            }
        }
        if (i >= flen) {
            wh_buf_puts(out, "%!(NOVERB)");
            break;
        }
        {
            unsigned r;
            size_t w = tm_utf8_decode(f + i, flen - i, &r);
            if (w == 0) {
                w = 1;
                r = 0xfffd;
            }
            i += w;
            if (r == '%') {
                wh_buf_putc(out, '%');
                continue;
            }
            if (argi >= nargs) {
                wh_buf_puts(out, "%!");
                tm_put_rune(out, r);
                wh_buf_puts(out, "(MISSING)");
                continue;
            }
            if (r >= 0x80 || strchr("vTtbcdoOqxXUeEfFgGsp", (int)r) == NULL) {
                wh_buf_puts(out, "%!");
                tm_put_rune(out, r);
                wh_buf_putc(out, '(');
                put_typed(ctx, out, &args[argi]);
                wh_buf_putc(out, ')');
                argi++;
                continue;
            }
            sp.verb = (char)r;
            if ((rc = fmt_value(ctx, out, &sp, &args[argi], 0)) != WH_OK)
                return rc;
            argi++;
        }
    }
    if (argi < nargs) {
        wh_buf_puts(out, "%!(EXTRA ");
        for (; argi < nargs; argi++) {
            put_typed(ctx, out, &args[argi]);
            if (argi + 1 < nargs)
                wh_buf_puts(out, ", ");
        }
        wh_buf_putc(out, ')');
    }
    return WH_OK;
}

wh_code tm_sprint(wh_tmpl_ctx *ctx, wh_buf *out, const wh_tmpl_value *args, size_t nargs, int ln)
{
    size_t i;
    wh_code rc;
    int prev_string = 0;

    for (i = 0; i < nargs; i++) {
        int is_string = args[i].kind == WH_TMPL_STRING;
        /* Sprint adds spaces between operands when neither is a string */
        if (i > 0 && (ln || (!is_string && !prev_string)))
            wh_buf_putc(out, ' ');
        if ((rc = wh_tmpl_sprint(ctx, &args[i], out)) != WH_OK)
            return rc;
        prev_string = is_string;
    }
    if (ln)
        wh_buf_putc(out, '\n');
    return WH_OK;
}
