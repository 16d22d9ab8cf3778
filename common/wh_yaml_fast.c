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
 *
 * Most of a rendered sidecar is the template's constant text (template/
 * tmpl_int.h tm_run: written by one append).  Its entries are read once,
 * when the revision loads (wh_yaml_pieces_new: a mapping entry or sequence
 * item whose lines the constant text both holds and ends), and the render
 * says where it wrote each constant text (wh_yaml_fast_load_at): where the
 * parser meets a piece's first line as an entry of its kind and indent, it
 * copies the piece's value (wh_json_mold_make) and goes on after its lines.
 * Any other context (a block scalar's content, a flow collection, a line
 * that does not start where the piece did, a text that differs) reads the
 * lines as before: the answer never depends on the pieces
 * (tests/common/test_yaml_pieces.c, yaml_pieces_check.h).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_chars.h"
#include "wh_json_arena.h"
#include "wh_yaml_fast.h"
#include "wh_yaml_resolve.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

struct piece;

typedef struct line {
    const char *start;  /* first character of the line */
    const char *s;      /* first non-space character */
    const char *end;    /* end of line (before '\n') */
    const char *colon;  /* the first ':' that a space or the line's end follows, or NULL */
    const char *colon2; /* the second such ':', or NULL */
    const char *hash;   /* the first '#' after s that a space precedes (a comment), or NULL */
    int indent;
    int skip;               /* blank or comment only: no structure (may be block scalar content) */
    int nl;                 /* ends with a line break (all but possibly the last line) */
    const struct piece *pc; /* the piece of constant text starting at this line (mark_pieces), or NULL */
} line;

/* An entry of a template's constant text read once (wh_yaml_pieces_new): a mapping entry ("key: ..." and the lines
 * of its value) or a sequence item ("- ..." and its lines), whose lines lie in the text and are followed, in the
 * text, by a line that ends the entry: wherever the text is printed, a parser that meets its first line where an entry
 * of that kind and indent starts reads those lines as the piece's value and goes on at that line. */
enum { PIECE_ENTRY = 1, PIECE_ITEM = 2 };
#define NO_MARK UINT32_MAX
struct piece {
    uint32_t off, len;  /* where its lines are in the text */
    uint32_t tail;      /* the bytes after them that say the entry ends there (the next line's indent, first two) */
    uint32_t after;     /* the index of the first piece after its lines (those within are read with it) */
    uint32_t first_end; /* its first line: its end, and its value colons and comment (NO_MARK: none), from its start */
    uint32_t colon, colon2, hash;
    int indent, kind; /* its first line's indent; PIECE_* */
    int depth;        /* the levels of collections in its value (at least what max_depth counts) */
    const char *key;  /* an entry's key (klen bytes, in doc) */
    size_t klen;
    const json_t *value; /* the value (in doc) */
    json_t *doc;         /* what its lines read as alone: {key: value} or [value] */
    wh_json_mold *mold;  /* the value, ready to be copied */
};

struct wh_yaml_pieces {
    const char *text; /* the constant text (the caller's, which outlives this) */
    size_t len, n;
    wh_json_frozen *frozen; /* the docs' scalars are immortal: wh_json_arena_clone shares them */
    struct piece p[];
};

/* Everything the fast path reads is printable ASCII (split_lines sends the
 * rest to the full loader) and escapes decode to valid UTF-8, so strings and
 * keys are made with jansson's *_nocheck calls, and a scalar without escapes
 * is taken straight from the text: no copy, no check. */
typedef struct fast {
    line *lines;
    size_t n, cap, pos;
    int depth, max_depth;
    const char *text_end;
    wh_buf keys; /* a stack of keys that are not the text itself (escaped, resolved) */
    wh_buf tmp;  /* a decoded value, used at once */
    /* The entries of the open collections, made into one when it is complete (wh_json_arena_object / _array: a
     * bump in jansson's layout when the request has an arena): their values and the mappings' keys, as the arena
     * takes them.  A key on f->keys has its text set when its mapping is made (the stack may move meanwhile): until
     * then kbufs holds its index and offset. */
    json_t **vals;
    size_t nvals, vals_cap;
    wh_json_key *krefs;
    size_t nkrefs, krefs_cap;
    struct kbuf {
        size_t idx, off;
    } * kbufs;
    size_t nkbufs, kbufs_cap;
    /* Where the text holds constant texts whose pieces split_lines puts in the lines whole (a piece's first line
     * only, the rest hidden): the runs not looked at yet from at[r], piece k; the next piece's start, or NULL. */
    const wh_yaml_at *at;
    size_t nat, r, k;
    int checked;            /* at[r] is where it says (its text there) */
    const char *done;       /* the end of the last run checked */
    const char *next_piece; /* where f->piece starts */
    const struct piece *piece;
    int restart; /* a piece's first line was read without the piece: its hidden lines are missing */
} fast;

/* A mapping key: `len` bytes at `text`, or at keys.data + off when in_buf
 * (an offset: the stack may move while the key's value is parsed). */
typedef struct key_ref {
    const char *text;
    size_t len, off;
    int in_buf;
} key_ref;

/* Drop the key (and anything above it) from the key stack. */
static void key_drop(fast *f, const key_ref *k)
{
    if (k->in_buf)
        f->keys.len = k->off;
}

/* Where the key stack stood before `k` was read (what dropping it gives back). */
static size_t key_mark(const fast *f, const key_ref *k)
{
    return k->in_buf ? k->off : f->keys.len;
}

/* An entry of the innermost open collection: its value (owned by the stack from now on), and its key for a
 * mapping. */
static inline void push_value(fast *f, json_t *v)
{
    WH_GROW(f->vals, f->nvals, f->vals_cap, 64);
    f->vals[f->nvals++] = v;
}

static inline void push_key(fast *f, const key_ref *k)
{
    WH_GROW(f->krefs, f->nkrefs, f->krefs_cap, 32);
    if (k->in_buf) {
        WH_GROW(f->kbufs, f->nkbufs, f->kbufs_cap, 16);
        f->kbufs[f->nkbufs++] = (struct kbuf){f->nkrefs, k->off};
    }
    f->krefs[f->nkrefs++] = (wh_json_key){k->text, k->len};
}

/* Take the keys from krefs on off the stack (their texts on f->keys are the caller's to drop). */
static inline void pop_keys(fast *f, size_t krefs)
{
    while (f->nkbufs > 0 && f->kbufs[f->nkbufs - 1].idx >= krefs)
        f->nkbufs--;
    f->nkrefs = krefs;
}

/* Release the entries of a collection that will not be made. */
static void drop_entries(fast *f, size_t vals, size_t krefs)
{
    while (f->nvals > vals)
        json_decref(f->vals[--f->nvals]);
    pop_keys(f, krefs);
}

/* The collection whose entries start at vals (values) and krefs (keys; a sequence has none), taken off the stacks:
 * a mapping takes each key given again as json_object_setn_new_nocheck does (the last value, in the first place). */
