/*
 * tmpl_int.h - what the template engine's files share and its users never see:
 * the arena, the parse tree, the template set, the render context and the
 * function registry.
 */
#ifndef WH_TMPL_INT_H
#define WH_TMPL_INT_H

#include <locale.h>
#include <stdarg.h>
#include <stdint.h>

#include "wh_tmpl.h"

/* ---- arena: bump allocation in blocks, released all at once ---- */
typedef struct tm_block {
    struct tm_block *next;
    size_t size;
    /* data follows */
} tm_block;

typedef struct tm_arena {
    tm_block *head;
    char *cur, *end;
    tm_block *spare; /* blocks kept for reuse after a reset */
    size_t used;     /* bytes of the blocks in use (a render's memory budget counts them) */
} tm_arena;

void tm_arena_init(tm_arena *a);
void *tm_alloc(tm_arena *a, size_t size);
char *tm_strndup(tm_arena *a, const char *s, size_t len);
/* Forget everything allocated but keep the blocks for reuse. */
void tm_arena_reset(tm_arena *a);
void tm_arena_free(tm_arena *a);

/* ---- functions ---- */
enum { FN_PLAIN = 0, FN_AND, FN_OR };

/* Parameter codes beyond the public ones: 'r' is reflect.Value (a missing
 * value stays WH_TMPL_INVALID, nil stays nil). */
typedef struct tm_func {
    const char *name;
    wh_tmpl_fn fn;
    uint8_t special;  /* FN_AND / FN_OR */
    uint8_t pure;     /* WH_TMPL_FN_PURE */
    uint8_t stable;   /* WH_TMPL_FN_STABLE (pure ones are too) */
    uint8_t variadic; /* the last param repeats */
    uint8_t nparams;
    char params[14];
} tm_func;

/* ---- parse tree ---- */

/* A field chain resolved when the set was made (wh_tmpl_set_const_field):
 * what the chain's steps give on any receiver of host type `type`. */
typedef struct tm_konst {
    const wh_tmpl_type *type;
    wh_tmpl_value val;
} tm_konst;

/* A pipeline's commands computed when the set was made (tm_fold_pipes):
 * their value whenever `.` (dot) and `$` (dollar), where not NULL, are
 * non-nil host values of those types - the receivers its const fields need.
 * `node` is where an evaluation of the commands leaves the render's
 * position (what a later error on the value reports). */
typedef struct tm_kpipe tm_kpipe;

/* Items of a list whose walk needs no render (tm_fold_runs): text, and
 * actions and ifs over pipelines computed once, whenever `.` and `$`, where
 * not NULL, are non-nil host values of those types.  Walking items
 * [start, end) writes `text` and takes `steps` steps. */
typedef struct tm_run {
    uint32_t end; /* 0: no run starts at this item */
    uint32_t steps;
    const wh_tmpl_type *dot, *dollar;
    const char *text;
    size_t len;
    const void *note; /* wh_tmpl_set_annotate_runs's (NULL: none) */
} tm_run;

/* A pipeline whose value stays the same within one render for the same `.`
 * and `$` (tm_memo_pipes): stable calls (WH_TMPL_FN_STABLE) over constants
 * and fields of `.` and `$`.  Pipelines written alike share `id`, the slot
 * of the render's memo; `nodes` lists the pipeline's nodes in the one order
 * that is the same for all of them (what a value taken from another
 * pipeline of the id maps the render's position to). */
typedef struct tm_memo {
    uint32_t id;
    uint8_t dot, dollar; /* whether the commands read `.` / `$` */
    const char *var;     /* the one other variable they read (interned name; NULL: none), keyed as `.` is */
    uint8_t shared;      /* another pipeline of the set is written alike (tm_memo_share) */
    uint32_t nnodes;
    const struct tm_node **nodes;
} tm_memo;

/* A command compiled when the set was made (tm_compile_calls): a call of a
 * function (not and/or) whose argument count the text fixes, so the arity
 * check is done, each argument's parameter type is looked up and literal
 * arguments are converted to it once; the render then goes straight from
 * the operands to the C function.  Operands whose evaluation could fail in
 * a way that depends on the parameter (nil, a literal of the wrong type)
 * stay TM_A_NODE: the general path, with its messages. */
