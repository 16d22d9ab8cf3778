/*
 * test_schema.c - unit tests of the Pod type table's lookup and of what the
 * type check records for the merge target (handlers/inject/wh_inject_schema.c,
 * wh_inject_schema_go.c): every field of every type is found by its JSON name
 * and nothing else is (checked against a plain scan, over near-miss names);
 * the stable leaves are exactly the list items the Go round trip leaves as
 * they are; the decoded pod (handlers/inject/wh_inject_decode.c) is the
 * request's with metadata's managedFields gone and its namespace filled in,
 * keys in place, values shared, the request left as it came; a copy of a
 * revision's constant YAML (a mold's) is type-checked in full once, then
 * skipped while clean.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wh_inject_decode.h"
#include "wh_inject_pod.h"
#include "wh_inject_schema.h"
#include "wh_json_arena.h"

#define MAX_TYPES 128

/* Every type reachable from the pod and the workload kinds. */
static size_t all_types(const wh_inject_type **out)
{
    static const char *const kinds[] = {
        "Deployment", "DaemonSet", "StatefulSet",      "ReplicaSet", "ReplicationController",
        "Job",        "CronJob",   "DeploymentConfig", "Pod"};
    size_t n = 0, i, k;

    out[n++] = &wh_inject_type_pod;
    for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        const wh_inject_type *t = wh_inject_schema_workload(kinds[k]);
        assert_non_null(t);
        out[n++] = t;
    }
    for (i = 0; i < n; i++) {
        const wh_inject_field *f;
        for (f = out[i]->fields; f->name != NULL; f++) {
            size_t j;
            if (f->type == NULL)
                continue;
            for (j = 0; j < n && out[j] != f->type; j++)
                ;
            if (j == n) {
                assert_true(n < MAX_TYPES);
                out[n++] = f->type;
            }
        }
    }
    return n;
}

/* The definition the index must agree with. */
static const wh_inject_field *scan(const wh_inject_type *type, const char *name, size_t len)
{
    const wh_inject_field *f;

    for (f = type->fields; f->name != NULL; f++)
        if (strlen(f->name) == len && memcmp(f->name, name, len) == 0)
            return f;
    return NULL;
}

static void probe(const wh_inject_type *type, const char *name, size_t len)
{
    char *copy = malloc(len + 8);
    const wh_inject_field *want = scan(type, name, len), *f;

    /* the name need not end at len: what follows must not matter */
    memcpy(copy, name, len);
    memcpy(copy + len, "Xyz$\0", 5);
    assert_ptr_equal(wh_inject_schema_fieldn(type, copy, len), want);
    for (f = type->fields; f->name != NULL; f++)
        assert_ptr_equal(wh_inject_schema_fieldn_after(type, f, copy, len), want);
    assert_ptr_equal(wh_inject_schema_fieldn_after(type, NULL, copy, len), want);
    free(copy);
}

static void lookup(void **state)
{
    const wh_inject_type *types[MAX_TYPES];
    size_t n = all_types(types), i, j;
    (void)state;

    assert_true(n > 40);
    for (i = 0; i < n; i++) {
        const wh_inject_field *f;
        unsigned fills = 0;
        for (f = types[i]->fields; f->name != NULL; f++) {
            char buf[300];
            size_t len = strlen(f->name);
            assert_int_equal(f->len, len);
            fills += (f->flags & WH_F_FILL) != 0;
            assert_ptr_equal(wh_inject_schema_field(types[i], f->name), f);
            probe(types[i], f->name, len);
            /* near misses: shorter, longer, one byte changed at each end and in the middle */
            probe(types[i], f->name, len - 1);
            snprintf(buf, sizeof(buf), "%sx", f->name);
            probe(types[i], buf, len + 1);
            snprintf(buf, sizeof(buf), "$%s", f->name);
            probe(types[i], buf, len + 1);
            memcpy(buf, f->name, len + 1);
            buf[0] ^= 0x20;
            probe(types[i], buf, len);
            memcpy(buf, f->name, len + 1);
            buf[len / 2] ^= 0x01;
            probe(types[i], buf, len);
            memcpy(buf, f->name, len + 1);
            buf[len - 1] ^= 0x02;
            probe(types[i], buf, len);
            /* every other type's names against this type */
            for (j = 0; j < n; j++)
                probe(types[j], f->name, len);
        }
        assert_int_equal(wh_inject_schema_fills(types[i]), fills);
        assert_null(wh_inject_schema_fieldn(types[i], "", 0));
    }
    {
        char longname[300];
        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        assert_null(wh_inject_schema_field(&wh_inject_type_pod, longname));
    }
    assert_null(wh_inject_schema_field(NULL, "spec"));
    assert_ptr_equal(wh_inject_schema_field(&wh_inject_type_pod, "spec")->type, &wh_inject_type_pod_spec);
}

