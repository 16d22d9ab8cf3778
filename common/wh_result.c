/*
 * wh_result.c - messages for the error convention declared in wh_result.h.
 */
#include "wh_result.h"

#include <stdio.h>
#include <string.h>

const char *wh_strerror(wh_code code)
{
    switch (code) {
    case WH_OK:
        return "ok";
    case WH_E_INVALID:
        return "invalid input";
    case WH_E_PARSE:
        return "parse error";
    case WH_E_IO:
        return "I/O error";
    case WH_E_NOTFOUND:
        return "not found";
    case WH_E_CONFLICT:
        return "conflict";
    case WH_E_UNSUPPORTED:
        return "unsupported";
    case WH_E_TLS:
        return "TLS error";
    case WH_E_RENDER:
        return "render error";
    case WH_E_LIMIT:
        return "limit exceeded";
    case WH_E_REMOTE:
        return "remote error";
    case WH_E_TIMEOUT:
        return "timeout";
    case WH_E_INTERNAL:
        return "internal error";
    }
    return "unknown error";
}

static wh_code err_vset(wh_err *err, wh_code code, const char *fmt, va_list ap)
{
    if (err != NULL) {
        int n;
        err->code = code;
        n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        err->len = n < 0 ? 0 : (size_t)n < sizeof(err->msg) ? (size_t)n : sizeof(err->msg) - 1;
        err->len = strnlen(err->msg, err->len); /* a %s of a C string stops at its end */
    }
    return code;
}

wh_code wh_err_set_bytes(wh_err *err, wh_code code, const char *msg, size_t len)
{
    if (err != NULL) {
        err->code = code;
        err->len = len < sizeof(err->msg) ? len : sizeof(err->msg) - 1;
        memcpy(err->msg, msg, err->len);
        err->msg[err->len] = '\0';
    }
    return code;
}

wh_code wh_err_set(wh_err *err, wh_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

wh_code wh_err_prefix(wh_err *err, const char *fmt, ...)
{
    char head[WH_ERR_MSG_MAX], old[WH_ERR_MSG_MAX];
    va_list ap;

    if (err == NULL)
        return WH_OK;
    va_start(ap, fmt);
    vsnprintf(head, sizeof(head), fmt, ap);
    va_end(ap);
    size_t olen = wh_err_msg_len(err);
    memcpy(old, err->msg, sizeof(old));
    /* Truncation is acceptable: the message is for humans and stays bounded. */
    size_t n = strlen(head);
    if (old[0] != '\0' && n + 2 < sizeof(err->msg)) {
        memcpy(err->msg, head, n);
        memcpy(err->msg + n, ": ", 2);
        size_t rest = sizeof(err->msg) - n - 3;
        if (olen > rest)
            olen = rest;
        memcpy(err->msg + n + 2, old, olen);
        err->msg[n + 2 + olen] = '\0';
        err->len = n + 2 + olen;
    } else {
        snprintf(err->msg, sizeof(err->msg), "%s", head);
        err->len = strlen(err->msg);
    }
    return err->code;
}

const char *wh_err_msg(const wh_err *err)
{
    if (err == NULL)
        return "";
    return err->msg[0] != '\0' ? err->msg : wh_strerror(err->code);
}

size_t wh_err_msg_len(const wh_err *err)
{
    const char *m = wh_err_msg(err);

    /* len is trusted only as far as the text agrees (a wh_err filled by hand) */
    if (err != NULL && m == err->msg && err->len < sizeof(err->msg) && err->len >= strlen(m))
        return err->len;
    return strlen(m);
}
