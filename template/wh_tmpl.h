/*
 * wh_tmpl.h - Go's text/template language with Sprig's functions, in C.
 *
 * Why: a sidecar is only right if it is what istiod of that revision would
 * render from its own injection template, so webhookd executes those
 * templates itself.  This library knows nothing of Istio or HTTP: callers
 * bring the data (JSON values and typed "host" values resolved lazily through
 * a type descriptor) and their own functions.
 *
 * Model
 *   wh_tmpl_set    a set of named templates (Go's *template.Template and its
 *                  associated templates).  Configure functions and options,
 *                  parse one or more texts into it, then render any of its
 *                  templates as often as you like.  After the last parse the
 *                  set is immutable: rendering it from several threads at once
 *                  is safe (each render has its own context).
 *   wh_tmpl_value  a Go value, passed by value (24 bytes), borrowing what it
 *                  points to.  Kinds follow reflect: nil, bool, int, uint,
 *                  float64, string, list ([]T), map (map[string]T), host.
 *                  Strings, JSON and host pointers are borrowed from the data
 *                  or from the render's arena (freed when the render ends).
 *   wh_tmpl_type   optional Go type of a value: its name (as %T prints it),
 *                  and for host values how to look up fields and methods,
 *                  how %v prints it and how encoding/json encodes it.
 *   wh_tmpl_ctx    a render in progress, handed to functions and resolvers:
 *                  arena allocation, errors, the caller's user pointer, and
 *                  executing other templates (Helm's include/tpl).
 *
 * JSON data (jansson) behaves like Go's map[string]interface{} /
 * []interface{} decoded by encoding/json: every number is a float64
 * (prints 1, 1.5, 1e+21), null is nil, a missing key gives `<no value>`.
 *
 * Usage
 *
 *     static wh_code fn_greet(wh_tmpl_ctx *ctx, const wh_tmpl_value *args, size_t n, wh_tmpl_value *out)
 *     {   // params "s": args[0] is a string
 *         return wh_tmpl_printf(ctx, out, "hello %.*s", (int)args[0].len, args[0].u.s);
 *     }
 *     static const wh_tmpl_func funcs[] = {{"greet", fn_greet, "s"}};
 *
 *     wh_tmpl_set *set = wh_tmpl_set_new(WH_TMPL_SPRIG);
 *     if (wh_tmpl_set_funcs(set, funcs, 1, &err) != WH_OK ||
 *         wh_tmpl_parse(set, "inject", text, strlen(text), &err) != WH_OK)
 *         ...;                       // err.msg: "template: inject:3: unexpected ..."
 *     json_t *data = json_loads("{\"name\":\"x\"}", 0, NULL);
 *     wh_buf out = WH_BUF_INIT;
 *     rc = wh_tmpl_render(set, "inject", wh_tmpl_json(data), NULL, &out, &err);
 *     ...
 *     wh_buf_free(&out); json_decref(data); wh_tmpl_set_free(set);
 *
 * Host values: describe a Go type once (static const), hand out values that
 * point at your C objects; fields are resolved only when a template asks.
 *
 *     static wh_code meta_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name,
 *                               const wh_tmpl_value *args, size_t nargs, wh_tmpl_value *out)
 *     {
 *         const struct meta *m = recv->u.host;
 *         if (strcmp(name, "Name") == 0) { *out = wh_tmpl_str(m->name); return WH_OK; }
 *         if (strcmp(name, "Annotations") == 0) {
 *             *out = wh_tmpl_json_typed(m->annotations, &wh_tmpl_type_map_string_string);
 *             return WH_OK;
 *         }
 *         return WH_E_NOTFOUND;     // "can't evaluate field X in type v1.ObjectMeta"
 *     }
 *     static const wh_tmpl_type meta_type = {.name = "v1.ObjectMeta", .kind = WH_TMPL_HOST, .field = meta_field};
 *     ... wh_tmpl_host(&meta_type, &my_meta) ...
 */
#ifndef WH_TMPL_H
#define WH_TMPL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "wh_buf.h"
#include "wh_result.h"

typedef struct wh_tmpl_set wh_tmpl_set;
typedef struct wh_tmpl_ctx wh_tmpl_ctx;
typedef struct wh_tmpl_type wh_tmpl_type;
typedef struct wh_tmpl_list wh_tmpl_list;
typedef struct wh_tmpl_map wh_tmpl_map;
typedef struct wh_tmpl_scratch wh_tmpl_scratch;