static const char pod_text[] =
    "{\"metadata\": {\"name\": \"p\"},"
    " \"spec\": {\"containers\": [{\"name\": \"app\","
    "   \"env\": [{\"name\": \"A\", \"value\": \"a\"}," /* 0 stable */
    "             {\"name\": \"B\", \"value\": \"\"},"  /* 1 zero omitempty value: dropped */
    "             {\"name\": \"C\", \"value\": null},"  /* 2 null: dropped */
    "             {\"name\": \"D\", \"valueFrom\": {\"fieldRef\": {\"fieldPath\": \"x\"}}}," /* 3 not a leaf */
    "             {\"name\": \"E\", \"value\": \"e\", \"note\": 1}," /* 4 stable: an unknown scalar is kept */
    "             {\"name\": \"\", \"value\": \"f\"},"               /* 5 stable: name has no omitempty */
    "             null,"                                             /* 6 */
    "             {\"value\": \"g\"}],"                              /* 7 stable */
    "   \"ports\": [{\"containerPort\": 80}, {\"containerPort\": 81, \"hostPort\": 0}],"
    "   \"volumeMounts\": [{\"name\": \"v\", \"mountPath\": \"/v\", \"readOnly\": false}]}],"
    "  \"tolerations\": [{\"key\": \"k\", \"tolerationSeconds\": 0}],"
    "  \"volumes\": [{\"name\": \"v\", \"emptyDir\": {}}]}}";

static json_t *path_list(json_t *pod, const char *list)
{
    json_t *spec = json_object_get(pod, "spec"), *c = json_array_get(json_object_get(spec, "containers"), 0), *l;

    return (l = json_object_get(spec, list)) != NULL ? l : json_object_get(c, list);
}

static void expect_items(wh_inject_go_leaves *leaves, json_t *list, const char *stable)
{
    size_t n, i;
    const json_t *const *items = wh_inject_go_stable_items(leaves, list, &n);

    assert_non_null(items);
    assert_int_equal(n, strlen(stable));
    for (i = 0; i < n; i++)
        assert_ptr_equal(items[i], stable[i] == 'y' ? json_array_get(list, i) : NULL);
}

static void stable_leaves(void **state)
{
    json_t *pod = json_loads(pod_text, 0, NULL), *copy;
    wh_inject_go_leaves *leaves = NULL;
    wh_err err = {0};
    const char *lists[] = {"env", "ports", "volumeMounts", "tolerations", "volumes"};
    size_t l, i, n;
    (void)state;

    assert_non_null(pod);
    assert_int_equal(wh_inject_go_decode(pod, &wh_inject_type_pod, 0, &leaves, &err), WH_OK);
    assert_non_null(leaves);
    /* asked out of the walk's order, and twice */
    expect_items(leaves, path_list(pod, "volumes"), "n");
    expect_items(leaves, path_list(pod, "env"), "ynnnyyny");
    expect_items(leaves, path_list(pod, "ports"), "yn");
    expect_items(leaves, path_list(pod, "volumeMounts"), "n"); /* readOnly false: a zero omitempty bool */
    expect_items(leaves, path_list(pod, "tolerations"), "y");  /* a pointer keeps its zero */
    expect_items(leaves, path_list(pod, "env"), "ynnnyyny");
    expect_items(
        leaves,
        json_object_get(pod, "spec") != NULL ? json_object_get(json_object_get(pod, "spec"), "containers") : NULL, "n");
    /* a list the check did not see */
    copy = json_array();
    assert_null(wh_inject_go_stable_items(leaves, copy, &n));
    assert_int_equal(n, 0);
    json_decref(copy);
    assert_null(wh_inject_go_stable_items(NULL, path_list(pod, "env"), &n));

    /* what "stable" promises: the Go round trip leaves such an item as it is */
    copy = json_deep_copy(pod);
    assert_int_equal(wh_inject_go_roundtrip(copy, &wh_inject_type_pod, &err), WH_OK);
    for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
        const json_t *const *items = wh_inject_go_stable_items(leaves, path_list(pod, lists[l]), &n);
        for (i = 0; i < n; i++)
            if (items[i] != NULL)
                assert_true(json_equal(json_array_get(path_list(copy, lists[l]), i), (json_t *)items[i]));
    }
    json_decref(copy);
    wh_inject_go_leaves_free(leaves);

    /* a pod that does not decode gives none */
    json_object_set_new(json_array_get(path_list(pod, "env"), 0), "value", json_integer(1));
    leaves = (wh_inject_go_leaves *)1;
    assert_int_equal(wh_inject_go_decode(pod, &wh_inject_type_pod, 0, &leaves, &err), WH_E_INVALID);
    assert_null(leaves);
    assert_string_equal(
        wh_err_msg(&err),
        "json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value of type string");
    json_decref(pod);
}

