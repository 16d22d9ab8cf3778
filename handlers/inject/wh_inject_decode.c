/*
 * wh_inject_decode.c - stage 1 of injection (see wh_inject_decode.h): the
 * URL path of an injection request and the pod as istiod decodes it (both
 * covered by tests/inject/bad-input and tests/inject/conformance).
 *
 * webhookd serves every revision under /inject: a leading "rev/<name>" pair
 * picks the revision; what follows are istiod's own key/value segments
 * (cluster, net, anything else upper-cased) that become proxy env vars.
 */
#include "wh_inject_decode.h"

#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_inject_schema.h"
#include "wh_json_arena.h"

/* istiod's URL parameter names with a fixed env name. */
static const char *param_env(const char *key)
{
    if (strcmp(key, "cluster") == 0)
        return "ISTIO_META_CLUSTER_ID";
    if (strcmp(key, "net") == 0)
        return "ISTIO_META_NETWORK";
    return NULL;
}

/* Record key=value under the env name the key maps to.  The path's bytes
 * are the client's: a key or value that is not UTF-8 is refused. */
static wh_code add_env(json_t *envs, const char *key, size_t klen, const char *val, size_t vlen, int unslash,
                       wh_err *err)
{
    char *k = wh_strndup(key, klen), *name = NULL;
    wh_buf v = WH_BUF_INIT;
    const char *mapped;
    wh_code rc = WH_OK;
    json_t *js;

    if ((mapped = param_env(k)) != NULL) {
        name = wh_strdup(mapped);
    } else {
        name = k;
        k = NULL;
        for (char *p = name; *p; p++)
            if (*p >= 'a' && *p <= 'z')
                *p = (char)(*p - 'a' + 'A');
    }
    if (name[0] == '\0')
        goto out;
    for (size_t i = 0; i < vlen;) {
        if (unslash && vlen - i >= 9 && memcmp(val + i, "--slash--", 9) == 0) {
            wh_buf_putc(&v, '/');
            i += 9;
        } else {
            wh_buf_putc(&v, val[i]);
            i++;
        }
    }
    if ((js = json_stringn(v.data ? v.data : "", v.len)) == NULL || json_object_set_new(envs, name, js) != 0)
        rc = wh_err_set(err, WH_E_INVALID, "the injection path's parameter %.*s is not UTF-8 text", (int)klen, key);
out:
    free(k);
    free(name);
    wh_buf_free(&v);
    return rc;
}

/* The deprecated ":ENV:K=V:ENV:K2=V2" form. */
static wh_code parse_env_form(const char *s, size_t len, json_t *envs, wh_err *err)
{
    static const char sep[] = ":ENV:";
    const size_t seplen = sizeof(sep) - 1;
    size_t i = seplen;
    wh_code rc;

    while (i <= len) {
        size_t end = i;
        while (end < len && !(len - end >= seplen && memcmp(s + end, sep, seplen) == 0))
            end++;
        const char *eq = memchr(s + i, '=', end - i);
        if (eq != NULL && eq > s + i) {
            if ((rc = add_env(envs, s + i, (size_t)(eq - (s + i)), eq + 1, (size_t)(s + end - eq - 1), 0, err)) !=
                WH_OK)
                return rc;
        }
        i = end + seplen;
    }
    return WH_OK;
}

wh_code wh_inject_path_parse(const char *suffix, size_t len, char **rev_name, json_t **envs, wh_err *err)
{
    json_t *out = json_object();
    const char *rest;
    size_t rlen;
    wh_code rc;

    *rev_name = NULL;
    *envs = NULL;
    if (suffix == NULL)
        len = 0;
    if (len > 0 && suffix[len - 1] == '/')
        len--;
    if (len == 0 || suffix[0] != '/') {
        /* "/inject" alone (or a suffix that is not a path segment). */
        *envs = out;
        return WH_OK;
    }
    rest = suffix + 1;
    rlen = len - 1;

    /* Our own leading "rev/<name>" pair. */
    if (rlen > 4 && memcmp(rest, "rev/", 4) == 0) {
        const char *name = rest + 4, *slash = memchr(name, '/', rlen - 4);
        size_t nlen = slash ? (size_t)(slash - name) : rlen - 4;
        if (nlen > 0) {
            *rev_name = wh_strndup(name, nlen);
            rest = slash ? slash + 1 : rest + rlen;
            rlen = (size_t)(suffix + len - rest);
            if (slash == NULL) {
                *envs = out;
                return WH_OK;
            }
        }
    }

    if (rlen >= 5 && memcmp(rest, ":ENV:", 5) == 0) {
        if ((rc = parse_env_form(rest, rlen, out, err)) != WH_OK)
            goto out;
    } else {
        /* Alternating key/value segments; an odd trailing key is ignored. */
        size_t i = 0;
        for (;;) {
            const char *k = rest + i, *ks = memchr(k, '/', rlen - i);
            if (ks == NULL)
                break; /* last key without a value */
            const char *v = ks + 1, *vs = memchr(v, '/', (size_t)(rest + rlen - v));
            size_t vlen = vs ? (size_t)(vs - v) : (size_t)(rest + rlen - v);
            if ((rc = add_env(out, k, (size_t)(ks - k), v, vlen, 1, err)) != WH_OK)
                goto out;
            if (vs == NULL)
                break;
            i = (size_t)(vs + 1 - rest);
        }
    }
    *envs = out;
    return WH_OK;
out:
    json_decref(out);
    free(*rev_name);
    *rev_name = NULL;
    return rc;
}