enum { TM_A_NODE = 0, TM_A_CONST, TM_A_DOT, TM_A_FIELD, TM_A_VAR, TM_A_PIPE };
typedef struct tm_carg {
    uint8_t op; /* TM_A_* */
    char t;     /* the parameter's letter (wh_tmpl_func.params) */
    const struct tm_node *n;
    wh_tmpl_value k; /* TM_A_CONST: the argument as the parameter takes it */
} tm_carg;
typedef struct tm_ccall {
    const tm_func *fn;
    const struct tm_node *ident;
    uint8_t final;  /* the command receives the previous command's value */
    char tfinal;    /* ... as this parameter */
    uint8_t nargs;  /* operands after the function's name */
    tm_carg args[]; /* nargs */
} tm_ccall;

typedef enum {
    N_LIST,
    N_TEXT,
    N_ACTION,
    N_IF,
    N_RANGE,
    N_WITH,
    N_TEMPLATE,
    N_BREAK,
    N_CONTINUE,
    N_COMMENT,
    N_PIPE,
    N_COMMAND,
    N_FIELD,
    N_CHAIN,
    N_VARIABLE,
    N_IDENT,
    N_DOT,
    N_NIL,
    N_BOOL,
    N_NUMBER,
    N_STRING,
    N_END,
    N_ELSE
} tm_nkind;

typedef struct tm_tree tm_tree;
typedef struct tm_node tm_node;

struct tm_node {
    uint8_t kind;
    int pos;  /* byte offset in the tree's text */
    int line; /* for else/end/branches */
    const tm_tree *tree;
    union {
        struct {
            tm_node **items;
            size_t n;
            const tm_run *runs;       /* per item (NULL: none) */
            const struct tm_op *prog; /* the items as one flat program (tm_fold_runs; NULL: none) */
        } list;
        struct {
            const char *s;
            size_t len;
        } text;
        struct {
            tm_node *pipe; /* N_PIPE */
            tm_node *list;
            tm_node *else_list;
        } branch; /* N_ACTION uses pipe only */
        struct {
            const char *name;
            tm_node *pipe; /* may be NULL */
        } tmpl;
        struct {
            int is_assign;
            uint8_t flat;   /* every command a compiled call over compiled operands (tm_compile_calls) */
            tm_node **decl; /* N_VARIABLE */
            size_t ndecl;
            tm_node **cmds; /* N_COMMAND */
            size_t ncmds;
            const tm_kpipe *konst; /* the commands' value, computed once (NULL: none) */
            const tm_memo *memo;   /* the commands' value, computed once per render (NULL: never) */
        } pipe;
        struct {
            tm_node **args;
            size_t nargs;
            const tm_ccall *call; /* the command compiled (NULL: evaluated node by node) */
        } cmd;
        struct {
            const char **idents; /* N_FIELD: without dots; N_VARIABLE: idents[0] = "$x" */
            size_t n;
            const tm_konst *konst; /* the chain's value on a const field's receiver (NULL: none) */
            uint32_t slot;         /* N_FIELD: 1 + the render memo's slot for its value (tm_compile_calls; 0: none) */
        } field;
        struct {
            tm_node *base;
            const char **fields;
            size_t n;
            const tm_konst *konst;
        } chain;
        struct {
            const char *name;
            const tm_func *fn;
        } ident;
        int boolean;
        struct {
            uint8_t is_int, is_uint, is_float;
            int64_t i;
            uint64_t u;
            double f;
            const char *text;
        } num;
        struct {
            const char *quoted; /* as written, for messages */
            const char *s;
            size_t len;
        } str;
    } u;
};

struct tm_kpipe {
    const wh_tmpl_type *dot, *dollar;
    const tm_node *node;
    wh_tmpl_value val;
    const char *printed; /* how an action prints a scalar val (NULL: not computed) */
    size_t printed_len;
};

/* One parse of one text: the defines it holds point back here for messages. */
struct tm_tree {
    const char *parse_name; /* the name given to wh_tmpl_parse */
    const char *text;
    size_t len;
};

/* A named template of the set. */
typedef struct tm_def {
    const char *name;
    tm_node *root; /* N_LIST */
    const tm_tree *tree;
} tm_def;

typedef struct tm_defs {
    tm_def *items;
    size_t n, cap;
} tm_defs;

