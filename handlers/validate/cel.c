/*
 * cel.c - does a Telemetry access-log filter parse as CEL?  istiod runs the
 * expression through cel-go's parser (cel.NewEnv().Parse) and rejects it with
 * "must be a valid CEL expression, <issues>".  Only the syntax is checked here,
 * with the parse-time macro rules (has() takes a field selection, the
 * comprehension macros a plain variable name); no type checking, as in istiod.
 */
#include "wh_validate_int.h"

#include <ctype.h>
#include <string.h>

enum {
    T_END,
    T_IDENT,
    T_NUM,
    T_STR,
    T_OP, /* punctuation and operators, text in [start, start+len) */
    T_ERR
};

typedef struct {
    const char *src, *p;
    int kind;
    const char *start;
    size_t len;
    const char *err, *err_at;
    int depth;
    wh_vctx *c;
} cel_parser;

static int cel_ident_start(char ch)
{
    return isalpha((unsigned char)ch) || ch == '_';
}

static int cel_ident_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

static void cel_fail(cel_parser *ps, const char *msg, const char *at)
{
    if (ps->err != NULL)
        return;
    ps->err = msg;
    ps->err_at = at;
}

/* a quoted string body from p (at the quote); returns the end or NULL */
static const char *cel_string(cel_parser *ps, const char *p, int raw)
{
    char q = *p;
    int triple = p[1] == q && p[2] == q;

    p += triple ? 3 : 1;
    for (;;) {
        if (*p == '\0') {
            cel_fail(ps, "Syntax error: token recognition error", p);
            return NULL;
        }
        if (triple) {
            if (p[0] == q && p[1] == q && p[2] == q)
                return p + 3;
        } else {
            if (*p == q)
                return p + 1;
            if (*p == '\n' || *p == '\r') {
                cel_fail(ps, "Syntax error: token recognition error", p);
                return NULL;
            }
        }
        if (*p == '\\' && !raw) {
            const char *e = p + 1;
            int i, n = 0;
            if (*e != '\0' && strchr("abfnrtv\\\"'`?", *e) != NULL) {
                p = e + 1;
                continue;
            }
            if (*e == 'x' || *e == 'X')
                n = 2;
            else if (*e == 'u')
                n = 4;
            else if (*e == 'U')
                n = 8;
            if (n > 0) {
                for (i = 1; i <= n; i++)
                    if (!isxdigit((unsigned char)e[i])) {
                        cel_fail(ps, "Syntax error: token recognition error", p);
                        return NULL;
                    }
                p = e + n + 1;
                continue;
            }
            if (e[0] >= '0' && e[0] <= '3' && e[1] >= '0' && e[1] <= '7' && e[2] >= '0' && e[2] <= '7') {
                p = e + 3;
                continue;
            }
            cel_fail(ps, "Syntax error: token recognition error", p);
            return NULL;
        }
        if (*p == '\\' && raw && p[1] != '\0') {
            p += 2; /* a raw string still cannot end on an escaped quote */
            continue;
        }
        p++;
    }
}

