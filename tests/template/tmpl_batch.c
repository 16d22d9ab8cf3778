/*
 * tmpl_batch.c - runs a batch of template cases through the C engine, in the
 * same JSON protocol as the Go reference (goref/), so the runner can compare
 * the two case by case.  Input: a JSON array of {"name","template","data",
 * "options","helm"}; output: a JSON array of {"name","out","err"} on stdout.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "wh_tmpl.h"

/* A JSON string of bytes that may not be UTF-8: invalid bytes become U+FFFD,
 * as Go's encoding/json writes them. */
static json_t *json_text(const char *s, size_t len)
{
    wh_buf b = WH_BUF_INIT;
    json_t *j;
    size_t i = 0;

    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        json_t *probe = n != 0 && i + n <= len ? json_stringn(s + i, n) : NULL;
        if (probe == NULL) {
            wh_buf_puts(&b, "\xef\xbf\xbd");
            i++;
            continue;
        }
        json_decref(probe);
        wh_buf_append(&b, s + i, n);
        i += n;
    }
    j = json_stringn(b.data ? b.data : "", b.len);
    wh_buf_free(&b);
    return j;
}

static json_t *run_case(const json_t *c)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const json_t *tmpl = json_object_get(c, "template");
    const json_t *opts = json_object_get(c, "options");
    unsigned flags = WH_TMPL_SPRIG;
    wh_tmpl_set *set = NULL;
    wh_buf out = WH_BUF_INIT;
    wh_err err;
    json_t *res;
    size_t i;
    wh_code rc;

    wh_err_clear(&err);
    if (name == NULL)
        name = "case";
    if (json_is_true(json_object_get(c, "helm")))
        flags |= WH_TMPL_HELM;
    for (i = 0; i < json_array_size(opts); i++) {
        const char *o = json_string_value(json_array_get(opts, i));
        if (o != NULL && strcmp(o, "missingkey=error") == 0)
            flags |= WH_TMPL_MISSINGKEY_ERROR;
        else if (o != NULL && strcmp(o, "missingkey=zero") == 0)
            flags |= WH_TMPL_MISSINGKEY_ZERO;
    }
    res = json_pack("{ss}", "name", name);
    if ((set = wh_tmpl_set_new(flags)) == NULL) {
        rc = wh_err_set(&err, WH_E_INTERNAL, "cannot create a template set");
        goto out;
    }
    if ((rc = wh_tmpl_parse(set, name, json_string_value(tmpl), json_string_length(tmpl), &err)) != WH_OK)
        goto out;
    rc = wh_tmpl_render(set, name, wh_tmpl_json(json_object_get(c, "data")), NULL, &out, &err);
out:
    json_object_set_new(res, "out", json_text(out.data ? out.data : "", out.len));
    json_object_set_new(res, "err", rc == WH_OK ? json_null() : json_text(wh_err_msg(&err), strlen(wh_err_msg(&err))));
    wh_buf_free(&out);
    wh_tmpl_set_free(set);
    return res;
}

int main(int argc, char **argv)
{
    json_error_t jerr;
    json_t *cases, *results;
    size_t i;

    if (argc != 2) {
        fprintf(stderr, "usage: %s CASES.json\n", argv[0]);
        return 2;
    }
    if ((cases = json_load_file(argv[1], JSON_DECODE_ANY, &jerr)) == NULL || !json_is_array(cases)) {
        fprintf(stderr, "%s: %s\n", argv[1], jerr.text);
        return 2;
    }
    results = json_array();
    for (i = 0; i < json_array_size(cases); i++)
        json_array_append_new(results, run_case(json_array_get(cases, i)));
    json_dumpf(results, stdout, JSON_COMPACT | JSON_ENSURE_ASCII);
    putchar('\n');
    json_decref(results);
    json_decref(cases);
    return 0;
}