/* A field declared constant (wh_tmpl_set_const_field). */
typedef struct tm_const_field {
    const wh_tmpl_type *type;
    const char *name;
    wh_tmpl_value val;
} tm_const_field;

struct wh_tmpl_set {
    unsigned flags;
    tm_const_field *consts;
    size_t nconsts;
    tm_arena arena; /* trees, texts, names */
    tm_func *funcs; /* sorted by name */
    size_t nfuncs, capfuncs;
    tm_defs defs;
    char *ldelim, *rdelim;
    locale_t ctype;                /* C.UTF-8 for Unicode case mapping; (locale_t)0 = ASCII only */
    struct tm_memo_key *memo_keys; /* the memoised pipelines' texts (open addressing) */
    size_t nmemo, capmemo_keys;    /* ids handed out; slots of memo_keys */
    uint32_t *memo_uses;           /* per id: the pipelines written so (tm_memo_share) */
    const void **notes;            /* wh_tmpl_set_annotate_runs's, released with the set */
    size_t nnotes, capnotes;
    void (*release_note)(const void *note);
    struct tm_op **progs; /* the lists' flat programs (tm_fold_runs), malloc'd: a refold replaces them */
    size_t nprogs, capprogs;
};

const tm_func *tm_find_func(const wh_tmpl_set *set, const char *name, size_t len);
/* Add funcs to the set's table (funcs.c); `internal` for the engine's own
 * libraries, which alone may take raw arguments (the 'r' parameter letter). */
wh_code tm_add_funcs(wh_tmpl_set *set, const wh_tmpl_func *funcs, size_t n, int internal, wh_err *err);
const tm_def *tm_find_def(const tm_defs *defs, const char *name);

/* Parse `text` into `defs` (trees and strings in `arena`). */
wh_code tm_parse(const wh_tmpl_set *set, tm_arena *arena, tm_defs *defs, const char *name, const char *text, size_t len,
                 char *errmsg, size_t errlen);
/* Call visit on every node of the tree under n, children before their parent
 * (node.c). */
void tm_node_walk(tm_node *n, void (*visit)(tm_node *n, void *arg), void *arg);
/* Go's node.String() (for messages). */
void tm_node_string(const tm_node *n, wh_buf *out);
/* Go's strconv (quote.c; Quote and IsPrint are common/wh_go_strconv.c's):
 * Unquote (-1 when s is not a valid literal), UnquoteChar (0 when invalid,
 * else the bytes read). */
int tm_unquote(const char *s, size_t len, wh_buf *out);
size_t tm_unquote_char(const char *s, size_t len, char q, wh_buf *out, unsigned *rune_out);

/* Unicode helpers (quote.c / value.c). */
size_t tm_utf8_decode(const char *s, size_t n, unsigned *cp);
void tm_put_rune(wh_buf *out, unsigned r);
/* Go's parse.IsEmptyTree: nothing but space text and comments. */
int tm_is_empty_tree(const tm_node *n);
wh_tmpl_value *tm_list_items(wh_tmpl_value *list);
/* A new []interface{} list: the engine list `list` ([]interface{}, not nil)
 * plus `item`, sharing list's array when nothing was appended to it yet
 * (amortised O(1)); `list` itself is unchanged. */
wh_code tm_list_append(wh_tmpl_ctx *ctx, const wh_tmpl_value *list, wh_tmpl_value item, wh_tmpl_value *out);
void tm_map_delete(wh_tmpl_value *map, const char *key, size_t key_len);

/* The name of the `$` variable: variable names are interned per parse so
 * that lookups compare pointers. */
extern const char tm_dollar[];

/* ---- render context ---- */
typedef struct tm_var {
    const char *name;
    wh_tmpl_value val;
} tm_var;

/* Field lookups on immutable receivers (JSON maps, host values) are cached
 * for the length of one render. */
#define TM_FCACHE_SIZE 512
typedef struct tm_fcache_entry {
    uint64_t gen;
    const void *recv;
    const wh_tmpl_type *type;
    const char *name;
    wh_tmpl_value val;
} tm_fcache_entry;

/* One memoised pipeline's value (tm_memo) in the render of generation `gen`
 * for these `.` and `$`; `end` indexes the pipeline's nodes. */
