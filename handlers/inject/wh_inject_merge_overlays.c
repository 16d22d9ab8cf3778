/*
 * wh_inject_merge_overlays.c - merge stage: the overlays merged into the
 * pod and the user's overrides re-applied (CONTRIBUTING.md, stage 5 merge);
 * see wh_inject_merge.h and tests/inject/merge.
 */
#include "wh_inject_merge.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_json_arena.h"

/* ---- step 6 ---- */

static void move_proxy_to_init(json_t *pod)
{
    json_t *spec = wh_inject_obj_child(pod, "spec", 1), *containers = wh_inject_spec_list(pod, "containers"), *init,
           *proxy;
    size_t idx;

    if ((proxy = wh_inject_find_named(containers, WH_PROXY, &idx)) == NULL)
        return;
    if ((init = wh_inject_spec_list(pod, "initContainers")) == NULL) {
        init = json_array();
        json_object_set_new(spec, "initContainers", init);
    }
    json_array_append(init, proxy);
    json_array_remove(containers, idx);
}

/* A member of an object the template pod's view keeps: a directive SMP reads
 * (`$patch`, `$retainKeys`) or `keep` (`keep_len` bytes; NULL: none). */
static inline int kept(const char *key, size_t len, const char *keep, size_t keep_len)
{
    return key[0] == '$'
               ? (len == 6 && memcmp(key, "$patch", 6) == 0) || (len == 11 && memcmp(key, "$retainKeys", 11) == 0)
               : keep != NULL && len == keep_len && memcmp(key, keep, len) == 0;
}

/* The members of `src` that kept() keeps (at most three: keys are distinct),
 * in src's order, into keys/values (new references): one walk over `src`
 * (through jansson's layout when known), cheaper than three lookups.
 * Returns how many. */
static size_t kept_members(const json_t *src, const char *keep, size_t keep_len, wh_json_key *keys, json_t **values)
{
    size_t out = 0;
    void *it;

    if (wh_json_object_layout_known && json_is_object(src)) {
        const struct wh_json_object_layout *jo = (const struct wh_json_object_layout *)src;
        const struct wh_json_list_layout *l;
        for (l = jo->ordered_list.next; l != &jo->ordered_list; l = l->next) {
            const struct wh_json_pair_layout *p = wh_json_pair_at(l);
            if (kept(p->key, p->key_len, keep, keep_len)) {
                keys[out] = (wh_json_key){p->key, p->key_len};
                values[out++] = json_incref(p->value);
            }
        }
        return out;
    }
    for (it = json_object_iter((json_t *)src); it != NULL; it = json_object_iter_next((json_t *)src, it))
        if (kept(json_object_iter_key(it), json_object_iter_key_len(it), keep, keep_len)) {
            keys[out] = (wh_json_key){json_object_iter_key(it), json_object_iter_key_len(it)};
            values[out++] = json_incref(json_object_iter_value(it));
        }
    return out;
}

/* The part of an overlay the template pod needs: later steps read only the
 * names of its containers, init containers, volumes and image pull secrets
 * (status annotation, overrides, native move), so those lists are merged
 * with items reduced to their name (and directives).  Saves copying the
 * whole overlay a second time; each object is made in one piece
 * (wh_json_arena_object).  `security`: containers keep a copy of their
 * securityContext too (WH_REL_OVERRIDE_RESETS_FOREIGN_UID reads its user). */
