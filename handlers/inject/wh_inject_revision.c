/*
 * wh_inject_revision.c - one control-plane revision's injection
 * configuration (the `config`, `values` and `mesh` files istiod reads),
 * parsed once into an immutable, reference-counted snapshot: every template
 * is parsed ahead of time so that a request only renders (the sets not
 * made at load, e.g. those of templates outside defaultTemplates, are made
 * on their first render, once: see struct tmpl_entry).  This file holds the
 * snapshot's accessors and lifetime; making one is
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

    /* The sets first: they were made while the JSON was immortal, so the
     * references they give back were never counted (wh_json_freeze). */
    if (t != NULL) {
        for (size_t i = 0; i < t->n; i++) {
            free(t->e[i].name);
            wh_tmpl_set_free(atomic_load(&t->e[i].set));
            wh_tmpl_set_free(atomic_load(&t->e[i].set_pc));
        }
        free(t->e);
        pthread_mutex_destroy(&t->make_mu);
        free(t);
    }
    wh_json_thaw(rev->frozen);
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

/* Entry `e`'s set (pc: bound to webhook_pc), made on first use. */
static const wh_tmpl_set *entry_set(const wh_inject_revision *rev, struct tmpl_entry *e, int pc)
{
    _Atomic(wh_tmpl_set *) *slot = pc ? &e->set_pc : &e->set;
    wh_tmpl_set *set = atomic_load_explicit(slot, memory_order_acquire);

    if (set == NULL) {
        wh_json_arena *request = wh_json_arena_pause(); /* the set outlives the request that asks first */
        pthread_mutex_lock(&rev->templates->make_mu);
        if ((set = atomic_load_explicit(slot, memory_order_relaxed)) == NULL &&
            (set = rev->templates->make(rev, e, pc)) != NULL)
            atomic_store_explicit(slot, set, memory_order_release);
        pthread_mutex_unlock(&rev->templates->make_mu);
        wh_json_arena_resume(request);
    }
    return set;
}

static struct tmpl_entry *find_entry(const wh_inject_revision *rev, const char *name)
{
    const tmpl_table *t = rev->templates;

    for (size_t i = 0; t != NULL && i < t->n; i++)
        if (strcmp(t->e[i].name, name) == 0)
            return &t->e[i];
    return NULL;
}

int wh_inject_revision_has_template(const wh_inject_revision *rev, const char *name)
{
    return find_entry(rev, name) != NULL;
}

const wh_tmpl_set *wh_inject_revision_template_pc(const wh_inject_revision *rev, const char *name, const json_t *pc)
{
    struct tmpl_entry *e = find_entry(rev, name);
    const wh_tmpl_set *set = NULL;

    if (e == NULL)
        return NULL;
    if (pc == rev->webhook_pc)
        set = entry_set(rev, e, 1);
    return set != NULL ? set : entry_set(rev, e, 0);
}

const wh_inject_release *wh_inject_revision_release(const wh_inject_revision *rev)
{
    return &rev->release;
}
