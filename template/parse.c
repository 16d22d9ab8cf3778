/*
 * parse.c - the parser of Go's text/template (parse/parse.go of Go 1.19): the
 * items of lex.c into trees, following Go item by item so that what parses,
 * what it means and the error messages all match.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lex.h"
#include "wh_alloc.h"
#include "wh_chars.h"
#include "wh_go.h"

typedef struct parser {
    lexer *lx;
    size_t next; /* index of the next item */
    tm_arena *arena;
    const wh_tmpl_set *set;
    tm_tree *tree;
    const char *name; /* name of the tree being parsed (define) */
    tm_defs *defs;    /* this parse's definitions */
    const char **vars;
    size_t nvars, capvars;
    int range_depth;
    int action_line;
    char *errmsg;
    size_t errlen;
    int failed;
    size_t hi;          /* furthest item read: Go reports its line */
    const char **names; /* interned names: open addressing, capnames a power of two */
    size_t nnames, capnames;
} parser;

const char tm_dollar[] = "$";

#define CHECK(p)                                                                                                       \
    do {                                                                                                               \
        if ((p)->failed)                                                                                               \
            return NULL;                                                                                               \
    } while (0)

static void p_errorf(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int cur_line(parser *p)
{
    return p->lx->items[p->hi].line;
}

static void p_errorf(parser *p, const char *fmt, ...)
{
    char msg[WH_ERR_MSG_MAX];
    va_list ap;

    if (p->failed)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(p->errmsg, p->errlen, "template: %s:%d: %s", p->tree->parse_name, cur_line(p), msg);
    p->failed = 1;
}

static item *p_nexti(parser *p)
{
    item *it = &p->lx->items[p->next];
    if (p->next > p->hi)
        p->hi = p->next;
    if (p->next + 1 < p->lx->nitems)
        p->next++;
    else
        p->next = p->lx->nitems; /* stays on EOF/error */
    return it;
}

/* Items are never consumed past the final EOF/error item. */
static item *p_next(parser *p)
{
    if (p->next >= p->lx->nitems)
        return &p->lx->items[p->lx->nitems - 1];
    return p_nexti(p);
}

static void p_backup(parser *p)
{
    if (p->next > 0)
        p->next--;
}

static item *p_peek(parser *p)
{
    if (p->next >= p->lx->nitems)
        return &p->lx->items[p->lx->nitems - 1];
    if (p->next > p->hi)
        p->hi = p->next;
    return &p->lx->items[p->next];
}

static item *p_next_nonspace(parser *p)
{
    item *it;
    do {
        it = p_next(p);
    } while (it->typ == I_SPACE);
    return it;
}

static item *p_peek_nonspace(parser *p)
{
    item *it = p_next_nonspace(p);
    p_backup(p);
    return it;
}

static void item_string(const item *it, wh_buf *b)
{
    if (it->typ == I_EOF) {
        wh_buf_puts(b, "EOF");
    } else if (it->typ == I_ERROR) {
        wh_buf_append(b, it->val, it->len);
    } else if (it->typ > I_KEYWORD) {
        wh_buf_putc(b, '<');
        wh_buf_append(b, it->val, it->len);
        wh_buf_putc(b, '>');
    } else {
        /* %q, or %.10q... for long values (10 runes) */
        size_t n = 0, i = 0;
        unsigned r;
        while (i < it->len && n < 10) {
            size_t w = tm_utf8_decode(it->val + i, it->len - i, &r);
            i += w ? w : 1;
            n++;
        }
        if (i < it->len) {
            wh_go_quote(b, it->val, i, '\"', 0);
            wh_buf_puts(b, "...");
        } else {
            wh_go_quote(b, it->val, it->len, '\"', 0);
        }
    }
}

static void p_unexpected(parser *p, const item *it, const char *context)
{
    wh_buf b = WH_BUF_INIT;

    item_string(it, &b);
    if (it->typ == I_ERROR) {
        char extra[300] = "";
        if (p->action_line != 0 && p->action_line != it->line) {
            snprintf(extra, sizeof(extra), " in action started at %s:%d", p->tree->parse_name, p->action_line);
            if (it->len >= 7 && memcmp(it->val + it->len - 7, " action", 7) == 0)
                memmove(extra, extra + 10, strlen(extra + 10) + 1);
        }
        p_errorf(p, "%s%s", b.data ? b.data : "", extra);
    } else {
        p_errorf(p, "unexpected %s in %s", b.data ? b.data : "", context);
    }
    wh_buf_free(&b);
}

static item *p_expect(parser *p, itype t, const char *context)
{
    item *it = p_next_nonspace(p);
    if (it->typ != t)
        p_unexpected(p, it, context);
    return it;
}

static tm_node *new_node(parser *p, tm_nkind k, int pos)
{
    tm_node *n = tm_alloc(p->arena, sizeof(*n));
    memset(n, 0, sizeof(*n));
    n->kind = (uint8_t)k;
    n->pos = pos;
    n->tree = p->tree;
    return n;
}

/* Growable arrays of node pointers, built in malloc'd space then copied to the arena. */
typedef struct nvec {
    tm_node **v;
    size_t n, cap;
} nvec;

static void nvec_push(parser *p, nvec *a, tm_node *n)
{
    WH_GROW(a->v, a->n, a->cap, 8);
    a->v[a->n++] = n;
}

static tm_node **nvec_finish(parser *p, nvec *a, size_t *n)
{
    tm_node **out = NULL;

    *n = a->n;
    if (a->n) {
        out = tm_alloc(p->arena, a->n * sizeof(*out));
        memcpy(out, a->v, a->n * sizeof(*out));
    }
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
    return out;
}

static void push_var(parser *p, const char *name)
{
    WH_GROW(p->vars, p->nvars, p->capvars, 16);
    p->vars[p->nvars++] = name;
}

/* One pointer per distinct name (field, key, variable) of the parse: the
 * executor compares names by pointer (variables) and caches field lookups
 * keyed by the name's pointer, so every `.Values` of a template shares one
 * cache entry per receiver.  The table lives as long as the parse. */
static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static const char *intern(parser *p, const char *s, size_t len)
{
    size_t i, mask;

    if (len == 1 && s[0] == '$')
        return tm_dollar;
    if (p->nnames * 2 >= p->capnames) { /* keep the load under a half */
        size_t cap = p->capnames ? p->capnames * 2 : 64, k;
        const char **v = wh_calloc(cap, sizeof(*v));
        for (k = 0; k < p->capnames; k++) {
            const char *o = p->names[k];
            if (o == NULL)
                continue;
            for (i = name_hash(o, strlen(o)) & (cap - 1); v[i] != NULL; i = (i + 1) & (cap - 1))
                ;
            v[i] = o;
        }
        free(p->names);
        p->names = v;
        p->capnames = cap;
    }
    mask = p->capnames - 1;
    for (i = name_hash(s, len) & mask; p->names[i] != NULL; i = (i + 1) & mask)
        if (strncmp(p->names[i], s, len) == 0 && p->names[i][len] == '\0')
            return p->names[i];
    p->names[i] = tm_strndup(p->arena, s, len);
    p->nnames++;
    return p->names[i];
}

/* Split "a.b.c" into interned idents. */
static const char **split_dots(parser *p, const char *s, size_t len, size_t *n)
{
    size_t cnt = 1, i, k = 0, start = 0;
    const char **v;

    for (i = 0; i < len; i++)
        cnt += s[i] == '.';
    v = tm_alloc(p->arena, cnt * sizeof(*v));
    for (i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            v[k++] = intern(p, s + start, i - start);
            start = i + 1;
        }
    }
    *n = k;
    return v;
}

