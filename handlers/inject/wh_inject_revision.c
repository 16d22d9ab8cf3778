/*
 * wh_inject_revision.c - one control-plane revision's injection
 * configuration (the `config`, `values` and `mesh` files istiod reads),
 * parsed once into an immutable, reference-counted snapshot: every template
 * is parsed ahead of time so that a request only renders.
 */
#include "wh_inject_revision.h"
#include "wh_inject_proxyconfig.h"

#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_yaml.h"
#include "wh_alloc.h"

#include <stdlib.h>
#include <string.h>

struct tmpl_entry {
    char *name;
    wh_tmpl_set *set;
};

/* The parsed templates, sorted by name. */
struct wh_inject_tmpls {
    size_t n;
    struct tmpl_entry *e;
};
typedef struct wh_inject_tmpls tmpl_table;

static void revision_free(wh_inject_revision *rev)
{
    tmpl_table *t = rev->templates;

    if (t != NULL) {
        for (size_t i = 0; i < t->n; i++) {
            free(t->e[i].name);
            wh_tmpl_set_free(t->e[i].set);
        }
        free(t->e);
        free(t);
    }
    free(rev->name);
    free(rev->policy);
    json_decref(rev->config);
    json_decref(rev->default_templates);
    json_decref(rev->aliases);
    json_decref(rev->never_selectors);
    json_decref(rev->always_selectors);
    json_decref(rev->injected_annotations);
    json_decref(rev->values);
    json_decref(rev->mesh);
    json_decref(rev->template_names);
    free(rev);
}

wh_inject_revision *wh_inject_revision_ref(wh_inject_revision *rev)
{
    if (rev != NULL)
        atomic_fetch_add(&rev->refs, 1);
    return rev;
}

void wh_inject_revision_unref(wh_inject_revision *rev)
{
    if (rev != NULL && atomic_fetch_sub(&rev->refs, 1) == 1)
        revision_free(rev);
}

const char *wh_inject_revision_name(const wh_inject_revision *rev)
{
    return rev->name;
}

const char *wh_inject_revision_policy(const wh_inject_revision *rev)
{
    return rev->policy;
}

const json_t *wh_inject_revision_values(const wh_inject_revision *rev)
{
    return rev->values;
}

const json_t *wh_inject_revision_mesh(const wh_inject_revision *rev)
{
    return rev->mesh;
}

const json_t *wh_inject_revision_injected_annotations(const wh_inject_revision *rev)
{
    return rev->injected_annotations;
}

int wh_inject_revision_status_port(const wh_inject_revision *rev)
{
    const json_t *p = wh_inject_jpath(rev->mesh, "defaultConfig", "statusPort", NULL);
    return json_is_integer(p) ? (int)json_integer_value(p) : 0;
}

/* The parsed template `name`, or NULL. */
const wh_tmpl_set *wh_inject_revision_template(const wh_inject_revision *rev, const char *name)
{
    const tmpl_table *t = rev->templates;

    for (size_t i = 0; t != NULL && i < t->n; i++)
        if (strcmp(t->e[i].name, name) == 0)
            return t->e[i].set;
    return NULL;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct tmpl_entry *)a)->name, ((const struct tmpl_entry *)b)->name);
}

/* Parse every template as istiod does: each is its own template named
 * "inject" with Sprig and Istio's functions. */
static wh_code parse_templates(wh_inject_revision *rev, const json_t *templates, wh_err *err)
{
    tmpl_table *t = wh_calloc(1, sizeof(*t));
    const char *name;
    json_t *text;
    wh_code rc;

    rev->templates = t;
    if (templates == NULL || json_is_null(templates))
        return WH_OK;
    if (!json_is_object(templates))
        return wh_err_set(err, WH_E_INVALID, "config: templates must be a map of name to template text");
    t->e = wh_calloc(json_object_size(templates) + 1, sizeof(*t->e));
    json_object_foreach((json_t *)templates, name, text)
    {
        struct tmpl_entry *e = &t->e[t->n];
        if (!json_is_string(text))
            return wh_err_set(err, WH_E_INVALID, "config: template \"%s\" is not a string", name);
        e->name = wh_strdup(name);
        if ((e->set = wh_tmpl_set_new(WH_TMPL_SPRIG)) == NULL) /* a bug in a built-in function table */
            return wh_err_set(err, WH_E_INVALID, "config: template \"%s\": the engine's built-in functions do not load",
                              name);
        t->n++;
        if ((rc = wh_tmpl_set_funcs(e->set, wh_inject_funcs, wh_inject_nfuncs, err)) != WH_OK)
            return rc;
        if ((rc = wh_tmpl_parse(e->set, "inject", json_string_value(text), json_string_length(text), err)) != WH_OK)
            return wh_err_prefix(err, "config: template \"%s\"", name);
    }
    qsort(t->e, t->n, sizeof(*t->e), cmp_entry);
    for (size_t i = 0; i < t->n; i++) /* keys of a decoded object: UTF-8 */
        json_array_append_new(rev->template_names, json_string_nocheck(t->e[i].name));
    return WH_OK;
}

