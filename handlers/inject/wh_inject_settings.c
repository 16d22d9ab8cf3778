/*
 * wh_inject_settings.c - what istiod reads from its process environment
 * rather than from the ConfigMaps (native sidecars, compliance policy,
 * platform, the env the templates see), as flags shared by webhookd and
 * webhookctl kube-inject, and what of it a revision's own values decide
 * (see wh_inject_settings.h).
 */
#include "wh_inject_settings.h"
#include "wh_alloc.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int parse_native(const char *v, wh_inject_native_mode *mode)
{
    if (strcmp(v, "auto") == 0)
        *mode = WH_INJECT_NATIVE_AUTO;
    else if (strcmp(v, "true") == 0)
        *mode = WH_INJECT_NATIVE_TRUE;
    else if (strcmp(v, "false") == 0)
        *mode = WH_INJECT_NATIVE_FALSE;
    else
        return -1;
    return 0;
}

static void set_str(char **field, const char *value)
{
    free(*field);
    *field = value != NULL && value[0] != '\0' ? wh_strdup(value) : NULL;
}

static wh_code set_env(wh_inject_settings *s, const char *value, wh_err *err)
{
    const char *eq = strchr(value, '=');
    char *name;
    json_t *js;
    int bad;

    if (eq == NULL || eq == value)
        return wh_err_set(err, WH_E_INVALID, "--env: want KEY=VALUE, got \"%s\"", value);
    if (s->env == NULL)
        s->env = json_object();
    name = wh_strndup(value, (size_t)(eq - value));
    js = json_string(eq + 1);
    bad = js == NULL || json_object_set_new(s->env, name, js) != 0;
    free(name);
    if (bad)
        return wh_err_set(err, WH_E_INVALID, "--env: value of \"%s\" is not valid UTF-8", value);
    return WH_OK;
}

/* KEY=VALUE[,KEY=VALUE...]: a comma (or newline) starts a new pair only when
 * a KEY= follows it, so values may contain commas. */
static wh_code set_envs(wh_inject_settings *s, const char *list, wh_err *err)
{
    char *copy, *start, *p;
    wh_code rc = WH_OK;

    if (*list == '\0')
        return set_env(s, list, err); /* the error */
    copy = wh_strdup(list);
    for (start = p = copy; rc == WH_OK; p++) {
        if (*p == ',' || *p == '\n') {
            const char *k = p + 1;
            while (isalnum((unsigned char)*k) || *k == '_')
                k++;
            if (k == p + 1 || *k != '=' || isdigit((unsigned char)p[1]))
                continue;
        } else if (*p != '\0') {
            continue;
        }
        {
            int end = *p == '\0';
            *p = '\0';
            if (*start != '\0')
                rc = set_env(s, start, err);
            if (end)
                break;
            start = p + 1;
        }
    }
    free(copy);
    return rc;
}

wh_code wh_inject_settings_set(wh_inject_settings *s, const char *key, const char *value, wh_err *err)
{
    if (key == NULL || value == NULL)
        return wh_err_set(err, WH_E_INVALID, "injection setting needs a name and a value");
    if (strcmp(key, "native-sidecars") == 0) {
        if (parse_native(value, &s->native_mode) != 0)
            return wh_err_set(err, WH_E_INVALID, "--native-sidecars: want true, false or auto, got \"%s\"", value);
        s->native_mode_set = 1;
        return WH_OK;
    }
    if (strcmp(key, "compliance-policy") == 0) {
        set_str(&s->compliance_policy, value);
        return WH_OK;
    }
    if (strcmp(key, "platform") == 0) {
        if (value[0] != '\0' && strcmp(value, "openshift") != 0)
            return wh_err_set(err, WH_E_INVALID, "--platform: want openshift (or empty), got \"%s\"", value);
        set_str(&s->platform, value);
        return WH_OK;
    }
    if (strcmp(key, "env") == 0)
        return set_envs(s, value, err);
    return wh_err_set(err, WH_E_INVALID, "unknown injection setting \"%s\"", key);
}

wh_code wh_inject_settings_set_node(wh_inject_settings *s, const char *node, const char *kubelet_version)
{
    if (s->nodes == NULL)
        s->nodes = json_object();
    if (json_object_set_new(s->nodes, node, json_string(kubelet_version ? kubelet_version : "")) != 0)
        return WH_E_INVALID;
    return WH_OK;
}

void wh_inject_settings_clear(wh_inject_settings *s)
{
    free(s->compliance_policy);
    free(s->platform);
    json_decref(s->env);
    json_decref(s->nodes);
    memset(s, 0, sizeof(*s));
}

/* The environment value of `key` from the --env pairs, or NULL. */
const char *wh_inject_settings_env(const wh_inject_settings *s, const char *key)
{
    return s != NULL && s->env != NULL ? json_string_value(json_object_get(s->env, key)) : NULL;
}