static tm_node *new_field(parser *p, int pos, const char *s, size_t len)
{
    tm_node *n = new_node(p, N_FIELD, pos);
    CHECK(p);
    n->u.field.idents = split_dots(p, s + 1, len - 1, &n->u.field.n);
    return n;
}

static tm_node *new_variable(parser *p, int pos, const char *s, size_t len)
{
    tm_node *n = new_node(p, N_VARIABLE, pos);
    CHECK(p);
    n->u.field.idents = split_dots(p, s, len, &n->u.field.n);
    return n;
}

static tm_node *item_list(parser *p, tm_node **end);
static tm_node *pipeline(parser *p, const char *context, itype end);
static tm_node *if_control(parser *p);
static tm_node *text_or_action(parser *p);

/* Go's IsEmptyTree */
int tm_is_empty_tree(const tm_node *n)
{
    size_t i;

    if (n == NULL)
        return 1;
    switch (n->kind) {
    case N_COMMENT:
        return 1;
    case N_LIST:
        for (i = 0; i < n->u.list.n; i++)
            if (!tm_is_empty_tree(n->u.list.items[i]))
                return 0;
        return 1;
    case N_TEXT:
        for (i = 0; i < n->u.text.len; i++)
            if (!tm_is_space((unsigned char)n->u.text.s[i]) && n->u.text.s[i] != '\v' && n->u.text.s[i] != '\f')
                return 0;
        return 1;
    default:
        return 0;
    }
}

