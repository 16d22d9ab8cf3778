/*
 * wh_log.c - structured log lines on stderr (see wh_log.h).
 *
 * Lines are assembled in a stack buffer and written with one write(2) so
 * that lines from different worker threads never interleave.
 */
#include "wh_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static wh_log_level min_level = WH_LOG_INFO;
static wh_log_format log_format = WH_LOG_JSON;

static const char *const level_names[] = {"debug", "info", "warn", "error", "off"};

void wh_log_configure(wh_log_level level, wh_log_format format)
{
    min_level = level;
    log_format = format;
}

int wh_log_level_parse(const char *name)
{
    for (int i = 0; i <= WH_LOG_OFF; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    if (strcmp(name, "warning") == 0)
        return WH_LOG_WARN;
    return -1;
}

int wh_log_format_parse(const char *name)
{
    if (strcmp(name, "json") == 0)
        return WH_LOG_JSON;
    if (strcmp(name, "text") == 0)
        return WH_LOG_TEXT;
    return -1;
}

int wh_log_enabled(wh_log_level level)
{
    return level >= min_level && level != WH_LOG_OFF;
}

typedef struct line {
    char buf[8192];
    size_t len;
} line;

static void put(line *l, const char *s, size_t n)
{
    if (n > sizeof(l->buf) - 2 - l->len)
        n = sizeof(l->buf) - 2 - l->len; /* truncate; keep room for "\n" */
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void puts_(line *l, const char *s)
{
    put(l, s, strlen(s));
}

static void put_json_string(line *l, const char *s)
{
    char esc[8];
    put(l, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            put(l, esc, 2);
        } else if (c == '\n') {
            put(l, "\\n", 2);
        } else if (c == '\t') {
            put(l, "\\t", 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(l, esc, 6);
        } else {
            put(l, (const char *)&c, 1);
        }
    }
    put(l, "\"", 1);
}

/* Text values are quoted only when they would be ambiguous. */
static void put_text_value(line *l, const char *s)
{
    if (*s != '\0' && strpbrk(s, " \"=\n\t") == NULL)
        puts_(l, s);
    else
        put_json_string(l, s);
}

void wh_log(wh_log_level level, const char *msg, ...)
{
    line l;
    struct timespec ts;
    struct tm tm;
    char when[64];
    va_list ap;
    const char *k, *v;

    if (!wh_log_enabled(level))
        return;
    l.len = 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof(when) - n, ".%06ldZ", ts.tv_nsec / 1000);

    if (log_format == WH_LOG_JSON) {
        puts_(&l, "{\"time\":\"");
        puts_(&l, when);
        puts_(&l, "\",\"level\":\"");
        puts_(&l, level_names[level]);
        puts_(&l, "\",\"msg\":");
        put_json_string(&l, msg);
    } else {
        puts_(&l, when);
        put(&l, " ", 1);
        puts_(&l, level_names[level]);
        put(&l, " ", 1);
        puts_(&l, msg);
    }
    va_start(ap, msg);
    while ((k = va_arg(ap, const char *)) != NULL) {
        v = va_arg(ap, const char *);
        if (v == NULL)
            v = "";
        if (log_format == WH_LOG_JSON) {
            put(&l, ",", 1);
            put_json_string(&l, k);
            put(&l, ":", 1);
            put_json_string(&l, v);
        } else {
            put(&l, " ", 1);
            puts_(&l, k);
            put(&l, "=", 1);
            put_text_value(&l, v);
        }
    }
    va_end(ap);
    if (log_format == WH_LOG_JSON)
        put(&l, "}", 1);
    l.buf[l.len++] = '\n';
    ssize_t w = write(STDERR_FILENO, l.buf, l.len);
    (void)w; /* nowhere to report a failing stderr */
}
