/*
 * wh_inject_revision.c - one control-plane revision's injection
 * configuration (the `config`, `values` and `mesh` files istiod reads),
 * parsed once into an immutable, reference-counted snapshot: every template
 * is parsed ahead of time so that a request only renders.  This file holds
 * the snapshot's accessors and lifetime; making one is
 * wh_inject_revision_load.c's job.
 */
#include "wh_inject_revision.h"

#include "wh_inject_pod.h"

#include <stdlib.h>
#include <string.h>

typedef struct wh_inject_tmpls tmpl_table;

static void revision_free(wh_inject_revision *rev)
{
    tmpl_table *t = rev->templates;

    /* First: the counts include the references its template sets took while
     * the values were mortal, which their free below then gives back. */
    wh_json_thaw(rev->frozen);
    if (t != NULL) {
        for (size_t i = 0; i < t->n; i++) {
            free(t->e[i].name);
            wh_tmpl_set_free(t->e[i].set);
            wh_tmpl_set_free(t->e[i].set_pc);
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
    json_decref(rev->webhook_pc);
    free(rev->default_pc_json);
    free(rev->proxy_image);
    free(rev->proxy_init_image);
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

const wh_tmpl_set *wh_inject_revision_template_pc(const wh_inject_revision *rev, const char *name, const json_t *pc)
{
    const tmpl_table *t = rev->templates;

    for (size_t i = 0; t != NULL && i < t->n; i++)
        if (strcmp(t->e[i].name, name) == 0)
            return pc == rev->webhook_pc && t->e[i].set_pc != NULL ? t->e[i].set_pc : t->e[i].set;
    return NULL;
}

const wh_inject_release *wh_inject_revision_release(const wh_inject_revision *rev)
{
    return &rev->release;
}
