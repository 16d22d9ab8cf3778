/*
 * test_schema_walk.c - the Go type check's fast path (the verdict table in
 * handlers/inject/wh_inject_schema_go.c) and the round trip's shortcuts
 * against the generic walks (schema_go_reference.c, the same file without
 * them): both must give the same verdict, error text, stable leaves and,
 * with `drop` and after a round trip, the same value --
 *   - for every field of every type reachable from a Pod holding each kind of
 *     JSON value (empty and not, integral reals, embedded NUL);
 *   - for every document of the injection corpora (argv[1], e.g.
 *     ../shared/conformance/istio-inject: each set's cases/<case>/input.yaml
 *     and golden.yaml, decoded as their workload kind), as they are and with
 *     random edits (seeded: a failure names its document and edit);
 * once with containers read through jansson's calls, once through its
 * layouts (wh_json_arena_install), as webhookd reads them.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schema_go_reference.h"
#include "wh_buf.h"
#include "wh_inject_quantity.h"
#include "wh_json_arena.h"
#include "wh_yaml.h"

static const char *corpus_dir;
static unsigned long compared;

/* The values a field may meet, one or more per JSON type: Go-empty and not. */
static json_t *sample(size_t i)
{
    switch (i) {
    case 0:
        return json_object();
    case 1:
        return json_pack("{s:s}", "name", "x");
    case 2:
        return json_array();
    case 3:
        return json_pack("[i]", 1);
    case 4:
        return json_pack("[{s:s}]", "name", "x");
    case 5:
        return json_string("");
    case 6:
        return json_string("x");
    case 7:
        return json_stringn("\0", 1); /* not empty to Go: one byte */
    case 8:
        return json_integer(0);
    case 9:
        return json_integer(-3);
    case 10:
        return json_real(0.0);
    case 11:
        return json_real(2.0);
    case 12:
        return json_real(2.5);
    case 13:
        return json_true();
    case 14:
        return json_false();
    case 15:
        return json_null();
    case 16:
        return json_string("100m");
    default:
        return NULL;
    }
}
#define NSAMPLES 17

static void walk_lists(wh_inject_go_leaves *a, wh_inject_go_leaves *b, const json_t *v, const char *what)
{
    size_t i, na, nb;
    const char *key;
    json_t *item;

    if (json_is_array(v)) {
        const json_t *const *ia = wh_inject_go_stable_items(a, v, &na);
        const json_t *const *ib = ref_go_stable_items(b, v, &nb);
        if (na != nb || (ia == NULL) != (ib == NULL))
            fail_msg("%s: stable items of a list: %zu vs reference %zu", what, na, nb);
        for (i = 0; i < na; i++)
            if (ia[i] != ib[i])
                fail_msg("%s: item %zu stable %d vs reference %d", what, i, ia[i] != NULL, ib[i] != NULL);
        json_array_foreach(v, i, item) walk_lists(a, b, item, what);
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item) walk_lists(a, b, item, what);
    }
}

/* Both walks over `doc` as `type`: without drop (on doc itself, with the
 * stable leaves) and with drop (on a copy each). */
static void compare(json_t *doc, const wh_inject_type *type, const char *what)
{
    wh_inject_go_leaves *la = NULL, *lb = NULL;
    wh_err ea = {0}, eb = {0};
    wh_code ra, rb;
    json_t *ca, *cb;

    ra = wh_inject_go_decode(doc, type, 0, &la, &ea);
    rb = ref_go_decode(doc, type, 0, &lb, &eb);
    if (ra != rb || (ra != WH_OK && strcmp(wh_err_msg(&ea), wh_err_msg(&eb)) != 0))
        fail_msg("%s: %d %s vs reference %d %s", what, ra, wh_err_msg(&ea), rb, wh_err_msg(&eb));
    if ((la == NULL) != (lb == NULL))
        fail_msg("%s: leaves %p vs reference %p", what, (void *)la, (void *)lb);
    walk_lists(la, lb, doc, what);
    wh_inject_go_leaves_free(la);
    ref_go_leaves_free(lb);

    ca = json_deep_copy(doc), cb = json_deep_copy(doc);
    ra = wh_inject_go_decode(ca, type, 1, NULL, &ea);
    rb = ref_go_decode(cb, type, 1, NULL, &eb);
    if (ra != rb || (ra != WH_OK && strcmp(wh_err_msg(&ea), wh_err_msg(&eb)) != 0) || !json_equal(ca, cb))
        fail_msg("%s (drop): %d %s vs reference %d %s", what, ra, wh_err_msg(&ea), rb, wh_err_msg(&eb));
    json_decref(ca);
    json_decref(cb);

    /* the round trip (flat stable items skipped, quantities memoised and
     * rewritten in place): the same outcome and value */
    ca = json_deep_copy(doc), cb = json_deep_copy(doc);
    ra = wh_inject_go_roundtrip(ca, type, &ea);
    rb = ref_go_roundtrip(cb, type, &eb);
    if (ra != rb || (ra != WH_OK && strcmp(wh_err_msg(&ea), wh_err_msg(&eb)) != 0) ||
        (ra == WH_OK && !json_equal(ca, cb)))
        fail_msg("%s (round trip): %d %s vs reference %d %s", what, ra, wh_err_msg(&ea), rb, wh_err_msg(&eb));
    json_decref(ca);
    json_decref(cb);
    compared++;
}

