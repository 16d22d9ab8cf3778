/*
 * wh_log.h - structured logging on stderr, shared by webhookd and webhookctl.
 *
 * One line per event: JSON (`{"time":…,"level":…,"msg":…,"key":"value"}`) by
 * default, or `time level msg key=value` text.  Thread-safe: a line is
 * formatted in a local buffer and written with a single write(2).
 */
#ifndef WH_LOG_H
#define WH_LOG_H

typedef enum wh_log_level { WH_LOG_DEBUG = 0, WH_LOG_INFO, WH_LOG_WARN, WH_LOG_ERROR, WH_LOG_OFF } wh_log_level;

typedef enum wh_log_format { WH_LOG_JSON = 0, WH_LOG_TEXT } wh_log_format;

/* Process-wide settings; call before starting threads. */
void wh_log_configure(wh_log_level min_level, wh_log_format format);

/* Parse "debug"/"info"/"warn"/"error"/"off"; returns -1 when unknown. */
int wh_log_level_parse(const char *name);
/* Parse "json"/"text"; returns -1 when unknown. */
int wh_log_format_parse(const char *name);

int wh_log_enabled(wh_log_level level);

/* A message followed by key/value string pairs, terminated by NULL:
 *     wh_log(WH_LOG_INFO, "listening", "addr", "127.0.0.1:8443", NULL);   */
void wh_log(wh_log_level level, const char *msg, ...) __attribute__((sentinel));

#endif