static void defs_put(tm_defs *defs, const char *name, tm_node *root, const tm_tree *tree)
{
    size_t i;

    for (i = 0; i < defs->n; i++) {
        if (strcmp(defs->items[i].name, name) == 0) {
            defs->items[i].root = root;
            defs->items[i].tree = tree;
            return;
        }
    }
    WH_GROW(defs->items, defs->n, defs->cap, 8);
    defs->items[defs->n].name = name;
    defs->items[defs->n].root = root;
    defs->items[defs->n].tree = tree;
    defs->n++;
}

const tm_def *tm_find_def(const tm_defs *defs, const char *name)
{
    size_t i;

    for (i = 0; i < defs->n; i++)
        if (strcmp(defs->items[i].name, name) == 0)
            return &defs->items[i];
    return NULL;
}

/* Go's Tree.add: a tree joins the parse's set unless a non-empty one exists. */
static void tree_add(parser *p, const char *name, tm_node *root)
{
    const tm_def *old = tm_find_def(p->defs, name);

    if (old == NULL || tm_is_empty_tree(old->root)) {
        defs_put(p->defs, name, root, p->tree);
        return;
    }
    if (!tm_is_empty_tree(root)) {
        wh_buf b = WH_BUF_INIT;
        wh_go_quote(&b, name, strlen(name), '\"', 0);
        p_errorf(p, "template: multiple definition of template %s", b.data);
        wh_buf_free(&b);
    }
}

static const char *unquote_item(parser *p, const item *it, size_t *len)
{
    wh_buf b = WH_BUF_INIT;
    const char *s;

    if (tm_unquote(it->val, it->len, &b) != 0) {
        wh_buf_free(&b);
        p_errorf(p, "invalid syntax");
        return NULL;
    }
    s = tm_strndup(p->arena, b.data ? b.data : "", b.len);
    *len = b.len;
    wh_buf_free(&b);
    return s;
}

static void parse_definition(parser *p)
{
    const char *context = "define clause";
    item *it = p_next_nonspace(p);
    const char *name;
    size_t len;
    tm_node *root, *end = NULL;
    const char *saved = p->name;

    if (it->typ != I_STRING && it->typ != I_RAWSTRING) {
        p_unexpected(p, it, context);
        return;
    }
    if ((name = unquote_item(p, it, &len)) == NULL)
        return;
    p_expect(p, I_RDELIM, context);
    if (p->failed)
        return;
    p->name = name;
    root = item_list(p, &end);
    if (p->failed)
        return;
    if (end->kind != N_END) {
        p_errorf(p, "unexpected {{else}} in %s", context);
        return;
    }
    tree_add(p, name, root);
    p->name = saved;
}

static tm_node *new_list(parser *p, int pos)
{
    tm_node *n = new_node(p, N_LIST, pos);
    return n;
}

/* itemList: nodes until {{end}} or {{else}} (returned in *end). */
static tm_node *item_list(parser *p, tm_node **end)
{
    nvec v = {0};
    tm_node *list = new_list(p, p_peek_nonspace(p)->pos), *n;

    CHECK(p);
    while (p_peek_nonspace(p)->typ != I_EOF) {
        n = text_or_action(p);
        if (p->failed) {
            free(v.v);
            return NULL;
        }
        if (n->kind == N_END || n->kind == N_ELSE) {
            *end = n;
            list->u.list.items = nvec_finish(p, &v, &list->u.list.n);
            return list;
        }
        nvec_push(p, &v, n);
    }
    free(v.v);
    p_errorf(p, "unexpected EOF");
    return NULL;
}

static tm_node *parse_control(parser *p, int allow_else_if, const char *context, tm_nkind kind)
{
    size_t mark = p->nvars;
    tm_node *pipe, *list, *else_list = NULL, *next = NULL, *n;

    pipe = pipeline(p, context, I_RDELIM);
    CHECK(p);
    if (kind == N_RANGE)
        p->range_depth++;
    list = item_list(p, &next);
    if (kind == N_RANGE)
        p->range_depth--;
    CHECK(p);
    if (next->kind == N_ELSE) {
        if (allow_else_if && p_peek(p)->typ == I_IF) {
            p_next(p);
            else_list = new_list(p, next->pos);
            CHECK(p);
            n = if_control(p);
            CHECK(p);
            else_list->u.list.items = tm_alloc(p->arena, sizeof(tm_node *));
            else_list->u.list.items[0] = n;
            else_list->u.list.n = 1;
        } else {
            else_list = item_list(p, &next);
            CHECK(p);
            if (next->kind != N_END) {
                p_errorf(p, "expected end; found {{else}}");
                return NULL;
            }
        }
    }
    p->nvars = mark;
    n = new_node(p, kind, pipe->pos);
    CHECK(p);
    n->line = pipe->line;
    n->u.branch.pipe = pipe;
    n->u.branch.list = list;
    n->u.branch.else_list = else_list;
    return n;
}