static json_t *make_sequence(fast *f, size_t vals)
{
    const size_t n = f->nvals - vals;
    json_t *v = wh_json_arena_array(n != 0 ? f->vals + vals : NULL, n); /* (no stack yet: NULL) */

    f->nvals = vals;
    return v;
}

static inline __attribute__((always_inline)) json_t *make_mapping(fast *f, size_t vals, size_t krefs)
{
    const size_t n = f->nkrefs - krefs;
    json_t *v;

    for (size_t i = f->nkbufs; i > 0 && f->kbufs[i - 1].idx >= krefs; i--)
        f->krefs[f->kbufs[i - 1].idx].text = f->keys.data + f->kbufs[i - 1].off;
    v = wh_json_arena_object(n != 0 ? f->krefs + krefs : NULL, n != 0 ? f->vals + vals : NULL, n, 0);
    f->nvals = vals;
    pop_keys(f, krefs);
    return v;
}

#define UNSUPPORTED WH_E_UNSUPPORTED

/* The bytes of a line that split_lines stops at, BLOCK at a time: a mask
 * with bit i set when byte p[i] is ':' or '#' or special (below 0x20, as
 * '\n' is, or above 0x7e); *special gets the special ones alone. */
#if defined(__SSE2__)
#define BLOCK 16
static unsigned block_marks(const char *p, unsigned *special)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    /* signed compare: bytes from 0x80 on are negative, below 0x20 too */
    __m128i sp = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f)));
    __m128i ind = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')), _mm_cmpeq_epi8(v, _mm_set1_epi8('#')));

    *special = (unsigned)_mm_movemask_epi8(sp);
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(sp, ind));
}

/* A mask with bit i set when p[i] is a space. */
static unsigned block_spaces(const char *p)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
}
#else
#define BLOCK 8
static unsigned block_marks(const char *p, unsigned *special)
{
    unsigned all = 0, sp = 0;
    for (int i = 0; i < BLOCK; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c >= 0x7F)
            sp |= 1u << i;
        if (c == ':' || c == '#')
            all |= 1u << i;
    }
    *special = sp;
    return all | sp;
}

static unsigned block_spaces(const char *p)
{
    unsigned spaces = 0;
    for (int i = 0; i < BLOCK; i++)
        if (p[i] == ' ')
            spaces |= 1u << i;
    return spaces;
}
#endif
#define BLOCK_ALL ((1u << BLOCK) - 1)

/* The first byte in [p, end) that is `a` or `b`, or end: a quoted scalar's closing quote or escape.  The text goes
 * on to `limit` (>= end): blocks may be read up to there, past the line's end. */
static inline const char *find_either(const char *p, const char *end, const char *limit, char a, char b)
{
#if defined(__SSE2__)
    for (; limit - p >= BLOCK; p += BLOCK) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(a)), _mm_cmpeq_epi8(v, _mm_set1_epi8(b))));
        if (m != 0)
            return p + __builtin_ctz(m) < end ? p + __builtin_ctz(m) : end;
        if (end - p <= BLOCK)
            return end;
    }
#endif
    while (p < end && *p != a && *p != b)
        p++;
    return p;
}

/* Record a ':' or '#' at c on line l (whose text starts at l->s) if it is
 * a value indicator or a comment's start. */
static void note_mark(line *l, const char *c, const char *stop)
{
    if (*c == ':') {
        if (c + 1 == stop || c[1] == ' ' || c[1] == '\n') {
            if (l->colon == NULL)
                l->colon = c;
            else if (l->colon2 == NULL)
                l->colon2 = c;
        }
    } else if (l->hash == NULL && c > l->s && c[-1] == ' ') {
        l->hash = c;
    }
}

/* Split into lines, marking blank and comment-only ones, and noting where
 * each line's value colons and comment are (line_value_colon, line_comment
 * use them), so that the parser never scans a line again.  Any byte that
 * would need care (tab, CR, controls, anything not ASCII) or a line that
 * starts a document/directive sends the whole input to the full loader.
 * Lines are scanned 8 bytes at a time. */
/* Make f->piece the first piece of the runs that starts at or after p (f->next_piece NULL: none). */
static void piece_seek(fast *f, const char *text, size_t len, const char *p)
{
    for (; f->r < f->nat; f->r++, f->k = 0, f->checked = 0) {
        const wh_yaml_at *a = &f->at[f->r];
        const wh_yaml_pieces *ps = a->pieces;
        if (!f->checked) { /* (each piece's text is compared when it is used) */
            if (ps == NULL || a->off > len || text + a->off < f->done || len - a->off < ps->len)
                continue;
            f->checked = 1;
            f->done = text + a->off + ps->len;
        }
        for (; f->k < ps->n; f->k++) {
            const char *first = text + a->off + ps->p[f->k].off;
            if (first >= p) {
                f->next_piece = first;
                f->piece = &ps->p[f->k];
                return;
            }
        }
    }
    f->next_piece = NULL;
}

/* Whether the text holds f->piece's lines at p, and after them what ends its entry (else they are read as usual). */
static inline int piece_here(const fast *f, const char *p, const char *stop)
{
    const struct piece *pc = f->piece;
    const size_t n = (size_t)pc->len + pc->tail;

    return (size_t)(stop - p) >= n && memcmp(p, f->at[f->r].pieces->text + pc->off, n) == 0;
}

/* The first line of piece pc, starting at p, from what the piece noted of it; the lines of its value are left out
 * (hidden: the parser copies the piece's value, or starts again without pieces). */
static void piece_line(line *l, const struct piece *pc, const char *p)
{
    l->start = p;
    l->s = p + pc->indent;
    l->end = p + pc->first_end;
    l->colon = pc->colon != NO_MARK ? p + pc->colon : NULL;
    l->colon2 = pc->colon2 != NO_MARK ? p + pc->colon2 : NULL;
    l->hash = pc->hash != NO_MARK ? p + pc->hash : NULL;
    l->indent = pc->indent;
    l->skip = 0;
    l->nl = 1;
    l->pc = pc;
}

