/*
 * khash.h - what <h2o/http2_internal.h> of libh2o 2.2.5 needs from the klib
 * header Debian does not ship, so that server/wh_server_h2o.c can read an
 * HTTP/2 connection's and stream's fields (see "P16" there).
 *
 * The connection only holds a pointer to its stream table, and the one
 * inline function that looks streams up (h2o_http2_conn_get_stream) must
 * compile but is never called: the table's layout is not declared here,
 * and a use links against a symbol that does not exist, so it cannot
 * silently misread the library's memory.  Streams are found through the
 * connection's priority tree instead (public <h2o/http2_scheduler.h>).
 */
#ifndef WH_SERVER_H2O_KHASH_H
#define WH_SERVER_H2O_KHASH_H

#include <stdint.h>

typedef uint32_t khiter_t;

#define khash_t(name) kh_##name##_t
#define KHASH_MAP_INIT_INT64(name, vtype) typedef struct kh_##name##_s kh_##name##_t;

/* Deliberately undefined (see above). */
extern khiter_t wh_h2o_stream_table_is_opaque(const void *table);
#define kh_get(name, h, k) ((void)(k), wh_h2o_stream_table_is_opaque(h))
#define kh_end(h) wh_h2o_stream_table_is_opaque(h)
#define kh_val(h, x) ((void)(x), (void)wh_h2o_stream_table_is_opaque(h), (h2o_http2_stream_t *)0)

#endif
