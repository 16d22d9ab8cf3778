/*
 * kube_selector.c - label selectors evaluated locally (to reason about which
 * webhook would be called for which labels) and the API server's name rules,
 * checked before anything is sent.
 */
#include <ctype.h>
#include <string.h>

#include "wh_kube.h"

static int value_in(const json_t *values, const char *v)
{
    size_t i;
    json_t *e;

    json_array_foreach(values, i, e)
    {
        if (json_is_string(e) && strcmp(json_string_value(e), v) == 0)
            return 1;
    }
    return 0;
}

int wh_kube_selector_matches(const json_t *selector, const json_t *labels)
{
    const json_t *ml, *me, *v, *e;
    const char *key;
    size_t i;

    if (selector == NULL || json_is_null(selector))
        return 1;
    if (!json_is_object(selector))
        return -1;
    ml = json_object_get(selector, "matchLabels");
    me = json_object_get(selector, "matchExpressions");
    if ((ml != NULL && !json_is_null(ml) && !json_is_object(ml)) ||
        (me != NULL && !json_is_null(me) && !json_is_array(me)))
        return -1;
    json_object_foreach((json_t *)ml, key, v)
    {
        const char *have = json_string_value(json_object_get(labels, key));
        if (!json_is_string(v))
            return -1;
        if (have == NULL || strcmp(have, json_string_value(v)) != 0)
            return 0;
    }
    json_array_foreach(me, i, e)
    {
        const char *k = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        const json_t *values = json_object_get(e, "values");
        const char *have;
        if (k == NULL || op == NULL)
            return -1;
        have = json_string_value(json_object_get(labels, k));
        if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
            int in;
            if (!json_is_array(values) || json_array_size(values) == 0)
                return -1;
            in = have != NULL && value_in(values, have);
            if ((op[0] == 'I') != in)
                return 0;
        } else if (strcmp(op, "Exists") == 0) {
            if (have == NULL)
                return 0;
        } else if (strcmp(op, "DoesNotExist") == 0) {
            if (have != NULL)
                return 0;
        } else {
            return -1;
        }
    }
    return 1;
}

static int is_alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int dns_label_ok(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !is_alnum_lower(s[0]) || !is_alnum_lower(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum_lower(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

wh_code wh_kube_check_dns1123_label(const char *s, wh_err *err)
{
    size_t n = strlen(s);

    if (n > 63)
        return wh_err_set(err, WH_E_INVALID, "\"%s\": must be no more than 63 characters", s);
    if (!dns_label_ok(s, n))
        return wh_err_set(err, WH_E_INVALID,
                          "\"%s\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                          "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                          "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                          s);
    return WH_OK;
}

wh_code wh_kube_check_dns1123_subdomain(const char *s, wh_err *err)
{
    size_t n = strlen(s);
    const char *p = s;
    int ok = n > 0;

    if (n > 253)
        return wh_err_set(err, WH_E_INVALID, "\"%s\": must be no more than 253 characters", s);
    while (ok) {
        size_t l = strcspn(p, ".");
        ok = dns_label_ok(p, l);
        if (p[l] == '\0')
            break;
        p += l + 1;
    }
    if (!ok)
        return wh_err_set(err, WH_E_INVALID,
                          "\"%s\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                          "regex used for validation is "
                          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                          s);
    return WH_OK;
}

wh_code wh_kube_check_label_value(const char *s, wh_err *err)
{
    size_t n = strlen(s);
    int ok = 1;

    if (n > 63)
        return wh_err_set(err, WH_E_INVALID, "\"%s\": must be no more than 63 characters", s);
    if (n > 0) {
        ok = isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);
        for (size_t i = 0; i < n && ok; i++)
            ok = isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_' || s[i] == '.';
    }
    if (!ok)
        return wh_err_set(err, WH_E_INVALID,
                          "\"%s\": a valid label must be an empty string or consist of alphanumeric characters, '-', "
                          "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
                          "'my_value',  or '12345', regex used for validation is "
                          "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                          s);
    return WH_OK;
}
