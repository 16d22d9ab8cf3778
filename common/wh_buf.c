/*
 * wh_buf.c - growable byte buffer (see wh_buf.h).
 */
#include "wh_buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"

void wh_buf_reserve(wh_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1, cap;

    if (need < b->len)
        wh_oom((size_t)-1);
    if (need <= b->cap)
        return;
    cap = b->cap != 0 ? b->cap : 64;
    while (cap < need) {
        if (cap > ((size_t)-1) / 2)
            wh_oom(need);
        cap *= 2;
    }
    b->data = wh_realloc(b->data, cap);
    b->cap = cap;
}

void wh_buf_append(wh_buf *b, const void *data, size_t len)
{
    wh_buf_reserve(b, len);
    if (len != 0)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void wh_buf_puts(wh_buf *b, const char *s)
{
    wh_buf_append(b, s, strlen(s));
}

void wh_buf_putc(wh_buf *b, char c)
{
    wh_buf_append(b, &c, 1);
}

void wh_buf_vprintf(wh_buf *b, const char *fmt, va_list ap)
{
    va_list copy;
    int n;

    va_copy(copy, ap);
    n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    /* Only a result over INT_MAX bytes fails with our formats (no %ls). */
    if (n < 0)
        wh_oom((size_t)-1);
    wh_buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void wh_buf_printf(wh_buf *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    wh_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void wh_buf_reset(wh_buf *b)
{
    b->len = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

void wh_buf_free(wh_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *wh_buf_steal(wh_buf *b, size_t *len_out)
{
    char *p = b->data;

    if (p == NULL)
        p = wh_calloc(1, 1);
    if (len_out != NULL)
        *len_out = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

wh_code wh_buf_read_file(wh_buf *b, const char *path, size_t max_len, wh_err *err)
{
    FILE *f = NULL;
    char chunk[65536];
    size_t n, start = b->len;
    wh_code rc = WH_OK;

    if (strcmp(path, "-") == 0)
        f = stdin;
    else if ((f = fopen(path, "rb")) == NULL)
        return wh_err_set(err, errno == ENOENT ? WH_E_NOTFOUND : WH_E_IO, "cannot open %s: %s", path, strerror(errno));
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (b->len - start + n > max_len) {
            rc = wh_err_set(err, WH_E_LIMIT, "%s is larger than %zu bytes", path, max_len);
            goto out;
        }
        wh_buf_append(b, chunk, n);
    }
    if (ferror(f))
        rc = wh_err_set(err, WH_E_IO, "cannot read %s: %s", path, strerror(errno));
    else if (b->data == NULL)
        wh_buf_append(b, "", 0);
out:
    if (f != stdin)
        fclose(f);
    return rc;
}