/* ------------------------------------------------------------------------ */
/* Values                                                                    */

typedef enum wh_tmpl_kind {
    WH_TMPL_INVALID = 0, /* no value at all (reflect's invalid Value): prints "<no value>" */
    WH_TMPL_NIL,         /* untyped nil: nil interface{}, JSON null, the `nil` keyword */
    WH_TMPL_BOOL,        /* u.b */
    WH_TMPL_INT,         /* u.i: int, int64, int32 ... (type says which; NULL = int) */
    WH_TMPL_UINT,        /* u.u: uint, uint32 ... (type says which; NULL = uint) */
    WH_TMPL_FLOAT,       /* u.f: float64 */
    WH_TMPL_STRING,      /* u.s + len (not NUL-terminated in general) */
    WH_TMPL_LIST,        /* []T: u.json (JSON array) or u.list (engine list); NULL pointer = nil slice */
    WH_TMPL_MAP,         /* map[string]T: u.json (JSON object) or u.map (engine map); NULL = nil map */
    WH_TMPL_HOST         /* a host object (struct, pointer to struct): u.host, resolved by type->field;
                          * u.host == NULL is a nil pointer of that type */
} wh_tmpl_kind;

/* How a LIST or MAP is stored (wh_tmpl_value.rep). */
enum { WH_TMPL_REP_JSON = 0, WH_TMPL_REP_ENGINE = 1 };

typedef struct wh_tmpl_value {
    uint8_t kind; /* wh_tmpl_kind */
    uint8_t rep;  /* WH_TMPL_REP_* for LIST and MAP */
    uint16_t flags_;
    uint32_t len;             /* STRING: byte length */
    const wh_tmpl_type *type; /* Go type; NULL = the kind's default type (see below) */
    union {
        int b;
        int64_t i;
        uint64_t u;
        double f;
        const char *s;
        const json_t *json;
        wh_tmpl_list *list;
        wh_tmpl_map *map;
        const void *host;
    } u;
} wh_tmpl_value;

/* Default types when wh_tmpl_value.type is NULL: bool, int, uint, float64,
 * string, []interface {}, map[string]interface {}. */

/* Looks a field or method `name` up on `recv` (whose type is this one).
 * `args` are the extra arguments of a method call (`.Method a b`); a field
 * given arguments should fail.  Fill *out and return WH_OK, return
 * WH_E_NOTFOUND when the type has no such field or method (the engine then
 * reports Go's "can't evaluate field NAME in type T"), or fail with
 * wh_tmpl_errorf().  Values put in *out must outlive the render: borrow from
 * the host object or allocate with wh_tmpl_alloc().  A lookup without
 * arguments must give the same value every time within one render (like a Go
 * field or getter): the engine caches it per (receiver, type, name). */
typedef wh_code (*wh_tmpl_field_fn)(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name,
                                    const wh_tmpl_value *args, size_t nargs, wh_tmpl_value *out);
/* Appends the %v form (fmt.Sprint) of `v` to out: a Stringer's String(),
 * struct printing, ... */
typedef wh_code (*wh_tmpl_format_fn)(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out);
/* Returns what encoding/json.Marshal would encode `v` as (new reference), or
 * NULL with an error set through wh_tmpl_errorf(). */
typedef json_t *(*wh_tmpl_json_fn)(wh_tmpl_ctx *ctx, const wh_tmpl_value *v);

/* A Go type.  Callers define their own as static const; the engine provides
 * the common ones below.  Fields not needed may be NULL/0. */
struct wh_tmpl_type {
    const char *name;         /* as %T prints it: "*v1.ObjectMeta", "map[string]string", "v1alpha1.Mode" */
    wh_tmpl_kind kind;        /* the underlying kind of values of this type */
    const wh_tmpl_type *elem; /* LIST/MAP: element type (NULL = interface {}) */
    wh_tmpl_field_fn field;   /* fields and methods (any kind may have methods, e.g. an enum's .String) */
    wh_tmpl_format_fn format; /* %v; NULL = the kind's default printing */
    wh_tmpl_json_fn to_json;  /* encoding/json form; NULL = the kind's default */
    int pointer;              /* 1 if this is a pointer type (a nil one prints "<nil>", is false) */
    /* 1 if `field` without arguments reads nothing but the receiver's
     * object (not the render's user data) and gives values that live as
     * long as that object (or engine collections from the render's
     * arena): on a const field's value (wh_tmpl_set_const_field) the engine
     * then resolves such steps when the set is made. */
    int pure_fields;
};