static tm_node *if_control(parser *p)
{
    return parse_control(p, 1, "if", N_IF);
}

static const char *template_name(parser *p, const item *it, const char *context)
{
    size_t len;

    if (it->typ != I_STRING && it->typ != I_RAWSTRING) {
        p_unexpected(p, it, context);
        return NULL;
    }
    return unquote_item(p, it, &len);
}

/* The node of {{template name pipe}}, also what {{block}} leaves in its place. */
static tm_node *template_node(parser *p, int pos, int line, const char *name, tm_node *pipe)
{
    tm_node *n = new_node(p, N_TEMPLATE, pos);

    CHECK(p);
    n->line = line;
    n->u.tmpl.name = name;
    n->u.tmpl.pipe = pipe;
    return n;
}

static tm_node *block_control(parser *p)
{
    const char *context = "block clause";
    item *it = p_next_nonspace(p);
    const char *name = template_name(p, it, context), *saved = p->name;
    tm_node *pipe, *root, *end = NULL;
    int pos = it->pos, line = it->line;

    CHECK(p);
    pipe = pipeline(p, context, I_RDELIM);
    CHECK(p);
    p->name = name;
    {
        /* the block body is its own tree: it starts with only $ in scope */
        const char **saved_vars = p->vars;
        size_t saved_n = p->nvars, saved_cap = p->capvars;
        int saved_rd = p->range_depth;
        p->vars = NULL;
        p->nvars = p->capvars = 0;
        p->range_depth = 0;
        push_var(p, "$");
        root = item_list(p, &end);
        free(p->vars);
        p->vars = saved_vars;
        p->nvars = saved_n;
        p->capvars = saved_cap;
        p->range_depth = saved_rd;
    }
    p->name = saved;
    CHECK(p);
    if (end->kind != N_END) {
        p_errorf(p, "unexpected {{else}} in %s", context);
        return NULL;
    }
    tree_add(p, name, root);
    CHECK(p);
    return template_node(p, pos, line, name, pipe);
}

static tm_node *template_control(parser *p)
{
    const char *context = "template clause";
    item *it = p_next_nonspace(p);
    const char *name = template_name(p, it, context);
    tm_node *pipe = NULL;
    int pos = it->pos, line = it->line;

    CHECK(p);
    if (p_next_nonspace(p)->typ != I_RDELIM) {
        p_backup(p);
        pipe = pipeline(p, context, I_RDELIM);
        CHECK(p);
    }
    return template_node(p, pos, line, name, pipe);
}

static tm_node *action(parser *p)
{
    item *it = p_next_nonspace(p);
    tm_node *n, *pipe;

    switch (it->typ) {
    case I_BLOCK:
        return block_control(p);
    case I_BREAK:
    case I_CONTINUE: {
        int is_break = it->typ == I_BREAK;
        item *t = p_next_nonspace(p);
        if (t->typ != I_RDELIM) {
            p_unexpected(p, t, is_break ? "{{break}}" : "{{continue}}");
            return NULL;
        }
        if (p->range_depth == 0) {
            p_errorf(p, is_break ? "{{break}} outside {{range}}" : "{{continue}} outside {{range}}");
            return NULL;
        }
        n = new_node(p, is_break ? N_BREAK : N_CONTINUE, it->pos);
        if (n)
            n->line = it->line;
        return n;
    }
    case I_ELSE: {
        item *pk = p_peek_nonspace(p);
        if (pk->typ == I_IF) {
            n = new_node(p, N_ELSE, pk->pos);
            if (n)
                n->line = pk->line;
            return n;
        }
        it = p_expect(p, I_RDELIM, "else");
        CHECK(p);
        n = new_node(p, N_ELSE, it->pos);
        if (n)
            n->line = it->line;
        return n;
    }
    case I_END:
        it = p_expect(p, I_RDELIM, "end");
        CHECK(p);
        return new_node(p, N_END, it->pos);
    case I_IF:
        return if_control(p);
    case I_RANGE:
        return parse_control(p, 0, "range", N_RANGE);
    case I_TEMPLATE:
        return template_control(p);
    case I_WITH:
        return parse_control(p, 0, "with", N_WITH);
    default:
        break;
    }
    p_backup(p);
    it = p_peek(p);
    {
        int pos = it->pos, line = it->line;
        pipe = pipeline(p, "command", I_RDELIM);
        CHECK(p);
        n = new_node(p, N_ACTION, pos);
        CHECK(p);
        n->line = line;
        n->u.branch.pipe = pipe;
    }
    return n;
}

