/*
 * fuzz_go_json.c - differential target for the Go JSON writer
 * (common/wh_go_json.c): any bytes as a string, alone and as an object's key
 * and value and an array's element, compact and indented, must come out as
 * the byte-at-a-time oracle of go_json_oracle.h writes them.  The first byte
 * picks the flags and the text's alignment.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "go_json_oracle.h"
#include "wh_alloc.h"
#include "wh_go.h"

static void expect(const wh_buf *got, const wh_buf *want, const char *what)
{
    if (got->len != want->len || memcmp(got->data, want->data, want->len) != 0) {
        fprintf(stderr, "fuzz_go_json: %s differs:\n got  %s\n want %s\n", what, got->data, want->data);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int flag_sets[] = {0, WH_GO_JSON_HTML, WH_GO_JSON_MINIMAL, WH_GO_JSON_HTML | WH_GO_JSON_MINIMAL};
    unsigned sel = size > 0 ? data[0] : 0;
    int flags = flag_sets[sel % 4];
    size_t align = (sel >> 2) % 8, len = size > 0 ? size - 1 : 0;
    char *block = wh_malloc(align + len + 1), *text = block + align; /* ends where the text ends (+1: len 0) */
    wh_buf got = WH_BUF_INIT, want = WH_BUF_INIT, str = WH_BUF_INIT;
    json_t *obj = json_object(), *arr = json_array();

    memcpy(text, data + (size > 0), len);
    wh_go_json_string(&got, text, len, flags);
    oracle_json_string(&str, text, len, flags);
    expect(&got, &str, "string");

    if (len == 1 && text[0] == '\x01') /* the array's key below: the object would have one member */
        goto out;
    json_array_append_new(arr, json_stringn_nocheck(text, len));
    json_object_setn_new_nocheck(obj, text, len, json_stringn_nocheck(text, len));
    json_object_set_nocheck(obj, "\x01", arr);
    wh_buf_reset(&got);
    wh_go_json(&got, obj, flags);
    wh_buf_printf(&want, "{%s:%s,\"\\u0001\":[%s]}", str.data, str.data, str.data);
    expect(&got, &want, "object");
    wh_buf_reset(&got);
    wh_buf_reset(&want);
    wh_go_json_indent(&got, obj, flags, "\t");
    wh_buf_printf(&want, "{\n\t%s: %s,\n\t\"\\u0001\": [\n\t\t%s\n\t]\n}", str.data, str.data, str.data);
    expect(&got, &want, "indented object");

out:
    json_decref(obj);
    json_decref(arr);
    free(block);
    wh_buf_free(&got);
    wh_buf_free(&want);
    wh_buf_free(&str);
    return 0;
}