/* Types the engine knows (element types and typed collections). */
extern const wh_tmpl_type wh_tmpl_type_bool, wh_tmpl_type_string, wh_tmpl_type_int, wh_tmpl_type_int32,
    wh_tmpl_type_int64, wh_tmpl_type_float64;
extern const wh_tmpl_type wh_tmpl_type_map_string_string;    /* map[string]string */
extern const wh_tmpl_type wh_tmpl_type_string_slice;         /* []string */
extern const wh_tmpl_type wh_tmpl_type_map_string_interface; /* map[string]interface {} */
extern const wh_tmpl_type wh_tmpl_type_interface_slice;      /* []interface {} */

/* Constructors (all borrow; none allocates). */
static inline wh_tmpl_value wh_tmpl_invalid(void)
{
    return (wh_tmpl_value){0};
}
static inline wh_tmpl_value wh_tmpl_nil(void)
{
    return (wh_tmpl_value){.kind = WH_TMPL_NIL};
}
static inline wh_tmpl_value wh_tmpl_bool(int b)
{
    return (wh_tmpl_value){.kind = WH_TMPL_BOOL, .u.b = b != 0};
}
static inline wh_tmpl_value wh_tmpl_int(int64_t i)
{
    return (wh_tmpl_value){.kind = WH_TMPL_INT, .u.i = i};
}
static inline wh_tmpl_value wh_tmpl_int_typed(int64_t i, const wh_tmpl_type *type)
{
    return (wh_tmpl_value){.kind = WH_TMPL_INT, .type = type, .u.i = i};
}
static inline wh_tmpl_value wh_tmpl_uint_typed(uint64_t u, const wh_tmpl_type *type)
{
    return (wh_tmpl_value){.kind = WH_TMPL_UINT, .type = type, .u.u = u};
}
static inline wh_tmpl_value wh_tmpl_float(double f)
{
    return (wh_tmpl_value){.kind = WH_TMPL_FLOAT, .u.f = f};
}
/* A string of `len` bytes at s (borrowed). */
static inline wh_tmpl_value wh_tmpl_strn(const char *s, size_t len)
{
    return (wh_tmpl_value){.kind = WH_TMPL_STRING, .len = (uint32_t)len, .u.s = s};
}
/* A NUL-terminated string (borrowed); NULL gives "". */
wh_tmpl_value wh_tmpl_str(const char *s);
/* A JSON value as encoding/json decodes it into interface{}: objects are
 * map[string]interface {}, arrays []interface {}, numbers float64, strings,
 * bools, null -> nil.  NULL gives nil. */
wh_tmpl_value wh_tmpl_json(const json_t *j);
/* A JSON object or array given a Go collection type, e.g. map[string]string
 * (annotations) or []string (args); the elements must match `type->elem`.
 * A NULL `j` is a nil map/slice of that type. */
wh_tmpl_value wh_tmpl_json_typed(const json_t *j, const wh_tmpl_type *type);
/* A host object of the given type (u.host = obj; NULL = nil pointer). */
static inline wh_tmpl_value wh_tmpl_host(const wh_tmpl_type *type, const void *obj)
{
    return (wh_tmpl_value){.kind = WH_TMPL_HOST, .type = type, .u.host = obj};
}

/* The Go type name of v, as %T prints it ("<nil>" for nil and no value). */
const char *wh_tmpl_type_name(const wh_tmpl_value *v);

/* Collections (JSON or engine storage alike).  Length of a STRING, LIST or
 * MAP (0 for nil); -1 for other kinds. */
long wh_tmpl_len(const wh_tmpl_value *v);
/* Element i of a LIST (0 <= i < len). */
wh_tmpl_value wh_tmpl_list_at(const wh_tmpl_value *list, size_t i);
/* Map lookup: WH_OK and *out, or WH_E_NOTFOUND. */
wh_code wh_tmpl_map_get(const wh_tmpl_value *map, const char *key, size_t key_len, wh_tmpl_value *out);
/* A map entry. */
typedef struct wh_tmpl_kv {
    const char *key; /* borrowed */
    size_t key_len;
    wh_tmpl_value val;
} wh_tmpl_kv;
/* The entries of a MAP in Go's range order (keys sorted bytewise), as an
 * arena array of *n entries (NULL when empty). */