typedef struct tm_memo_entry {
    uint64_t gen;
    wh_tmpl_value dot, dollar, val;
    uint32_t end;
} tm_memo_entry;

struct wh_tmpl_scratch {
    tm_arena arena;
    tm_fcache_entry *fcache; /* TM_FCACHE_SIZE entries, allocated on first use */
    tm_memo_entry *memo;     /* capmemo entries, grown to a set's nmemo before its render */
    size_t capmemo;
    uint64_t gen; /* render counter: entries of older renders are stale */
    int busy;     /* a render is using it (a thread's own scratch is not reentrant) */
    tm_var *vars;
    size_t capvars;
    wh_buf tmp;
    wh_buf tmp2;
};

struct wh_tmpl_ctx {
    const wh_tmpl_set *set;
    const tm_defs *local_defs; /* defines of a tpl text, searched first */
    wh_tmpl_scratch *scratch;
    tm_arena *arena;
    wh_buf *out;
    wh_buf *runs_out; /* the output whose annotated runs go to opts->runs (NULL: none wanted) */
    tm_var *vars;
    size_t nvars, capvars;
    const tm_def *def;   /* template being executed */
    const tm_node *node; /* where we are, for messages */
    const wh_tmpl_opts *opts;
    void *user;
    unsigned depth, max_depth;
    uint64_t steps, max_steps;
    uint64_t step_check; /* the step at which check_limits next looks at steps and CPU (0: the first) */
    size_t max_output;
    size_t max_memory;        /* arena bytes */
    uint64_t cpu_deadline_ns; /* CLOCK_THREAD_CPUTIME_ID */
    unsigned max_cpu_ms;
    const char *stack_low; /* below this the thread's stack is too short for another level */
    json_t *owned;         /* JSON made during the render (fromJson, ...), released at its end */
    tm_memo_entry *memo;   /* the set's nmemo slots (NULL: no memo, e.g. while folding) */
    unsigned memo_depth;   /* memoised pipelines being computed (nested) */
    int memo_taint;        /* the value being computed read an engine collection (mutable) */
    int failed;            /* an error message is recorded */
    int located;           /* the message already carries "template: ...: executing ..." */
    char errmsg[WH_ERR_MSG_MAX];
};

/* Stack kept free below the deepest template call (builtins, libc, jansson). */
#define TM_STACK_RESERVE (256 * 1024)
/* Start the render's CPU clock and find the thread's stack limit. */
void tm_exec_budgets(wh_tmpl_ctx *ctx);

