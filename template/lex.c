/*
 * lex.c - the lexer of Go's text/template (parse/lex.go of Go 1.19), item by
 * item, so that what lexes and the error messages match; lex.h says what the
 * parser sees.
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lex.h"
#include "wh_alloc.h"
#include "wh_chars.h"
#include "wh_go.h"

int tm_is_space(int r)
{
    return r == ' ' || r == '\t' || r == '\r' || r == '\n';
}

static int is_alnum(int r)
{
    return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r >= 0x80;
}

static int lx_next(lexer *l)
{
    unsigned r;
    size_t w;

    if (l->pos >= l->len) {
        l->at_eof = 1;
        return LEOF;
    }
    w = tm_utf8_decode(l->in + l->pos, l->len - l->pos, &r);
    if (w == 0) {
        w = 1;
        r = 0xfffd;
    }
    l->pos += w;
    if (r == '\n')
        l->line++;
    return (int)r;
}

static void lx_backup(lexer *l)
{
    if (!l->at_eof && l->pos > 0) {
        size_t p = l->pos - 1;
        unsigned r;
        /* step back over one UTF-8 sequence */
        while (p > 0 && ((unsigned char)l->in[p] & 0xc0) == 0x80 && l->pos - p < 4)
            p--;
        if (tm_utf8_decode(l->in + p, l->pos - p, &r) != l->pos - p)
            p = l->pos - 1;
        l->pos = p;
        if (l->in[p] == '\n')
            l->line--;
    }
}

static int lx_peek(lexer *l)
{
    int r = lx_next(l);
    lx_backup(l);
    return r;
}

static int count_nl(const char *s, size_t n)
{
    int c = 0;
    size_t i;

    for (i = 0; i < n; i++)
        c += s[i] == '\n';
    return c;
}

static void lx_push(lexer *l, itype t, const char *val, size_t len, int line, size_t pos)
{
    WH_GROW(l->items, l->nitems, l->capitems, 64);
    l->items[l->nitems].typ = t;
    l->items[l->nitems].pos = (int)pos;
    l->items[l->nitems].val = val;
    l->items[l->nitems].len = len;
    l->items[l->nitems].line = line;
    l->nitems++;
}

static void lx_emit(lexer *l, itype t)
{
    lx_push(l, t, l->in + l->start, l->pos - l->start, l->start_line, l->start);
    l->start = l->pos;
    l->start_line = l->line;
}

static void lx_ignore(lexer *l)
{
    l->line += count_nl(l->in + l->start, l->pos - l->start);
    l->start = l->pos;
    l->start_line = l->line;
}