wh_code wh_tmpl_map_entries(wh_tmpl_ctx *ctx, const wh_tmpl_value *map, wh_tmpl_kv **out, size_t *n);

/* Engine collections, allocated in the render's arena (gone when it ends).
 * `type` NULL gives []interface {} / map[string]interface {}. */
wh_tmpl_value wh_tmpl_list_new(wh_tmpl_ctx *ctx, size_t cap_hint, const wh_tmpl_type *type);
wh_code wh_tmpl_list_push(wh_tmpl_ctx *ctx, wh_tmpl_value *list, wh_tmpl_value item);
wh_tmpl_value wh_tmpl_map_new(wh_tmpl_ctx *ctx, const wh_tmpl_type *type);
/* Insert or replace; the key is copied into the arena. */
wh_code wh_tmpl_map_set(wh_tmpl_ctx *ctx, wh_tmpl_value *map, const char *key, size_t key_len, wh_tmpl_value val);

/* Go conversions used by functions.  Each appends to / fills what it is
 * given and returns WH_OK, or an error set on ctx. */
/* fmt.Sprint(v) (%v): "<no value>" never appears here; nil prints "<nil>". */
wh_code wh_tmpl_sprint(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out);
/* encoding/json's view of v as a new jansson reference (floats stay reals;
 * Go ints become JSON integers). */
wh_code wh_tmpl_to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, json_t **out);

/* ------------------------------------------------------------------------ */
/* Functions                                                                 */

/* A function callable from templates.  `args` have been checked and
 * converted against the function's `params` (see wh_tmpl_func); fill *out
 * (borrowing from args or the arena is fine) and return WH_OK, or return the
 * result of wh_tmpl_errorf() - the engine reports it as Go does:
 * `template: NAME:LINE:COL: executing "NAME" at <CALL>: error calling FN: MSG`. */
typedef wh_code (*wh_tmpl_fn)(wh_tmpl_ctx *ctx, const wh_tmpl_value *args, size_t nargs, wh_tmpl_value *out);

typedef struct wh_tmpl_func {
    const char *name;
    wh_tmpl_fn fn;
    /* The Go parameter types, one letter each, converted and checked by the
     * engine exactly as text/template does for a Go func (untyped constants
     * convert; a wrong type fails with "wrong type for value; expected string;
     * got float64"; a missing value fails unless the parameter can be nil):
     *   v interface{}   s string   i int   I int64   f float64   b bool
     *   m map[string]interface{}   M map[string]string
     *   l []interface{}            L []string
     * A trailing '*' makes the last letter variadic ("s*" = ...string).  NULL
     * means "v*": any number of values, unchecked. */
    const char *params;
    /* WH_TMPL_FN_* (0 for none). */
    unsigned flags;
} wh_tmpl_func;

/* wh_tmpl_func.flags: the function is pure - its result and error depend on
 * its arguments alone (no clock, randomness, environment, user data, other
 * templates), it changes none of them and it returns nothing it keeps.  A
 * pipeline made only of pure calls over constants (literals and const
 * fields, wh_tmpl_set_const_field) is then computed once when the set is
 * made instead of on every render (not when it fails: its error stays the
 * render's, in Go's words). */
#define WH_TMPL_FN_PURE 1u
/* wh_tmpl_func.flags: the function is stable within a render - its result
 * and error depend on its arguments and on what stays unchanged for the
 * length of one render (the opts->user data, host values' fields), it
 * changes none of them (nothing a template can see) and it returns nothing
 * it keeps; e.g. a lookup in the render's data.  A pipeline made only of
 * stable (or pure) calls over constants and fields of `.` and `$` is then
 * computed once per render for each `.` and `$` (pipelines written alike
 * share the value); never across renders, not when it fails, and not when
 * it reads a collection a template can change (dict, list). */
#define WH_TMPL_FN_STABLE 2u

/* ------------------------------------------------------------------------ */
/* Template sets                                                             */