static void cel_next(cel_parser *ps)
{
    const char *p = ps->p;
    static const char *const ops2[] = {"||", "&&", "<=", ">=", "==", "!="};
    size_t i;

    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f')
            p++;
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
            continue;
        }
        break;
    }
    ps->start = p;
    if (*p == '\0') {
        ps->kind = T_END;
        ps->len = 0;
        ps->p = p;
        return;
    }
    /* string and bytes literals, with r/b prefixes */
    {
        const char *q = p;
        int raw = 0, bytes = 0;
        while ((*q == 'r' || *q == 'R' || *q == 'b' || *q == 'B') && q - p < 2) {
            if (*q == 'r' || *q == 'R') {
                if (raw)
                    break;
                raw = 1;
            } else {
                if (bytes)
                    break;
                bytes = 1;
            }
            q++;
        }
        if (*q == '"' || *q == '\'') {
            const char *end = cel_string(ps, q, raw);
            if (end == NULL) {
                ps->kind = T_ERR;
                return;
            }
            ps->kind = T_STR;
            ps->len = (size_t)(end - p);
            ps->p = end;
            return;
        }
    }
    if (cel_ident_start(*p)) {
        const char *q = p;
        while (cel_ident_char(*q))
            q++;
        ps->kind = T_IDENT;
        ps->len = (size_t)(q - p);
        ps->p = q;
        return;
    }
    if (*p == '`') {
        /* escaped identifier (field selection only) */
        const char *q = strchr(p + 1, '`');
        if (q == NULL) {
            cel_fail(ps, "Syntax error: token recognition error", p);
            ps->kind = T_ERR;
            return;
        }
        ps->kind = T_IDENT;
        ps->len = (size_t)(q + 1 - p);
        ps->p = q + 1;
        return;
    }
    if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
        const char *q = p;
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
            q = p + 2;
            while (isxdigit((unsigned char)*q))
                q++;
            if (*q == 'u' || *q == 'U')
                q++;
        } else {
            int is_float = 0;
            while (isdigit((unsigned char)*q))
                q++;
            if (*q == '.' && isdigit((unsigned char)q[1])) {
                q++;
                while (isdigit((unsigned char)*q))
                    q++;
                is_float = 1;
            }
            if ((*q == 'e' || *q == 'E') &&
                (isdigit((unsigned char)q[1]) || ((q[1] == '+' || q[1] == '-') && isdigit((unsigned char)q[2])))) {
                q += 2;
                while (isdigit((unsigned char)*q))
                    q++;
                is_float = 1;
            }
            if (!is_float && (*q == 'u' || *q == 'U'))
                q++;
        }
        ps->kind = T_NUM;
        ps->len = (size_t)(q - p);
        ps->p = q;
        return;
    }
    for (i = 0; i < sizeof ops2 / sizeof ops2[0]; i++)
        if (strncmp(p, ops2[i], 2) == 0) {
            ps->kind = T_OP;
            ps->len = 2;
            ps->p = p + 2;
            return;
        }
    if (strchr("<>!+-*/%?:.,()[]{}", *p) != NULL) {
        ps->kind = T_OP;
        ps->len = 1;
        ps->p = p + 1;
        return;
    }
    cel_fail(ps, "Syntax error: token recognition error", p);
    ps->kind = T_ERR;
}

static int cel_is(cel_parser *ps, const char *op)
{
    return ps->kind == T_OP && ps->len == strlen(op) && strncmp(ps->start, op, ps->len) == 0;
}

static int cel_word(cel_parser *ps, const char *w)
{
    return ps->kind == T_IDENT && ps->len == strlen(w) && strncmp(ps->start, w, ps->len) == 0;
}

static void cel_syntax(cel_parser *ps)
{
    if (ps->kind == T_END)
        cel_fail(ps, "Syntax error: mismatched input '<EOF>'", ps->start);
    else
        cel_fail(ps, "Syntax error: mismatched input", ps->start);
}

static int cel_expect(cel_parser *ps, const char *op)
{
    if (!cel_is(ps, op)) {
        cel_syntax(ps);
        return 0;
    }
    cel_next(ps);
    return 1;
}

static const char *const cel_reserved[] = {"as",        "break",  "const",  "continue", "else",  "for",
                                           "function",  "if",     "import", "let",      "loop",  "package",
                                           "namespace", "return", "var",    "void",     "while", NULL};

static int cel_is_reserved(const char *s, size_t n)
{
    int i;
    for (i = 0; cel_reserved[i] != NULL; i++)
        if (strlen(cel_reserved[i]) == n && strncmp(s, cel_reserved[i], n) == 0)
            return 1;
    return 0;
}

/* What the last parsed operand was, for the macro rules. */
enum { K_OTHER, K_IDENT, K_SELECT };

static int cel_expr(cel_parser *ps);

/* comma separated expressions up to the closing token; kinds of the first one reported */
static int cel_list(cel_parser *ps, const char *close, int *count, int *first_kind)
{
    *count = 0;
    *first_kind = K_OTHER;
    if (cel_is(ps, close)) {
        cel_next(ps);
        return 1;
    }
    for (;;) {
        int k = cel_expr(ps);
        if (ps->err)
            return 0;
        if (*count == 0)
            *first_kind = k;
        (*count)++;
        if (cel_is(ps, ",")) {
            cel_next(ps);
            if (cel_is(ps, close) && strcmp(close, ")") != 0) {
                cel_next(ps);
                return 1;
            }
            continue;
        }
        return cel_expect(ps, close);
    }
}

