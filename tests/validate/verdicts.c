/*
 * verdicts.c - test driver: reads a stream of JSON objects on stdin (each
 * {"object": ..., "namespace": "..."}, or {"meshNetworks": "<YAML>"}), judges
 * each with wh_validate_object (or wh_validate_mesh_networks), and prints one
 * JSON line per item: {"allowed", "message", "warnings"}.  The fixture runner
 * (run_fixtures.py) compares those lines with fixtures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_validate.h"

int main(void)
{
    json_error_t jerr;
    json_t *item;
    int status = 0;

    while ((item = json_loadf(stdin, JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, &jerr)) != NULL) {
        const char *ns = json_string_value(json_object_get(item, "namespace"));
        wh_validate_input in = {NULL, NULL, ns ? ns : "default", {0}};
        wh_validate_verdict v;
        wh_err err;
        json_t *line;
        char *text;

        wh_err_clear(&err);
        if (json_is_string(json_object_get(item, "meshNetworks"))) {
            const json_t *doc = json_object_get(item, "meshNetworks");
            int ok = wh_validate_mesh_networks(json_string_value(doc), json_string_length(doc), &err) == WH_OK;
            line = json_pack("{s:b, s:s?, s:n}", "allowed", ok, "message", ok ? NULL : wh_err_msg(&err), "warnings");
            text = json_dumps(line, JSON_COMPACT);
            printf("%s\n", text);
            free(text);
            json_decref(line);
            json_decref(item);
            continue;
        }
        if (wh_validate_object(json_object_get(item, "object"), &in, &v, &err) != WH_OK) {
            fprintf(stderr, "verdicts: %s\n", wh_err_msg(&err));
            json_decref(item);
            return 1;
        }
        line = json_pack("{s:b, s:s?, s:O?}", "allowed", v.allowed, "message", v.message, "warnings", v.warnings);
        text = line ? json_dumps(line, JSON_COMPACT) : NULL;
        if (text == NULL) {
            status = 1;
        } else {
            printf("%s\n", text);
        }
        free(text);
        json_decref(line);
        wh_validate_verdict_clear(&v);
        json_decref(item);
    }
    if (jerr.position != 0 && !feof(stdin) && strstr(jerr.text, "end of file") == NULL) {
        fprintf(stderr, "verdicts: bad input: %s\n", jerr.text);
        status = 1;
    }
    return status;
}