static json_t *names_view(const json_t *overlay, int security)
{
    static const wh_json_key lists[] = {{"containers", 10},
                                        {"initContainers", 14},
                                        {"volumes", 7},
                                        {"imagePullSecrets", 16}},
                             spec_key = {"spec", 4}, sc_key = {"securityContext", 15};
    const json_t *spec = wh_json_getn(overlay, spec_key.text, spec_key.len);
    wh_json_key keys[3 + 4];
    json_t *values[3 + 4], *stack[32], **items;
    size_t l, i, n, nitems;

    n = kept_members(overlay, NULL, 0, keys, values);
    if (!json_is_object(spec)) {
        if (spec != NULL) {
            keys[n] = spec_key;
            values[n++] = json_incref((json_t *)spec);
        }
        return wh_json_arena_object(keys, values, n, 0);
    }
    n = kept_members(spec, NULL, 0, keys, values);
    for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
        const json_t *list = wh_json_getn(spec, lists[l].text, lists[l].len);
        if (list == NULL)
            continue;
        keys[n] = lists[l];
        if (!json_is_array(list)) {
            values[n++] = json_incref((json_t *)list);
            continue;
        }
        nitems = json_array_size(list);
        items = nitems <= 32 ? stack : wh_malloc(nitems * sizeof(*items));
        for (i = 0; i < nitems; i++) {
            const json_t *item = json_array_get(list, i), *sc;
            wh_json_key ikeys[4];
            json_t *ivalues[4];
            size_t ni;
            if (!json_is_object(item)) {
                items[i] = json_incref((json_t *)item);
                continue;
            }
            ni = kept_members(item, "name", 4, ikeys, ivalues);
            if (l < 2 && security && json_is_object(sc = wh_json_getn(item, sc_key.text, sc_key.len))) {
                ikeys[ni] = sc_key;
                ivalues[ni++] = json_deep_copy(sc);
            }
            items[i] = wh_json_arena_object(ikeys, ivalues, ni, 0);
        }
        values[n++] = wh_json_arena_array(items, nitems);
        if (items != stack)
            free(items);
    }
    {
        json_t *vspec = wh_json_arena_object(keys, values, n, 0);
        n = kept_members(overlay, NULL, 0, keys, values);
        keys[n] = spec_key;
        values[n++] = vspec;
    }
    return wh_json_arena_object(keys, values, n, 0);
}

/* Whether object `o` has a member whose key starts with '$' (a strategic
 * merge directive). */
static int has_directive(const json_t *o)
{
    void *it;

    if (wh_json_object_layout_known) {
        const struct wh_json_object_layout *jo = (const struct wh_json_object_layout *)o;
        const struct wh_json_list_layout *l;
        for (l = jo->ordered_list.next; l != &jo->ordered_list; l = l->next)
            if (wh_json_pair_at(l)->key[0] == '$')
                return 1;
        return 0;
    }
    for (it = json_object_iter((json_t *)o); it != NULL; it = json_object_iter_next((json_t *)o, it))
        if (json_object_iter_key(it)[0] == '$')
            return 1;
    return 0;
}

#define NAMES_MAX 64 /* items of a list the plain way takes (more: names_view) */

/* One of the four lists as the template pod's plain merge sees it: the
 * overlay's items, their names, the template's list (`have`, NULL: none)
 * and, per overlay item, the index of the template's item of that name or
 * -1. */
typedef struct names_list {
    const json_t *have;
    json_t *items[NAMES_MAX];
    const json_t *names[NAMES_MAX];
    long match[NAMES_MAX];
    size_t n;
} names_list;

/* The template pod's four lists, the overlay's part of them found plain
 * (names_plain), to be merged after the overlay's merge (names_apply). */
typedef struct names_merge {
    const json_t *tspec; /* the template pod's spec, NULL: none yet */
    unsigned present;    /* which lists the overlay has */
    names_list lists[4];
} names_merge;

static const wh_json_key name_lists[4] = {
    {"containers", 10}, {"initContainers", 14}, {"volumes", 7}, {"imagePullSecrets", 16}};

static int same_name(const json_t *a, const json_t *b)
{
    size_t la, lb;
    const char *sa = wh_json_string_text(a, &la), *sb = wh_json_string_text(b, &lb);

    return la == lb && memcmp(sa, sb, la) == 0;
}

/* The items of `patch` and their names into `nl`, matched against the
 * template's list `have`: 0 when merging them is not plain (an item not an
 * object or with a directive, a name missing, not a string or given twice,
 * a list too long, a template item without a string name). */