/* A shallow copy of object `o` (its members' values shared; NULL: no
 * members) in one build,
 * without member `drop` (NULL: none), member `swap` (NULL: none) given the
 * value `with` instead (its reference stolen; appended when `o` lacks it),
 * and `add` -> `add_value` appended when `add` is not NULL (its reference
 * stolen).  Why: json_copy and the edits after it hashed and inserted every
 * key one by one, ~3.5 k instructions of a hello review's ~6 k decode. */
static json_t *copy_members(const json_t *o, const char *drop, const char *swap, json_t *with, const char *add,
                            json_t *add_value)
{
    wh_json_member buf[32], *heap = NULL;
    size_t i, n = 0, k = 0;
    const wh_json_member *m = o != NULL ? wh_json_members(o, buf, 32, &heap, &n) : buf;
    wh_json_key kstack[34], *keys = n + 2 <= 34 ? kstack : wh_malloc((n + 2) * sizeof(*keys));
    json_t *vstack[34], **values = n + 2 <= 34 ? vstack : wh_malloc((n + 2) * sizeof(*values)), *out;
    int swapped = 0;

    for (i = 0; i < n; i++) {
        if (drop != NULL && strcmp(m[i].key, drop) == 0)
            continue;
        keys[k] = (wh_json_key){m[i].key, m[i].len};
        if (swap != NULL && !swapped && strcmp(m[i].key, swap) == 0) {
            values[k++] = with;
            swapped = 1;
        } else {
            values[k++] = json_incref(m[i].value);
        }
    }
    if (swap != NULL && !swapped) {
        keys[k] = (wh_json_key){swap, strlen(swap)};
        values[k++] = with;
    }
    if (add != NULL) {
        keys[k] = (wh_json_key){add, strlen(add)};
        values[k++] = add_value;
    }
    out = wh_json_arena_object(keys, values, k, 0); /* the keys are an object's: distinct */
    if (keys != kstack)
        free(keys);
    if (values != vstack)
        free(values);
    free(heap);
    return out;
}

wh_code wh_inject_decode_pod(const json_t *req_pod, const char *namespace_, json_t **out, wh_inject_go_leaves **leaves,
                             wh_err *err)
{
    const json_t *meta;
    json_t *copy, *ns_value = NULL;
    const char *ns;
    wh_code rc;

    if ((rc = wh_inject_go_decode((json_t *)req_pod, &wh_inject_type_pod, 0, leaves, err)) != WH_OK) {
        wh_err_prefix(err, "could not decode pod");
        return rc;
    }
    /* Shallow copies: only the top level and metadata's own keys change here,
     * and nothing downstream modifies the original pod in place.  req_pod is
     * an object (wh_inject_go_decode checked), its metadata an object or
     * absent (or null). */
    meta = wh_json_get(req_pod, "metadata");
    ns = json_string_value(wh_json_get(meta, "namespace"));
    /* namespace_: the AdmissionRequest's (a JSON string, so UTF-8) or ours */
    if ((ns == NULL || *ns == '\0') && namespace_ != NULL && *namespace_ != '\0')
        ns_value = json_string(namespace_);
    if (json_is_object(meta))
        copy = copy_members(meta, "managedFields", ns_value != NULL ? "namespace" : NULL, ns_value, NULL, NULL);
    else
        copy = copy_members(NULL, NULL, NULL, NULL, ns_value != NULL ? "namespace" : NULL, ns_value);
    *out = copy_members(req_pod, NULL, "metadata", copy, NULL, NULL);
    return WH_OK;
}
