/*
 * yaml_fast_diff.c - the YAML fast path must agree with the full loader.
 *
 * For every file named (directories are walked), wh_yaml_load() (fast path
 * first) and wh_yaml_load_reference() (libyaml only) must give the same
 * verdict and, on success, the same value: same types (int vs float), same
 * keys in the same order.  Files with several documents are split and each
 * document checked.  At least --min-fast percent of the documents must have
 * been taken by the fast path, or it would be dead weight.  Each document
 * is also loaded with a part of it standing for a template's constant text
 * whose YAML was read once (yaml_pieces_check.h): the whole document, its
 * middle third from a line start to a line start, and a part that starts
 * mid-line; the answers must not change.  Each document
 * is loaded inside a request arena scope, as webhookd loads templates'
 * output, so that the strings the fast path makes in the arena are compared
 * too.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json_dump_heap.h"
#include "wh_json_arena.h"
#include "wh_yaml.h"
#include "wh_yaml_fast.h"
#include "yaml_pieces_check.h"

static int docs, fast_taken, failures, with_pieces;

/* The start of the line that holds text[i]. */
static size_t line_start(const char *text, size_t i)
{
    while (i > 0 && text[i - 1] != '\n')
        i--;
    return i;
}

static void check_pieces(const char *name, const char *text, size_t len)
{
    int had = 0;

    failures += pieces_agree(name, text, len, 0, len, &had);
    failures += pieces_agree(name, text, len, line_start(text, len / 3), line_start(text, 2 * len / 3), &had);
    failures += pieces_agree(name, text, len, len / 4, len - len / 4, &had);
    with_pieces += had;
}

static void check_doc(const char *name, const char *text, size_t len)
{
    json_t *a = NULL, *b = NULL;
    wh_err ea, eb;
    wh_json_arena arena;
    check_pieces(name, text, len); /* (scopes of its own: before this one) */
    wh_json_arena_begin(&arena);
    wh_code ra = wh_yaml_fast_load(text, len, WH_YAML_MAX_DEPTH, &a);
    docs++;
    if (ra == WH_E_UNSUPPORTED) {
        wh_json_arena_end(&arena);
        return;
    }
    fast_taken++;
    wh_code rb = wh_yaml_load_reference(text, len, &b, &eb);
    (void)ea;
    if (ra != rb) {
        printf("FAIL %s: fast path %s, full loader %s (%s)\n", name, wh_strerror(ra), wh_strerror(rb), wh_err_msg(&eb));
        failures++;
    } else if (ra == WH_OK) {
        char *sa = json_dump_heap(a), *sb = json_dump_heap(b);
        if (!json_equal(a, b) || sa == NULL || sb == NULL || strcmp(sa, sb) != 0) {
            printf("FAIL %s:\n  fast %.400s\n  full %.400s\n", name, sa ? sa : "?", sb ? sb : "?");
            failures++;
        }
        free(sa);
        free(sb);
    }
    json_decref(a);
    json_decref(b);
    wh_json_arena_end(&arena);
}

static void check_file(const char *path)
{
    wh_buf buf = WH_BUF_INIT;
    wh_err err;
    if (wh_buf_read_file(&buf, path, 16u << 20, &err) != WH_OK) {
        printf("FAIL %s: %s\n", path, wh_err_msg(&err));
        failures++;
        return;
    }
    /* Split on document markers so each document is checked alone. */
    const char *p = buf.data, *end = buf.data + buf.len, *start = p;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *next = eol ? eol + 1 : end;
        if (p != start && (size_t)(end - p) >= 3 && memcmp(p, "---", 3) == 0) {
            check_doc(path, start, (size_t)(p - start));
            start = next;
        } else if (p == start && (size_t)(end - p) >= 3 && memcmp(p, "---", 3) == 0) {
            start = next;
        }
        p = next;
    }
    check_doc(path, start, (size_t)(end - start));
    wh_buf_free(&buf);
}

static void walk(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        size_t n = strlen(path);
        if ((n > 5 && strcmp(path + n - 5, ".yaml") == 0) || (n > 4 && strcmp(path + n - 4, ".yml") == 0))
            check_file(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        char sub[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        walk(sub);
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    int min_fast = 0, i = 1;
    wh_json_arena_install();
    if (argc > 2 && strcmp(argv[1], "--min-fast") == 0) {
        min_fast = atoi(argv[2]);
        i = 3;
    }
    for (; i < argc; i++)
        walk(argv[i]);
    printf("%d documents, %d through the fast path, %d with pieces of constant text\n", docs, fast_taken, with_pieces);
    if (with_pieces * 2 < fast_taken) {
        printf("FAIL: only %d of the %d documents had pieces: the check above proves little\n", with_pieces,
               fast_taken);
        failures++;
    }
    if (docs == 0 || fast_taken * 100 < min_fast * docs) {
        printf("FAIL: the fast path took %d of %d documents, expected at least %d%%\n", fast_taken, docs, min_fast);
        failures++;
    }
    printf("%d passed, %d failed\n", fast_taken - (failures > fast_taken ? fast_taken : failures), failures);
    return failures != 0;
}
