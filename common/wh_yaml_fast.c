/*
 * wh_yaml_fast.c - a fast path for the YAML that templates print.
 *
 * Injection renders a template into YAML and parses it on every request; with
 * libyaml's event parser that parse was the largest single cost of an
 * admission (about 30 MB/s, mostly allocation of events and tokens).  What
 * templates print is a narrow, regular subset: block mappings and sequences,
 * one-line plain or quoted scalars, empty flow collections, comments.  This
 * parser reads exactly that subset straight into jansson values and answers
 * WH_E_UNSUPPORTED the moment it meets anything else (anchors, tags, block
 * or multi-line scalars, flow collections with content, tabs, documents
 * markers, ...), so that wh_yaml_load() falls back to the full loader.  It
 * never reports a syntax error itself: every doubtful input goes to libyaml,
 * which both decides and words the error.  The differential tests check
 * that whenever this path answers, it answers exactly what the full loader
 * does.
 */
#include <stdlib.h>
#include <string.h>

#include "wh_yaml_int.h"

typedef struct line {
    const char *start; /* first character of the line */
    const char *s;     /* first non-space character */
    const char *end;   /* end of line (before '\n') */
    int indent;
    int skip; /* blank or comment only: no structure (may be block scalar content) */
    int nl;   /* ends with a line break (all but possibly the last line) */
} line;

typedef struct fast {
    line *lines;
    size_t n, cap, pos;
    int depth;
} fast;

#define UNSUPPORTED WH_E_UNSUPPORTED

/* Split into lines, marking blank and comment-only ones.  Any
 * byte that would need care (tab, CR, controls, anything not ASCII) or a line
 * that starts a document/directive sends the whole input to the full loader. */
static wh_code split_lines(fast *f, const char *text, size_t len)
{
    const char *p = text, *stop = text + len;

    while (p < stop) {
        const char *eol = memchr(p, '\n', (size_t)(stop - p));
        if (eol == NULL)
            eol = stop;
        const char *q = p;
        while (q < eol && *q == ' ')
            q++;
        for (const char *c = p; c < eol; c++) {
            unsigned char ch = (unsigned char)*c;
            if (ch < 0x20 || ch >= 0x7F) /* tabs, CRs, controls; non-ASCII (libyaml validates it) */
                return UNSUPPORTED;
        }
        {
            if (q == p && q < eol &&
                (*q == '%' || (eol - q >= 3 && (memcmp(q, "---", 3) == 0 || memcmp(q, "...", 3) == 0))))
                return UNSUPPORTED;
            if (f->n == f->cap) {
                size_t cap = f->cap ? f->cap * 2 : 64;
                line *l = realloc(f->lines, cap * sizeof(*l));
                if (l == NULL)
                    return WH_E_NOMEM;
                f->lines = l;
                f->cap = cap;
            }
            f->lines[f->n].start = p;
            f->lines[f->n].s = q;
            f->lines[f->n].end = eol;
            f->lines[f->n].indent = (int)(q - p);
            f->lines[f->n].skip = q == eol || *q == '#';
            f->lines[f->n].nl = eol < stop;
            f->n++;
        }
        p = eol < stop ? eol + 1 : stop;
    }
    return WH_OK;
}

static int is_space_or_end(const char *p, const char *end)
{
    return p >= end || *p == ' ';
}

/* Trim trailing spaces and a trailing " #comment" from a plain scalar; the
 * scalar itself may not contain ": " (the full loader reports that). */
static wh_code plain_extent(const char *s, const char *end, const char **out_end)
{
    const char *p = s, *last = s;
    for (; p < end; p++) {
        if (*p == '#' && p > s && p[-1] == ' ')
            break;
        if (*p == ':' && is_space_or_end(p + 1, end))
            return UNSUPPORTED;
        if (*p != ' ')
            last = p + 1;
    }
    *out_end = last;
    return WH_OK;
}

