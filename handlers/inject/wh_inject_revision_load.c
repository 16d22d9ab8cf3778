/*
 * wh_inject_revision_load.c - making a revision from the bytes of its
 * `config`, `values` and `mesh` files: the config's fields checked, values
 * read as JSON (or YAML), its Istio release detected, the mesh applied onto
 * that release's defaults and every template parsed as istiod does, against
 * Sprig and Istio's template functions as that release has them
 * (wh_inject_set_funcs; the defaultTemplates' sets for the revision's own
 * proxy config made now, the others on first use: make_late).  Those
 * functions belong to the render stage (wh_inject_render_funcs.h), so
 * loading sits above the stages while a loaded revision
 * (wh_inject_revision.h) sits below them.
 */
#include "wh_inject_revision_load.h"

#include "wh_alloc.h"
#include "wh_inject_proxyconfig.h"
#include "wh_inject_render_funcs.h"
#include "wh_inject_revision.h"
#include "wh_yaml.h"
#include "wh_yaml_fast.h"

#include <stdlib.h>
#include <string.h>

typedef struct wh_inject_tmpls tmpl_table;

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct tmpl_entry *)a)->name, ((const struct tmpl_entry *)b)->name);
}

/* Whether `name` is one of the revision's defaultTemplates. */
static int is_default_template(const wh_inject_revision *rev, const char *name)
{
    size_t i;
    json_t *v;

    json_array_foreach(rev->default_templates, i, v) if (strcmp(json_string_value(v), name) == 0) return 1;
    return 0;
}

/* One template's set, bound to the revision's constants (and to proxy
 * config `pc`, when not NULL: wh_inject_bind_values) before its text is
 * parsed, so the parse folds what they decide once. */
static wh_code load_template(const wh_inject_revision *rev, const char *name, const json_t *text, const json_t *pc,
                             wh_tmpl_set **set, wh_err *err)
{
    wh_code rc;

    if ((*set = wh_tmpl_set_new(WH_TMPL_SPRIG)) == NULL) /* a bug in a built-in function table */
        return wh_err_set(err, WH_E_INTERNAL, "config: template \"%s\": the engine's built-in functions do not load",
                          name);
    if ((rc = wh_inject_set_funcs(*set, &rev->release, rev->own_templates, err)) != WH_OK ||
        (rc = wh_inject_bind_values(*set, rev->values, rev->mesh, pc, &rev->release, err)) != WH_OK)
        return rc;
    if ((rc = wh_tmpl_parse(*set, "inject", json_string_value(text), json_string_length(text), err)) != WH_OK)
        return wh_err_prefix(err, "config: template \"%s\"", name);
    return WH_OK;
}

/* A template's text parsed as load_template parses it (Go's syntax, the
 * functions known), the tree then dropped: what refuses a broken template
 * whose set is made on first use. */
static wh_code check_template(const wh_inject_revision *rev, const char *name, const json_t *text, wh_err *err)
{
    wh_tmpl_set *set = wh_tmpl_set_new(WH_TMPL_SPRIG | WH_TMPL_NO_FOLD);
    wh_code rc;

    if (set == NULL)
        return wh_err_set(err, WH_E_INTERNAL, "config: template \"%s\": the engine's built-in functions do not load",
                          name);
    if ((rc = wh_inject_set_funcs(set, &rev->release, rev->own_templates, err)) == WH_OK &&
        (rc = wh_tmpl_parse(set, "inject", json_string_value(text), json_string_length(text), err)) != WH_OK)
        wh_err_prefix(err, "config: template \"%s\"", name);
    wh_tmpl_set_free(set);
    return rc;
}

/* A template's constant texts as the YAML loader reads them (wh_tmpl_set_annotate_runs). */
static const void *yaml_pieces_new(const char *text, size_t len, void *arg)
{
    (void)arg;
    return wh_yaml_pieces_new(text, len, WH_YAML_MAX_DEPTH);
}

static void yaml_pieces_free(const void *pieces)
{
    wh_yaml_pieces_free(pieces);
}

/* Entry `e`'s set (pc: bound to webhook_pc) with the YAML of its constant
 * text read once (wh_inject_render.c hands it to the loader). */
static wh_code make_set(const wh_inject_revision *rev, const struct tmpl_entry *e, int pc, wh_tmpl_set **set,
                        wh_err *err)
{
    wh_code rc;

    if ((rc = load_template(rev, e->name, e->text, pc ? rev->webhook_pc : NULL, set, err)) != WH_OK) {
        wh_tmpl_set_free(*set);
        *set = NULL;
        return rc;
    }
    wh_tmpl_set_annotate_runs(*set, yaml_pieces_new, NULL, yaml_pieces_free);
    return WH_OK;
}

/* wh_inject_tmpls.make: a set on its first use (its text parsed at load). */
static wh_tmpl_set *make_late(const wh_inject_revision *rev, const struct tmpl_entry *e, int pc)
{
    wh_tmpl_set *set;
    wh_err err = {0};

    return make_set(rev, e, pc, &set, &err) == WH_OK ? set : NULL;
}

/* Read the config's templates: each is its own template named "inject" with
 * Sprig and Istio's functions, as istiod parses them.  The sets are made
 * later (make_default_sets, make_late); here each text not among the
 * defaultTemplates is parsed to refuse a broken one now. */