static tm_node *text_or_action(parser *p)
{
    item *it = p_next_nonspace(p);
    tm_node *n;

    switch (it->typ) {
    case I_TEXT:
        n = new_node(p, N_TEXT, it->pos);
        CHECK(p);
        n->u.text.s = it->val;
        n->u.text.len = it->len;
        return n;
    case I_LDELIM:
        p->action_line = it->line;
        n = action(p);
        p->action_line = 0;
        return n;
    default:
        p_unexpected(p, it, "input");
        return NULL;
    }
}

static tm_node *command(parser *p);

static int check_pipeline(parser *p, tm_node *pipe, const char *context)
{
    size_t i;

    if (pipe->u.pipe.ncmds == 0) {
        p_errorf(p, "missing value for %s", context);
        return -1;
    }
    for (i = 1; i < pipe->u.pipe.ncmds; i++) {
        switch (pipe->u.pipe.cmds[i]->u.cmd.args[0]->kind) {
        case N_BOOL:
        case N_DOT:
        case N_NIL:
        case N_NUMBER:
        case N_STRING:
            p_errorf(p, "non executable command in pipeline stage %zu", i + 1);
            return -1;
        }
    }
    return 0;
}

static tm_node *pipeline(parser *p, const char *context, itype end)
{
    item *tok = p_peek_nonspace(p);
    tm_node *pipe = new_node(p, N_PIPE, tok->pos);
    nvec decl = {0}, cmds = {0};

    CHECK(p);
    pipe->line = tok->line;
decls:
    if (p_peek_nonspace(p)->typ == I_VARIABLE) {
        item *v = p_next_nonspace(p);
        item *next = p_peek_nonspace(p);
        int comma = next->typ == I_CHAR && next->len == 1 && next->val[0] == ',';
        if (next->typ == I_ASSIGN || next->typ == I_DECLARE || comma) {
            tm_node *vn;
            if (!comma)
                pipe->u.pipe.is_assign = next->typ == I_ASSIGN;
            p_next_nonspace(p);
            vn = new_variable(p, v->pos, v->val, v->len);
            if (p->failed)
                goto fail;
            nvec_push(p, &decl, vn);
            push_var(p, vn->u.field.idents[0]);
            if (comma) {
                if (strcmp(context, "range") == 0 && decl.n < 2) {
                    switch (p_peek_nonspace(p)->typ) {
                    case I_VARIABLE:
                    case I_RDELIM:
                    case I_RPAREN:
                        goto decls;
                    default:
                        p_errorf(p, "range can only initialize variables");
                        goto fail;
                    }
                }
                p_errorf(p, "too many declarations in %s", context);
                goto fail;
            }
        } else {
            /* not a declaration (Go's backup2/backup3): re-read from the variable */
            p->next = (size_t)(v - p->lx->items);
        }
    }
    for (;;) {
        item *it = p_next_nonspace(p);
        if (it->typ == end) {
            pipe->u.pipe.decl = nvec_finish(p, &decl, &pipe->u.pipe.ndecl);
            pipe->u.pipe.cmds = nvec_finish(p, &cmds, &pipe->u.pipe.ncmds);
            if (p->failed || check_pipeline(p, pipe, context) != 0)
                return NULL;
            return pipe;
        }
        switch (it->typ) {
        case I_BOOL:
        case I_CHARCONST:
        case I_COMPLEX:
        case I_DOT:
        case I_FIELD:
        case I_IDENT:
        case I_NUMBER:
        case I_NIL:
        case I_RAWSTRING:
        case I_STRING:
        case I_VARIABLE:
        case I_LPAREN: {
            tm_node *c;
            p_backup(p);
            c = command(p);
            if (p->failed)
                goto fail;
            nvec_push(p, &cmds, c);
            break;
        }
        default:
            p_unexpected(p, it, context);
            goto fail;
        }
    }
fail:
    free(decl.v);
    free(cmds.v);
    return NULL;
}