static int names_of(names_list *nl, const json_t *patch, const json_t *have)
{
    size_t i, j, n = json_array_size(patch), nh = json_array_size(have);

    if (!json_is_array(patch) || n > NAMES_MAX || (have != NULL && (!json_is_array(have) || nh > NAMES_MAX)))
        return 0;
    nl->have = have;
    nl->n = n;
    for (i = 0; i < n; i++) {
        json_t *item = json_array_get(patch, i);
        if (!json_is_object(item) || (nl->names[i] = wh_inject_name_json(item)) == NULL || has_directive(item))
            return 0;
        nl->items[i] = item;
        for (j = 0; j < i; j++)
            if (same_name(nl->names[j], nl->names[i]))
                return 0;
        nl->match[i] = -1;
        for (j = 0; j < nh; j++) {
            const json_t *name = wh_inject_name_json(json_array_get(have, j));
            if (name == NULL)
                return 0;
            if (same_name(name, nl->names[i])) {
                nl->match[i] = (long)j;
                break;
            }
        }
    }
    return 1;
}

/* Whether merging names_view(overlay, 0) into `tmpl` is plain: no directive
 * at the overlay's top, in its spec or in an item of the four lists, each
 * list an array of objects each named once by a string, the template's
 * lists alike (tests/inject/merge/cases/overlays-template-names*).  Then
 * that merge only adds the overlay's new names to the template's lists
 * (names_apply), and *m says how; nothing is changed here. */
static int names_plain(const json_t *tmpl, const json_t *overlay, names_merge *m)
{
    const json_t *spec = wh_json_getn(overlay, "spec", 4);
    size_t l;

    m->tspec = wh_json_getn(tmpl, "spec", 4);
    m->present = 0;
    if (has_directive(overlay) || (spec != NULL && (!json_is_object(spec) || has_directive(spec))) ||
        (m->tspec != NULL && !json_is_object(m->tspec)))
        return 0;
    for (l = 0; spec != NULL && l < 4; l++) {
        const json_t *patch = wh_json_getn(spec, name_lists[l].text, name_lists[l].len);
        if (patch == NULL)
            continue;
        if (!names_of(&m->lists[l], patch, wh_json_getn(m->tspec, name_lists[l].text, name_lists[l].len)))
            return 0;
        m->present |= 1u << l;
    }
    return 1;
}

/* Whether the template pod's list `l` holds `name` once the plain merge `m`
 * is applied. */
static int names_will_hold(const json_t *tmpl, const names_merge *m, size_t l, const char *name)
{
    size_t i, len;

    if (wh_inject_find_named(wh_inject_spec_list(tmpl, name_lists[l].text), name, NULL) != NULL)
        return 1;
    for (i = 0; (m->present & (1u << l)) && i < m->lists[l].n; i++)
        if (strcmp(wh_json_string_text(m->lists[l].names[i], &len), name) == 0)
            return 1;
    return 0;
}

/* The template's list merged with the overlay's names (nl), in the order
 * the strategic merge gives (wh_inject_merge.c merge_keyed): the overlay's
 * items in its order, the template's other items before an overlay item
 * only when both were in the template and it came first there.  A new
 * reference.  The overlay's new items are shared, not reduced to their
 * names: later steps read only the names of the template pod's items (see
 * wh_inject_apply_overlays). */
static json_t *names_merged(const names_list *nl)
{
    size_t nh = json_array_size(nl->have), ns = 0, i, j, k;
    json_t *items[2 * NAMES_MAX];
    long server[NAMES_MAX];
    unsigned char matched[NAMES_MAX] = {0};

    for (i = 0; i < nl->n; i++)
        if (nl->match[i] >= 0)
            matched[nl->match[i]] = 1;
    for (i = 0; i < nh; i++)
        if (!matched[i])
            server[ns++] = (long)i;
    for (i = 0, j = 0, k = 0; i < ns || j < nl->n; k++) {
        if (i < ns && (j >= nl->n || (nl->match[j] >= 0 && server[i] < nl->match[j])))
            items[k] = json_incref(json_array_get(nl->have, (size_t)server[i++]));
        else if (nl->match[j] >= 0)
            items[k] = json_incref(json_array_get(nl->have, (size_t)nl->match[j++]));
        else
            items[k] = json_incref(nl->items[j++]);
    }
    return wh_json_arena_array(items, k);
}