static wh_code parse_templates(wh_inject_revision *rev, const json_t *templates, wh_err *err)
{
    tmpl_table *t = wh_calloc(1, sizeof(*t));
    const char *name;
    json_t *text;
    wh_code rc;

    pthread_mutex_init(&t->make_mu, NULL);
    t->make = make_late;
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
        e->text = text;
        t->n++;
        if (!is_default_template(rev, name) && (rc = check_template(rev, name, text, err)) != WH_OK)
            return rc;
    }
    qsort(t->e, t->n, sizeof(*t->e), cmp_entry);
    for (size_t i = 0; i < t->n; i++) /* keys of a decoded object: UTF-8 */
        json_array_append_new(rev->template_names, json_string_nocheck(t->e[i].name));
    return WH_OK;
}

/* The sets of the defaultTemplates that nearly every pod renders: made at
 * load (and a broken one refused), the kind bound to the revision's own proxy
 * config, which every pod without a proxy config of its own (annotation,
 * ProxyConfig resource) renders.  The plain kind is made on first use, as
 * the other templates' sets are: a parse per template at load, not two. */
static wh_code make_default_sets(wh_inject_revision *rev, wh_err *err)
{
    tmpl_table *t = rev->templates;
    wh_tmpl_set *set;
    wh_code rc;

    for (size_t i = 0; i < t->n; i++) {
        struct tmpl_entry *e = &t->e[i];
        if (!is_default_template(rev, e->name))
            continue;
        if ((rc = make_set(rev, e, 1, &set, err)) != WH_OK)
            return rc;
        atomic_store(&e->set_pc, set);
    }
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

static wh_code load(const char *name, const char *config, size_t config_len, const char *values, size_t values_len,
                    const char *mesh, size_t mesh_len, const wh_release_hints *hints, int own, wh_inject_revision **out,
                    wh_err *err);

wh_code wh_inject_revision_load(const char *name, const char *config, size_t config_len, const char *values,
                                size_t values_len, const char *mesh, size_t mesh_len, wh_inject_revision **out,
                                wh_err *err)
{
    return wh_inject_revision_load_release(name, config, config_len, values, values_len, mesh, mesh_len, NULL, out,
                                           err);
}

wh_code wh_inject_revision_load_own(const char *name, const char *config, size_t config_len, const char *values,
                                    size_t values_len, const char *mesh, size_t mesh_len, wh_inject_revision **out,
                                    wh_err *err)
{
    return load(name, config, config_len, values, values_len, mesh, mesh_len, NULL, 1, out, err);
}

wh_code wh_inject_revision_load_release(const char *name, const char *config, size_t config_len, const char *values,
                                        size_t values_len, const char *mesh, size_t mesh_len,
                                        const wh_release_hints *hints, wh_inject_revision **out, wh_err *err)
{
    return load(name, config, config_len, values, values_len, mesh, mesh_len, hints, 0, out, err);
}

/* `own`: webhookd's templates (wh_inject_revision_load_own). */
static wh_code load(const char *name, const char *config, size_t config_len, const char *values, size_t values_len,
                    const char *mesh, size_t mesh_len, const wh_release_hints *hints, int own, wh_inject_revision **out,
                    wh_err *err)
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
    rev->own_templates = own;
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

    rev->webhook_pc = wh_inject_webhook_proxy_config(rev->mesh, &rev->release);
    if (json_equal(rev->webhook_pc, json_object_get(rev->mesh, "defaultConfig"))) {
        /* the same: one object, so renders find its printed text (default_pc_json) */
        json_decref(rev->webhook_pc);
        rev->webhook_pc = json_incref(json_object_get(rev->mesh, "defaultConfig"));
    }
    {
        wh_buf pc_json = WH_BUF_INIT;
        wh_inject_proxy_config_json(json_object_get(rev->mesh, "defaultConfig"), &rev->release, &pc_json);
        rev->default_pc_json = wh_buf_steal(&pc_json, NULL);
    }
    wh_inject_revision_images(rev->values, rev->webhook_pc, &rev->release, &rev->proxy_image, &rev->proxy_init_image);
    if ((rc = parse_templates(rev, json_object_get(rev->config, "templates"), err)) != WH_OK)
        goto out;
    /* From now on requests share these without counting references (one
     * record: the trees share nodes, e.g. config's defaultTemplates).  The
     * mesh file's tree goes first: its nodes in `mesh` must not be counted
     * with a reference that is given up while they are immortal. */
    json_decref(mesh_doc);
    mesh_doc = NULL;
    {
        /* The walk is bounded as the YAML loader is: JSON values load up to
         * jansson's 2048 levels, and a hostile ConfigMap is a load error. */
        json_t *const trees[] = {rev->config,           rev->default_templates,    rev->aliases, rev->never_selectors,
                                 rev->always_selectors, rev->injected_annotations, rev->values,  rev->mesh,
                                 rev->webhook_pc,       rev->template_names};
        static const char *const names[] = {"config", "config", "config", "config", "config",
                                            "config", "values", "mesh",   "mesh",   "config"};
        for (i = 0; i < sizeof(trees) / sizeof(trees[0]); i++)
            if ((rc = wh_json_freeze(trees[i], WH_YAML_MAX_DEPTH, &rev->frozen, err)) != WH_OK) {
                wh_err_prefix(err, "%s", names[i]);
                goto out;
            }
    }
    if ((rc = make_default_sets(rev, err)) != WH_OK)
        goto out;
    *out = rev;
    rev = NULL;
    rc = WH_OK;
out:
    json_decref(mesh_doc);
    if (rev != NULL)
        wh_inject_revision_unref(rev); /* the only reference: frees it */
    return rc;
}
