/*
 * output.c - `-o json|yaml` of the commands that print a document (check,
 * check-inject; see wh_ctl.h), one place for kubectl's convention that every
 * structured output exists in both JSON and YAML.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_buf.h"
#include "wh_ctl.h"
#include "wh_go.h"
#include "wh_yaml.h"

int wh_ctl_output_check(const wh_ctl_args *a, const char *format)
{
    static const char *const known[] = {"table", "json", "yaml"};

    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(format, known[i]) == 0)
            return 0;
    return wh_ctl_usage_error(a, "unknown output format \"%s\" (use table, json or yaml)", format);
}

int wh_ctl_output_doc(const char *format, const json_t *doc)
{
    wh_buf y = WH_BUF_INIT;
    wh_err err = {0};

    if (strcmp(format, "yaml") == 0) {
        if (wh_yaml_dump(doc, &y, &err) != WH_OK) {
            fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
            wh_buf_free(&y);
            return 1;
        }
        fwrite(y.data, 1, y.len, stdout);
        wh_buf_free(&y);
        return 0;
    }
    wh_go_json_indent(&y, doc, WH_GO_JSON_HTML, "  "); /* istioctl's json.MarshalIndent */
    printf("%s\n", y.data);
    wh_buf_free(&y);
    return 0;
}