static wh_code split_lines(fast *f, const char *text, size_t len)
{
    const char *p = text, *stop = text + len;

    if (f->nat > 0)
        piece_seek(f, text, len, p);
    while (p < stop) {
        const char *q = p, *eol;
        line *l;
        if (f->next_piece != NULL && p >= f->next_piece) {
            if (p > f->next_piece) /* a piece read from a run that starts mid-line: not a line here */
                piece_seek(f, text, len, p);
            if (p == f->next_piece && piece_here(f, p, stop)) {
                WH_GROW(f->lines, f->n, f->cap, len / 16 + 16);
                piece_line(&f->lines[f->n++], f->piece, p);
                p += f->piece->len;
                f->k = f->piece->after;
                piece_seek(f, text, len, p);
                continue;
            }
        }
        for (; stop - q >= BLOCK; q += BLOCK) { /* indentation, BLOCK bytes a step */
            unsigned spaces = block_spaces(q);
            if (spaces != BLOCK_ALL) {
                q += __builtin_ctz(~spaces);
                break;
            }
        }
        while (q < stop && *q == ' ')
            q++;
        WH_GROW(f->lines, f->n, f->cap, len / 16 + 16); /* templates' lines average ~22 bytes: rarely a realloc */
        l = &f->lines[f->n];
        l->s = q;
        l->colon = l->colon2 = l->hash = NULL;
        l->pc = NULL;
        for (eol = q; stop - eol >= BLOCK; eol += BLOCK) {
            unsigned special, marks = block_marks(eol, &special);
            while (marks != 0) {
                unsigned i = (unsigned)__builtin_ctz(marks);
                if (special & (1u << i)) {
                    eol += i;
                    if (*eol != '\n')
                        return UNSUPPORTED; /* tabs, CRs, controls; non-ASCII (libyaml validates it) */
                    goto line_break;
                }
                note_mark(l, eol + i, stop);
                marks &= marks - 1;
            }
        }
        for (; eol < stop && *eol != '\n'; eol++) { /* the text's last bytes, fewer than BLOCK */
            unsigned char ch = (unsigned char)*eol;
            if (ch < 0x20 || ch >= 0x7F) /* tabs, CRs, controls; non-ASCII (libyaml validates it) */
                return UNSUPPORTED;
            if (ch == ':' || ch == '#')
                note_mark(l, eol, stop);
        }
    line_break:
        if (q == p && q < eol &&
            (*q == '%' || (eol - q >= 3 && (memcmp(q, "---", 3) == 0 || memcmp(q, "...", 3) == 0))))
            return UNSUPPORTED;
        l->start = p;
        l->end = eol;
        l->indent = (int)(q - p);
        l->skip = q == eol || *q == '#';
        l->nl = eol < stop;
        f->n++;
        p = eol < stop ? eol + 1 : stop;
    }
    return WH_OK;
}

static int is_space_or_end(const char *p, const char *end)
{
    return p >= end || *p == ' ';
}

/* The first ':' in [p, end) that a space or the end follows (a mapping
 * value indicator), or NULL. */
static const char *value_colon(const char *p, const char *end)
{
    while ((p = memchr(p, ':', (size_t)(end - p))) != NULL && !is_space_or_end(p + 1, end))
        p++;
    return p;
}

/* The first " #" comment in [s, end) (at the '#'), or NULL. */
static const char *comment_start(const char *s, const char *end)
{
    const char *p = s;
    while ((p = memchr(p, '#', (size_t)(end - p))) != NULL && !(p > s && p[-1] == ' '))
        p++;
    return p;
}

/* value_colon(s, end) on line l, from what split_lines noted: the line's
 * first or second value colon when it lies at or after s (before s lie
 * only a key and "- "), else a scan. */
static inline const char *line_value_colon(const line *l, const char *s, const char *end)
{
    const char *c = l->colon != NULL && l->colon < s ? l->colon2 : l->colon;

    if (c != NULL && c < s)
        return value_colon(s, end);
    return c != NULL && c < end ? c : NULL;
}

/* comment_start(s, end) on line l, from what split_lines noted: its first
 * comment when that lies after s (none before s when the line has none),
 * else a scan. */
static inline const char *line_comment(const line *l, const char *s, const char *end)
{
    if (l->hash == NULL)
        return NULL;
    if (l->hash <= s)
        return comment_start(s, end);
    return l->hash < end ? l->hash : NULL;
}

/* Trim trailing spaces and a trailing " #comment" from a plain scalar on
 * line l; the scalar itself may not contain ": " (the full loader reports
 * that). */
