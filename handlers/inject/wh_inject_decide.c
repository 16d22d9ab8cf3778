/*
 * wh_inject_decide.c - istiod's injectRequired rule chain (its cases:
 * tests/inject/conformance and tests/inject/kube-inject): host
 * network, system namespaces, the sidecar.istio.io/inject label/annotation,
 * never/always selectors, then the config's policy.
 */
#include "wh_inject_decide.h"

#include "wh_inject_pod.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static const char *const system_namespaces[] = {"kube-system", "kube-public", "kube-node-lease", "local-path-storage",
                                                NULL};

static int in_values(const json_t *values, const char *v)
{
    size_t i;
    json_t *e;

    json_array_foreach(values, i, e) if (json_is_string(e) && strcmp(json_string_value(e), v) == 0) return 1;
    return 0;
}

/* A label name (the part after any prefix) or value: at most 63 of [A-Za-z0-9._-], starting and
 * ending alphanumeric; a value may be empty. */
static int label_token_ok(const char *s, size_t n, int may_be_empty)
{
    if (n == 0)
        return may_be_empty;
    if (n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 1; i + 1 < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* A DNS-1123 subdomain: at most 253 bytes, dot-separated [a-z0-9-] labels, each starting and ending
 * [a-z0-9]. */
static int dns_subdomain_ok(const char *s, size_t n)
{
    size_t start = 0;

    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-') ||
                (s[i] == '-' && (i == start || i + 1 == n || s[i + 1] == '.')))
                return 0;
            continue;
        }
        if (i == start)
            return 0; /* an empty label */
        start = i + 1;
    }
    return 1;
}

/* A label key (validation.IsQualifiedName): [prefix/]name. */
static int label_key_ok(const char *key)
{
    const char *slash = strchr(key, '/');

    if (slash == NULL)
        return label_token_ok(key, strlen(key), 0);
    return strchr(slash + 1, '/') == NULL && dns_subdomain_ok(key, (size_t)(slash - key)) &&
           label_token_ok(slash + 1, strlen(slash + 1), 0);
}

static int label_value_ok(const json_t *v)
{
    return json_is_string(v) && label_token_ok(json_string_value(v), json_string_length(v), 1);
}

/* metav1.LabelSelectorAsSelector then Matches: 1 matches, 0 does not (or
 * selects nothing / everything: istiod skips an empty selector), -1 invalid
 * (a malformed field, an invalid label key or value, an unknown operator,
 * values where the operator takes none or none where it needs some). */
int wh_inject_selector_matches(const json_t *selector, const json_t *labels)
{
    const json_t *ml, *me, *req, *val;
    const char *key;
    size_t i, n = 0;
    int match = 1;

    if (!json_is_object(selector))
        return json_is_null(selector) ? 0 : -1;
    ml = json_object_get(selector, "matchLabels");
    me = json_object_get(selector, "matchExpressions");
    if ((ml != NULL && !json_is_object(ml) && !json_is_null(ml)) ||
        (me != NULL && !json_is_array(me) && !json_is_null(me)))
        return -1;
    json_object_foreach((json_t *)ml, key, val)
    {
        const char *have;
        if (!label_key_ok(key) || !label_value_ok(val))
            return -1;
        n++;
        have = wh_inject_jstr(labels, key);
        if (have == NULL || strcmp(have, json_string_value(val)) != 0)
            match = 0;
    }
    json_array_foreach(me, i, req)
    {
        const char *k = wh_inject_jstr(req, "key"), *op = wh_inject_jstr(req, "operator"), *have;
        const json_t *values = json_object_get(req, "values");
        size_t nv = json_array_size(values);
        if (k == NULL || op == NULL || (values != NULL && !json_is_array(values) && !json_is_null(values)) ||
            !label_key_ok(k))
            return -1;
        n++;
        have = wh_inject_jstr(labels, k);
        if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
            if (nv == 0)
                return -1;
            for (size_t j = 0; j < nv; j++)
                if (!label_value_ok(json_array_get(values, j)))
                    return -1;
            int in = have != NULL && in_values(values, have);
            if (op[0] == 'I' ? !in : in)
                match = 0;
        } else if (strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0) {
            if (nv != 0)
                return -1;
            if ((op[0] == 'E') != (have != NULL))
                match = 0;
        } else {
            return -1;
        }
    }
    return n == 0 ? 0 : match;
}

/* The first of `selectors` that matches; invalid ones are skipped. */
static int any_selector(const json_t *selectors, const json_t *labels)
{
    size_t i;
    json_t *s;

    json_array_foreach(selectors, i, s) if (wh_inject_selector_matches(s, labels) == 1) return 1;
    return 0;
}

int wh_inject_decide(const wh_inject_revision *rev, const json_t *pod, int kube_inject, const char **reason)
{
    const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    const json_t *labels = json_object_get(meta, "labels"), *annotations = json_object_get(meta, "annotations");
    const char *ns = wh_inject_jstr(meta, "namespace"), *value, *policy;
    int use_default = 0, inject = 0;

    *reason = NULL;
    if (json_is_true(json_object_get(spec, "hostNetwork"))) {
        *reason = "host network";
        return 0;
    }
    for (size_t i = 0; ns != NULL && system_namespaces[i]; i++)
        if (strcmp(ns, system_namespaces[i]) == 0) {
            *reason = "system namespace";
            return 0;
        }
    /* The label, if present at all, beats the annotation. */
    if (json_object_get(labels, "sidecar.istio.io/inject") != NULL)
        value = wh_inject_jstr(labels, "sidecar.istio.io/inject");
    else
        value = wh_inject_jstr(annotations, "sidecar.istio.io/inject");
    if (value == NULL)
        value = "";
    if (value[0] == '\0') {
        use_default = 1;
    } else if (rev == NULL || wh_inject_release_has(&rev->release, WH_REL_INJECT_VALUE_STRICT)) {
        if (strcmp(value, "true") == 0)
            inject = 1;
        else if (strcmp(value, "false") != 0)
            use_default = 1; /* an unrecognised value (istiod warns) */
    } else if (strcasecmp(value, "y") == 0 || strcasecmp(value, "yes") == 0 || strcasecmp(value, "true") == 0 ||
               strcasecmp(value, "on") == 0) {
        inject = 1; /* YAML's truthy spellings, in any case */
    } else if (strcmp(value, "false") != 0) {
        *reason = "sidecar.istio.io/inject is none of y, yes, true, on (an explicit no before Istio 1.27)";
    }

    if (use_default && !kube_inject && rev != NULL) {
        if (any_selector(rev->never_selectors, labels)) {
            use_default = 0;
            inject = 0;
            *reason = "neverInjectSelector";
        } else if (any_selector(rev->always_selectors, labels)) {
            use_default = 0;
            inject = 1;
        }
    }
    policy = kube_inject || rev == NULL ? "enabled" : rev->policy;
    if (strcmp(policy, "enabled") == 0) {
        if (use_default)
            return 1;
    } else if (strcmp(policy, "disabled") == 0) {
        if (use_default) {
            *reason = "policy disabled";
            return 0;
        }
    } else {
        *reason = "unknown injection policy";
        return 0;
    }
    if (!inject && *reason == NULL)
        *reason = "sidecar.istio.io/inject=false";
    return inject;
}