/* After a closing quote: only spaces, then nothing or a comment. */
static int only_trailer(const char *p, const char *end)
{
    while (p < end && *p == ' ')
        p++;
    return p == end || (*p == '#' && p[-1] == ' ');
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int put_utf8(wh_buf *b, unsigned long cp)
{
    char u[4];
    size_t n;
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return -1;
    if (cp < 0x80)
        u[0] = (char)cp, n = 1;
    else if (cp < 0x800)
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[2] = (char)(0x80 | (cp & 0x3F)),
        n = 3;
    else if (cp <= 0x10FFFF)
        u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    else
        return -1;
    return wh_buf_append(b, u, n) == WH_OK ? 0 : -1;
}

/* A one-line quoted scalar starting at *pp (at the quote); on success *pp
 * points after the closing quote and *out is a new JSON string. */
static wh_code quoted(const char **pp, const char *end, json_t **out)
{
    const char *p = *pp;
    char q = *p++;
    wh_buf b = WH_BUF_INIT;
    wh_code rc = UNSUPPORTED;
    int closed = 0;

    while (p < end) {
        const char *run = p;
        while (p < end && *p != q && !(q == '"' && *p == '\\'))
            p++;
        if (p > run && wh_buf_append(&b, run, (size_t)(p - run)) != WH_OK) {
            rc = WH_E_NOMEM;
            goto out;
        }
        if (p >= end)
            goto out; /* continues on the next line: multi-line scalar */
        if (q == '\'') {
            if (p + 1 < end && p[1] == '\'') {
                if (wh_buf_putc(&b, '\'') != WH_OK) {
                    rc = WH_E_NOMEM;
                    goto out;
                }
                p += 2;
                continue;
            }
            p++;
            closed = 1;
            break;
        }
        if (*p == '"') {
            p++;
            closed = 1;
            break;
        }
        /* backslash escape */
        if (p + 1 >= end)
            goto out;
        char e = p[1];
        unsigned long cp = 0;
        int digits = 0;
        p += 2;
        switch (e) {
        case '0': cp = 0; break;
        case 'a': cp = 7; break;
        case 'b': cp = 8; break;
        case 't': cp = 9; break;
        case 'n': cp = 10; break;
        case 'v': cp = 11; break;
        case 'f': cp = 12; break;
        case 'r': cp = 13; break;
        case 'e': cp = 27; break;
        case ' ': cp = ' '; break;
        case '"': cp = '"'; break;
        case '/': cp = '/'; break;
        case '\\': cp = '\\'; break;
        case 'N': cp = 0x85; break;
        case '_': cp = 0xA0; break;
        case 'L': cp = 0x2028; break;
        case 'P': cp = 0x2029; break;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default:
            goto out; /* invalid escape: let the full loader word the error */
        }
        for (int i = 0; i < digits; i++) {
            int h = p < end ? hexval(*p) : -1;
            if (h < 0)
                goto out;
            cp = cp * 16 + (unsigned long)h;
            p++;
        }
        if (cp == 0)
            goto out; /* NUL in a string: jansson keys/values need care, leave it to the full loader */
        if (put_utf8(&b, cp) != 0)
            goto out;
    }
    if (!closed)
        goto out;
    if ((*out = json_stringn(b.data != NULL ? b.data : "", b.len)) == NULL) {
        rc = WH_E_UNSUPPORTED; /* not UTF-8: the full loader decides */
        goto out;
    }
    *pp = p;
    rc = WH_OK;
out:
    wh_buf_free(&b);
    return rc;
}

/* An inline value (the text after "key: " or "- "), to the end of the line. */
static wh_code inline_scalar(const char *s, const char *end, json_t **out)
{
    const char *e;
    wh_code rc;

    if (*s == '"' || *s == '\'') {
        const char *p = s;
        if ((rc = quoted(&p, end, out)) != WH_OK)
            return rc;
        if (!only_trailer(p, end)) {
            json_decref(*out);
            *out = NULL;
            return UNSUPPORTED;
        }
        return WH_OK;
    }
    if (*s == '[' || *s == '{') {
        const char *p = s + 1;
        if (p < end && *p == (*s == '[' ? ']' : '}') && only_trailer(p + 1, end)) {
            *out = *s == '[' ? json_array() : json_object();
            return *out != NULL ? WH_OK : WH_E_NOMEM;
        }
        return UNSUPPORTED;
    }
    if (strchr("&*!|>%@`,]}?-:", *s) != NULL) {
        /* '-' / '?' / ':' start a plain scalar when not followed by a space
         * ("-1", ":x"); the rest are indicators the fast path leaves alone. */
        if (!((*s == '-' || *s == '?' || *s == ':') && !is_space_or_end(s + 1, end)))
            return UNSUPPORTED;
    }
    if ((rc = plain_extent(s, end, &e)) != WH_OK)
        return rc;
    if ((*out = wh_yaml_plain_json(s, (size_t)(e - s))) == NULL)
        return UNSUPPORTED;
    return WH_OK;
}

/* If line text is a mapping entry, set the key and where its value starts.
 * Returns 1 for an entry, 0 for "not an entry", -1 for "give up". */
static int mapping_entry(const char *s, const char *end, json_t **key, const char **value)
{
    const char *p = s;

    *key = NULL;
    if (*s == '"' || *s == '\'') {
        if (quoted(&p, end, key) != WH_OK)
            return -1;
        while (p < end && *p == ' ')
            p++;
        if (p >= end || *p != ':' || !is_space_or_end(p + 1, end)) {
            json_decref(*key);
            *key = NULL;
            return 0; /* a quoted scalar, not a key */
        }
        p++;
    } else {
        if (strchr("&*!|>%@`,[]{}#?", *s) != NULL || (*s == '-' && is_space_or_end(s + 1, end)) ||
            (*s == ':' && is_space_or_end(s + 1, end)))
            return -1;
        while (p < end && !(*p == ':' && is_space_or_end(p + 1, end))) {
            if (*p == '#' && p[-1] == ' ')
                return 0;
            p++;
        }
        if (p >= end)
            return 0;
        const char *ke = p;
        while (ke > s && ke[-1] == ' ')
            ke--;
        if (ke - s == 2 && s[0] == '<' && s[1] == '<')
            return -1; /* merge key */
        if ((*key = wh_yaml_plain_key(s, (size_t)(ke - s))) == NULL)
            return -1;
        p++;
    }
    while (p < end && *p == ' ')
        p++;
    *value = p;
    return 1;
}

static wh_code parse_node(fast *f, int parent_indent, json_t **out);

/* The next line with structure (skipping blank and comment lines), or NULL. */
static line *peek(fast *f)
{
    while (f->pos < f->n && f->lines[f->pos].skip)
        f->pos++;
    return f->pos < f->n ? &f->lines[f->pos] : NULL;
}

/* A literal block scalar ("|", "|-", "|+") whose header is at `s`; its
 * content lines follow the current position and are deeper than `parent`. */
static wh_code block_scalar(fast *f, const char *s, const char *end, int parent, json_t **out)
{
    int chomp = 0; /* 0 clip, -1 strip, +1 keep */
    const char *p = s + 1;
    wh_buf b = WH_BUF_INIT;
    size_t first = f->pos, i, last_content;
    int m = -1;
    wh_code rc = UNSUPPORTED;

    if (p < end && (*p == '-' || *p == '+'))
        chomp = *p++ == '-' ? -1 : 1;
    if (!only_trailer(p, end))
        return UNSUPPORTED; /* indentation indicator or junk */
    /* Block indentation: the first non-blank line's. */
    for (i = first; i < f->n; i++) {
        const line *l = &f->lines[i];
        if (l->s != l->end) {
            m = l->indent;
            break;
        }
    }
    if (m <= parent)
        return UNSUPPORTED; /* empty block scalar: rare, leave it */
    for (i = first; i < f->n; i++) {
        const line *l = &f->lines[i];
        if (l->s != l->end && l->indent < m)
            break;
    }
    size_t stop = i;
    last_content = first;
    for (i = first; i < stop; i++) /* spaces beyond the indentation are content too */
        if (f->lines[i].s != f->lines[i].end || f->lines[i].end - f->lines[i].start > m)
            last_content = i + 1;
    for (i = first; i < stop; i++) {
        const line *l = &f->lines[i];
        size_t width = (size_t)(l->end - l->start);
        if (i < last_content) {
            if (width > (size_t)m && wh_buf_append(&b, l->start + m, width - (size_t)m) != WH_OK)
                goto nomem;
            if ((i + 1 < last_content || chomp >= 0) && l->nl && wh_buf_putc(&b, '\n') != WH_OK)
                goto nomem;
        } else if (chomp == 1) {
            if (width > (size_t)m)
                goto out;
            if (l->nl && wh_buf_putc(&b, '\n') != WH_OK)
                goto nomem;
        }
    }
    /* Blank lines before the first content line may not be wider than it. */
    for (i = first; i < stop && f->lines[i].s == f->lines[i].end; i++)
        if ((size_t)(f->lines[i].end - f->lines[i].start) > (size_t)m)
            goto out;
    if ((*out = json_stringn(b.data != NULL ? b.data : "", b.len)) == NULL)
        goto out; /* not UTF-8 */
    f->pos = stop;
    rc = WH_OK;
    goto out;
nomem:
    rc = WH_E_NOMEM;
out:
    wh_buf_free(&b);
    return rc;
}

/* The value of an entry whose inline part is empty: a nested block (deeper
 * indent, or an indentless sequence at `indent` for mapping values), or null. */
static wh_code nested_value(fast *f, int indent, int allow_indentless, json_t **out)
{
    const line *l = peek(f);
    if (l != NULL) {
        if (l->indent > indent)
            return parse_node(f, indent, out);
        if (allow_indentless && l->indent == indent && l->s[0] == '-' && is_space_or_end(l->s + 1, l->end))
            return parse_node(f, indent - 1, out);
    }
    *out = json_null();
    return WH_OK;
}

/* After an inline scalar, a deeper line would continue it (multi-line). */
static int continues(fast *f, int indent)
{
    const line *l = peek(f);
    return l != NULL && l->indent > indent;
}

/* The value written after "key:" or "- " on line text [s, end), whose
 * owner sits at `indent`; the owner's line has been consumed. */
static wh_code inline_value(fast *f, const char *s, const char *end, int indent, json_t **out)
{
    wh_code rc;
    if (*s == '|')
        return block_scalar(f, s, end, indent, out);
    if ((rc = inline_scalar(s, end, out)) != WH_OK)
        return rc;
    if (continues(f, indent)) {
        json_decref(*out);
        *out = NULL;
        return UNSUPPORTED;
    }
    return WH_OK;
}

static wh_code parse_mapping(fast *f, int indent, const char *first, json_t **out)
{
    json_t *obj = json_object(), *key = NULL, *val = NULL;
    wh_code rc = WH_OK;
    const char *s = first;

    if (obj == NULL)
        return WH_E_NOMEM;
    for (;;) {
        const line *l = &f->lines[f->pos];
        const char *value;
        if (mapping_entry(s, l->end, &key, &value) != 1) {
            rc = UNSUPPORTED;
            goto out;
        }
        f->pos++;
        if (value < l->end && *value != '#')
            rc = inline_value(f, value, l->end, indent, &val);
        else
            rc = nested_value(f, indent, 1, &val);
        if (rc != WH_OK)
            goto out;
        if (json_object_set_new(obj, json_string_value(key), val) != 0) {
            val = NULL;
            rc = WH_E_NOMEM;
            goto out;
        }
        val = NULL;
        json_decref(key);
        key = NULL;
        const line *next = peek(f);
        if (next == NULL || next->indent < indent)
            break;
        if (next->indent > indent) {
            rc = UNSUPPORTED;
            goto out;
        }
        s = next->s;
        if (s[0] == '-' && is_space_or_end(s + 1, next->end))
            break; /* a sequence at this indent belongs to the parent */
    }
out:
    json_decref(key);
    json_decref(val);
    if (rc != WH_OK) {
        json_decref(obj);
        return rc;
    }
    *out = obj;
    return WH_OK;
}

static wh_code parse_sequence(fast *f, int indent, json_t **out)
{
    json_t *arr = json_array(), *item = NULL;
    wh_code rc = WH_OK;
    line *l;

    if (arr == NULL)
        return WH_E_NOMEM;
    while ((l = peek(f)) != NULL && l->indent == indent) {
        if (!(l->s[0] == '-' && is_space_or_end(l->s + 1, l->end)))
            break;
        const char *p = l->s + 1;
        while (p < l->end && *p == ' ')
            p++;
        if (p >= l->end || *p == '#') {
            f->pos++;
            rc = nested_value(f, indent, 0, &item);
        } else if (*p == '-' && is_space_or_end(p + 1, l->end)) {
            rc = UNSUPPORTED; /* "- - x": compact nested sequence */
        } else {
            json_t *key = NULL;
            const char *value;
            int m = mapping_entry(p, l->end, &key, &value);
            json_decref(key);
            if (m < 0) {
                rc = UNSUPPORTED;
            } else if (m == 1) {
                /* "- key: value": a mapping whose indent is the key's column. */
                int col = (int)(p - l->s) + l->indent;
                l->indent = col;
                l->s = p;
                rc = f->depth > WH_YAML_MAX_DEPTH ? UNSUPPORTED : parse_mapping(f, col, p, &item);
            } else {
                f->pos++;
                rc = inline_value(f, p, l->end, indent, &item);
            }
        }
        if (rc != WH_OK)
            goto out;
        if (json_array_append_new(arr, item) != 0) {
            rc = WH_E_NOMEM;
            goto out;
        }
        item = NULL;
    }
    if (l != NULL && l->indent > indent)
        rc = UNSUPPORTED;
out:
    json_decref(item);
    if (rc != WH_OK) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return WH_OK;
}

/* The block node starting at the current line (whose indent is > parent_indent). */
static wh_code parse_node(fast *f, int parent_indent, json_t **out)
{
    const line *l = peek(f);
    wh_code rc;
    json_t *key = NULL;
    const char *value;

    (void)parent_indent;
    if (l == NULL || ++f->depth > WH_YAML_MAX_DEPTH) {
        if (l != NULL)
            f->depth--;
        return UNSUPPORTED;
    }
    if (l->s[0] == '-' && is_space_or_end(l->s + 1, l->end)) {
        rc = parse_sequence(f, l->indent, out);
    } else {
        int m = mapping_entry(l->s, l->end, &key, &value);
        json_decref(key);
        if (m == 1)
            rc = parse_mapping(f, l->indent, l->s, out);
        else
            rc = UNSUPPORTED; /* a bare scalar line inside a block: leave it */
    }
    f->depth--;
    return rc;
}

wh_code wh_yaml_fast_load(const char *text, size_t len, json_t **out)
{
    fast f;
    wh_code rc;
    json_t *v = NULL;
    const line *l;

    memset(&f, 0, sizeof(f));
    *out = NULL;
    if ((rc = split_lines(&f, text, len)) != WH_OK)
        goto out;
    if ((l = peek(&f)) == NULL) {
        rc = UNSUPPORTED; /* empty or comments only: the full loader says null */
        goto out;
    }
    if (!(l->s[0] == '-' && is_space_or_end(l->s + 1, l->end))) {
        json_t *key = NULL;
        const char *value;
        int m = mapping_entry(l->s, l->end, &key, &value);
        json_decref(key);
        if (m == 0) { /* a lone scalar document */
            f.pos++;
            rc = l->s[0] == '|' ? UNSUPPORTED : inline_value(&f, l->s, l->end, -1, &v);
            goto done;
        }
    }
    rc = parse_node(&f, -1, &v);
done:
    if (rc == WH_OK && peek(&f) != NULL)
        rc = UNSUPPORTED; /* something at a smaller indent than the first line */
    if (rc == WH_OK) {
        *out = v;
        v = NULL;
    }
out:
    json_decref(v);
    free(f.lines);
    return rc;
}
