/*
 * yaml_tool.c - drives wh_yaml from the command line for the differential
 * test against sigs.k8s.io/yaml: `load` prints each document of stdin as one
 * JSON line, `dump` prints the JSON on stdin as YAML.
 */
#include <stdio.h>
#include <string.h>

#include "wh_buf.h"
#include "wh_yaml.h"

int main(int argc, char **argv)
{
    wh_buf in = WH_BUF_INIT, out = WH_BUF_INIT;
    wh_err err;
    json_t *v = NULL;
    int status = 0;

    wh_err_clear(&err);
    if (argc != 2 || wh_buf_read_file(&in, "-", 64 << 20, &err) != WH_OK) {
        fprintf(stderr, "usage: yaml_tool load|dump < input\n");
        return 2;
    }
    if (strcmp(argv[1], "load") == 0) {
        if (wh_yaml_load_all(in.data, in.len, &v, &err) != WH_OK) {
            printf("ERROR\n");
            fprintf(stderr, "%s\n", wh_err_msg(&err));
            goto out;
        }
        size_t i;
        json_t *d;
        json_array_foreach(v, i, d)
        {
            char *s = json_dumps(d, JSON_ENCODE_ANY | JSON_COMPACT);
            printf("%s\n", s ? s : "ERROR");
            free(s);
        }
    } else {
        json_error_t jerr;
        if ((v = json_loadb(in.data, in.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr)) == NULL) {
            fprintf(stderr, "bad JSON: %s\n", jerr.text);
            status = 2;
            goto out;
        }
        if (wh_yaml_dump(v, &out, &err) != WH_OK) {
            printf("ERROR\n");
            fprintf(stderr, "%s\n", wh_err_msg(&err));
            goto out;
        }
        fwrite(out.data, 1, out.len, stdout);
    }
out:
    json_decref(v);
    wh_buf_free(&in);
    wh_buf_free(&out);
    return status;
}