static tm_node *use_var(parser *p, int pos, const char *s, size_t len)
{
    tm_node *v = new_variable(p, pos, s, len);
    size_t i;

    CHECK(p);
    for (i = 0; i < p->nvars; i++)
        if (strcmp(p->vars[i], v->u.field.idents[0]) == 0)
            return v;
    {
        wh_buf b = WH_BUF_INIT;
        wh_go_quote(&b, v->u.field.idents[0], strlen(v->u.field.idents[0]), '\"', 0);
        p_errorf(p, "undefined variable %s", b.data);
        wh_buf_free(&b);
    }
    return NULL;
}

static int parse_number(parser *p, tm_node *n, const item *it)
{
    char buf[128], *end;
    size_t i, k = 0;
    const char *text = it->val;
    size_t len = it->len;
    int neg = 0, base = 10, ok_u = 0, ok_i = 0;
    unsigned long long u = 0;

    n->u.num.text = tm_strndup(p->arena, text, len);
    if (it->typ == I_CHARCONST) {
        unsigned r;
        size_t used = tm_unquote_char(text + 1, len - 1, '\'', NULL, &r);
        if (used == 0) {
            p_errorf(p, "invalid syntax");
            return -1;
        }
        if (1 + used != len - 1) {
            p_errorf(p, "malformed character constant: %.*s", (int)len, text);
            return -1;
        }
        n->u.num.is_int = n->u.num.is_uint = n->u.num.is_float = 1;
        n->u.num.i = r;
        n->u.num.u = r;
        n->u.num.f = r;
        return 0;
    }
    if (it->typ == I_COMPLEX || (len > 0 && text[len - 1] == 'i')) {
        p_errorf(p, "complex numbers are not supported: %.*s", (int)len, text);
        return -1;
    }
    if (len >= sizeof(buf)) {
        p_errorf(p, "illegal number syntax: \"%.*s\"", (int)len, text);
        return -1;
    }
    /* Go's base-prefix integer parsing with '_' separators (only with a base prefix or between digits) */
    i = 0;
    if (text[0] == '+' || text[0] == '-') {
        neg = text[0] == '-';
        i = 1;
    }
    if (len - i > 1 && text[i] == '0') {
        char c = (char)(text[i + 1] | 0x20);
        if (c == 'x')
            base = 16, i += 2;
        else if (c == 'o')
            base = 8, i += 2;
        else if (c == 'b')
            base = 2, i += 2;
        else
            base = 8, i += 1; /* leading 0: octal */
    }
    {
        int underscore_ok = 1, lastus = (base != 10), sawdigit = 0, bad = 0, ovf = 0;
        for (; i < len; i++) {
            char c = text[i];
            int d;
            if (c == '_') {
                if (!lastus && !sawdigit && base == 10)
                    bad = 1;
                if (lastus == 2)
                    bad = 1;
                lastus = 2;
                continue;
            }
            d = wh_hex_digit(c);
            if (d < 0 || d >= base) {
                bad = 1;
                break;
            }
            if (u > (~0ULL - (unsigned)d) / (unsigned)base)
                ovf = 1;
            u = u * (unsigned)base + (unsigned)d;
            sawdigit = 1;
            lastus = 0;
        }
        if (lastus == 2)
            bad = 1;
        (void)underscore_ok;
        if (!bad && (sawdigit || (base == 8 && len - (neg || text[0] == '+') == 1))) {
            if (!ovf) {
                if (!neg) {
                    ok_u = text[0] != '+' || 1;
                    if (u <= (unsigned long long)INT64_MAX)
                        ok_i = 1;
                } else if (u <= (unsigned long long)INT64_MAX + 1ULL) {
                    ok_i = 1;
                }
            }
        }
        /* strconv.ParseUint rejects signs */
        if (text[0] == '+' || text[0] == '-')
            ok_u = 0;
        if (ok_u) {
            n->u.num.is_uint = 1;
            n->u.num.u = u;
        }
        if (ok_i) {
            n->u.num.is_int = 1;
            n->u.num.i = neg ? (int64_t)(0 - u) : (int64_t)u;
            if (n->u.num.i == 0) {
                n->u.num.is_uint = 1;
                n->u.num.u = 0;
            }
        }
    }
    if (n->u.num.is_int) {
        n->u.num.is_float = 1;
        n->u.num.f = (double)n->u.num.i;
    } else if (n->u.num.is_uint) {
        n->u.num.is_float = 1;
        n->u.num.f = (double)n->u.num.u;
    } else {
        /* float: strip '_' separators; hex floats via strtod too */
        int has_dot = 0;
        for (i = 0; i < len; i++) {
            if (text[i] == '_')
                continue;
            if (strchr(".eEpP", text[i]))
                has_dot = 1;
            buf[k++] = text[i];
        }
        buf[k] = 0;
        errno = 0;
        if (k > 0) {
            double f = strtod(buf, &end);
            int hex = k > 2 && (buf[0] == '0' || buf[1] == '0') && strpbrk(buf, "xX") != NULL;
            if (*end == 0 && (errno == 0 || (errno == ERANGE && fabs(f) < 1)) && (!hex || strpbrk(buf, "pP"))) {
                if (!has_dot) {
                    p_errorf(p, "integer overflow: \"%.*s\"", (int)len, text);
                    return -1;
                }
                n->u.num.is_float = 1;
                n->u.num.f = f;
                /* in int64's range before the conversion (outside it the conversion is undefined) */
                if (f >= -9223372036854775808.0 && f < 9223372036854775808.0 && f == (double)(int64_t)f) {
                    n->u.num.is_int = 1;
                    n->u.num.i = (int64_t)f;
                }
                if (f >= 0 && f < 1.8e19 && f == (double)(uint64_t)f) {
                    n->u.num.is_uint = 1;
                    n->u.num.u = (uint64_t)f;
                }
            }
        }
    }
    if (!n->u.num.is_int && !n->u.num.is_uint && !n->u.num.is_float) {
        wh_buf b = WH_BUF_INIT;
        wh_go_quote(&b, text, len, '\"', 0);
        p_errorf(p, "illegal number syntax: %s", b.data);
        wh_buf_free(&b);
        return -1;
    }
    return 0;
}

