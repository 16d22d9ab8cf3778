/*
 * replay.c - runs a libFuzzer target without libFuzzer.
 *
 * Fuzz targets are only fuzzed with clang (-DWH_FUZZ=ON), but their corpora
 * and crash reproducers are regression tests that every build should run:
 * this driver feeds each file named on the command line (directories are
 * walked one level) to LLVMFuzzerTestOneInput.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wh_buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    wh_buf b = WH_BUF_INIT;
    wh_err err;

    if (wh_buf_read_file(&b, path, 64u << 20, &err) != WH_OK) {
        fprintf(stderr, "replay: %s\n", wh_err_msg(&err));
        return 1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)(b.data != NULL ? b.data : ""), b.len);
    wh_buf_free(&b);
    return 0;
}

int main(int argc, char **argv)
{
    int failures = 0, files = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: cannot stat %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            failures += run_file(argv[i]);
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        if (d == NULL)
            return 1;
        while ((e = readdir(d)) != NULL) {
            char path[4096];
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            failures += run_file(path);
            files++;
        }
        closedir(d);
    }
    printf("replay: %d inputs, %d unreadable\n", files, failures);
    return failures != 0 || files == 0;
}
