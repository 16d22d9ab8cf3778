/*
 * wh_result.h - the one error convention of webhookd and webhookctl.
 *
 * Every fallible function returns a wh_code (WH_OK == 0) and, when the
 * caller passes a wh_err, fills it with a human sentence saying what went
 * wrong and where.  Cleanup follows curl's style: one `out:` label per
 * function, every owned pointer released there, `goto out` on failure.
 *
 *     wh_code rc;
 *     json_t *doc = NULL;
 *     if ((rc = wh_yaml_load(text, len, &doc, err)) != WH_OK)
 *         goto out;
 *     ...
 *   out:
 *     json_decref(doc);
 *     return rc;
 */
#ifndef WH_RESULT_H
#define WH_RESULT_H

#include <stdarg.h>
#include <stddef.h>

typedef enum wh_code {
    WH_OK = 0,
    /* No code for a failed allocation: it aborts (common/wh_alloc.h). */
    WH_E_INVALID,     /* the input is well-formed but not acceptable */
    WH_E_PARSE,       /* the input could not be decoded (JSON, YAML, template, PEM) */
    WH_E_IO,          /* a file or socket operation failed */
    WH_E_NOTFOUND,    /* a named thing does not exist */
    WH_E_CONFLICT,    /* it exists already / version conflict */
    WH_E_UNSUPPORTED, /* valid but not something we do */
    WH_E_TLS,         /* OpenSSL refused (certificate, key, handshake) */
    WH_E_RENDER,      /* a template failed while executing */
    WH_E_LIMIT,       /* a size, depth or count limit was hit */
    WH_E_REMOTE,      /* a remote peer (API server, exec plugin) answered with an error */
    WH_E_TIMEOUT,     /* a deadline passed */
    WH_E_INTERNAL     /* a bug: an invariant did not hold */
} wh_code;

#define WH_ERR_MSG_MAX 1024

/* Optional detail for a failure.  Functions never require it (NULL is fine). */
typedef struct wh_err {
    wh_code code;
    char msg[WH_ERR_MSG_MAX];
    size_t len; /* msg's length: a message may hold a NUL (a Go string it quotes, e.g. an annotation's value) */
} wh_err;

/* Short constant name of a code, e.g. "invalid input". */
const char *wh_strerror(wh_code code);

/* Record `code` and a printf-style message in `err` (if non-NULL); returns `code`
 * so that `return wh_err_set(err, WH_E_INVALID, "...")` reads naturally. */
wh_code wh_err_set(wh_err *err, wh_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefix the existing message with more context: "while X: <old message>". */
wh_code wh_err_prefix(wh_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record `code` and the `len` bytes of `msg` as they are, NULs included
 * (cut at WH_ERR_MSG_MAX - 1); returns `code`. */
wh_code wh_err_set_bytes(wh_err *err, wh_code code, const char *msg, size_t len);

/* The message, or the code's name if no message was recorded. */
const char *wh_err_msg(const wh_err *err);
/* wh_err_msg's length in bytes (it may hold a NUL: wh_err_set_bytes). */
size_t wh_err_msg_len(const wh_err *err);

static inline void wh_err_clear(wh_err *err)
{
    if (err != NULL) {
        err->code = WH_OK;
        err->msg[0] = '\0';
        err->len = 0;
    }
}

#endif