/* A config field that must be of a given JSON type (null/absent -> def, taken over). */
static wh_code take(const json_t *config, const char *key, json_type type, json_t **dst, json_t *def, wh_err *err)
{
    json_t *v = json_object_get(config, key);

    if (v == NULL || json_is_null(v)) {
        *dst = def;
        return WH_OK;
    }
    json_decref(def);
    if (json_typeof(v) != type)
        return wh_err_set(err, WH_E_INVALID, "config: %s has the wrong type", key);
    *dst = json_incref(v);
    return WH_OK;
}

const wh_inject_release *wh_inject_revision_release(const wh_inject_revision *rev)
{
    return &rev->release;
}

wh_code wh_inject_revision_load(const char *name, const char *config, size_t config_len, const char *values,
                                size_t values_len, const char *mesh, size_t mesh_len, wh_inject_revision **out,
                                wh_err *err)
{
    return wh_inject_revision_load_release(name, config, config_len, values, values_len, mesh, mesh_len, NULL, out,
                                           err);
}

wh_code wh_inject_revision_load_release(const char *name, const char *config, size_t config_len, const char *values,
                                        size_t values_len, const char *mesh, size_t mesh_len,
                                        const wh_release_hints *hints, wh_inject_revision **out, wh_err *err)
{
    wh_release_hints h = {0};
    wh_inject_revision *rev = wh_calloc(1, sizeof(*rev));
    json_t *mesh_doc = NULL, *v;
    json_error_t jerr;
    wh_code rc;
    size_t i;

    *out = NULL;
    atomic_init(&rev->refs, 1);
    rev->name = wh_strdup(name != NULL ? name : "default");
    rev->template_names = json_array();

    /* config */
    if ((rc = wh_yaml_load(config != NULL ? config : "", config != NULL ? config_len : 0, &rev->config, err)) !=
        WH_OK) {
        wh_err_prefix(err, "config");
        goto out;
    }
    if (json_is_null(rev->config)) {
        json_decref(rev->config);
        rev->config = json_object();
    }
    if (!json_is_object(rev->config)) {
        rc = wh_err_set(err, WH_E_INVALID, "config: not a YAML mapping");
        goto out;
    }
    v = json_object_get(rev->config, "policy");
    if (v != NULL && !json_is_null(v) && !json_is_string(v)) {
        rc = wh_err_set(err, WH_E_INVALID, "config: policy must be a string");
        goto out;
    }
    rev->policy = wh_strdup(json_is_string(v) ? json_string_value(v) : "");
    if ((rc = take(rev->config, "defaultTemplates", JSON_ARRAY, &rev->default_templates, json_array(), err)) != WH_OK ||
        (rc = take(rev->config, "aliases", JSON_OBJECT, &rev->aliases, json_object(), err)) != WH_OK ||
        (rc = take(rev->config, "neverInjectSelector", JSON_ARRAY, &rev->never_selectors, json_array(), err)) !=
            WH_OK ||
        (rc = take(rev->config, "alwaysInjectSelector", JSON_ARRAY, &rev->always_selectors, json_array(), err)) !=
            WH_OK ||
        (rc = take(rev->config, "injectedAnnotations", JSON_OBJECT, &rev->injected_annotations, json_object(), err)) !=
            WH_OK)
        goto out;
    json_array_foreach(rev->default_templates, i, v) if (!json_is_string(v))
    {
        rc = wh_err_set(err, WH_E_INVALID, "config: defaultTemplates must list template names");
        goto out;
    }
    if (json_array_size(rev->default_templates) == 0) {
        json_decref(rev->default_templates);
        rev->default_templates = json_pack("[s]", "sidecar");
    }

    /* values: JSON (as the ConfigMap holds it); YAML accepted too */
    if (values == NULL || values_len == 0) {
        rev->values = json_object();
    } else if ((rev->values = json_loadb(values, values_len, 0, &jerr)) == NULL) {
        if ((rc = wh_yaml_load(values, values_len, &rev->values, err)) != WH_OK) {
            wh_err_prefix(err, "values");
            goto out;
        }
    }
    if (json_is_null(rev->values)) {
        json_decref(rev->values);
        rev->values = json_object();
    }
    if (!json_is_object(rev->values)) {
        rc = wh_err_set(err, WH_E_INVALID, "values: not a JSON object");
        goto out;
    }

    /* the release: it decides the defaults below and the pipeline's behaviour */
    if (hints != NULL)
        h = *hints;
    h.values = rev->values;
    if ((rc = wh_inject_release_detect(&h, &rev->release, err)) != WH_OK)
        goto out;

    /* mesh, applied onto Istio's defaults */
    rev->mesh = wh_inject_default_mesh(&rev->release);
    if (mesh != NULL && mesh_len > 0) {
        if ((rc = wh_yaml_load(mesh, mesh_len, &mesh_doc, err)) != WH_OK ||
            (rc = wh_inject_mesh_apply(rev->mesh, mesh_doc, err)) != WH_OK) {
            wh_err_prefix(err, "mesh");
            goto out;
        }
    }

    if ((rc = parse_templates(rev, json_object_get(rev->config, "templates"), err)) != WH_OK)
        goto out;
    *out = rev;
    rev = NULL;
    rc = WH_OK;
out:
    json_decref(mesh_doc);
    if (rev != NULL)
        revision_free(rev);
    return rc;
}