static tm_node *term(parser *p)
{
    item *it = p_next_nonspace(p);
    tm_node *n;

    switch (it->typ) {
    case I_IDENT: {
        const tm_func *fn = tm_find_func(p->set, it->val, it->len);
        if (fn == NULL) {
            wh_buf b = WH_BUF_INIT;
            wh_go_quote(&b, it->val, it->len, '\"', 0);
            p_errorf(p, "function %s not defined", b.data);
            wh_buf_free(&b);
            return NULL;
        }
        n = new_node(p, N_IDENT, it->pos);
        CHECK(p);
        n->u.ident.name = fn->name;
        n->u.ident.fn = fn;
        return n;
    }
    case I_DOT:
        return new_node(p, N_DOT, it->pos);
    case I_NIL:
        return new_node(p, N_NIL, it->pos);
    case I_VARIABLE:
        return use_var(p, it->pos, it->val, it->len);
    case I_FIELD:
        return new_field(p, it->pos, it->val, it->len);
    case I_BOOL:
        n = new_node(p, N_BOOL, it->pos);
        CHECK(p);
        n->u.boolean = it->len == 4;
        return n;
    case I_CHARCONST:
    case I_COMPLEX:
    case I_NUMBER:
        n = new_node(p, N_NUMBER, it->pos);
        CHECK(p);
        if (parse_number(p, n, it) != 0)
            return NULL;
        return n;
    case I_LPAREN:
        return pipeline(p, "parenthesized pipeline", I_RPAREN);
    case I_STRING:
    case I_RAWSTRING:
        n = new_node(p, N_STRING, it->pos);
        CHECK(p);
        n->u.str.quoted = tm_strndup(p->arena, it->val, it->len);
        n->u.str.s = unquote_item(p, it, &n->u.str.len);
        CHECK(p);
        return n;
    default:
        p_backup(p);
        return NULL;
    }
}

static tm_node *operand(parser *p)
{
    tm_node *node = term(p);

    if (node == NULL || p->failed)
        return NULL;
    if (p_peek(p)->typ == I_FIELD) {
        int pos = p_peek(p)->pos;
        nvec fields = {0};
        const char **names;
        size_t nf, i;
        while (p_peek(p)->typ == I_FIELD) {
            item *f = p_next(p);
            nvec_push(p, &fields, (tm_node *)intern(p, f->val + 1, f->len - 1));
        }
        nf = fields.n;
        names = (const char **)nvec_finish(p, &fields, &nf);
        CHECK(p);
        switch (node->kind) {
        case N_FIELD:
        case N_VARIABLE: {
            /* .a.b or $x.a: merge into one node */
            size_t n0 = node->u.field.n;
            const char **all = tm_alloc(p->arena, (n0 + nf) * sizeof(*all));
            memcpy(all, node->u.field.idents, n0 * sizeof(*all));
            for (i = 0; i < nf; i++)
                all[n0 + i] = names[i];
            node->u.field.idents = all;
            node->u.field.n = n0 + nf;
            node->pos = pos;
            return node;
        }
        case N_BOOL:
        case N_STRING:
        case N_NUMBER:
        case N_NIL:
        case N_DOT: {
            wh_buf b = WH_BUF_INIT, q = WH_BUF_INIT;
            tm_node_string(node, &b);
            wh_go_quote(&q, b.data ? b.data : "", b.len, '\"', 0);
            p_errorf(p, "unexpected . after term %s", q.data);
            wh_buf_free(&b);
            wh_buf_free(&q);
            return NULL;
        }
        default: {
            tm_node *c = new_node(p, N_CHAIN, pos);
            CHECK(p);
            c->u.chain.base = node;
            c->u.chain.fields = names;
            c->u.chain.n = nf;
            return c;
        }
        }
    }
    return node;
}