enum {
    WH_TMPL_SPRIG = 1 << 0,            /* add Sprig's text functions (sprig.TxtFuncMap) */
    WH_TMPL_MISSINGKEY_ERROR = 1 << 1, /* Option("missingkey=error"): a missing map key fails */
    WH_TMPL_MISSINGKEY_ZERO = 1 << 2,  /* Option("missingkey=zero") */
    WH_TMPL_HELM = 1 << 3,             /* add Helm 3's toYaml, fromYaml, fromYamlArray, fromJsonArray,
                                        * include, tpl and required */
    WH_TMPL_NO_FOLD = 1 << 4           /* compute every pipeline every time, pure and stable ones too
                                        * (WH_TMPL_FN_PURE, _STABLE): what tests compare folding and
                                        * memoising against */
};

/* A new empty set with Go's builtins (and Sprig's with WH_TMPL_SPRIG).
 * NULL only when a built-in function table is malformed (a bug). */
wh_tmpl_set *wh_tmpl_set_new(unsigned flags);
void wh_tmpl_set_free(wh_tmpl_set *set);

/* Add or override functions (Template.Funcs): a later registration of a name
 * wins over an earlier one, over Sprig's and over Go's builtins.  Call before
 * parsing.  The table's strings and data are borrowed: keep them alive as
 * long as the set (static tables).  Fails on a bad `params` string. */
wh_code wh_tmpl_set_funcs(wh_tmpl_set *set, const wh_tmpl_func *funcs, size_t n, wh_err *err);
/* Take the functions `names` out of the set (a name it lacks is skipped),
 * before parsing: a FuncMap without them, e.g. the older Sprig an
 * application vendored, so that a call is "function \"x\" not defined". */
wh_code wh_tmpl_set_drop_funcs(wh_tmpl_set *set, const char *const *names, size_t n, wh_err *err);

/* Delimiters (Template.Delims); NULL restores "{{" / "}}".  Copied. */
wh_code wh_tmpl_set_delims(wh_tmpl_set *set, const char *left, const char *right, wh_err *err);

/* Parse `text` as the template `name` (Template.New(name).Parse(text)):
 * its `define`s and `block`s join the set (a later definition replaces an
 * earlier one, as Go's AddParseTree does; an empty body does not replace a
 * non-empty one).  The text is copied.  On error the set is unchanged and
 * err says "template: NAME:LINE: message" (Go's wording). */
wh_code wh_tmpl_parse(wh_tmpl_set *set, const char *name, const char *text, size_t len, wh_err *err);

/* Declare data that is constant for the set's whole life: every value of
 * host type `type` (one with a field callback) that this set renders has
 * the field `name` (no arguments) equal to `value` - e.g. an injection
 * revision's Values, which the revision owns together with its template
 * sets.  Field chains through it (`.Values.global.proxy.image`,
 * `$.Values.x`) are then resolved once, here and in later parses, the way a
 * render resolves them (keys of JSON maps, missingkey's rule), instead of
 * on every render; a render takes such a chain's value whenever its
 * receiver is a non-nil value of `type`.  Chains that need the render (a
 * step through a host value, an error) are left to it.  `value` and what it
 * points to must stay valid and unchanged as long as the set. */
wh_code wh_tmpl_set_const_field(wh_tmpl_set *set, const wh_tmpl_type *type, const char *name, wh_tmpl_value value,
                                wh_err *err);

/* Annotate every run of constant output of the set's templates (what a
 * render writes in one append; see wh_tmpl_run_at): note(text, len, arg)
 * returns the run's annotation, or NULL for none; release(annotation) is
 * called for each when the set is freed.  Why: a caller that reads the
 * output (handlers/inject parses it as YAML) can prepare what it reads of
 * the constant text once.  Call it after the set's last wh_tmpl_parse and
 * wh_tmpl_set_const_field: those fold the runs anew, unannotated. */
void wh_tmpl_set_annotate_runs(wh_tmpl_set *set, const void *(*note)(const char *text, size_t len, void *arg),
                               void *arg, void (*release)(const void *note));

/* 1 if the set has a template of that name. */
int wh_tmpl_has(const wh_tmpl_set *set, const char *name);

/* ------------------------------------------------------------------------ */
/* Rendering                                                                 */

/* Where an error happened (optional out-parameter of a render). */
typedef struct wh_tmpl_pos {
    char name[128]; /* template name */
    int line;       /* 1-based; 0 if unknown */
    int col;        /* byte offset in the line, as Go reports it (0-based) */
} wh_tmpl_pos;