/* Apply the plain merge `m` (names_plain) to `tmpl`: each list merged once,
 * without a view or a strategic merge. */
static void names_apply(json_t *tmpl, const names_merge *m)
{
    json_t *tspec = (json_t *)m->tspec;
    size_t l;

    if (m->present == 0)
        return;
    if (tspec == NULL) {
        tspec = json_object();
        json_object_setn_new_nocheck(tmpl, "spec", 4, tspec);
    }
    for (l = 0; l < 4; l++)
        if ((m->present & (1u << l)) && !(m->lists[l].n == 0 && m->lists[l].have != NULL))
            json_object_setn_new_nocheck(tspec, name_lists[l].text, name_lists[l].len, names_merged(&m->lists[l]));
}

/* ---- the merge target ---- */

static json_t *target_copy(const json_t *value, const wh_inject_type *type, wh_inject_go_leaves *leaves, int depth);

static int injector_owned(const json_t *container)
{
    const char *name = wh_inject_name(container);

    return name != NULL &&
           (strcmp(name, WH_PROXY) == 0 || strcmp(name, WH_INIT) == 0 || strcmp(name, WH_VALIDATION) == 0);
}

/* A list of the request's pod whose items are all stable leaves is shared
 * whole (a container's 1,500 env entries: no list to build, and the round
 * trip and the JSON Patch diff find it equal by address).  Nothing after the
 * merge changes such a list in place: the strategic merge builds new lists
 * (and copies the item a patch merges into, with its lists), `$deleteFrom
 * PrimitiveList` replaces the list it filters, and the lists edited in place
 * (the container lists by the native move and the reordering, istio-proxy's
 * env, an init container's args) are container lists or belong to the
 * injector's containers, which are copied whole.  Container lists are never
 * shared for that reason, whatever their items. */