static inline __attribute__((always_inline)) wh_code plain_extent(const line *l, const char *s, const char *end,
                                                                  const char **out_end)
{
    const char *c = line_comment(l, s, end), *last = c != NULL ? c : end;

    if (line_value_colon(l, s, last) != NULL)
        return UNSUPPORTED;
    while (last > s && last[-1] == ' ')
        last--;
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

static int put_utf8(wh_buf *b, unsigned long cp)
{
    char u[4];
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return -1;
    wh_buf_append(b, u, wh_utf8_encode(cp, u));
    return 0;
}

/* quoted_text's content with escapes (or '' in single quotes), from s (after the opening quote q), decoded onto the
 * end of `scratch`: out of line, most scalars have none. */
static __attribute__((noinline)) wh_code quoted_escaped(const char *s, char q, const char *end, wh_buf *scratch,
                                                        const char **pp, const char **text, size_t *len, int *decoded)
{
    const char *p = s;
    size_t mark = scratch->len;

    for (;;) {
        const char *run = p;
        while (p < end && *p != q && !(q == '"' && *p == '\\'))
            p++;
        if (p > run)
            wh_buf_append(scratch, run, (size_t)(p - run));
        if (p >= end)
            goto unsupported; /* continues on the next line: multi-line scalar */
        if (q == '\'') {
            if (p + 1 < end && p[1] == '\'') {
                wh_buf_putc(scratch, '\'');
                p += 2;
                continue;
            }
            p++;
            break;
        }
        if (*p == '"') {
            p++;
            break;
        }
        /* backslash escape */
        if (p + 1 >= end)
            goto unsupported;
        char e = p[1];
        unsigned long cp = 0;
        int digits = 0;
        p += 2;
        switch (e) {
        case '0':
            cp = 0;
            break;
        case 'a':
            cp = 7;
            break;
        case 'b':
            cp = 8;
            break;
        case 't':
            cp = 9;
            break;
        case 'n':
            cp = 10;
            break;
        case 'v':
            cp = 11;
            break;
        case 'f':
            cp = 12;
            break;
        case 'r':
            cp = 13;
            break;
        case 'e':
            cp = 27;
            break;
        case ' ':
            cp = ' ';
            break;
        case '"':
            cp = '"';
            break;
        case '/':
            cp = '/';
            break;
        case '\\':
            cp = '\\';
            break;
        case 'N':
            cp = 0x85;
            break;
        case '_':
            cp = 0xA0;
            break;
        case 'L':
            cp = 0x2028;
            break;
        case 'P':
            cp = 0x2029;
            break;
        case 'x':
            digits = 2;
            break;
        case 'u':
            digits = 4;
            break;
        case 'U':
            digits = 8;
            break;
        default:
            goto unsupported; /* invalid escape: let the full loader word the error */
        }
        for (int i = 0; i < digits; i++) {
            int h = p < end ? wh_hex_digit(*p) : -1;
            if (h < 0)
                goto unsupported;
            cp = cp * 16 + (unsigned long)h;
            p++;
        }
        if (cp == 0)
            goto unsupported; /* NUL in a string: jansson keys/values need care, leave it to the full loader */
        if (put_utf8(scratch, cp) != 0) /* also refuses surrogates: what is decoded is valid UTF-8 */
            goto unsupported;
    }
    *text = scratch->data != NULL ? scratch->data + mark : "";
    *len = scratch->len - mark;
    *decoded = 1;
    *pp = p;
    return WH_OK;
unsupported:
    scratch->len = mark;
    return UNSUPPORTED;
}

/* A one-line quoted scalar starting at *pp (at the quote); on success *pp
 * points after the closing quote and the content is [*text, *text + *len):
 * inside the input when it holds no escape, else decoded onto the end of
 * `scratch` (then *decoded is 1; the caller truncates scratch afterwards).
 * The text goes on to `limit` (find_either may look that far). */
static inline wh_code quoted_text(const char **pp, const char *end, const char *limit, wh_buf *scratch,
                                  const char **text, size_t *len, int *decoded)
{
    const char *p = *pp, *s;
    char q = *p++;

    s = p;
    p = find_either(p, end, limit, q, q == '"' ? '\\' : q);
    if (p >= end)
        return UNSUPPORTED; /* continues on the next line: multi-line scalar */
    if (*p == q && !(q == '\'' && p + 1 < end && p[1] == '\'')) {
        *text = s;
        *len = (size_t)(p - s);
        *pp = p + 1;
        *decoded = 0;
        return WH_OK;
    }
    return quoted_escaped(s, q, end, scratch, pp, text, len, decoded);
}

/* A JSON string of the (valid UTF-8) text: in one bump of the request's
 * arena when there is one (wh_json_arena_string), else jansson's. */
static json_t *new_string(const char *s, size_t len)
{
    json_t *v = wh_json_arena_string(s, len);
    return v != NULL ? v : json_stringn_nocheck(s, len);
}

/* A quoted scalar (see quoted_text) as a new JSON string. */
static inline __attribute__((always_inline)) wh_code quoted(fast *f, const char **pp, const char *end, json_t **out)
{
    const char *text;
    size_t len;
    int decoded;
    wh_code rc;

    f->tmp.len = 0; /* what an escape decodes to */
    if ((rc = quoted_text(pp, end, f->text_end, &f->tmp, &text, &len, &decoded)) != WH_OK)
        return rc;
    *out = new_string(text, len);
    return WH_OK;
}

/* What the first character of a scalar or key says: FB_INDICATOR for the
 * YAML indicators, which cannot start a plain scalar; FB_UNLESS_TEXT for
 * '-', '?' and ':', which can when a non-space follows.  Everything else
 * (0) starts a plain scalar. */
enum { FB_INDICATOR = 1, FB_UNLESS_TEXT = 2 };

static const unsigned char first_byte[256] = {
    ['&'] = FB_INDICATOR, ['*'] = FB_INDICATOR,   ['!'] = FB_INDICATOR,   ['|'] = FB_INDICATOR,   ['>'] = FB_INDICATOR,
    ['%'] = FB_INDICATOR, ['@'] = FB_INDICATOR,   ['`'] = FB_INDICATOR,   [','] = FB_INDICATOR,   ['['] = FB_INDICATOR,
    [']'] = FB_INDICATOR, ['{'] = FB_INDICATOR,   ['}'] = FB_INDICATOR,   ['#'] = FB_INDICATOR,   ['\''] = FB_INDICATOR,
    ['"'] = FB_INDICATOR, ['-'] = FB_UNLESS_TEXT, ['?'] = FB_UNLESS_TEXT, [':'] = FB_UNLESS_TEXT,
};

static int indicator(char c)
{
    return first_byte[(unsigned char)c] & FB_INDICATOR;
}

/* An inline value (the text after "key: " or "- "), to the end of the line. */
static inline __attribute__((always_inline)) wh_code inline_scalar(fast *f, const line *l, const char *s,
                                                                   const char *end, json_t **out)
{
    const char *e;
    wh_code rc;

    if (*s == '"' || *s == '\'') {
        const char *p = s;
        if ((rc = quoted(f, &p, end, out)) != WH_OK)
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
            *out = *s == '[' ? wh_json_arena_array(NULL, 0) : wh_json_arena_object(NULL, NULL, 0, 0);
            return WH_OK;
        }
        return UNSUPPORTED;
    }
    if (first_byte[(unsigned char)*s] & FB_INDICATOR) {
        if (*s != '#') /* indicators the fast path leaves alone */
            return UNSUPPORTED;
    } else if ((first_byte[(unsigned char)*s] & FB_UNLESS_TEXT) && is_space_or_end(s + 1, end)) {
        return UNSUPPORTED; /* '-' / '?' / ':' start a plain scalar before a non-space ("-1", ":x") */
    }
    if ((rc = plain_extent(l, s, end, &e)) != WH_OK)
        return rc;
    if (!wh_yaml_plain_may_resolve(s, (size_t)(e - s)))
        *out = new_string(s, (size_t)(e - s)); /* printable ASCII: see struct fast */
    else if ((*out = wh_yaml_plain_json(s, (size_t)(e - s))) == NULL)
        return UNSUPPORTED;
    return WH_OK;
}

/* If line text is a mapping entry, set the key and where its value starts.
 * Returns 1 for an entry, 0 for "not an entry", -1 for "give up".  A key
 * that is not the text itself is pushed on f->keys (key_drop pops it). */
static inline __attribute__((always_inline)) int mapping_entry(fast *f, const line *l, const char *s, key_ref *key,
                                                               const char **value)
{
    const char *p = s, *end = l->end;

    key->in_buf = 0;
    key->off = 0;
    if (*s == '"' || *s == '\'') {
        size_t mark = f->keys.len;
        int decoded;
        if (line_value_colon(l, s, end) == NULL)
            return 0; /* no ": " after s: a quoted scalar (its caller reads it), not a key */
        if (quoted_text(&p, end, f->text_end, &f->keys, &key->text, &key->len, &decoded) != WH_OK)
            return -1;
        key->in_buf = decoded;
        key->off = mark;
        while (p < end && *p == ' ')
            p++;
        if (p >= end || *p != ':' || !is_space_or_end(p + 1, end)) {
            key_drop(f, key);
            return 0; /* a quoted scalar, not a key */
        }
        p++;
    } else {
        unsigned char fb = first_byte[(unsigned char)*s];
        if (fb != 0 && ((fb & FB_INDICATOR) || *s == '?' || is_space_or_end(s + 1, end)))
            return -1; /* an indicator, "? ", "- ", ": " */
        if ((p = line_value_colon(l, s, end)) == NULL || line_comment(l, s, p) != NULL)
            return 0; /* no ": ", or a comment starts before it */
        const char *ke = p;
        while (ke > s && ke[-1] == ' ')
            ke--;
        if (ke - s == 2 && s[0] == '<' && s[1] == '<')
            return -1; /* merge key */
        key->text = s;
        key->len = (size_t)(ke - s);
        if (wh_yaml_plain_may_resolve(s, key->len)) {
            char tmp[WH_YAML_KEY_TMP];
            if ((key->text = wh_yaml_plain_key_text(s, key->len, tmp, &key->len)) == NULL)
                return -1;          /* no JSON key (null, above 2^63-1): the loader says why */
            if (key->text == tmp) { /* a resolved key ("yes" -> "true"): keep it on the stack */
                key->off = f->keys.len;
                key->in_buf = 1;
                wh_buf_append(&f->keys, tmp, key->len);
            }
        }
        p++;
    }
    while (p < end && *p == ' ')
        p++;
    *value = p;
    return 1;
}

