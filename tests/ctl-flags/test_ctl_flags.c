/*
 * test_ctl_flags.c - the runner of cases.yaml: webhookctl's flag parser
 * (ctl/wh_ctl_flags.h) fed argv, compared with the parsed values or the exact
 * error; plus golden help text.  The flag table (test_table.h) has one flag
 * of every type and option; the cases say what each command line must give.
 *
 * Usage: test_ctl_flags CASES.yaml GOLDEN_DIR   (WH_UPDATE_GOLDEN=1 rewrites goldens)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_ctl_flags.h"
#include "wh_yaml.h"

#include "test_table.h"

static int failures;

static void fail(const char *name, const char *fmt, const char *a, const char *b)
{
    failures++;
    fprintf(stderr, "FAIL %s: ", name);
    fprintf(stderr, fmt, a, b != NULL ? b : "");
    fputc('\n', stderr);
}

/* The parsed value of flag k as JSON (new reference). */
static json_t *value_json(const wh_ctl_args *a, size_t k)
{
    const wh_ctl_value *v = &a->values[k];
    json_t *arr;

    switch (a->flags[k]->type) {
    case WH_CTL_BOOL:
        return json_boolean(v->b);
    case WH_CTL_STRING:
        return v->text != NULL ? json_string(v->text) : json_null();
    case WH_CTL_INT:
        return json_integer(v->i);
    case WH_CTL_DURATION:
        return json_integer(v->ns);
    case WH_CTL_STRING_ARRAY:
        arr = json_array();
        for (size_t i = 0; i < v->nitems; i++)
            json_array_append_new(arr, json_string(v->items[i]));
        return arr;
    }
    return json_null();
}