static int cel_is_keyword_literal(cel_parser *ps)
{
    return cel_word(ps, "true") || cel_word(ps, "false") || cel_word(ps, "null");
}

/* at '{' after a (qualified) type name: field: value, ... */
static void cel_message(cel_parser *ps)
{
    cel_next(ps);
    if (cel_is(ps, "}")) {
        cel_next(ps);
        return;
    }
    for (;;) {
        if (ps->kind != T_IDENT) {
            cel_syntax(ps);
            return;
        }
        cel_next(ps);
        if (!cel_expect(ps, ":"))
            return;
        cel_expr(ps);
        if (ps->err)
            return;
        if (cel_is(ps, ",")) {
            cel_next(ps);
            if (cel_is(ps, "}")) {
                cel_next(ps);
                return;
            }
            continue;
        }
        cel_expect(ps, "}");
        return;
    }
}

static int cel_primary(cel_parser *ps)
{
    int n, k;

    if (ps->err)
        return K_OTHER;
    if (ps->kind == T_NUM || ps->kind == T_STR) {
        cel_next(ps);
        return K_OTHER;
    }
    if (cel_is(ps, "-")) {
        /* a signed int or double literal ("!-1"); unsigned ones take no sign */
        cel_parser save = *ps;
        cel_next(ps);
        if (ps->kind == T_NUM && ps->start[ps->len - 1] != 'u' && ps->start[ps->len - 1] != 'U') {
            cel_next(ps);
            return K_OTHER;
        }
        *ps = save;
    }
    if (cel_is_keyword_literal(ps)) {
        cel_next(ps);
        return K_OTHER;
    }
    if (cel_is(ps, "(")) {
        cel_next(ps);
        cel_expr(ps);
        if (!ps->err)
            cel_expect(ps, ")");
        return K_OTHER;
    }
    if (cel_is(ps, "[")) {
        cel_next(ps);
        cel_list(ps, "]", &n, &k);
        return K_OTHER;
    }
    if (cel_is(ps, "{")) {
        cel_next(ps);
        if (cel_is(ps, "}")) {
            cel_next(ps);
            return K_OTHER;
        }
        for (;;) {
            cel_expr(ps);
            if (ps->err || !cel_expect(ps, ":"))
                return K_OTHER;
            cel_expr(ps);
            if (ps->err)
                return K_OTHER;
            if (cel_is(ps, ",")) {
                cel_next(ps);
                if (cel_is(ps, "}")) {
                    cel_next(ps);
                    return K_OTHER;
                }
                continue;
            }
            cel_expect(ps, "}");
            return K_OTHER;
        }
    }
    if (cel_is(ps, "."))
        cel_next(ps); /* leading dot: root scope */
    if (ps->kind == T_IDENT && *ps->start != '`' && !cel_word(ps, "in") && !cel_is_keyword_literal(ps)) {
        const char *name = ps->start;
        size_t len = ps->len;
        if (cel_is_reserved(name, len)) {
            cel_fail(ps, wh_vfmt(ps->c, "reserved identifier: %.*s", (int)len, name), name);
            return K_OTHER;
        }
        cel_next(ps);
        if (cel_is(ps, "(")) {
            cel_next(ps);
            cel_list(ps, ")", &n, &k);
            if (!ps->err && len == 3 && strncmp(name, "has", 3) == 0 && (n != 1 || k != K_SELECT))
                cel_fail(ps, "invalid argument to has() macro", name);
            return K_OTHER;
        }
        if (cel_is(ps, "{")) {
            cel_message(ps);
            return K_OTHER;
        }
        return K_IDENT;
    }
    cel_syntax(ps);
    return K_OTHER;
}