static tm_node *command(parser *p)
{
    tm_node *cmd = new_node(p, N_COMMAND, p_peek_nonspace(p)->pos), *op;
    nvec args = {0};

    CHECK(p);
    for (;;) {
        item *it;
        p_peek_nonspace(p);
        op = operand(p);
        if (p->failed)
            goto fail;
        if (op != NULL)
            nvec_push(p, &args, op);
        it = p_next(p);
        switch (it->typ) {
        case I_SPACE:
            continue;
        case I_RDELIM:
        case I_RPAREN:
            p_backup(p);
            break;
        case I_PIPE:
            break;
        default:
            p_unexpected(p, it, "operand");
            goto fail;
        }
        break;
    }
    if (args.n == 0) {
        p_errorf(p, "empty command");
        goto fail;
    }
    cmd->u.cmd.args = nvec_finish(p, &args, &cmd->u.cmd.nargs);
    CHECK(p);
    return cmd;
fail:
    free(args.v);
    return NULL;
}

static void parse_top(parser *p)
{
    nvec v = {0};
    tm_node *root = new_list(p, p_peek(p)->pos), *n;

    if (p->failed)
        return;
    while (p_peek(p)->typ != I_EOF) {
        if (p_peek(p)->typ == I_LDELIM) {
            size_t mark = p->next;
            p_next(p);
            if (p_next_nonspace(p)->typ == I_DEFINE) {
                /* a definition starts with only $ in scope */
                const char **saved_vars = p->vars;
                size_t saved_n = p->nvars, saved_cap = p->capvars;
                p->vars = NULL;
                p->nvars = p->capvars = 0;
                push_var(p, "$");
                parse_definition(p);
                free(p->vars);
                p->vars = saved_vars;
                p->nvars = saved_n;
                p->capvars = saved_cap;
                if (p->failed)
                    goto out;
                continue;
            }
            p->next = mark;
        }
        n = text_or_action(p);
        if (p->failed)
            goto out;
        if (n->kind == N_END || n->kind == N_ELSE) {
            p_errorf(p, "unexpected %s", n->kind == N_END ? "{{end}}" : "{{else}}");
            goto out;
        }
        nvec_push(p, &v, n);
    }
    root->u.list.items = nvec_finish(p, &v, &root->u.list.n);
    if (!p->failed)
        tree_add(p, p->tree->parse_name, root);
out:
    free(v.v);
}

wh_code tm_parse(const wh_tmpl_set *set, tm_arena *arena, tm_defs *defs, const char *name, const char *text, size_t len,
                 char *errmsg, size_t errlen)
{
    lexer lx;
    parser p;
    tm_tree *tree;
    char *copy;
    wh_code rc = WH_OK;

    memset(&lx, 0, sizeof(lx));
    memset(&p, 0, sizeof(p));
    tree = tm_alloc(arena, sizeof(*tree));
    copy = tm_strndup(arena, text, len);
    tree->parse_name = tm_strndup(arena, name, strlen(name));
    tree->text = copy;
    tree->len = len;
    lx.in = copy;
    lx.len = len;
    lx.ld = set->ldelim ? set->ldelim : "{{";
    lx.rd = set->rdelim ? set->rdelim : "}}";
    lx.ldl = strlen(lx.ld);
    lx.rdl = strlen(lx.rd);
    lx.line = lx.start_line = 1;
    lx.arena = arena;
    lx.break_ok = tm_find_func(set, "break", 5) == NULL;
    lx.continue_ok = tm_find_func(set, "continue", 8) == NULL;
    tm_lex_all(&lx);
    p.lx = &lx;
    p.arena = arena;
    p.set = set;
    p.tree = tree;
    p.name = tree->parse_name;
    p.defs = defs;
    p.errmsg = errmsg;
    p.errlen = errlen;
    push_var(&p, "$");
    parse_top(&p);
    if (p.failed)
        rc = WH_E_PARSE;
    free(lx.items);
    free(p.vars);
    free(p.names);
    return rc;
}
