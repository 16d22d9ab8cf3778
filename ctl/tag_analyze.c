/*
 * tag_analyze.c - would a tag make two injector webhooks fire for the same
 * pod?  Enumerates the namespace and pod label combinations that matter
 * (injection labels x every revision seen) and reports, for the tag's own
 * webhook, every other entry selected by the same combination (IST0139).
 */
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "tag_int.h"
#include "wh_kube.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Add the istio.io/rev values a selector mentions to `revs` (a set as object). */
static void collect_selector_revs(const json_t *sel, json_t *revs, int *mentions)
{
    size_t i, j;
    json_t *e, *v;
    const char *ml = json_string_value(json_object_get(json_object_get(sel, "matchLabels"), REV_LABEL));

    if (ml != NULL) {
        json_object_set_new(revs, ml, json_true());
        *mentions = 1;
    }
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        if (key == NULL || strcmp(key, REV_LABEL) != 0)
            continue;
        json_array_foreach(json_object_get(e, "values"), j, v)
        {
            if (json_is_string(v)) {
                json_object_set_new(revs, json_string_value(v), json_true());
                *mentions = 1;
            }
        }
    }
}

/* Is this MWC one the analysis considers (Istio-related)? */
static int relevant(const json_t *mwc, json_t *revs)
{
    const char *rev =
        json_string_value(json_object_get(json_object_get(json_object_get(mwc, "metadata"), "labels"), REV_LABEL));
    int yes = rev != NULL, mentions = 0;
    size_t i;
    json_t *w;

    if (rev != NULL)
        json_object_set_new(revs, rev, json_true());
    json_array_foreach(json_object_get(mwc, "webhooks"), i, w)
    {
        const char *name = json_string_value(json_object_get(w, "name"));
        collect_selector_revs(json_object_get(w, "namespaceSelector"), revs, &mentions);
        collect_selector_revs(json_object_get(w, "objectSelector"), revs, &mentions);
        if (name != NULL && ends_with(name, "istio.io"))
            yes = 1;
    }
    return yes || mentions;
}

/* Label sets: {injection key: none|values...} x {istio.io/rev: none|revs...}. */
static json_t *label_sets(const char *inj_key, const char *v1, const char *v2, const json_t *revs)
{
    const char *inj[] = {NULL, v1, v2};
    json_t *sets = json_array();
    const char *rev;
    json_t *unused;

    for (size_t i = 0; i < 3; i++) {
        json_t *base = json_object();
        if (inj[i] != NULL)
            json_object_set_new(base, inj_key, json_string(inj[i]));
        json_array_append(sets, base);
        json_object_foreach((json_t *)revs, rev, unused)
        {
            json_t *l = json_deep_copy(base);
            json_object_set_new(l, REV_LABEL, json_string(rev));
            json_array_append_new(sets, l);
        }
        json_decref(base);
    }
    return sets;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

wh_code tag_analyze_overlaps(const json_t *webhooks, const char *target, json_t *findings, wh_err *err)
{
    json_t *revs = json_object(), *nss = NULL, *objs = NULL, *entries = json_array(), *others = json_object();
    size_t i, j, k, n;
    json_t *mwc, *w, *nsl, *objl;
    wh_code rc = WH_OK;

    /* Flatten the relevant entries into [mwc/entry, entry] pairs. */
    json_array_foreach(webhooks, i, mwc)
    {
        const char *mname = json_string_value(json_object_get(json_object_get(mwc, "metadata"), "name"));
        if (mname == NULL || !relevant(mwc, revs))
            continue;
        json_array_foreach(json_object_get(mwc, "webhooks"), j, w)
        {
            wh_buf id = WH_BUF_INIT;
            wh_buf_printf(&id, "%s/%s", mname, json_string_value(json_object_get(w, "name")) ?: "");
            json_array_append_new(
                entries, json_pack("{s:s, s:O, s:b}", "id", id.data, "entry", w, "target", strcmp(mname, target) == 0));
            wh_buf_free(&id);
        }
    }
    nss = label_sets("istio-injection", "enabled", "disabled", revs);
    objs = label_sets("sidecar.istio.io/inject", "true", "false", revs);
    n = json_array_size(entries);
    json_array_foreach(nss, i, nsl)
    {
        json_array_foreach(objs, j, objl)
        {
            json_t *matched = json_array();
            json_t *e;
            json_array_foreach(entries, k, e)
            {
                const json_t *we = json_object_get(e, "entry");
                if (wh_kube_selector_matches(json_object_get(we, "namespaceSelector"), nsl) == 1 &&
                    wh_kube_selector_matches(json_object_get(we, "objectSelector"), objl) == 1)
                    json_array_append(matched, e);
            }
            if (json_array_size(matched) > 1) {
                size_t a, b;
                json_t *ea, *eb;
                json_array_foreach(matched, a, ea)
                {
                    const char *ida = json_string_value(json_object_get(ea, "id"));
                    json_t *set;
                    if (!json_is_true(json_object_get(ea, "target")))
                        continue;
                    if ((set = json_object_get(others, ida)) == NULL) {
                        set = json_object();
                        json_object_set_new(others, ida, set);
                    }
                    json_array_foreach(matched, b, eb)
                    {
                        if (b != a)
                            json_object_set_new(set, json_string_value(json_object_get(eb, "id")), json_true());
                    }
                }
            }
            json_decref(matched);
        }
    }
    /* One finding per entry of the target, in entry order. */
    for (k = 0; k < n; k++) {
        json_t *e = json_array_get(entries, k), *set;
        const char *id = json_string_value(json_object_get(e, "id")), **names, *key;
        json_t *unused;
        wh_buf msg = WH_BUF_INIT;
        size_t m = 0;
        if (!json_is_true(json_object_get(e, "target")) || (set = json_object_get(others, id)) == NULL)
            continue;
        names = wh_calloc(json_object_size(set), sizeof(*names));
        json_object_foreach(set, key, unused) names[m++] = key;
        qsort(names, m, sizeof(*names), cmp_str);
        wh_buf_printf(&msg, "Error [IST0139] (MutatingWebhookConfiguration %s) Webhook overlaps with others: [",
                      target);
        for (size_t x = 0; x < m; x++)
            wh_buf_printf(&msg, "%s%s", x > 0 ? ", " : "", names[x]);
        wh_buf_puts(&msg, "]. This may cause injection to occur twice.");
        json_array_append_new(findings, json_string(msg.data));
        wh_buf_free(&msg);
        free(names);
    }
    json_decref(revs);
    json_decref(nss);
    json_decref(objs);
    json_decref(entries);
    json_decref(others);
    return rc;
}
