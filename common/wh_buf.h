/*
 * wh_buf.h - a growable byte buffer, the one way webhookd builds strings.
 *
 * Always NUL-terminated once anything was appended (data may be NULL while
 * empty), so `buf.data` can be handed to C string functions.  The owner calls
 * wh_buf_free(); wh_buf_steal() hands the bytes over instead.
 *
 * Appending cannot fail: running out of memory aborts (wh_alloc.h), so the
 * put/append functions return nothing and callers need no error branch.
 */
#ifndef WH_BUF_H
#define WH_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "wh_result.h"

typedef struct wh_buf {
    char *data;
    size_t len;
    size_t cap;
} wh_buf;

/* An initializer, which clang-format would lay out as a block. */
/* clang-format off */
#define WH_BUF_INIT {NULL, 0, 0}
/* clang-format on */

void wh_buf_reserve(wh_buf *b, size_t extra);
void wh_buf_append(wh_buf *b, const void *data, size_t len);
void wh_buf_puts(wh_buf *b, const char *s);
void wh_buf_putc(wh_buf *b, char c);
void wh_buf_printf(wh_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wh_buf_vprintf(wh_buf *b, const char *fmt, va_list ap);
/* Keep the allocation, forget the content. */
void wh_buf_reset(wh_buf *b);
void wh_buf_free(wh_buf *b);
/* Return the NUL-terminated bytes (never NULL: "" when empty) and leave b empty.
 * The caller frees the result with free(). */
char *wh_buf_steal(wh_buf *b, size_t *len_out);

/* Read a whole file into b (appending).  "-" means standard input. */
wh_code wh_buf_read_file(wh_buf *b, const char *path, size_t max_len, wh_err *err);

#endif