/* The pod wh_inject_decode_pod makes of `in` with the AdmissionRequest's
 * namespace `ns`: `want` exactly, keys in its order. */
static void expect_decoded(const char *in, const char *ns, const char *want)
{
    json_t *pod = json_loads(in, 0, NULL), *before = json_deep_copy(pod), *out = NULL;
    wh_err err = {0};
    char *text;

    assert_non_null(pod);
    assert_int_equal(wh_inject_decode_pod(pod, ns, &out, NULL, &err), WH_OK);
    text = json_dumps(out, JSON_COMPACT);
    assert_string_equal(text, want);
    free(text);
    assert_true(json_equal(pod, before)); /* the request's pod as it came */
    if (json_object_get(pod, "spec") != NULL)
        assert_ptr_equal(json_object_get(out, "spec"), json_object_get(pod, "spec")); /* shared, not copied */
    json_decref(out);
    json_decref(before);
    json_decref(pod);
}

static void decoded_pod(void **state)
{
    wh_err err = {0};
    json_t *out = (json_t *)1, *bad = json_loads("{\"spec\":{\"containers\":{}}}", 0, NULL);
    (void)state;

    expect_decoded("{\"metadata\":{\"name\":\"p\",\"managedFields\":[{}],\"labels\":{\"a\":\"b\"}},\"spec\":{}}", "ns1",
                   "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"},\"namespace\":\"ns1\"},\"spec\":{}}");
    /* an empty namespace is replaced where it stands */
    expect_decoded("{\"metadata\":{\"namespace\":\"\",\"name\":\"p\"}}", "x",
                   "{\"metadata\":{\"namespace\":\"x\",\"name\":\"p\"}}");
    expect_decoded("{\"metadata\":{\"namespace\":\"own\"}}", "x", "{\"metadata\":{\"namespace\":\"own\"}}");
    /* no metadata, a null one; no namespace to fill in */
    expect_decoded("{\"spec\":{},\"kind\":\"Pod\"}", "x",
                   "{\"spec\":{},\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"x\"}}");
    expect_decoded("{\"metadata\":null,\"spec\":{}}", NULL, "{\"metadata\":{},\"spec\":{}}");
    expect_decoded("{\"metadata\":{\"managedFields\":null}}", "", "{\"metadata\":{}}");
    /* more members than the copy holds on its stack */
    {
        char in[2048], want[2048];
        size_t i, a = 0, b = 0;
        a += (size_t)snprintf(in + a, sizeof(in) - a, "{\"metadata\":{\"managedFields\":[]");
        b += (size_t)snprintf(want + b, sizeof(want) - b, "{\"metadata\":{");
        for (i = 0; i < 40; i++) {
            a += (size_t)snprintf(in + a, sizeof(in) - a, ",\"uid%zu\":\"%zu\"", i, i);
            b += (size_t)snprintf(want + b, sizeof(want) - b, "%s\"uid%zu\":\"%zu\"", i ? "," : "", i, i);
        }
        snprintf(in + a, sizeof(in) - a, "}}");
        snprintf(want + b, sizeof(want) - b, ",\"namespace\":\"y\"}}");
        expect_decoded(in, "y", want);
    }
    /* a pod Go cannot decode: the error, nothing made */
    assert_int_equal(wh_inject_decode_pod(bad, "x", &out, NULL, &err), WH_E_INVALID);
    assert_non_null(strstr(wh_err_msg(&err), "could not decode pod"));
    json_decref(bad);
}

/* One review's overlay as shape meets it: a pod whose first container is a
 * copy of mold `item` and whose second container's volumeMounts are a copy
 * of mold `list` (copies remembered, as wh_inject_pod asks), walked by
 * wh_inject_go_decode_molded.  `edit` (NULL: none) is put into the first
 * copy's capabilities before the walk, which the caller must never do:
 * it shows whether the walk skipped the copy.  Returns the walk's code;
 * *caps: the copy's capabilities after it (a new reference). */
static wh_code molded_review(const wh_json_mold *item, const wh_json_mold *list, const char *edit, json_t **caps,
                             wh_err *err)
{
    wh_json_arena a;
    json_t *pod, *c1, *mounts;
    wh_code rc;

    wh_json_arena_begin(&a);
    wh_json_mold_copies_begin();
    c1 = wh_json_mold_make(item);
    mounts = wh_json_mold_make(list);
    if (edit != NULL)
        json_object_set_new(json_object_get(json_object_get(c1, "securityContext"), "capabilities"), edit,
                            json_integer(1));
    pod = json_pack("{s:{s:[o,{s:s,s:o}]}}", "spec", "containers", c1, "name", "second", "volumeMounts", mounts);
    rc = wh_inject_go_decode_molded(pod, &wh_inject_type_pod, err);
    wh_json_mold_copies_end();
    *caps = wh_inject_json_copy(json_object_get(json_object_get(c1, "securityContext"), "capabilities"));
    wh_json_arena_pause(); /* *caps outlives the scope: made again outside it */
    {
        json_t *kept = json_deep_copy(*caps);
        wh_json_arena_resume(&a);
        json_decref(*caps);
        *caps = kept;
    }
    json_decref(pod);
    wh_json_arena_end(&a);
    return rc;
}