static wh_code parse_node(fast *f, int parent_indent, json_t **out);

/* The piece of `kind` that starts at line l, when the parser is about to read an entry of that kind at `indent` there
 * and the piece's levels fit below max_depth (else the lines are read as usual: the same value, or the same refusal).
 */
static inline const struct piece *piece_at(const fast *f, const line *l, int kind, int indent)
{
    const struct piece *pc = l->pc;

    if (pc != NULL && pc->kind == kind && pc->indent == indent && f->depth + pc->depth <= f->max_depth)
        return pc;
    return NULL;
}

/* A piece's first line read as something else (a block scalar's content, inside a flow collection) or where its
 * value may not be copied (max_depth): the lines of its value are not in f->lines, so the text is read again without
 * pieces. */
static __attribute__((noinline, cold)) wh_code piece_unused(fast *f)
{
    f->restart = 1;
    return UNSUPPORTED;
}

/* Move to line `pos`, or past it to the next line with structure (blank
 * and comment lines have none): f->pos always rests on such a line or the
 * end, so that looking at it is free. */
static inline void move_to(fast *f, size_t pos)
{
    while (f->lines[pos].skip) /* the end line stops it */
        pos++;
    f->pos = pos;
}

/* The current line: one with structure, or at the end the line after the
 * last, whose indent is below every other (add_end_line). */
static inline line *peek(fast *f)
{
    return &f->lines[f->pos];
}

static inline int at_end(const fast *f)
{
    return f->pos >= f->n;
}

/* The line after the last (not counted in f->n): it has structure and an
 * indent below any, so that what compares the current line's indent needs
 * no test for the end first. */
static void add_end_line(fast *f)
{
    WH_GROW(f->lines, f->n, f->cap, 16);
    f->lines[f->n] = (line){.start = f->text_end, .s = f->text_end, .end = f->text_end, .indent = INT_MIN};
}

/* A literal block scalar ("|", "|-", "|+") whose header is at `s` on line
 * hdr; its content lines follow that line and are deeper than `parent`. */
static wh_code block_scalar(fast *f, const line *hdr, const char *s, int parent, json_t **out)
{
    const char *end = hdr->end;
    int chomp = 0; /* 0 clip, -1 strip, +1 keep */
    const char *p = s + 1;
    wh_buf *b = &f->tmp;
    size_t first = (size_t)(hdr - f->lines) + 1, i, last_content;
    int m = -1;
    wh_code rc = UNSUPPORTED;

    wh_buf_reset(b);
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
    for (i = first; i < stop; i++)
        if (f->lines[i].pc != NULL)
            return piece_unused(f);
    last_content = first;
    for (i = first; i < stop; i++) /* spaces beyond the indentation are content too */
        if (f->lines[i].s != f->lines[i].end || f->lines[i].end - f->lines[i].start > m)
            last_content = i + 1;
    for (i = first; i < stop; i++) {
        const line *l = &f->lines[i];
        size_t width = (size_t)(l->end - l->start);
        if (i < last_content) {
            if (width > (size_t)m)
                wh_buf_append(b, l->start + m, width - (size_t)m);
            if ((i + 1 < last_content || chomp >= 0) && l->nl)
                wh_buf_putc(b, '\n');
        } else if (chomp == 1) {
            if (width > (size_t)m)
                goto out;
            if (l->nl)
                wh_buf_putc(b, '\n');
        }
    }
    /* Blank lines before the first content line may not be wider than it. */
    for (i = first; i < stop && f->lines[i].s == f->lines[i].end; i++)
        if ((size_t)(f->lines[i].end - f->lines[i].start) > (size_t)m)
            goto out;
    *out = new_string(b->data != NULL ? b->data : "", b->len);
    move_to(f, stop);
    rc = WH_OK;
out:
    return rc;
}

/* The value of an entry whose inline part is empty: a nested block (deeper
 * indent, or an indentless sequence at `indent` for mapping values), or null. */
static wh_code nested_value(fast *f, int indent, int allow_indentless, json_t **out)
{
    const line *l = peek(f);
    if (l->indent > indent)
        return parse_node(f, indent, out);
    if (allow_indentless && l->indent == indent && l->s[0] == '-' && is_space_or_end(l->s + 1, l->end))
        return parse_node(f, indent - 1, out);
    *out = json_null();
    return WH_OK;
}

/* After an inline scalar, a deeper line would continue it (multi-line). */
static int continues(fast *f, int indent)
{
    return peek(f)->indent > indent;
}

/* ---- flow collections ("{a: 1, b: 2}", "[x, y]", possibly over several lines) ---- */

#define FLOW_MAX_DEPTH 64

static const char *line_end(const char *p, const char *end)
{
    const char *e = memchr(p, '\n', (size_t)(end - p));
    return e != NULL ? e : end;
}

/* Skip spaces, line breaks and comments inside a flow collection. */
static void flow_ws(const char **pp, const char *end)
{
    const char *p = *pp;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\n'))
            p++;
        if (p < end && *p == '#' && (p[-1] == ' ' || p[-1] == '\n')) {
            p = line_end(p, end);
            continue;
        }
        break;
    }
    *pp = p;
}

static int flow_indicator(char c)
{
    return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

/* The first byte in [p, end) that may end a plain scalar inside a flow collection (a line break, a flow indicator,
 * ':' or '#'), or end: BLOCK bytes a step, as split_lines reads lines. */
static inline const char *flow_stop(const char *p, const char *end)
{
#if defined(__SSE2__)
    for (; end - p >= BLOCK; p += BLOCK) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* '[' and '{' differ only in the bit 0x20, as ']' and '}' do: set it before comparing */
        __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        __m128i open = _mm_cmpeq_epi8(folded, _mm_set1_epi8('{'));  /* '[' '{' */
        __m128i close = _mm_cmpeq_epi8(folded, _mm_set1_epi8('}')); /* ']' '}' */
        __m128i other =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
                         _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')), _mm_cmpeq_epi8(v, _mm_set1_epi8('#'))));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(open, close), other));
        if (m != 0)
            return p + __builtin_ctz(m);
    }
#endif
    while (p < end && !(flow_indicator(*p) || *p == '\n' || *p == ':' || *p == '#'))
        p++;
    return p;
}