static int lx_errorf(lexer *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int lx_errorf(lexer *l, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    char *v;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    v = tm_strndup(l->arena, msg, strlen(msg));
    lx_push(l, I_ERROR, v, strlen(v), l->start_line, l->start);
    return 0;
}

/* %#U of a rune */
static void fmt_U(char *buf, size_t n, int r)
{
    if (r < 0)
        snprintf(buf, n, "U+FFFFFFFFFFFFFFFF");
    else if (wh_go_is_print((unsigned)r)) {
        wh_buf b = WH_BUF_INIT;
        tm_put_rune(&b, (unsigned)r);
        snprintf(buf, n, "U+%04X '%s'", r, b.data);
        wh_buf_free(&b);
    } else
        snprintf(buf, n, "U+%04X", r);
}

static int starts(const lexer *l, size_t pos, const char *p, size_t n)
{
    return pos <= l->len && l->len - pos >= n && memcmp(l->in + pos, p, n) == 0;
}

static int has_left_trim(const lexer *l, size_t pos)
{
    return l->len - pos >= 2 && l->in[pos] == '-' && tm_is_space((unsigned char)l->in[pos + 1]);
}

static int has_right_trim(const lexer *l, size_t pos)
{
    return pos <= l->len && l->len - pos >= 2 && tm_is_space((unsigned char)l->in[pos]) && l->in[pos + 1] == '-';
}

static int at_right_delim(lexer *l, int *trim)
{
    if (has_right_trim(l, l->pos) && starts(l, l->pos + 2, l->rd, l->rdl)) {
        *trim = 1;
        return 1;
    }
    *trim = 0;
    return starts(l, l->pos, l->rd, l->rdl);
}

static int at_terminator(lexer *l)
{
    int r = lx_peek(l);

    if (tm_is_space(r))
        return 1;
    switch (r) {
    case LEOF:
    case '.':
    case ',':
    case '|':
    case ':':
    case ')':
    case '(':
        return 1;
    }
    return starts(l, l->pos, l->rd, l->rdl);
}

enum {
    S_TEXT,
    S_LEFT,
    S_COMMENT,
    S_RIGHT,
    S_INSIDE,
    S_SPACE,
    S_IDENT,
    S_FIELD,
    S_VARIABLE,
    S_CHAR,
    S_NUMBER,
    S_QUOTE,
    S_RAW,
    S_DONE
};

static const struct {
    const char *word;
    itype t;
} keywords[] = {{".", I_DOT},         {"block", I_BLOCK}, {"break", I_BREAK},       {"continue", I_CONTINUE},
                {"define", I_DEFINE}, {"else", I_ELSE},   {"end", I_END},           {"if", I_IF},
                {"range", I_RANGE},   {"nil", I_NIL},     {"template", I_TEMPLATE}, {"with", I_WITH}};

static int keyword(const char *w, size_t n)
{
    size_t i;

    for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
        if (strlen(keywords[i].word) == n && memcmp(keywords[i].word, w, n) == 0)
            return (int)keywords[i].t;
    return -1;
}

static int accept(lexer *l, const char *valid)
{
    int r = lx_next(l);
    if (r != LEOF && r < 0x80 && strchr(valid, r) != NULL)
        return 1;
    lx_backup(l);
    return 0;
}

static void accept_run(lexer *l, const char *valid)
{
    int r;
    while ((r = lx_next(l)) != LEOF && r < 0x80 && strchr(valid, r) != NULL)
        ;
    lx_backup(l);
}

static int scan_number(lexer *l)
{
    const char *digits = "0123456789_";

    accept(l, "+-");
    if (accept(l, "0")) {
        if (accept(l, "xX"))
            digits = "0123456789abcdefABCDEF_";
        else if (accept(l, "oO"))
            digits = "01234567_";
        else if (accept(l, "bB"))
            digits = "01_";
    }
    accept_run(l, digits);
    if (accept(l, "."))
        accept_run(l, digits);
    if (strlen(digits) == 11 && accept(l, "eE")) {
        accept(l, "+-");
        accept_run(l, "0123456789_");
    }
    if (strlen(digits) == 23 && accept(l, "pP")) {
        accept(l, "+-");
        accept_run(l, "0123456789_");
    }
    accept(l, "i");
    if (is_alnum(lx_peek(l))) {
        lx_next(l);
        return 0;
    }
    return 1;
}

void tm_lex_all(lexer *l)
{
    int state = S_TEXT;
    char ubuf[64];

    while (state != S_DONE) {
        switch (state) {
        case S_TEXT: {
            const char *x = l->pos <= l->len ? memmem(l->in + l->pos, l->len - l->pos, l->ld, l->ldl) : NULL;
            if (x != NULL) {
                size_t trim = 0;
                l->pos = (size_t)(x - l->in);
                if (has_left_trim(l, l->pos + l->ldl)) {
                    size_t e = l->pos;
                    while (e > l->start && tm_is_space((unsigned char)l->in[e - 1]))
                        e--;
                    trim = l->pos - e;
                }
                l->pos -= trim;
                if (l->pos > l->start) {
                    l->line += count_nl(l->in + l->start, l->pos - l->start);
                    lx_emit(l, I_TEXT);
                }
                l->pos += trim;
                lx_ignore(l);
                state = S_LEFT;
                break;
            }
            l->pos = l->len;
            if (l->pos > l->start) {
                l->line += count_nl(l->in + l->start, l->pos - l->start);
                lx_emit(l, I_TEXT);
            }
            lx_emit(l, I_EOF);
            state = S_DONE;
            break;
        }
        case S_LEFT: {
            size_t after = 0;
            l->pos += l->ldl;
            if (has_left_trim(l, l->pos))
                after = 2;
            if (starts(l, l->pos + after, "/*", 2)) {
                l->pos += after;
                lx_ignore(l);
                state = S_COMMENT;
                break;
            }
            lx_emit(l, I_LDELIM);
            l->pos += after;
            lx_ignore(l);
            l->paren_depth = 0;
            state = S_INSIDE;
            break;
        }
        case S_COMMENT: {
            const char *e;
            int trim;
            l->pos += 2;
            e = memmem(l->in + l->pos, l->len - l->pos, "*/", 2);
            if (e == NULL) {
                lx_errorf(l, "unclosed comment");
                return;
            }
            l->pos = (size_t)(e - l->in) + 2;
            if (!at_right_delim(l, &trim)) {
                lx_errorf(l, "comment ends before closing delimiter");
                return;
            }
            if (trim)
                l->pos += 2;
            l->pos += l->rdl;
            if (trim)
                while (l->pos < l->len && tm_is_space((unsigned char)l->in[l->pos]))
                    l->pos++;
            lx_ignore(l);
            state = S_TEXT;
            break;
        }
        case S_RIGHT: {
            int trim = has_right_trim(l, l->pos);
            if (trim) {
                l->pos += 2;
                lx_ignore(l);
            }
            l->pos += l->rdl;
            lx_emit(l, I_RDELIM);
            if (trim) {
                while (l->pos < l->len && tm_is_space((unsigned char)l->in[l->pos]))
                    l->pos++;
                lx_ignore(l);
            }
            state = S_TEXT;
            break;
        }
        case S_INSIDE: {
            int trim, r;
            if (at_right_delim(l, &trim)) {
                if (l->paren_depth == 0) {
                    state = S_RIGHT;
                    break;
                }
                lx_errorf(l, "unclosed left paren");
                return;
            }
            r = lx_next(l);
            if (r == LEOF) {
                lx_errorf(l, "unclosed action");
                return;
            } else if (tm_is_space(r)) {
                lx_backup(l);
                state = S_SPACE;
            } else if (r == '=') {
                lx_emit(l, I_ASSIGN);
            } else if (r == ':') {
                if (lx_next(l) != '=') {
                    lx_errorf(l, "expected :=");
                    return;
                }
                lx_emit(l, I_DECLARE);
            } else if (r == '|') {
                lx_emit(l, I_PIPE);
            } else if (r == '"') {
                state = S_QUOTE;
            } else if (r == '`') {
                state = S_RAW;
            } else if (r == '$') {
                state = S_VARIABLE;
            } else if (r == '\'') {
                state = S_CHAR;
            } else if (r == '.' && l->pos < l->len && (l->in[l->pos] < '0' || l->in[l->pos] > '9')) {
                state = S_FIELD;
            } else if (r == '.' || r == '+' || r == '-' || (r >= '0' && r <= '9')) {
                lx_backup(l);
                state = S_NUMBER;
            } else if (is_alnum(r)) {
                lx_backup(l);
                state = S_IDENT;
            } else if (r == '(') {
                lx_emit(l, I_LPAREN);
                l->paren_depth++;
            } else if (r == ')') {
                lx_emit(l, I_RPAREN);
                l->paren_depth--;
                if (l->paren_depth < 0) {
                    fmt_U(ubuf, sizeof(ubuf), r);
                    lx_errorf(l, "unexpected right paren %s", ubuf);
                    return;
                }
            } else if (r < 0x80 && r >= 0x20 && r < 0x7f) {
                lx_emit(l, I_CHAR);
            } else {
                fmt_U(ubuf, sizeof(ubuf), r);
                lx_errorf(l, "unrecognized character in action: %s", ubuf);
                return;
            }
            break;
        }
        case S_SPACE: {
            int n = 0;
            while (tm_is_space(lx_peek(l))) {
                lx_next(l);
                n++;
            }
            if (has_right_trim(l, l->pos - 1) && starts(l, l->pos - 1 + 2, l->rd, l->rdl)) {
                lx_backup(l);
                if (n == 1) {
                    state = S_RIGHT;
                    break;
                }
            }
            lx_emit(l, I_SPACE);
            state = S_INSIDE;
            break;
        }
        case S_IDENT: {
            int r;
            for (;;) {
                r = lx_next(l);
                if (!is_alnum(r))
                    break;
            }
            lx_backup(l);
            if (!at_terminator(l)) {
                fmt_U(ubuf, sizeof(ubuf), r);
                lx_errorf(l, "bad character %s", ubuf);
                return;
            }
            {
                const char *w = l->in + l->start;
                size_t n = l->pos - l->start;
                int k = keyword(w, n);
                if (k > I_KEYWORD && k != I_DOT) {
                    if ((k == I_BREAK && !l->break_ok) || (k == I_CONTINUE && !l->continue_ok))
                        lx_emit(l, I_IDENT);
                    else
                        lx_emit(l, (itype)k);
                } else if (w[0] == '.') {
                    lx_emit(l, I_FIELD);
                } else if ((n == 4 && memcmp(w, "true", 4) == 0) || (n == 5 && memcmp(w, "false", 5) == 0)) {
                    lx_emit(l, I_BOOL);
                } else {
                    lx_emit(l, I_IDENT);
                }
            }
            state = S_INSIDE;
            break;
        }
        case S_FIELD:
        case S_VARIABLE: {
            int r;
            if (state == S_VARIABLE && at_terminator(l)) {
                lx_emit(l, I_VARIABLE);
                state = S_INSIDE;
                break;
            }
            if (at_terminator(l)) {
                lx_emit(l, state == S_VARIABLE ? I_VARIABLE : I_DOT);
                state = S_INSIDE;
                break;
            }
            for (;;) {
                r = lx_next(l);
                if (!is_alnum(r)) {
                    lx_backup(l);
                    break;
                }
            }
            if (!at_terminator(l)) {
                fmt_U(ubuf, sizeof(ubuf), r);
                lx_errorf(l, "bad character %s", ubuf);
                return;
            }
            lx_emit(l, state == S_VARIABLE ? I_VARIABLE : I_FIELD);
            state = S_INSIDE;
            break;
        }
        case S_CHAR:
        case S_QUOTE: {
            char q = state == S_CHAR ? '\'' : '"';
            for (;;) {
                int r = lx_next(l);
                if (r == '\\') {
                    r = lx_next(l);
                    if (r != LEOF && r != '\n')
                        continue;
                }
                if (r == LEOF || r == '\n') {
                    lx_errorf(l, q == '"' ? "unterminated quoted string" : "unterminated character constant");
                    return;
                }
                if (r == q)
                    break;
            }
            lx_emit(l, q == '"' ? I_STRING : I_CHARCONST);
            state = S_INSIDE;
            break;
        }
        case S_RAW:
            for (;;) {
                int r = lx_next(l);
                if (r == LEOF) {
                    lx_errorf(l, "unterminated raw quoted string");
                    return;
                }
                if (r == '`')
                    break;
            }
            lx_emit(l, I_RAWSTRING);
            state = S_INSIDE;
            break;
        case S_NUMBER: {
            int sign;
            if (!scan_number(l)) {
                wh_buf b = WH_BUF_INIT;
                wh_go_quote(&b, l->in + l->start, l->pos - l->start, '\"', 0);
                lx_errorf(l, "bad number syntax: %s", b.data);
                wh_buf_free(&b);
                return;
            }
            sign = lx_peek(l);
            if (sign == '+' || sign == '-') {
                if (!scan_number(l) || l->in[l->pos - 1] != 'i') {
                    wh_buf b = WH_BUF_INIT;
                    wh_go_quote(&b, l->in + l->start, l->pos - l->start, '\"', 0);
                    lx_errorf(l, "bad number syntax: %s", b.data);
                    wh_buf_free(&b);
                    return;
                }
                lx_emit(l, I_COMPLEX);
            } else {
                lx_emit(l, I_NUMBER);
            }
            state = S_INSIDE;
            break;
        }
        }
    }
}