static json_t *target_list(const json_t *list, const wh_inject_type *type, wh_inject_go_leaves *leaves, int depth)
{
    json_t *out;
    size_t i, n = json_array_size(list), nstable;
    const json_t *const *stable = wh_inject_go_stable_items(leaves, list, &nstable);

    if (nstable == n && n > 0 && type != &wh_inject_type_container) {
        for (i = 0; i < n && stable[i] == json_array_get(list, i); i++)
            ;
        if (i == n)
            return json_incref((json_t *)list);
    }
    out = json_array();
    for (i = 0; i < n; i++) {
        const json_t *item = json_array_get(list, i);
        json_t *copy = type == &wh_inject_type_container && injector_owned(item) ? wh_inject_json_copy(item)
                       : i < nstable && stable[i] == item                        ? json_incref((json_t *)item)
                                                          : target_copy(item, type, leaves, depth);
        if (json_array_append_new(out, copy) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* The pod the overlays are merged into: a copy of the request's pod (merge
 * and post-processing change it in place) that shares with it the list
 * items the type check found to be stable leaves (`leaves`), so that a container's 1,500 env
 * entries are neither copied nor, since the JSON Patch diff then finds them
 * equal by address, compared (bench/inject/README.md, Session 10).  Nothing
 * changes such an item in place: the strategic merge copies a list item
 * before merging into it and builds new lists, the Go round trip leaves it
 * as it is, and the only in-place edits of list items (post-processing's env
 * entries) are on istio-proxy, so the injector's own containers are copied
 * whole. */
static json_t *member_copy(const json_t *v, const wh_inject_field *f, wh_inject_go_leaves *leaves, int depth)
{
    return f != NULL && f->kind == WH_K_OBJ && f->type != NULL ? target_copy(v, f->type, leaves, depth + 1)
           : f != NULL && f->kind == WH_K_LIST && f->type != NULL && json_is_array(v)
               ? target_list(v, f->type, leaves, depth + 1)
               : wh_inject_json_copy(v);
}

#define VIEW_MEMBERS 48 /* read through the layout up to this many (a PodSpec has 40 fields) */

/* target_copy of object `value` read through the layout and made in one
 * piece (wh_json_arena_object); NULL when the layout is unknown or it has
 * too many members.  Out of line: its frame is large, so only the first
 * levels use it (FLAT_DEPTH). */
static __attribute__((noinline)) json_t *target_copy_flat(const json_t *value, const wh_inject_type *type,
                                                          wh_inject_go_leaves *leaves, int depth)
{
    wh_json_member m[VIEW_MEMBERS];
    wh_json_key keys[VIEW_MEMBERS];
    json_t *values[VIEW_MEMBERS];
    const wh_inject_field *prev = NULL, *f;
    size_t i, n = wh_json_object_members(value, m, VIEW_MEMBERS);

    if (n > VIEW_MEMBERS)
        return NULL;

    for (i = 0; i < n; i++) {
        if ((f = wh_inject_schema_fieldn_after(type, prev, m[i].key, m[i].len)) != NULL)
            prev = f;
        keys[i] = (wh_json_key){m[i].key, m[i].len};
        values[i] = member_copy(m[i].value, f, leaves, depth);
    }
    return wh_json_arena_object(keys, values, n, 0);
}

#define FLAT_DEPTH 8 /* a pod's typed objects nest about this deep */

static json_t *target_copy(const json_t *value, const wh_inject_type *type, wh_inject_go_leaves *leaves, int depth)
{
    json_t *out;
    void *it;

    if (!json_is_object(value) || type == NULL)
        return wh_inject_json_copy(value);
    if (depth < FLAT_DEPTH && (out = target_copy_flat(value, type, leaves, depth)) != NULL)
        return out;
    out = json_object();
    for (it = json_object_iter((json_t *)value); it != NULL; it = json_object_iter_next((json_t *)value, it)) {
        const json_t *v = json_object_iter_value(it);
        const wh_inject_field *f = wh_inject_schema_field(type, json_object_iter_key(it));
        json_object_setn_new_nocheck(out, json_object_iter_key(it), json_object_iter_key_len(it),
                                     member_copy(v, f, leaves, depth));
    }
    return out;
}

wh_code wh_inject_apply_overlays(const json_t *merge_pod, wh_inject_go_leaves *leaves, json_t *overlays,
                                 const char *const *names, const wh_inject_shaped *shaped, int native,
                                 const wh_inject_release *release, json_t **merged_out, json_t **tmpl_out, wh_err *err)
{
    json_t *merged = target_copy(merge_pod, &wh_inject_type_pod, leaves, 0), *tmpl = json_object(), *view = NULL;
    names_merge tnames;
    size_t i;
    wh_code rc = WH_OK;
    int security = wh_inject_release_has(release, WH_REL_OVERRIDE_RESETS_FOREIGN_UID);

    *merged_out = *tmpl_out = NULL;
    for (i = 0; i < json_array_size(overlays); i++) {
        json_t *overlay = json_array_get(overlays, i);
        const char *name = names != NULL ? names[i] : "?";
        int plain = !security && names_plain(tmpl, overlay, &tnames);
        json_decref(view);
        view = NULL;
        if (!plain &&
            (rc = wh_inject_smp_move(tmpl, view = names_view(overlay, security), &wh_inject_type_pod, err)) != WH_OK) {
            wh_err_prefix(err,
                          "failed parsing generated injected YAML (check Istio sidecar injector "
                          "configuration): template %s",
                          name);
            goto out;
        }
        if (native &&
            (plain ? names_will_hold(tmpl, &tnames, 1, WH_PROXY)
                   : wh_inject_find_named(wh_inject_spec_list(tmpl, "initContainers"), WH_PROXY, NULL) != NULL))
            move_proxy_to_init(merged);
        if ((rc = wh_inject_smp_move(merged, overlay, &wh_inject_type_pod, err)) != WH_OK) {
            wh_err_prefix(err, "failed applying injection overlay: template %s", name);
            goto out;
        }
        /* after the merge, which may move the overlay's items into merged:
         * the template pod shares them then (sharing them before would make
         * the merge copy them) */
        if (plain)
            names_apply(tmpl, &tnames);
        /* istiod decodes the patched pod into a corev1.Pod after every
         * template: a value the field's Go type cannot hold fails the
         * injection there.  The pod's own values passed that check when it
         * was decoded, so only the overlay's need it (the shape stage's). */
        if (shaped != NULL && shaped[i].type_rc != WH_OK) {
            rc = shaped[i].type_rc;
            if (err != NULL)
                *err = shaped[i].type_err;
            wh_err_prefix(err, "failed parsing generated injected YAML (check Istio sidecar injector configuration): "
                               "unmarshal patched pod");
            goto out;
        }
    }
    *merged_out = merged;
    *tmpl_out = tmpl;
    merged = tmpl = NULL;
out:
    json_decref(view);
    json_decref(merged);
    json_decref(tmpl);
    return rc;
}

/* ---- step 7 ---- */

/* Names listed under `key` in a parsed status/overrides object. */
static int listed(const json_t *parsed, const char *key, const char *name)
{
    const json_t *l = wh_json_get(parsed, key);
    size_t i;

    for (i = 0; i < json_array_size(l); i++) {
        const json_t *e = json_array_get(l, i);
        const char *n = json_is_string(e) ? json_string_value(e) : wh_inject_jstr(e, "name");
        if (n != NULL && strcmp(n, name) == 0)
            return 1;
    }
    return 0;
}

static wh_code apply_container(json_t *pod, const char *list, const json_t *overlay, wh_err *err)
{
    json_t *patch = json_pack("{s:{s:[O]}}", "spec", list, overlay); /* overlay: not NULL */
    wh_code rc;

    rc = wh_inject_smp(pod, patch, &wh_inject_type_pod, err);
    json_decref(patch);
    if (rc != WH_OK)
        wh_err_prefix(err, "failed to apply sidecar container");
    return rc;
}

/* 3.8.3: the user's runAsUser/runAsGroup on istio-proxy reach the init
 * container (WH_REL_ADJUST_INIT_CONTAINER_USER). */
static void adjust_init_user(json_t *pod, const json_t *original, int tproxy)
{
    const json_t *user = wh_inject_find_sidecar(original), *sc = wh_json_get(user, "securityContext");
    const json_t *uid = wh_json_get(sc, "runAsUser"), *gid = wh_json_get(sc, "runAsGroup");
    json_t *init, *args, *proxy;
    size_t i;

    if (!json_is_integer(uid))
        uid = NULL;
    if (!json_is_integer(gid))
        gid = NULL;
    if (uid == NULL && gid == NULL)
        return;
    init = wh_inject_find_named(wh_inject_spec_list(pod, "initContainers"), WH_INIT, NULL);
    if (init == NULL)
        init = wh_inject_find_named(wh_inject_spec_list(pod, "initContainers"), WH_VALIDATION, NULL);
    if (init == NULL)
        return;
    /* found by name, so objects: their securityContext is one or becomes one */
    if (tproxy && uid != NULL && (proxy = wh_inject_find_sidecar(pod)) != NULL)
        json_object_set_new(wh_inject_obj_child(proxy, "securityContext", 1), "runAsUser", json_integer(0));
    if (!tproxy && strcmp(wh_inject_jstr(init, "name"), WH_VALIDATION) == 0) {
        json_t *isc = wh_inject_obj_child(init, "securityContext", 1);
        if (uid != NULL)
            json_object_set(isc, "runAsUser", (json_t *)uid);
        if (gid != NULL)
            json_object_set(isc, "runAsGroup", (json_t *)gid);
    }
    if (uid != NULL && json_integer_value(uid) != 0 && json_is_array(args = wh_json_get(init, "args"))) {
        char text[32];
        snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(uid));
        for (i = 0; i + 1 < json_array_size(args); i++) {
            const char *a = json_string_value(json_array_get(args, i));
            if (a != NULL && strcmp(a, "-u") == 0) {
                json_array_set_new(args, i + 1, json_string(text));
                break;
            }
        }
    }
}

/* WH_REL_OVERRIDE_RESETS_FOREIGN_UID: the template's user wins over the
 * pod's when it is not the default 1337 (OpenShift's namespace UID, TPROXY's
 * root), as istiod 1.21.0-1.21.2 and 1.22.0 decided. */
static void reset_foreign_uid(json_t *overlay, const json_t *tmpl_container)
{
    json_t *sc = wh_json_get(overlay, "securityContext");
    const json_t *uid = wh_inject_jpath(tmpl_container, "securityContext", "runAsUser", NULL);

    if (json_is_object(sc) && json_is_integer(uid) && json_integer_value(uid) != 1337) {
        json_object_del(sc, "runAsUser");
        json_object_del(sc, "runAsGroup");
    }
}

wh_code wh_inject_reapply_overrides(json_t *pod, const json_t *original, const json_t *tmpl, int tproxy,
                                    const wh_inject_release *release, wh_err *err)
{
    static const char *const lists[2] = {"containers", "initContainers"};
    const char *status_text = wh_inject_annotation(original, WH_A_STATUS),
               *overrides_text = wh_inject_annotation(original, WH_A_OVERRIDES);
    json_t *status = NULL, *existing = NULL, *recorded = NULL;
    json_error_t jerr;
    wh_buf text = WH_BUF_INIT;
    wh_code rc = WH_OK;
    int l, reset_uid = wh_inject_release_has(release, WH_REL_OVERRIDE_RESETS_FOREIGN_UID);

    if (overrides_text != NULL &&
        ((existing = json_loads(overrides_text, 0, &jerr)) == NULL || !json_is_object(existing))) {
        rc = wh_err_set(err, WH_E_INVALID, "invalid %s annotation: %s", WH_A_OVERRIDES,
                        existing == NULL ? jerr.text : "not a JSON object");
        goto out;
    }
    if (status_text != NULL)
        status = json_loads(status_text, 0, NULL); /* unparsable: as if absent, like istiod */
    recorded = json_object();
    for (l = 0; l < 2; l++) {
        const json_t *tlist = wh_inject_spec_list(tmpl, lists[l]);
        json_t *rlist = NULL;
        size_t i;
        for (i = 0; i < json_array_size(tlist); i++) {
            const char *name = wh_inject_jstr(json_array_get(tlist, i), "name");
            const json_t *match;
            json_t *overlay, *ordered;
            if (name == NULL || listed(status, lists[l], name))
                continue;
            match = wh_inject_find_named(wh_json_get(existing, lists[l]), name, NULL);
            if (match == NULL)
                match = wh_inject_find_named(wh_inject_spec_list(original, "containers"), name, NULL);
            if (match == NULL && l == 1)
                match = wh_inject_find_named(wh_inject_spec_list(original, "initContainers"), name, NULL);
            if (match == NULL || !json_is_object(match))
                continue;
            overlay = wh_inject_json_copy(match);
            if ((rc = wh_inject_go_roundtrip(overlay, &wh_inject_type_container, err)) != WH_OK) {
                json_decref(overlay);
                goto out;
            }
            if (reset_uid)
                reset_foreign_uid(overlay, json_array_get(tlist, i));
            if (json_is_string(wh_json_get(overlay, "image")) && strcmp(wh_inject_jstr(overlay, "image"), "auto") == 0)
                json_object_del(overlay, "image");
            ordered = wh_inject_go_ordered(overlay, &wh_inject_type_container);
            json_decref(overlay);
            if (rlist == NULL) {
                rlist = json_array();
                json_object_set_new(recorded, lists[l], rlist);
            }
            json_array_append_new(rlist, ordered);
            if ((rc = apply_container(pod, lists[l], ordered, err)) != WH_OK)
                goto out;
        }
    }
    if (status_text == NULL && json_object_size(recorded) != 0) {
        json_t *ann = wh_inject_obj_child(wh_inject_obj_child(pod, "metadata", 1), "annotations", 1);
        wh_go_json(&text, recorded, WH_GO_JSON_HTML);
        wh_inject_set_json_text(ann, WH_A_OVERRIDES, &text);
    }
    if (wh_inject_release_has(release, WH_REL_ADJUST_INIT_CONTAINER_USER))
        adjust_init_user(pod, original, tproxy);
out:
    json_decref(status);
    json_decref(existing);
    json_decref(recorded);
    wh_buf_free(&text);
    return rc;
}