/* A plain scalar inside a flow collection, which must end on its own line. */
static wh_code flow_plain_span(const char **pp, const char *end, int is_key, const char **text, size_t *len)
{
    const char *p = *pp, *s = p, *last;
    if (indicator(*p))
        return UNSUPPORTED;
    if (*p == '-' || *p == '?' || *p == ':')
        return UNSUPPORTED; /* libyaml's rules for these differ inside flow collections */
    for (; (p = flow_stop(p, end)) < end; p++) {
        if (*p == '\n')
            return UNSUPPORTED; /* may continue on the next line */
        if (flow_indicator(*p))
            break;
        if (*p == '#') {
            if (p[-1] == ' ')
                return UNSUPPORTED;
            continue;
        }
        if (p + 1 < end && (flow_indicator(p[1]) || p[1] == '?'))
            return UNSUPPORTED; /* ':' before them -- libyaml: "found unexpected ':'" */
        if (p + 1 >= end || p[1] == ' ' || p[1] == '\n') {
            if (!is_key)
                return UNSUPPORTED;
            break;
        }
    }
    for (last = p; last > s && last[-1] == ' ';) /* trailing spaces are not the scalar's */
        last--;
    *text = s;
    *len = (size_t)(last - s);
    *pp = p;
    return WH_OK;
}

static wh_code flow_node(fast *f, const char **pp, const char *end, int depth, json_t **out);

/* A scalar value inside a flow collection. */
static wh_code flow_scalar(fast *f, const char **pp, const char *end, json_t **out)
{
    const char *s;
    size_t len;

    if (**pp == '"' || **pp == '\'')
        return quoted(f, pp, line_end(*pp, end), out); /* multi-line quoted scalars fold: not here */
    if (flow_plain_span(pp, end, 0, &s, &len) != WH_OK || (*out = wh_yaml_plain_json(s, len)) == NULL)
        return UNSUPPORTED;
    return WH_OK;
}

/* A key inside a flow mapping, as mapping_entry's keys: the text itself, or
 * pushed on f->keys when decoded or resolved (key_drop pops it). */
static wh_code flow_key(fast *f, const char **pp, const char *end, key_ref *key)
{
    memset(key, 0, sizeof(*key));
    if (**pp == '"' || **pp == '\'') {
        size_t mark = f->keys.len;
        int decoded;
        if (quoted_text(pp, line_end(*pp, end), f->text_end, &f->keys, &key->text, &key->len, &decoded) != WH_OK)
            return UNSUPPORTED; /* multi-line quoted scalars fold: not here */
        key->in_buf = decoded;
        key->off = mark;
        return WH_OK;
    }
    if (flow_plain_span(pp, end, 1, &key->text, &key->len) != WH_OK)
        return UNSUPPORTED;
    if (key->len == 0 || wh_yaml_plain_may_resolve(key->text, key->len)) {
        char tmp[WH_YAML_KEY_TMP];
        if ((key->text = wh_yaml_plain_key_text(key->text, key->len, tmp, &key->len)) == NULL)
            return UNSUPPORTED; /* no JSON key (null, above 2^63-1): the loader says why */
        if (key->text == tmp) { /* a resolved key ("yes" -> "true"): keep it on the stack */
            key->off = f->keys.len;
            key->in_buf = 1;
            wh_buf_append(&f->keys, tmp, key->len);
        }
    }
    return WH_OK;
}

static wh_code flow_collection(fast *f, const char **pp, const char *end, int depth, json_t **out)
{
    const char *p = *pp;
    char close = *p == '[' ? ']' : '}';
    int is_map = *p == '{';
    const size_t vals = f->nvals, krefs = f->nkrefs, kmark = f->keys.len;
    json_t *val = NULL;
    key_ref key = {0};
    wh_code rc = UNSUPPORTED;

    if (depth > FLOW_MAX_DEPTH)
        goto out;
    p++;
    for (;;) {
        flow_ws(&p, end);
        if (p >= end)
            goto out;
        if (*p == close) {
            p++;
            break;
        }
        if (is_map) {
            if (*p == '[' || *p == '{' || flow_key(f, &p, end, &key) != WH_OK)
                goto out;
            while (p < end && *p == ' ')
                p++;
            if (p >= end || *p != ':')
                goto out; /* a key without a value, or its ':' on a later line (libyaml: an error) */
            p++;
            flow_ws(&p, end);
            if (p < end && (*p == ',' || *p == close)) {
                val = json_null();
            } else if ((rc = flow_node(f, &p, end, depth + 1, &val)) != WH_OK) {
                goto out;
            }
            rc = UNSUPPORTED;
            push_key(f, &key); /* its text stays on f->keys until the mapping is made */
            push_value(f, val);
            val = NULL;
            memset(&key, 0, sizeof(key));
        } else {
            if ((rc = flow_node(f, &p, end, depth + 1, &val)) != WH_OK)
                goto out;
            rc = UNSUPPORTED;
            flow_ws(&p, end);
            if (p < end && *p == ':')
                goto out; /* "[a: b]": a single-pair mapping */
            push_value(f, val);
            val = NULL;
        }
        flow_ws(&p, end);
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == close)
            continue;
        goto out;
    }
    *pp = p;
    *out = is_map ? make_mapping(f, vals, krefs) : make_sequence(f, vals);
    rc = WH_OK;
out:
    json_decref(val);
    drop_entries(f, vals, krefs); /* nothing left after a success */
    f->keys.len = kmark;
    return rc;
}

static wh_code flow_node(fast *f, const char **pp, const char *end, int depth, json_t **out)
{
    if (*pp >= end)
        return UNSUPPORTED;
    if (**pp == '[' || **pp == '{')
        return flow_collection(f, pp, end, depth, out);
    return flow_scalar(f, pp, end, out);
}

/* A flow collection that starts at `s` (on the line before the current
 * position) and may end on a later line; afterwards only a comment may follow
 * on its last line, and no deeper line may follow. */
static wh_code flow_value(fast *f, const line *hdr, const char *s, int indent, json_t **out)
{
    const char *p = s;
    wh_code rc = flow_collection(f, &p, f->text_end, 0, out);
    size_t idx = (size_t)(hdr - f->lines);

    if (rc != WH_OK)
        return rc;
    while (idx + 1 < f->n && f->lines[idx + 1].start <= p - 1)
        if (f->lines[++idx].pc != NULL) {
            json_decref(*out);
            *out = NULL;
            return piece_unused(f);
        }
    if (!only_trailer(p, f->lines[idx].end)) {
        json_decref(*out);
        *out = NULL;
        return UNSUPPORTED;
    }
    move_to(f, idx + 1);
    if (continues(f, indent)) {
        json_decref(*out);
        *out = NULL;
        return UNSUPPORTED;
    }
    return WH_OK;
}

/* The value written after "key:" or "- " on line text [s, end), whose
 * owner sits at `indent`; the owner's line has been consumed. */
