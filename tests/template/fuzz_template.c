/*
 * fuzz_template.c - libFuzzer target for the template engine: parse a
 * template and render it against JSON data.  Input: template text, then a
 * NUL byte, then the data as JSON (absent or invalid: null).  Limits keep
 * hostile templates (exponential template calls, huge repeats) bounded.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wh_tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(data, 0, size);
    size_t tlen = nul != NULL ? (size_t)(nul - text) : size;
    json_t *doc = NULL;
    wh_tmpl_set *set;
    wh_buf out = WH_BUF_INIT;
    wh_tmpl_opts opts = {0};
    wh_tmpl_pos pos;
    wh_err err;

    if (nul != NULL)
        doc = json_loadb(nul + 1, size - tlen - 1, JSON_DECODE_ANY, NULL);
    if ((set = wh_tmpl_set_new(WH_TMPL_SPRIG | WH_TMPL_HELM)) == NULL)
        goto out;
    if (wh_tmpl_parse(set, "fuzz", text, tlen, &err) != WH_OK)
        goto out;
    opts.max_output = 1 << 20;
    opts.max_steps = 200000;
    opts.max_depth = 200;
    opts.pos = &pos;
    (void)wh_tmpl_render(set, "fuzz", wh_tmpl_json(doc), &opts, &out, &err);
out:
    wh_buf_free(&out);
    wh_tmpl_set_free(set);
    json_decref(doc);
    return 0;
}