static int cel_member(cel_parser *ps)
{
    int kind = cel_primary(ps), n, k, qualified = kind == K_IDENT;

    while (!ps->err) {
        if (qualified && kind == K_SELECT && cel_is(ps, "{")) {
            cel_message(ps); /* a.b.Type{...} */
            kind = K_OTHER;
            qualified = 0;
            continue;
        }
        if (cel_is(ps, ".")) {
            const char *name;
            size_t len;
            cel_next(ps);
            if (ps->kind != T_IDENT) {
                cel_syntax(ps);
                return K_OTHER;
            }
            name = ps->start;
            len = ps->len;
            cel_next(ps);
            if (cel_is(ps, "(")) {
                static const char *const comprehensions[] = {"all", "exists", "exists_one", "map", "filter", NULL};
                int i, macro = 0;
                cel_next(ps);
                cel_list(ps, ")", &n, &k);
                if (ps->err)
                    return K_OTHER;
                for (i = 0; comprehensions[i] != NULL; i++)
                    if (strlen(comprehensions[i]) == len && strncmp(name, comprehensions[i], len) == 0)
                        macro = 1;
                if (macro && (n == 2 || (n == 3 && len == 3 && strncmp(name, "map", 3) == 0)) && k != K_IDENT)
                    cel_fail(ps, "argument must be a simple name", name);
                kind = K_OTHER;
            } else {
                kind = K_SELECT;
                if (*name == '`')
                    qualified = 0;
                continue;
            }
            qualified = 0;
        } else if (cel_is(ps, "[")) {
            cel_next(ps);
            cel_expr(ps);
            if (!ps->err)
                cel_expect(ps, "]");
            kind = K_OTHER;
            qualified = 0;
        } else {
            break;
        }
    }
    return kind;
}

static int cel_unary(cel_parser *ps)
{
    if (cel_is(ps, "!") || cel_is(ps, "-")) {
        /* a run of one operator: "!!a" and "--a" parse, "!-a" does not */
        const char *op = cel_is(ps, "!") ? "!" : "-";
        while (cel_is(ps, op))
            cel_next(ps);
        cel_member(ps);
        return K_OTHER;
    }
    return cel_member(ps);
}

static int cel_binary(cel_parser *ps, int level)
{
    static const char *const levels[][8] = {
        {"||", NULL},     {"&&", NULL},          {"<", "<=", ">=", ">", "==", "!=", "in", NULL},
        {"+", "-", NULL}, {"*", "/", "%", NULL},
    };
    int kind, any = 0;

    if (level == 5)
        return cel_unary(ps);
    kind = cel_binary(ps, level + 1);
    while (!ps->err) {
        int i, hit = 0;
        for (i = 0; levels[level][i] != NULL; i++)
            if (cel_is(ps, levels[level][i]) || (strcmp(levels[level][i], "in") == 0 && cel_word(ps, "in")))
                hit = 1;
        if (!hit)
            break;
        cel_next(ps);
        cel_binary(ps, level + 1);
        any = 1;
    }
    return any ? K_OTHER : kind;
}

static int cel_expr(cel_parser *ps)
{
    int kind;

    if (++ps->depth > 250) {
        cel_fail(ps, "expression recursion limit exceeded", ps->start);
        return K_OTHER;
    }
    kind = cel_binary(ps, 0);
    if (!ps->err && cel_is(ps, "?")) {
        cel_next(ps);
        cel_binary(ps, 0);
        if (!ps->err && cel_expect(ps, ":"))
            cel_expr(ps);
        kind = K_OTHER;
    }
    ps->depth--;
    return kind;
}

void wh_vcheck_cel(wh_vctx *c, const char *expr)
{
    cel_parser ps;
    int line = 1, col = 0;
    const char *q;

    memset(&ps, 0, sizeof ps);
    ps.src = ps.p = expr;
    ps.c = c;
    cel_next(&ps);
    if (!ps.err)
        cel_expr(&ps);
    if (!ps.err && ps.kind != T_END)
        cel_syntax(&ps);
    if (!ps.err)
        return;
    for (q = expr; q < ps.err_at && *q; q++) {
        if (*q == '\n') {
            line++;
            col = 0;
        } else {
            col++;
        }
    }
    {
        /* cel-go shows the line and a caret under the column */
        const char *ls = ps.err_at - col, *le = strchr(ls, '\n');
        size_t n = le ? (size_t)(le - ls) : strlen(ls), i;
        char *snip = (char *)wh_vfmt(c, "%.*s", (int)n, ls), *dots = (char *)wh_vfmt(c, "%*s", col, "");
        for (i = 0; i < n; i++)
            if (snip[i] == '\t')
                snip[i] = ' ';
        for (i = 0; i < (size_t)col; i++)
            dots[i] = '.';
        wh_verr(c, "must be a valid CEL expression, ERROR: <input>:%d:%d: %s\n | %s\n | %s^", line, col + 1, ps.err,
                snip, dots);
    }
}