const char *wh_inject_settings_getenv(const wh_inject_settings *s, const char *key)
{
    static const char *const native_names[] = {"auto", "true", "false"};

    if (s == NULL)
        return NULL;
    if (strcmp(key, "ENABLE_NATIVE_SIDECARS") == 0 && s->native_mode_set)
        return native_names[s->native_mode];
    if (strcmp(key, "PLATFORM") == 0 && s->platform != NULL)
        return s->platform;
    if (strcmp(key, "COMPLIANCE_POLICY") == 0 && s->compliance_policy != NULL)
        return s->compliance_policy;
    return wh_inject_settings_env(s, key);
}

const char *wh_inject_settings_platform(const wh_inject_settings *s)
{
    const char *v = wh_inject_settings_getenv(s, "PLATFORM");
    return v != NULL ? v : "";
}

const char *wh_inject_settings_revision_platform(const wh_inject_settings *s, const json_t *values)
{
    const char *v = json_string_value(json_object_get(json_object_get(values, "global"), "platform"));
    return v != NULL && v[0] != '\0' ? v : wh_inject_settings_platform(s);
}

void wh_inject_settings_for_revision(const wh_inject_settings *process, const json_t *values, wh_inject_settings *out)
{
    const char *platform = wh_inject_settings_revision_platform(process, values);

    if (process != NULL)
        *out = *process;
    else
        *out = (wh_inject_settings)WH_INJECT_SETTINGS_INIT;
    /* a borrowed string in the owned field: the copy is never cleared */
    out->platform = platform[0] != '\0' ? (char *)platform : NULL;
}

const char *wh_inject_settings_compliance(const wh_inject_settings *s)
{
    const char *v = wh_inject_settings_getenv(s, "COMPLIANCE_POLICY");
    return v != NULL ? v : "";
}

/* A character of a go-version pre-release or metadata identifier. */
static int version_ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '~';
}

/* Skip identifiers "C+('.'C+)*" from *p; 0 when the first is empty. */
static int version_idents(const char **p, int first_may_be_empty)
{
    const char *q = *p;

    if (!first_may_be_empty && !version_ident_char(*q))
        return 0;
    for (;;) {
        while (version_ident_char(*q))
            q++;
        if (q[0] != '.' || !version_ident_char(q[1]))
            break;
        q++;
    }
    *p = q;
    return 1;
}

/* istiod's DetectNativeSidecar reads a node's kubelet version with
 * hashicorp/go-version's NewVersion (the whole text, no trimming: "v"?,
 * dot-separated int64 segments, then optionally a pre-release starting with
 * a letter, '-' or '~', then optionally "+metadata"; fewer than three
 * segments are padded with 0) and compares only the second segment with 33:
 * "v1.33.1-eks-1", "1.35.0+k3s1" and even "2.40" are eligible, "v2.0", "v1",
 * "1.33.x" and anything malformed are not. */
static int kubelet_eligible(const char *v)
{
    const char *p = v;
    long long minor = 0;
    int nseg = 0;

    if (p == NULL)
        return 0;
    if (*p == 'v')
        p++;
    for (;;) {
        long long seg = 0;
        if (!isdigit((unsigned char)*p))
            return 0;
        for (; isdigit((unsigned char)*p); p++) {
            if (seg > (LLONG_MAX - (*p - '0')) / 10)
                return 0; /* strconv.ParseInt: out of range */
            seg = seg * 10 + (*p - '0');
        }
        if (nseg++ == 1)
            minor = seg;
        if (p[0] != '.' || !isdigit((unsigned char)p[1]))
            break;
        p++;
    }
    /* pre-release: [A-Za-z~-] then identifier characters, more after dots */
    if (isalpha((unsigned char)*p) || *p == '-' || *p == '~') {
        p++;
        version_idents(&p, 1);
    }
    if (*p == '+') {
        p++;
        if (!version_idents(&p, 0))
            return 0;
    }
    return *p == '\0' && minor >= 33;
}

int wh_inject_settings_native(const wh_inject_settings *s, const char *node_name, const wh_inject_release *rel)
{
    wh_inject_native_mode mode = WH_INJECT_NATIVE_AUTO;
    const char *key;
    json_t *val;

    if (s != NULL) {
        mode = s->native_mode;
        if (!s->native_mode_set) {
            const char *env = wh_inject_settings_env(s, "ENABLE_NATIVE_SIDECARS");
            /* istiod: an unknown value disables native sidecars. */
            if (env != NULL && parse_native(env, &mode) != 0)
                mode = WH_INJECT_NATIVE_FALSE;
        }
    }
    if (mode != WH_INJECT_NATIVE_AUTO)
        return mode == WH_INJECT_NATIVE_TRUE;
    if (!wh_inject_release_has(rel, WH_REL_NATIVE_SIDECARS_AUTO))
        return 0; /* a boolean defaulting to false; "auto" does not parse */
    if (s != NULL && json_is_false(s->nodes))
        return 0; /* istiod without a node client */
    if (s == NULL || s->nodes == NULL)
        return 1; /* no nodes known: nothing is ineligible */
    if (node_name != NULL && node_name[0] != '\0' && (val = json_object_get(s->nodes, node_name)) != NULL)
        return kubelet_eligible(json_string_value(val));
    json_object_foreach(s->nodes, key, val)
    {
        if (!kubelet_eligible(json_string_value(val)))
            return 0;
    }
    return 1;
}