/* Record a message without location (the caller adds it). */
wh_code tm_fail(wh_tmpl_ctx *ctx, wh_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- values (value.c) ---- */
/* wh_tmpl_value.flags_: the value sits in an interface{} slot (an element
 * of []interface{} or map[string]interface{}): Go names its type
 * "interface {}" in some messages until a pipeline stage unwraps it. */
#define TM_F_IFACE 1
const char *tm_type_name(const wh_tmpl_value *v);
int tm_truth(const wh_tmpl_value *v);
/* fmt's %v for one operand (top level: pointers print their target). */
wh_code tm_print_value(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out, int top);
/* Zero value of a type (NULL = interface{} -> nil). */
wh_tmpl_value tm_zero(const wh_tmpl_type *t);
/* Element type of a collection value. */
const wh_tmpl_type *tm_elem_type(const wh_tmpl_value *v);
/* Go string compare for sort order. */
int tm_strcmp(const char *a, size_t alen, const char *b, size_t blen);
/* Same Go type (for assignability checks). */
int tm_same_type(const wh_tmpl_value *v, const wh_tmpl_type *t, wh_tmpl_kind kind);

/* ---- printf (fmt.c) ---- */
wh_code tm_sprintf(wh_tmpl_ctx *ctx, wh_buf *out, const char *fmt, size_t fmtlen, const wh_tmpl_value *args,
                   size_t nargs);
/* fmt.Sprint / Sprintln semantics over several operands. */
wh_code tm_sprint(wh_tmpl_ctx *ctx, wh_buf *out, const wh_tmpl_value *args, size_t nargs, int ln);

/* ---- exec.c ---- */
wh_code tm_exec_def(wh_tmpl_ctx *ctx, const tm_def *def, wh_tmpl_value dot);
/* Resolve the field chains under `root` that start with one of the set's
 * const fields (their konst, allocated in the set's arena). */
void tm_fold_const_fields(wh_tmpl_set *set, tm_node *root);
/* Compute once the pipelines under `root` whose commands are pure calls over
 * constants (WH_TMPL_FN_PURE; their konst, in the set's arena). */
void tm_fold_pipes(wh_tmpl_set *set, tm_node *root);
/* Find the runs of items under `root` whose walk needs no render (their
 * output computed now, in the set's arena; after tm_fold_pipes), and lay
 * the lists under it out as flat programs (struct tm_op, exec.c). */
void tm_fold_runs(wh_tmpl_set *set, tm_node *root);
/* Mark the pipelines under `root` that a render may compute once for each
 * `.` and `$` (their memo, in the set's arena; ids interned in the set). */
void tm_memo_pipes(wh_tmpl_set *set, tm_node *root);
/* After a parse: memoise the pipelines whose text the set has more than once
 * (one alone gains nothing). */
void tm_memo_share(wh_tmpl_set *set);
/* Compile the function calls under `root` whose shape the text fixes
 * (tm_ccall, in the set's arena). */
void tm_compile_calls(wh_tmpl_set *set, tm_node *root);
/* Make room for a set's memo in a scratch. */
void tm_memo_reserve(wh_tmpl_scratch *sc, size_t n);
int tm_eq(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, const wh_tmpl_value *b, wh_code *rc);

/* ---- function tables ---- */
extern const wh_tmpl_func tm_builtin_funcs[];
extern const size_t tm_builtin_nfuncs;
/* Sprig's functions: one table per file of template/sprig*.c, as Sprig's own
 * files each add theirs to its FuncMap. */
typedef struct tm_func_table {
    const wh_tmpl_func *funcs;
    const size_t *n;
} tm_func_table;
extern const wh_tmpl_func tm_sprig_functions_funcs[];
extern const size_t tm_sprig_functions_nfuncs;
extern const wh_tmpl_func tm_sprig_strings_funcs[];
extern const size_t tm_sprig_strings_nfuncs;
extern const wh_tmpl_func tm_sprig_crypto_funcs[];
extern const size_t tm_sprig_crypto_nfuncs;
extern const wh_tmpl_func tm_sprig_numeric_funcs[];
extern const size_t tm_sprig_numeric_nfuncs;
extern const wh_tmpl_func tm_sprig_defaults_funcs[];
extern const size_t tm_sprig_defaults_nfuncs;
extern const wh_tmpl_func tm_sprig_reflect_funcs[];
extern const size_t tm_sprig_reflect_nfuncs;
extern const wh_tmpl_func tm_sprig_dict_funcs[];
extern const size_t tm_sprig_dict_nfuncs;
extern const wh_tmpl_func tm_sprig_list_funcs[];
extern const size_t tm_sprig_list_nfuncs;
extern const wh_tmpl_func tm_sprig_regex_funcs[];
extern const size_t tm_sprig_regex_nfuncs;
extern const wh_tmpl_func tm_sprig_semver_funcs[];
extern const size_t tm_sprig_semver_nfuncs;
extern const wh_tmpl_func tm_sprig_url_funcs[];
extern const size_t tm_sprig_url_nfuncs;
extern const wh_tmpl_func tm_sprig_unsupported_funcs[];
extern const size_t tm_sprig_unsupported_nfuncs;
extern const wh_tmpl_func tm_helm_funcs[];
extern const size_t tm_helm_nfuncs;

/* Helpers for function implementations. */
wh_code tm_ret_buf(wh_tmpl_ctx *ctx, wh_tmpl_value *out, const wh_buf *b);
/* encoding/json.Marshal of v appended to out (HTML-escaped as Go does). */
wh_code tm_json_encode(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out, const char *indent, int escape_html);
/* Value -> JSON (new ref) for yaml dump etc. */
wh_code tm_value_to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, json_t **out);
/* JSON (not NULL; owned by nobody: caller keeps a reference in the arena) -> value.
 * The json_t is registered with ctx so it lives until the render ends. */
wh_tmpl_value tm_adopt_json(wh_tmpl_ctx *ctx, json_t *j);

#endif