/* A run of a template's constant output (text whose walk needs no render,
 * written in one append) that wh_tmpl_set_annotate_runs annotated, as a
 * render wrote it straight into its output: from byte `off` on. */
typedef struct wh_tmpl_run_at {
    size_t off;
    const void *note;
} wh_tmpl_run_at;

/* The annotated runs a render wrote, in output order (the caller frees `at`). */
typedef struct wh_tmpl_runs {
    wh_tmpl_run_at *at;
    size_t n, cap;
} wh_tmpl_runs;

typedef struct wh_tmpl_opts {
    void *user;               /* for functions and resolvers: wh_tmpl_user(ctx) */
    wh_tmpl_scratch *scratch; /* reusable arena memory (one render at a time); NULL = private */
    size_t max_output;        /* fail with WH_E_LIMIT beyond this many output bytes; 0 = 64 MiB */
    unsigned max_depth;       /* nested template calls; 0 = 10000 (Go: 100000), and never deeper than
                                 the calling thread's stack allows (256 KiB are kept free) */
    uint64_t max_steps;       /* actions executed; 0 = 100 million */
    size_t max_memory;        /* memory of the render's intermediate values; 0 = 256 MiB */
    unsigned max_cpu_ms;      /* CPU time of the render (the calling thread's); 0 = 2000 ms */
    wh_tmpl_pos *pos;         /* filled when the render fails at a known place */
    wh_tmpl_runs *runs;       /* when not NULL: the annotated runs written into `out` are appended to it */
} wh_tmpl_opts;

/* Execute template `name` of `set` with `data` as dot, appending the output
 * to `out` (on error `out` holds what was written before the error, as Go's
 * writer would).  Errors: WH_E_NOTFOUND (no such template), WH_E_RENDER (an
 * execution error, err in Go's wording: `template: NAME:LINE:COL: executing
 * "NAME" at <.x.y>: ...`), WH_E_LIMIT.  `opts` may be NULL.
 * Thread-safe for a parsed set; `data` is only read. */
wh_code wh_tmpl_render(const wh_tmpl_set *set, const char *name, wh_tmpl_value data, const wh_tmpl_opts *opts,
                       wh_buf *out, wh_err *err);

/* Memory reused across renders (keeps the arena's blocks between them, so a
 * steady render allocates almost nothing).  Not shared between threads. */
wh_tmpl_scratch *wh_tmpl_scratch_new(void);
void wh_tmpl_scratch_free(wh_tmpl_scratch *s);

/* ------------------------------------------------------------------------ */
/* Inside a render: for functions and resolvers                              */

/* The opts->user pointer of the render. */
void *wh_tmpl_user(wh_tmpl_ctx *ctx);
/* Arena memory (8-byte aligned), freed when the render ends; never NULL
 * (out of memory aborts: CONTRIBUTING.md "Out of memory"). */
void *wh_tmpl_alloc(wh_tmpl_ctx *ctx, size_t size);
/* Copy bytes into the arena as a STRING value (NUL-terminated there too).
 * Always WH_OK: a function can end with `return wh_tmpl_strdup(...)`. */
wh_code wh_tmpl_strdup(wh_tmpl_ctx *ctx, const char *s, size_t len, wh_tmpl_value *out);
/* printf into a new arena STRING value. */
wh_code wh_tmpl_printf(wh_tmpl_ctx *ctx, wh_tmpl_value *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A scratch wh_buf for building strings (reset, owned by ctx; valid until
 * the next call): finish with wh_tmpl_strdup(ctx, b->data, b->len, out). */
wh_buf *wh_tmpl_tmpbuf(wh_tmpl_ctx *ctx);
/* Record an error message (the function's error text, without prefix) and
 * return WH_E_RENDER. */
wh_code wh_tmpl_errorf(wh_tmpl_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Execute another template of the set with `data` into a STRING (Helm's
 * include).  WH_E_NOTFOUND with an error set if there is none. */
wh_code wh_tmpl_exec_named(wh_tmpl_ctx *ctx, const char *name, wh_tmpl_value data, wh_tmpl_value *out);
/* Parse `text` in the context of the render's set (its defines are visible;
 * new defines stay local to this call) and execute it with `data` (Helm's
 * tpl). */
wh_code wh_tmpl_exec_text(wh_tmpl_ctx *ctx, const char *text, size_t len, wh_tmpl_value data, wh_tmpl_value *out);

#endif