static inline __attribute__((always_inline)) wh_code inline_value(fast *f, const line *l, const char *s, int indent,
                                                                  json_t **out)
{
    const char *end = l->end;
    wh_code rc;
    if (*s == '|')
        return block_scalar(f, l, s, indent, out);
    if (*s == '[' || *s == '{')
        return flow_value(f, l, s, indent, out);
    if ((rc = inline_scalar(f, l, s, end, out)) != WH_OK)
        return rc;
    if (continues(f, indent)) {
        json_decref(*out);
        *out = NULL;
        return UNSUPPORTED;
    }
    return WH_OK;
}

/* A block mapping at `indent` whose first entry (key and value start) the
 * caller has read with mapping_entry from the current line. */
static wh_code parse_mapping(fast *f, int indent, key_ref *first, const char *first_value, json_t **out)
{
    const size_t vals = f->nvals, krefs = f->nkrefs, kmark = key_mark(f, first);
    json_t *val = NULL;
    key_ref key = *first;
    const char *value = first_value;
    wh_code rc = WH_OK;

    for (;;) {
        const line *l = &f->lines[f->pos];
        const struct piece *pc = piece_at(f, l, PIECE_ENTRY, indent);
        if (pc != NULL) { /* read once: a copy */
            key = (key_ref){pc->key, pc->klen, 0, 0};
            val = wh_json_mold_make(pc->mold);
            move_to(f, f->pos + 1);
        } else if (l->pc != NULL) {
            rc = piece_unused(f);
            goto out;
        } else {
            move_to(f, f->pos + 1);
            if (value < l->end && *value != '#')
                rc = inline_value(f, l, value, indent, &val);
            else
                rc = nested_value(f, indent, 1, &val);
            if (rc != WH_OK)
                goto out;
        }
        push_key(f, &key); /* its text stays on f->keys until the mapping is made */
        push_value(f, val);
        val = NULL;
        const line *next = peek(f);
        if (next->indent < indent)
            break;
        if (next->indent > indent) {
            rc = UNSUPPORTED;
            goto out;
        }
        if (next->s[0] == '-' && is_space_or_end(next->s + 1, next->end))
            break; /* a sequence at this indent belongs to the parent */
        if (piece_at(f, next, PIECE_ENTRY, indent) != NULL)
            continue; /* its key is the piece's */
        if (mapping_entry(f, next, next->s, &key, &value) != 1) {
            rc = UNSUPPORTED;
            goto out;
        }
    }
out:
    json_decref(val);
    if (rc != WH_OK)
        drop_entries(f, vals, krefs);
    else
        *out = make_mapping(f, vals, krefs);
    f->keys.len = kmark;
    return rc;
}

static wh_code parse_sequence(fast *f, int indent, json_t **out)
{
    const size_t vals = f->nvals;
    json_t *item = NULL;
    wh_code rc = WH_OK;
    line *l;

    while ((l = peek(f))->indent == indent) {
        if (!(l->s[0] == '-' && is_space_or_end(l->s + 1, l->end)))
            break;
        const char *p = l->s + 1;
        const struct piece *pc = piece_at(f, l, PIECE_ITEM, indent);
        while (p < l->end && *p == ' ')
            p++;
        if (pc != NULL) { /* read once: a copy */
            item = wh_json_mold_make(pc->mold);
            move_to(f, f->pos + 1);
        } else if (l->pc != NULL) {
            rc = piece_unused(f);
        } else if (p >= l->end || *p == '#') {
            move_to(f, f->pos + 1);
            rc = nested_value(f, indent, 0, &item);
        } else if (*p == '-' && is_space_or_end(p + 1, l->end)) {
            rc = UNSUPPORTED; /* "- - x": compact nested sequence */
        } else {
            key_ref key;
            const char *value;
            int m = mapping_entry(f, l, p, &key, &value);
            if (m < 0) {
                rc = UNSUPPORTED;
            } else if (m == 1) {
                /* "- key: value": a mapping whose indent is the key's column. */
                int col = (int)(p - l->s) + l->indent;
                l->indent = col;
                l->s = p;
                if (f->depth > f->max_depth) {
                    key_drop(f, &key);
                    rc = UNSUPPORTED;
                } else {
                    rc = parse_mapping(f, col, &key, value, &item);
                }
            } else {
                move_to(f, f->pos + 1);
                rc = inline_value(f, l, p, indent, &item);
            }
        }
        if (rc != WH_OK)
            goto out;
        push_value(f, item);
        item = NULL;
    }
    if (l->indent > indent)
        rc = UNSUPPORTED;
out:
    json_decref(item);
    if (rc != WH_OK) {
        drop_entries(f, vals, f->nkrefs);
        return rc;
    }
    *out = make_sequence(f, vals);
    return WH_OK;
}

/* The block node starting at the current line (whose indent is > parent_indent). */
static wh_code parse_node(fast *f, int parent_indent, json_t **out)
{
    const line *l = peek(f);
    wh_code rc;
    key_ref key;
    const char *value;

    (void)parent_indent;
    if (at_end(f))
        return UNSUPPORTED;
    if (++f->depth > f->max_depth) {
        f->depth--;
        return UNSUPPORTED;
    }
    if (l->s[0] == '-' && is_space_or_end(l->s + 1, l->end)) {
        rc = parse_sequence(f, l->indent, out);
    } else if (mapping_entry(f, l, l->s, &key, &value) == 1) {
        rc = parse_mapping(f, l->indent, &key, value, out);
    } else {
        rc = UNSUPPORTED; /* a bare scalar line inside a block: leave it */
    }
    f->depth--;
    return rc;
}

wh_code wh_yaml_fast_load(const char *text, size_t len, int max_depth, json_t **out)
{
    return wh_yaml_fast_load_at(text, len, max_depth, NULL, 0, out);
}

wh_code wh_yaml_fast_load_at(const char *text, size_t len, int max_depth, const wh_yaml_at *at, size_t nat,
                             json_t **out)
{
    fast f;
    wh_code rc;
    json_t *v = NULL;
    const line *l;

    memset(&f, 0, sizeof(f));
    f.text_end = text + len;
    f.max_depth = max_depth;
    f.at = at;
    f.nat = nat;
    *out = NULL;
    if ((rc = split_lines(&f, text, len)) != WH_OK)
        goto out;
    add_end_line(&f);
    move_to(&f, 0);
    l = peek(&f);
    if (at_end(&f)) {
        rc = UNSUPPORTED; /* empty or comments only: the full loader says null */
        goto out;
    }
    if (!(l->s[0] == '-' && is_space_or_end(l->s + 1, l->end))) {
        key_ref key;
        const char *value;
        int m = mapping_entry(&f, l, l->s, &key, &value);
        if (m == 1)
            key_drop(&f, &key);
        if (m == 0) { /* a lone scalar document */
            move_to(&f, f.pos + 1);
            rc = l->s[0] == '|' ? UNSUPPORTED : inline_value(&f, l, l->s, -1, &v);
            goto done;
        }
    }
    rc = parse_node(&f, -1, &v);
done:
    if (rc == WH_OK && !at_end(&f))
        rc = UNSUPPORTED; /* something at a smaller indent than the first line */
    if (rc == WH_OK) {
        *out = v;
        v = NULL;
    }
out:
    json_decref(v);
    free(f.lines);
    free(f.vals);
    free(f.krefs);
    free(f.kbufs);
    wh_buf_free(&f.keys);
    wh_buf_free(&f.tmp);
    if (f.restart) /* a piece's first line read as something else: the text alone decides */
        return wh_yaml_fast_load_at(text, len, max_depth, NULL, 0, out);
    return rc;
}