/* A mold of the tree `text` (frozen, as a revision's are: thaw and release
 * *tree after freeing the mold). */
static wh_json_mold *mold_of(const char *text, wh_json_frozen **frozen, json_t **tree)
{
    wh_err err;

    *tree = json_loads(text, 0, NULL);
    assert_non_null(*tree);
    assert_int_equal(wh_json_freeze(*tree, 32, frozen, &err), WH_OK);
    return wh_json_mold_new(*tree);
}

/* The type check of a copy of a revision's constant YAML: walked in full
 * the first time, its cleanness noted in its mold under its type (or list
 * field); a clean one is skipped from then on, an unclean one (a key to
 * drop, a type error) walked every time. */
static void mold_copies_checked_once(void **state)
{
    const wh_inject_field *mounts_field = wh_inject_schema_field(&wh_inject_type_container, "volumeMounts");
    const char *clean_item =
                   "{\"name\":\"c\",\"image\":\"i\",\"securityContext\":{\"capabilities\":{\"drop\":[\"ALL\"]}}}",
               *drop_item =
                   "{\"name\":\"c\",\"securityContext\":{\"capabilities\":{\"drop\":[\"ALL\"],\"fsGroup\":1}}}",
               *bad_item = "{\"name\":\"c\",\"image\":5,\"securityContext\":{\"capabilities\":{}}}",
               *list_text = "[{\"name\":\"v\",\"mountPath\":\"/v\"}]";
    wh_json_frozen *f1 = NULL, *f2 = NULL, *f3 = NULL, *f4 = NULL;
    json_t *caps, *t1, *t2, *t3, *t4;
    wh_json_mold *clean = mold_of(clean_item, &f1, &t1), *drop = mold_of(drop_item, &f2, &t2),
                 *bad = mold_of(bad_item, &f3, &t3), *list = mold_of(list_text, &f4, &t4);
    unsigned bit;
    wh_err err;
    int i;

    (void)state;
    assert_non_null(mounts_field);
    /* clean: noted so at the first walk, then skipped (an edit the walk would drop stays) */
    assert_false(wh_json_mold_note(clean, &wh_inject_type_container, &bit));
    assert_int_equal(molded_review(clean, list, NULL, &caps, &err), WH_OK);
    json_decref(caps);
    assert_true(wh_json_mold_note(clean, &wh_inject_type_container, &bit));
    assert_int_equal(bit, 1);
    assert_true(wh_json_mold_note(list, mounts_field, &bit));
    assert_int_equal(bit, 1);
    assert_int_equal(molded_review(clean, list, "fsGroup", &caps, &err), WH_OK);
    assert_non_null(json_object_get(caps, "fsGroup")); /* skipped: the contract broken shows */
    json_decref(caps);
    /* a key to drop: noted unclean, dropped at every walk */
    for (i = 0; i < 3; i++) {
        assert_int_equal(molded_review(drop, list, NULL, &caps, &err), WH_OK);
        assert_null(json_object_get(caps, "fsGroup"));
        assert_non_null(json_object_get(caps, "drop"));
        json_decref(caps);
        assert_true(wh_json_mold_note(drop, &wh_inject_type_container, &bit));
        assert_int_equal(bit, 0);
    }
    /* a type error: reported at every walk, with Go's words */
    for (i = 0; i < 3; i++) {
        assert_int_equal(molded_review(bad, list, "fsGroup", &caps, &err), WH_E_INVALID);
        assert_non_null(strstr(wh_err_msg(&err), "cannot unmarshal number into Go struct field Container"));
        assert_null(json_object_get(caps, "fsGroup")); /* walked: the closed type's key dropped */
        json_decref(caps);
    }
    wh_json_mold_free(clean);
    wh_json_mold_free(drop);
    wh_json_mold_free(bad);
    wh_json_mold_free(list);
    wh_json_thaw(f1), wh_json_thaw(f2), wh_json_thaw(f3), wh_json_thaw(f4);
    json_decref(t1), json_decref(t2), json_decref(t3), json_decref(t4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lookup),
        cmocka_unit_test(stable_leaves),
        cmocka_unit_test(decoded_pod),
        cmocka_unit_test(mold_copies_checked_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