/* ---- every field of every type, each sample value ---- */

#define MAX_TYPES 128

/* How a Pod reaches a type: its parent in the search and the field. */
typedef struct reach {
    const wh_inject_type *type;
    int parent; /* -1: the Pod */
    const wh_inject_field *via;
} reach;

/* A Pod holding `inner` (stolen) at type r[k]'s place, as the only key of
 * each object and the only item of each list on the way. */
static json_t *place(const reach *r, int k, json_t *inner)
{
    while (r[k].parent >= 0) {
        json_t *outer = json_object();
        if (r[k].via->kind == WH_K_LIST) {
            json_t *list = json_array();
            json_array_append_new(list, inner);
            inner = list;
        }
        json_object_set_new(outer, r[k].via->name, inner);
        inner = outer;
        k = r[k].parent;
    }
    return inner;
}

static void every_field_every_value(void **state)
{
    reach r[MAX_TYPES];
    int n = 1, k, j;
    const wh_inject_field *f;
    char what[256];
    (void)state;

    r[0] = (reach){&wh_inject_type_pod, -1, NULL};
    for (k = 0; k < n; k++)
        for (f = r[k].type->fields; f->name != NULL; f++) {
            if ((f->kind != WH_K_OBJ && f->kind != WH_K_LIST) || f->type == NULL)
                continue;
            for (j = 0; j < n && r[j].type != f->type; j++)
                ;
            if (j == n) {
                assert_true(n < MAX_TYPES);
                r[n++] = (reach){f->type, k, f};
            }
        }
    for (k = 0; k < n; k++)
        for (f = r[k].type->fields; f->name != NULL; f++) {
            size_t s;
            for (s = 0; s < NSAMPLES; s++) {
                json_t *obj = json_object(), *pod;
                json_object_set_new(obj, f->name, sample(s));
                if (s == 6) /* beside an unknown key and a directive */
                    json_object_set_new(obj, "unknownKey", json_string("x")),
                        json_object_set_new(obj, "$patch", json_string("merge"));
                pod = place(r, k, obj);
                snprintf(what, sizeof(what), "%s.%s = sample %zu", r[k].type->name, f->name, s);
                compare(pod, &wh_inject_type_pod, what);
                json_decref(pod);
            }
        }
    assert_true(n > 30);
}

/* ---- the round trip's shortcut for canonical quantities ---- */

/* Every text of up to 4 digits (leading zeros too; signed up to 3) with each suffix
 * and near misses: what the shortcut takes must be what
 * wh_inject_quantity_canonical prints, and the usual forms must be taken. */
static void canonical_quantities(void **state)
{
    static const char *const suffixes[] = {"",   "n",  "u",   "m",  "k",  "M",  "G",  "T",  "P",
                                           "E",  "Ki", "Mi",  "Gi", "Ti", "Pi", "Ei", "K",  "mi",
                                           "e3", "i",  "Kii", " ",  "g",  "MM", "E1", ".5", "e-3"};
    static const char *const taken[] = {"0", "1", "2", "100m", "999m", "128Mi", "1Gi", "999Ei", "40k", "5n"};
    static const char *const refused[] = {"00", "1000", "1000m", "0m", "01", "1K", "+1", "-1", "1.5", ""};
    char text[32], out[96];
    unsigned long n = 0, shortcut = 0;
    int v, width, sign;
    size_t s;
    wh_err err = {0};
    (void)state;

    for (sign = 0; sign < 3; sign++)
        for (width = 1; width <= (sign == 0 ? 4 : 3); width++)
            for (v = 0; v < (width == 4 ? 10000 : width == 3 ? 1000 : width == 2 ? 100 : 10); v++)
                for (s = 0; s < sizeof(suffixes) / sizeof(suffixes[0]); s++) {
                    snprintf(text, sizeof(text), "%s%0*d%s",
                             sign == 0   ? ""
                             : sign == 1 ? "-"
                                         : "+",
                             width, v, suffixes[s]);
                    n++;
                    if (!ref_quantity_is_canonical(text))
                        continue;
                    shortcut++;
                    if (wh_inject_quantity_canonical(text, out, sizeof(out), &err) != WH_OK || strcmp(out, text) != 0)
                        fail_msg("%s taken as canonical, Go prints %s", text, out);
                }
    for (s = 0; s < sizeof(taken) / sizeof(taken[0]); s++)
        if (!ref_quantity_is_canonical(taken[s]))
            fail_msg("%s not taken", taken[s]);
    for (s = 0; s < sizeof(refused) / sizeof(refused[0]); s++)
        if (ref_quantity_is_canonical(refused[s]))
            fail_msg("%s taken", refused[s]);
    fprintf(stderr, "test_schema_walk: %lu quantity texts, %lu taken as canonical\n", n, shortcut);
}