/* ---- pieces: the entries of a constant text, read once ---- */

void wh_yaml_pieces_free(const wh_yaml_pieces *ps);

/* The levels of collections in v. */
static int levels(const json_t *v)
{
    int d = 0, c;
    size_t i;
    const char *k;
    json_t *m;

    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, m)
        {
            if ((c = levels(m)) > d)
                d = c;
        }
        return d + 1;
    }
    if (json_is_array(v)) {
        json_array_foreach(v, i, m)
        {
            if ((c = levels(m)) > d)
                d = c;
        }
        return d + 1;
    }
    return 0;
}

/* Where the entry whose first line has `indent` (an item when `item`) ends in text[0, len), looking from `from` (the
 * line after its first): at the first line with structure that the parser stops at, neither blank nor a comment,
 * indented less, or as much and not one of a mapping's entry's sequence items ("- " at its indent).  *end is that
 * line's start; 0 when the text ends before it tells. */
static int entry_end(const char *text, size_t len, size_t from, int indent, int item, size_t *end, size_t *tail)
{
    size_t m = from;

    while (m < len) {
        size_t q = m;
        const char *eol;
        while (q < len && text[q] == ' ')
            q++;
        if (q >= len)
            return 0; /* spaces to the end: a blank line, or not */
        if (text[q] != '\n' && text[q] != '#' && (size_t)indent >= q - m) {
            *tail = (q + 2 < len ? q + 2 : len) - m; /* what is read here: the indent, one or two bytes */
            if (q - m < (size_t)indent || item || text[q] != '-') {
                *end = m;
                return 1;
            }
            if (q + 1 >= len)
                return 0;
            if (text[q + 1] != ' ' && text[q + 1] != '\n') {
                *end = m;
                return 1;
            }
        }
        if ((eol = memchr(text + q, '\n', len - q)) == NULL)
            return 0;
        m = (size_t)(eol - text) + 1;
    }
    return 0;
}

const wh_yaml_pieces *wh_yaml_pieces_new(const char *text, size_t len, int max_depth)
{
    struct piece *p = NULL;
    size_t n = 0, cap = 0, ls = 0, budget = 16 * len + 4096; /* bytes read again: a bound on deep texts */
    wh_json_arena *scope = wh_json_arena_pause();            /* the pieces outlive any request */
    wh_yaml_pieces *ps = NULL;

    while (ls < len && len <= UINT32_MAX) {
        const char *eol = memchr(text + ls, '\n', len - ls);
        size_t next, q = ls, end, tail = 0;
        json_t *doc = NULL;
        if (eol == NULL)
            break;
        next = (size_t)(eol - text) + 1;
        while (text[q] == ' ')
            q++;
        if (text[q] != '\n' && text[q] != '#') {
            const int indent = (int)(q - ls), item = text[q] == '-' && (text[q + 1] == ' ' || text[q + 1] == '\n');
            if (entry_end(text, len, next, indent, item, &end, &tail) && end - ls <= budget &&
                wh_yaml_fast_load(text + ls, end - ls, max_depth, &doc) == WH_OK) {
                const char *key = NULL;
                json_t *value = NULL;
                budget -= end - ls;
                if (item && json_is_array(doc) && json_array_size(doc) == 1) {
                    value = json_array_get(doc, 0);
                } else if (!item && json_is_object(doc) && json_object_size(doc) == 1) {
                    key = json_object_iter_key(json_object_iter(doc));
                    value = json_object_iter_value(json_object_iter(doc));
                }
                if (value != NULL) {
                    fast first; /* what split_lines notes of its first line */
                    memset(&first, 0, sizeof(first));
                    if (split_lines(&first, text + ls, next - ls) != WH_OK || first.n != 1)
                        abort(); /* (the piece's text was split before) */
#define FROM_START(x) (first.lines[0].x != NULL ? (uint32_t)(first.lines[0].x - (text + ls)) : NO_MARK)
                    WH_GROW(p, n, cap, 16);
                    p[n++] = (struct piece){(uint32_t)ls,
                                            (uint32_t)(end - ls),
                                            (uint32_t)tail,
                                            0,
                                            FROM_START(end),
                                            FROM_START(colon),
                                            FROM_START(colon2),
                                            FROM_START(hash),
                                            indent,
                                            item ? PIECE_ITEM : PIECE_ENTRY,
                                            levels(value),
                                            key,
                                            key != NULL ? json_object_iter_key_len(json_object_iter(doc)) : 0,
                                            value,
                                            doc,
                                            NULL};
#undef FROM_START
                    free(first.lines);
                    doc = NULL;
                }
                json_decref(doc);
            }
        }
        ls = next;
    }
    for (size_t i = 0; i < n; i++) { /* (pieces are in the order of their first lines) */
        size_t j = i + 1;
        while (j < n && p[j].off < p[i].off + p[i].len)
            j++;
        p[i].after = (uint32_t)j;
    }
    if (n > 0) {
        ps = wh_malloc(sizeof(*ps) + n * sizeof(*p));
        ps->text = text;
        ps->len = len;
        ps->n = n;
        ps->frozen = NULL;
        memcpy(ps->p, p, n * sizeof(*p));
        for (size_t i = 0; i < n; i++) /* shared by every request (block levels and flow levels below the root) */
            if (wh_json_freeze(ps->p[i].doc, max_depth + FLOW_MAX_DEPTH + 2, &ps->frozen, NULL) != WH_OK) {
                wh_yaml_pieces_free(ps);
                ps = NULL;
                break;
            }
        for (size_t i = 0; ps != NULL && i < n; i++) /* after the freeze: the molds share the scalars */
            ps->p[i].mold = wh_json_mold_new(ps->p[i].value);
    }
    free(p);
    wh_json_arena_resume(scope);
    return ps;
}

void wh_yaml_pieces_free(const wh_yaml_pieces *ps)
{
    if (ps == NULL)
        return;
    for (size_t i = 0; i < ps->n; i++)
        wh_json_mold_free(ps->p[i].mold);
    wh_json_thaw(ps->frozen);
    for (size_t i = 0; i < ps->n; i++)
        json_decref(ps->p[i].doc);
    free((void *)ps);
}