static char *dump(const json_t *j)
{
    return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static void compare(const char *name, const char *what, const json_t *want, const json_t *got)
{
    if (!json_equal(want, got)) {
        char *w = dump(want), *g = dump(got), msg[64];
        snprintf(msg, sizeof(msg), "%s: want %%s, got %%s", what);
        fail(name, msg, w, g);
        free(w);
        free(g);
    }
}

static char *capture_help(const wh_ctl_cmd *cmd, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    if (f == NULL)
        return NULL;
    wh_ctl_help(cmd, path, f);
    fclose(f);
    return text;
}

static void check_golden(const char *name, const char *dir, const char *file, const char *got)
{
    wh_buf path = WH_BUF_INIT, want = WH_BUF_INIT;
    wh_err err = {0};

    wh_buf_printf(&path, "%s/%s", dir, file);
    if (getenv("WH_UPDATE_GOLDEN") != NULL) {
        FILE *f = fopen(path.data, "w");
        if (f == NULL || fputs(got, f) < 0)
            fail(name, "cannot write %s%s", path.data, NULL);
        if (f != NULL)
            fclose(f);
    } else if (wh_buf_read_file(&want, path.data, 1 << 20, &err) != WH_OK) {
        fail(name, "%s: %s", path.data, wh_err_msg(&err));
    } else if (strcmp(want.data != NULL ? want.data : "", got) != 0) {
        fail(name, "help differs from %s:\n%s", path.data, got);
    }
    wh_buf_free(&path);
    wh_buf_free(&want);
}

static void run_case(const json_t *c, const char *golden_dir)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const json_t *argv_j = json_object_get(c, "argv"), *env = json_object_get(c, "env"), *v;
    const char *want_err = json_string_value(json_object_get(c, "error"));
    const char *key;
    char **argv = NULL;
    size_t argc = json_array_size(argv_j), i;
    wh_ctl_args a;
    wh_err err = {0};
    wh_code rc;

    name = name != NULL ? name : "(unnamed)";
    if (json_object_get(c, "golden") != NULL) { /* help text of the test commands */
        char *leaf_help = capture_help(&leaf, "prog group do"), *group_help = capture_help(&group, "prog group");
        wh_buf both = WH_BUF_INIT;
        wh_buf_printf(&both, "%s----\n%s", leaf_help, group_help);
        check_golden(name, golden_dir, json_string_value(json_object_get(c, "golden")), both.data);
        wh_buf_free(&both);
        free(leaf_help);
        free(group_help);
        return;
    }
    argv = wh_calloc(argc + 1, sizeof(*argv));
    for (i = 0; i < argc; i++) {
        if (!json_is_string(json_array_get(argv_j, i))) {
            fail(name, "argv must be strings (quote %s in the fixture)%s", "them", NULL);
            free(argv);
            return;
        }
        argv[i] = (char *)json_string_value(json_array_get(argv_j, i));
    }
    json_object_foreach((json_t *)env, key, v) setenv(key, json_string_value(v), 1);
    rc = wh_ctl_parse(&leaf, "prog group do", (int)argc, argv, &a, &err);
    json_object_foreach((json_t *)env, key, v) unsetenv(key);
    if (want_err != NULL) {
        if (rc == WH_OK) {
            fail(name, "parsed, want error %s%s", want_err, NULL);
            wh_ctl_args_free(&a);
        } else if (strcmp(wh_err_msg(&err), want_err) != 0) {
            fail(name, "error %s, want %s", wh_err_msg(&err), want_err);
        }
    } else if (rc != WH_OK) {
        fail(name, "unexpected error %s%s", wh_err_msg(&err), NULL);
    } else {
        json_t *set = json_object(), *got_args = json_array(), *want_set = json_object_get(c, "set");
        json_t *want_args = json_object_get(c, "args");
        for (i = 0; i < a.nflags; i++)
            if (a.values[i].changed)
                json_object_set_new(set, a.flags[i]->name, value_json(&a, i));
        for (i = 0; i < a.nargs; i++)
            json_array_append_new(got_args, json_string(a.args[i]));
        json_t *no_set = json_object(), *no_args = json_array();
        compare(name, "set", want_set != NULL ? want_set : no_set, set);
        compare(name, "args", want_args != NULL ? want_args : no_args, got_args);
        json_decref(no_set);
        json_decref(no_args);
        /* `get`: effective values (defaults, environment) of any flag, through the getters */
        json_object_foreach(json_object_get(c, "get"), key, v)
        {
            json_t *got = NULL;
            size_t k;
            for (k = 0; k < a.nflags && strcmp(a.flags[k]->name, key) != 0; k++)
                ;
            if (k == a.nflags) {
                got = json_string("(no such flag)");
            } else {
                switch (a.flags[k]->type) {
                case WH_CTL_BOOL:
                    got = json_boolean(wh_ctl_bool(&a, key));
                    break;
                case WH_CTL_STRING:
                    got = wh_ctl_string(&a, key) != NULL ? json_string(wh_ctl_string(&a, key)) : json_null();
                    break;
                case WH_CTL_INT:
                    got = json_integer(wh_ctl_int(&a, key));
                    break;
                case WH_CTL_DURATION:
                    got = json_integer(wh_ctl_duration_ns(&a, key));
                    break;
                case WH_CTL_STRING_ARRAY: {
                    size_t n;
                    const char *const *items = wh_ctl_strings(&a, key, &n);
                    got = json_array();
                    for (size_t j = 0; j < n && items[j] != NULL; j++)
                        json_array_append_new(got, json_string(items[j]));
                    break;
                }
                }
            }
            compare(name, key, v, got);
            json_decref(got);
        }
        if (json_is_true(json_object_get(c, "help")) != (a.help != 0))
            fail(name, "the help flag is %s%s", a.help ? "set" : "not set", NULL);
        json_decref(set);
        json_decref(got_args);
        wh_ctl_args_free(&a);
    }
    free(argv);
}

int main(int argc, char **argv)
{
    wh_buf text = WH_BUF_INIT;
    wh_err err = {0};
    json_t *cases = NULL;
    size_t i;

    if (argc != 3) {
        fprintf(stderr, "usage: %s CASES.yaml GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    if (wh_buf_read_file(&text, argv[1], 1 << 22, &err) != WH_OK ||
        wh_yaml_load(text.data, text.len, &cases, &err) != WH_OK || !json_is_array(cases)) {
        fprintf(stderr, "%s: %s\n", argv[1], err.msg[0] ? wh_err_msg(&err) : "not a list of cases");
        wh_buf_free(&text);
        json_decref(cases);
        return 1;
    }
    for (i = 0; i < json_array_size(cases); i++)
        run_case(json_array_get(cases, i), argv[2]);
    printf("%zu cases, %d failures\n", json_array_size(cases), failures);
    wh_buf_free(&text);
    json_decref(cases);
    return failures == 0 && i > 0 ? 0 : 1;
}