/* ---- the corpora, as they are and edited ---- */

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static unsigned next_random(unsigned bound)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng >> 33) % bound);
}

/* Every object and array in `v`, into nodes[]. */
static size_t containers(json_t *v, json_t **nodes, size_t n, size_t cap)
{
    size_t i;
    const char *key;
    json_t *item;

    if (!json_is_object(v) && !json_is_array(v))
        return n;
    if (n < cap)
        nodes[n++] = v;
    if (json_is_array(v))
        json_array_foreach(v, i, item) n = containers(item, nodes, n, cap);
    else
        json_object_foreach(v, key, item) n = containers(item, nodes, n, cap);
    return n;
}

/* One random edit of `doc`: a member or item replaced by a sample, or a key
 * added (a known field name or not), or one removed. */
static void edit(json_t *doc)
{
    static const char *const names[] = {"name",     "value",     "image",  "env",   "ports", "containerPort",
                                        "readOnly", "resources", "limits", "items", "zz",    "$setElementOrder/env"};
    json_t *nodes[4096], *node;
    size_t n = containers(doc, nodes, 0, 4096);
    unsigned what = next_random(4);

    node = nodes[next_random((unsigned)n)];
    if (json_is_array(node)) {
        if (json_array_size(node) != 0)
            json_array_set_new(node, next_random((unsigned)json_array_size(node)), sample(next_random(NSAMPLES)));
        return;
    }
    if (what == 0 || json_object_size(node) == 0) {
        json_object_set_new(node, names[next_random(sizeof(names) / sizeof(names[0]))], sample(next_random(NSAMPLES)));
    } else {
        unsigned skip = next_random((unsigned)json_object_size(node));
        void *it = json_object_iter(node);
        while (skip-- > 0)
            it = json_object_iter_next(node, it);
        if (what == 1)
            json_object_del(node, json_object_iter_key(it));
        else
            json_object_iter_set_new(node, it, sample(next_random(NSAMPLES)));
    }
}

static void one_file(const char *path)
{
    wh_buf text = WH_BUF_INIT;
    wh_err err = {0};
    json_t *docs = NULL, *doc;
    size_t i;
    int e;
    char what[2600];

    if (wh_buf_read_file(&text, path, (size_t)16 << 20, &err) != WH_OK ||
        wh_yaml_load_all(text.data, text.len, &docs, &err) != WH_OK) {
        wh_buf_free(&text);
        return; /* a case whose input is not YAML: not ours to judge */
    }
    json_array_foreach(docs, i, doc)
    {
        const wh_inject_type *type = wh_inject_schema_workload(json_string_value(json_object_get(doc, "kind")));
        if (type == NULL)
            continue;
        snprintf(what, sizeof(what), "%s doc %zu", path, i);
        compare(doc, type, what);
        for (e = 0; e < 12; e++) {
            json_t *copy = json_deep_copy(doc);
            unsigned long long seed = rng;
            int k, edits = 1 + (int)next_random(3);
            for (k = 0; k < edits; k++)
                edit(copy);
            snprintf(what, sizeof(what), "%s doc %zu, %d edits from seed %llu", path, i, edits, seed);
            compare(copy, type, what);
            json_decref(copy);
        }
    }
    json_decref(docs);
    wh_buf_free(&text);
}

static void corpora(void **state)
{
    DIR *sets, *cases;
    struct dirent *s, *c;
    char dir[1024], path[2048];
    unsigned long before = compared;
    static const char *const files[] = {"input.yaml", "golden.yaml"};
    size_t k;
    (void)state;

    if (corpus_dir == NULL || (sets = opendir(corpus_dir)) == NULL) {
        fprintf(stderr, "test_schema_walk: no corpus directory given (%s)\n", corpus_dir ? corpus_dir : "none");
        fail();
        return;
    }
    while ((s = readdir(sets)) != NULL) {
        if (s->d_name[0] == '.')
            continue;
        snprintf(dir, sizeof(dir), "%s/%s/cases", corpus_dir, s->d_name);
        if ((cases = opendir(dir)) == NULL)
            continue;
        while ((c = readdir(cases)) != NULL) {
            if (c->d_name[0] == '.')
                continue;
            for (k = 0; k < 2; k++) {
                snprintf(path, sizeof(path), "%s/%s/%s", dir, c->d_name, files[k]);
                one_file(path);
            }
        }
        closedir(cases);
    }
    closedir(sets);
    fprintf(stderr, "test_schema_walk: %lu documents compared\n", compared - before);
    assert_true(compared - before > 1000);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(canonical_quantities),
        cmocka_unit_test(every_field_every_value),
        cmocka_unit_test(corpora),
    };
    int failed;

    corpus_dir = argc > 1 ? argv[1] : NULL;
    /* once reading containers through jansson's calls, once through its layouts as webhookd does (none under
     * ASan: both runs then take the calls) */
    failed = _cmocka_run_group_tests("schema walk, jansson's calls", tests, 3, NULL, NULL);
    wh_json_arena_install();
    return failed + _cmocka_run_group_tests("schema walk, jansson's layouts", tests + 1, 2, NULL, NULL);
}
