/*
 * wh_server_h2o.c - the one file that talks to libh2o 2.2.5.
 *
 * One event loop per worker thread, each with its own SO_REUSEPORT listener,
 * h2o context and control-message receiver; the global configuration is
 * shared read-only.  Requests are turned into a wh_http_request and answered
 * by the router; nothing above this file knows h2o exists.  The h2o 2.2.5
 * pitfalls this file handles, named P1..P13 where the code deals with them
 * (tests/integration exercises each over real TLS):
 *  P1  <h2o.h> picks libuv unless H2O_USE_LIBUV=0 is defined: we embed the evloop.
 *  P2  OpenSSL 3 with no deprecated API: only TLS_server_method and friends.
 *  P3  HTTP/2 only when ALPN selects h2; anything else, no ALPN too, is HTTP/1.1.
 *  P4  h2 allows 100 streams per connection, all served by one loop thread.
 *  P5  HTTP/1.1 only takes both an ALPN list without h2 and upgrade_to_http2 = 0,
 *      or 2.2.5 still accepts the h2 prior-knowledge preface.
 *  P6  the whole body is buffered before the handler (entity.base NULL: none);
 *      the default cap is 1 GiB, so set max_request_entity_size.  It is checked
 *      as the body arrives: a Content-Length over it at the head, a chunked
 *      body (decoded in place) at every read, an HTTP/2 stream at every DATA
 *      frame (RST_STREAM REFUSED_STREAM, which clients retry: webhookd answers
 *      first, see on_h2_frame).  A chunked body is refused once it reaches
 *      the limit, the others once they exceed it.
 *  P17 h2o decodes what came with a TLS handshake's last flight and reads its
 *      frames at once, before on_h2_frame can be put in place (P16): a body
 *      over the cap in a client's first frames got REFUSED_STREAM.  An h2
 *      handshake's input is held back at SSL_CB_HANDSHAKE_DONE (a BIO that
 *      reads nothing) and decoded once the hook is in (hold_first_flight).
 *  P18 the same with HTTP/2 by prior knowledge (no ALPN, or ALPN http/1.1, then the
 *      preface): h2o's HTTP/1.1 reader makes the HTTP/2 connection and reads the
 *      frames that came with the preface at once; watch_preface holds them back.
 *  P15 HTTP/1.1 refusals h2o makes itself (the 413 above) are answered on the
 *      host's fallback path, not the one our handler is registered on: a
 *      filter there gives them the router's answer (istiod's text).
 *  P7  h2o_send_inline leaves the length unset (chunked): set content_length,
 *      and set server_name so the Server header hides the version.
 *  P19 an answer pushed with h2o_send leaves as two TLS records on HTTP/1.1
 *      (one SSL_write per buffer: the head h2o writes, then the body), and
 *      OpenSSL's work per record is ~7 k instructions, a quarter of a
 *      /healthz; pulled (start_pull, as h2o's file handler does), the head
 *      and the body are written from one buffer: one record when they fit
 *      in one (send_answer).
 *  P20 2.2.5 serves every stream a client opens, even one it cancels at once:
 *      opening and resetting streams (rapid reset, CVE-2023-44487) stays
 *      under the 100-stream limit (P4) while the loop works for nothing,
 *      and h2o decodes a whole read's frames in one go, so the other
 *      connections of that worker wait seconds.  on_h2_frame counts the
 *      client's RST_STREAMs: beyond RESET_BUDGET, once they are more than
 *      half of its requests, GOAWAY ENHANCE_YOUR_CALM ends the connection.
 *  P8  paths register as prefixes: the router checks them exactly.
 *  P9  one evloop and context per thread with its own SO_REUSEPORT listener;
 *      closing a listener resets the connections queued on it.
 *  P10 shutdown sends GOAWAY on h2 only; idle HTTP/1.1 keep-alives are ours to
 *      close, and disposing a context with its 1 s timer pending aborts.
 *  P11 a reloaded SSL_CTX is freed one generation late: h2o keeps borrowed
 *      pointers to the old one for resumed handshakes.
 *  P12 SSL_OP_NO_RENEGOTIATION (2.2.5 drops a connection on any write during
 *      SSL_read); failed handshakes send no alert.
 *  P13 h2o's global config holds blocks that leak checkers report unless it
 *      is disposed at exit (tests/integration/lsan.supp lists what remains).
 *  P14 the SSL* of a connection is private to h2o's socket; the only link
 *      back is the BIO h2o installs, whose data is the h2o_socket_t (2.2.5's
 *      lib/common/socket.c setup_bio, read the same way by its own session
 *      callbacks): the client certificate's verdict is taken there at
 *      SSL_CB_HANDSHAKE_DONE and kept in our per-connection record.
 *  P16 2.2.5 has no per-connection call for HTTP/2 (GOAWAY, a stream's
 *      state and body buffer, a hook between frames): <h2o/http2_internal.h>
 *      declares the connection and stream records, but includes klib's
 *      khash.h, which Debian does not ship; server/h2o-2.2.5/khash.h stands
 *      in for the one pointer it declares (the stream table stays opaque:
 *      streams are reached through the connection's priority tree).  The
 *      connection records of a worker are listed in its context
 *      (ctx.http2._conns); on_h2_frame sits in the record's frame-reader
 *      pointer (_read_expect) to answer bodies over the cap (413) or beyond
 *      the in-flight bound (503) on their stream.
 */
#if !defined(H2O_USE_LIBUV) || H2O_USE_LIBUV
#error "define H2O_USE_LIBUV=0: webhookd embeds libh2o-evloop (P1)"
#endif

#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <h2o.h>
#include <h2o/http1.h>
#include <h2o/http2.h>
#include <h2o/http2_internal.h> /* P16 */
#include <h2o/version.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <linux/sockios.h> /* SIOCINQ */
#include <linux/tcp.h>     /* struct tcp_info with tcpi_last_data_recv */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#if H2O_VERSION_MAJOR != 2 || H2O_VERSION_MINOR != 2
#error "server/wh_server_h2o.c reads libh2o 2.2's HTTP/2 records (P16)"
#endif

#include "wh_alloc.h"
#include "wh_log.h"
#include "wh_server.h"
#include "wh_server_tickets.h"

/* Once shutdown starts, idle connections are closed (2.2.5 has no close-idle
 * call: P10).  A connection is idle when nothing arrived since its last
 * answer and no data moved for IDLE_QUIET_MS; one that never completed a
 * request (or stalls mid-request) counts as idle after STALLED_QUIET_MS. */
#define IDLE_QUIET_MS 100
#define STALLED_QUIET_MS 1000
/* Accepts per wake-up, like h2o's own server. */
#define ACCEPT_BATCH 16
/* Every SWEEP_MS each worker looks at its connections: write timeouts, the
 * in-flight bound, and resuming accepts after EMFILE.  It runs only while
 * there is something to look at (sweep_soon): a worker with no connection
 * sleeps until one arrives, where it woke 100 times a second. */
#define SWEEP_MS 10
/* How long a refused upload's client may keep sending after its answer
 * (refuse_arriving_request, linger): what it sends is read and dropped, so
 * that the answer reaches it instead of a reset. */
#define LINGER_MS 5000
/* How long accepting stops after EMFILE/ENFILE (the fd is not ours to take:
 * retrying at once would spin on the still-readable listener). */
#define ACCEPT_PAUSE_MS 250

typedef struct worker worker;

/* Streams an HTTP/2 client may cancel (RST_STREAM) before cancelling more
 * than half of those it opened ends its connection (P20). */
#define RESET_BUDGET 100
/* The answer to a request refused at the in-flight bound (503, Retry-After: 1). */
#define INFLIGHT_TEXT "webhookd is at its in-flight memory bound (--max-inflight-bytes); retry later\n"

/* One accepted connection (we accept ourselves to know its fd). */
typedef struct conn {
    h2o_linklist_t link; /* in worker.conns */
    worker *w;
    h2o_socket_t *sock;
    int fd;
    int shut;                  /* shutdown(2) already called during the drain */
    int answered;              /* a request was answered on it */
    size_t read_at_answer;     /* the socket's bytes_read when the last answer started */
    unsigned answers;          /* answers started (on_req) */
    unsigned answers_seen;     /* `answers` at the last sweep */
    uint64_t writing_since;    /* when the sweep first saw the current write, 0 = not writing */
    h2o_socket_cb paused_read; /* h2o's read callback while a refused request lingers */
    int paused;
    uint64_t linger_until;           /* refused: close after this (see refuse_arriving_request) */
    size_t reserved;                 /* this connection's part of wh_http_server.reserved */
    size_t promised;                 /* admitted: what its arriving request will hold, 0 = nothing promised */
    unsigned promised_at;            /* `answers` when it was admitted (the promise ends with that request) */
    wh_http_client_cert client_cert; /* the verdict of the client CAs in force (P14, rejudge) */
    const char *client_cert_error;   /* OpenSSL's static text, or NULL */
    const SSL *ssl;                  /* h2o's, borrowed from the handshake on (P14): the peer's certificates */
    int linger_fd;                   /* a duplicate kept to linger after h2o closes (see linger), or -1 */
    int revoked;                     /* verified once, refused by a later bundle: served no longer than it must be */
    h2o_http2_conn_t *h2;            /* h2o's HTTP/2 connection on this socket (P16), else NULL */
    BIO *held_rbio;                  /* h2o's BIO while the handshake's first flight is held back (P17), else NULL */
    h2o_socket_cb h1_read;           /* h2o's HTTP/1.1 reader while watch_preface looks at the first bytes (P18) */
    int goaway;                      /* revoked HTTP/2: GOAWAY sent, closing once its open streams are answered */
    /* h2o's frame reader this connection's frames go to after on_h2_frame */
    ssize_t (*h2_next)(h2o_http2_conn_t *h, const uint8_t *src, size_t len, const char **err_desc);
    h2o_linklist_t streams; /* what webhookd keeps about its HTTP/2 streams (stream_rec) */
    size_t held_now;        /* held_by() at this sweep */
    unsigned resets;        /* RST_STREAM frames the client sent (P20) */
} conn;

struct wh_http_server {
    wh_http_config cfg;
    h2o_globalconf_t globalconf;
    worker *workers;
    size_t nworkers;
    h2o_barrier_t started;
    char bound[INET6_ADDRSTRLEN + 16];
    const char *listener[1]; /* the connection metrics' label: "webhook" or "monitoring" */
    wh_metric *open_connections;
    wh_metric *accepted;
    wh_metric *write_timeouts;
    wh_metric *inflight_rejected;
    wh_metric *accept_paused;
    atomic_int draining;                      /* wh_http_begin_drain() */
    _Atomic size_t response_bytes;            /* answers not yet written (see account_response) */
    _Atomic size_t reserved;                  /* request bytes held or promised, all workers (see reserve) */
    _Atomic long long accept_error_logged_ms; /* rate limit of the EMFILE log line */
};

struct worker {
    wh_http_server *server;
    pthread_t tid;
    int thread_started;
    int listen_fd;
    h2o_evloop_t *loop;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
    h2o_socket_t *listener;
    h2o_multithread_receiver_t receiver;
    SSL_CTX *retired; /* the previous generation (P11) */
    h2o_linklist_t conns;
    size_t num_conns;
    h2o_linklist_t lingering; /* sockets h2o closed that still drain a refused upload (linger) */
    int stop;
    uint64_t stop_timeout_ms;
    size_t cut; /* connections still open at the deadline */
    h2o_timeout_t sweep_timeout;
    h2o_timeout_entry_t sweep_entry;
    h2o_timeout_entry_t hook_entry; /* a handshake finished: hook new HTTP/2 connections (find_h2_conns) */
    uint64_t accept_resume_at;      /* accepting stopped (EMFILE or the in-flight bound) until then; 0 = accepting */
    int accept_stopped;
};

typedef struct control {
    h2o_multithread_message_t super;
    enum { CONTROL_TLS, CONTROL_STOP } type;
    SSL_CTX *ssl_ctx;    /* CONTROL_TLS: one reference, handed over */
    uint64_t timeout_ms; /* CONTROL_STOP */
} control;

typedef struct handler {
    h2o_handler_t super;
    wh_http_server *server;
} handler;

/* --- the in-flight bound ------------------------------------------------- */

/* One counter shared by every worker holds what the connections' input
 * buffers hold or were promised; a request is admitted when its bytes can
 * be reserved there, and once admitted it is never refused: refusals only
 * ever hit requests that have nothing reserved yet, so workers cannot keep
 * refusing each other's requests on stale figures (they did: under a slow
 * build every slow upload got 503 and none progressed). */

static size_t input_of(const conn *c)
{
    const h2o_buffer_t *in = c->sock->input;
    return in != NULL && in->bytes != NULL ? in->capacity : 0;
}

static size_t inflight_total(wh_http_server *s)
{
    return atomic_load(&s->response_bytes) + atomic_load(&s->reserved);
}

/* Add `more` bytes to the reservations if the total stays within the bound. */
static int reserve(wh_http_server *s, size_t more)
{
    size_t cur = atomic_load(&s->reserved);

    do {
        if (more > s->cfg.max_inflight_bytes ||
            cur + atomic_load(&s->response_bytes) > s->cfg.max_inflight_bytes - more)
            return 0;
    } while (!atomic_compare_exchange_weak(&s->reserved, &cur, cur + more));
    return 1;
}

/* Set what `c` holds, whatever the bound says (bytes already buffered are
 * held; releasing is always allowed). */
static void hold(wh_http_server *s, conn *c, size_t bytes)
{
    if (bytes > c->reserved)
        atomic_fetch_add(&s->reserved, bytes - c->reserved);
    else
        atomic_fetch_sub(&s->reserved, c->reserved - bytes);
    c->reserved = bytes;
}

/* --- requests ------------------------------------------------------------- */

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 301:
        return "Moved Permanently";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 413:
        return "Payload Too Large";
    case 415:
        return "Unsupported Media Type";
    case 503:
        return "Service Unavailable";
    default:
        return status < 500 ? "Client Error" : "Internal Server Error";
    }
}

static char *pool_strndup(h2o_mem_pool_t *pool, const char *s, size_t len)
{
    char *copy = h2o_mem_alloc_pool(pool, len + 1);
    memcpy(copy, s, len);
    copy[len] = '\0';
    return copy;
}

/* The connection object of both protocols starts with h2o_conn_t followed
 * by its socket (2.2.5's h2o_http1_conn_t and h2o_http2_conn_t). */
struct conn_head {
    h2o_conn_t super;
    h2o_socket_t *sock;
};

static void on_sock_close(void *data);

static conn *conn_of(h2o_req_t *req)
{
    h2o_socket_t *sock = ((struct conn_head *)req->conn)->sock;
    return sock != NULL && sock->on_close.cb == on_sock_close ? sock->on_close.data : NULL;
}

static size_t h2_held(conn *c);

/* What a connection's request bytes take: its input buffer, and on HTTP/2
 * its streams' bodies beyond their promises (stream_rec). */
static size_t held_by(conn *c)
{
    return c->h2 != NULL ? h2_held(c) : input_of(c);
}

/* Whether a complete request must be refused at the bound.  An HTTP/1.1
 * request admitted while it arrived goes through, and so does an HTTP/2 one
 * whose stream was admitted with its declared length; otherwise what the
 * connection holds is admitted now if it fits (arrived whole between two
 * sweeps). */
static int refused_at_bound(wh_http_server *s, h2o_req_t *req)
{
    conn *c = conn_of(req);
    size_t in;

    if (c == NULL)
        return inflight_total(s) > s->cfg.max_inflight_bytes ||
               req->entity.len > s->cfg.max_inflight_bytes - inflight_total(s);
    if (req->version >= 0x200)
        c->h2 = (h2o_http2_conn_t *)req->conn; /* before the sweep found it */
    else if (c->promised != 0 && c->promised_at == c->answers)
        return 0;
    in = held_by(c);
    if (in <= c->reserved)
        return 0;
    if (!reserve(s, in - c->reserved))
        return 1;
    c->reserved = in;
    return 0;
}

/* The answer's body is handed to h2o through its pull interface (P19): h2o
 * copies it where it writes from, and the buffer is freed once it is all
 * copied.  Its bytes count against --max-inflight-bytes until h2o has
 * written the answer and cleared the request's pool: the buffer's
 * allocation, then h2o's copy, plus the encrypted copy TLS holds while
 * writing. */
typedef struct answer_body {
    h2o_generator_t super; /* per request: it holds how much h2o has pulled */
    wh_http_server *server;
    size_t counted;
    char *data;
    size_t len, pulled;
} answer_body;

static void on_answer_disposed(void *p)
{
    answer_body *a = p;
    atomic_fetch_sub(&a->server->response_bytes, a->counted);
    free(a->data);
}

static h2o_send_state_t pull_answer(h2o_generator_t *g, h2o_req_t *req, h2o_iovec_t *buf)
{
    answer_body *a = (answer_body *)g;
    size_t n = a->len - a->pulled < buf->len ? a->len - a->pulled : buf->len;

    (void)req;
    if (n != 0)
        memcpy(buf->base, a->data + a->pulled, n);
    buf->len = n;
    a->pulled += n;
    if (a->pulled != a->len)
        return H2O_SEND_STATE_IN_PROGRESS;
    free(a->data);
    a->data = NULL;
    return H2O_SEND_STATE_FINAL;
}

/* Start the answer (its status and headers set) with `body`, taken.  The
 * answer to HEAD has the Content-Length GET's would have and no body, as Go's
 * server answers it: h2o sends whatever it is given, and on a keep-alive
 * connection those bytes were read as the start of the next answer. */
static void send_answer(wh_http_server *s, h2o_req_t *req, wh_buf *body)
{
    answer_body *a = h2o_mem_alloc_shared(&req->pool, sizeof(*a), on_answer_disposed);

    memset(a, 0, sizeof(*a));
    a->server = s;
    a->counted = body->cap + body->len;
    a->data = wh_buf_steal(body, &a->len);
    if (h2o_memis(req->method.base, req->method.len, H2O_STRLIT("HEAD")))
        a->len = 0;
    atomic_fetch_add(&s->response_bytes, a->counted);
    h2o_start_response(req, &a->super);
    if (req->_ostr_top->start_pull != NULL) { /* no filter between us and the protocol */
        req->_ostr_top->start_pull(req->_ostr_top, pull_answer);
    } else {
        h2o_iovec_t whole = h2o_iovec_init(a->data, a->len);
        h2o_send(req, &whole, 1, H2O_SEND_STATE_FINAL);
    }
}

/* --- h2o's own refusals (P15) ------------------------------------------- */

typedef struct refusal_filter {
    h2o_filter_t super;
    wh_http_server *server;
} refusal_filter;

typedef struct refusal {
    h2o_ostream_t super;
    h2o_iovec_t body;
} refusal;

static void send_refusal(h2o_ostream_t *self, h2o_req_t *req, h2o_iovec_t *bufs, size_t bufcnt, h2o_send_state_t state)
{
    refusal *r = (refusal *)self;

    (void)bufs;
    h2o_ostream_send_next(&r->super, req, &r->body, bufcnt != 0 && r->body.len != 0, state); /* none for HEAD */
}

/* h2o refused a body over the limit before our handler saw the request
 * (413, P6): answer what the router answers any body over the cap (an
 * endpoint's own 413, istiod's "Request entity too large: limit is N"),
 * with the connection closed as h2o decided.  Other answers pass as they are. */
static void on_setup_refusal(h2o_filter_t *self, h2o_req_t *req, h2o_ostream_t **slot)
{
    wh_http_server *server = ((refusal_filter *)self)->server;
    wh_http_request in = {0};
    wh_http_response out = {0};
    const char *content_type;
    ssize_t ct;
    refusal *r;
    conn *c;

    if (req->res.status != 413 || server->cfg.monitoring) {
        h2o_setup_next_ostream(req, slot);
        return;
    }
    in.method = pool_strndup(&req->pool, req->method.base, req->method.len);
    in.path = pool_strndup(&req->pool, req->path_normalized.base, req->path_normalized.len);
    in.path_len = req->path_normalized.len;
    if ((ct = h2o_find_header(&req->headers, H2O_TOKEN_CONTENT_TYPE, -1)) != -1) {
        in.content_type = req->headers.entries[ct].value.base;
        in.content_type_len = req->headers.entries[ct].value.len;
    }
    in.body_len = server->cfg.max_request_bytes + 1; /* over the cap: not handed over */
    if ((c = conn_of(req)) != NULL) {
        in.client_cert = c->client_cert;
        in.client_cert_error = c->client_cert_error;
        if (req->version < 0x200 && c->linger_fd == -1)
            c->linger_fd = fcntl(c->fd, F_DUPFD_CLOEXEC, 0); /* -1 (EMFILE): closed as h2o does */
    }
    wh_router_serve(server->cfg.router, &in, &out);

    content_type = out.content_type != NULL ? out.content_type : "application/json";
    req->res.status = out.status;
    req->res.reason = reason_phrase(out.status);
    req->res.content_length = out.body.len;
    memset(&req->res.headers, 0, sizeof(req->res.headers));
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, content_type, strlen(content_type));
    r = (refusal *)h2o_add_ostream(req, sizeof(*r), slot);
    r->super.do_send = send_refusal;
    r->body = h2o_strdup(&req->pool, out.body.data != NULL ? out.body.data : "", out.body.len);
    wh_buf_free(&out.body);
    h2o_setup_next_ostream(req, &r->super.next);
}

/* Whether `line` (of `len` bytes) is the header `name` (lower case); sets
 * the trimmed value. */
static int header_line(const char *line, size_t len, const char *name, const char **value, size_t *vlen)
{
    size_t n = strlen(name);

    if (len <= n || strncasecmp(line, name, n) != 0)
        return 0;
    line += n, len -= n;
    while (len != 0 && (*line == ' ' || *line == '\t'))
        line++, len--;
    if (len == 0 || *line != ':')
        return 0;
    line++, len--;
    while (len != 0 && (*line == ' ' || *line == '\t'))
        line++, len--;
    while (len != 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
        len--;
    *value = line;
    *vlen = len;
    return 1;
}

/* HTTP/1.1 framing that two parties could read differently (request
 * smuggling): Content-Length with Transfer-Encoding, or Content-Length
 * values that disagree (RFC 9112 §6.3).  h2o 2.2.5 takes the first
 * Content-Length (or Transfer-Encoding) and drops both headers from
 * req->headers, so the request head is read again here: it is still at the
 * start of the connection's input buffer, the body right after it (P6). */
static int conflicting_framing(h2o_req_t *req)
{
    h2o_socket_t *sock = ((struct conn_head *)req->conn)->sock;
    const char *head, *end, *line, *value, *first = NULL;
    size_t vlen, first_len = 0;
    int te = 0, cl = 0;

    if (req->version >= 0x200 || sock == NULL || sock->input == NULL || req->entity.base == NULL)
        return 0;
    head = sock->input->bytes;
    end = req->entity.base;
    if (end < head || end > head + sock->input->size)
        return 0;
    for (line = head; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t len = (size_t)((nl != NULL ? nl : end) - line);

        if (header_line(line, len, "transfer-encoding", &value, &vlen)) {
            te = 1;
        } else if (header_line(line, len, "content-length", &value, &vlen)) {
            /* "5, 5" is one value repeated; anything else must match too */
            while (vlen != 0) {
                const char *comma = memchr(value, ',', vlen);
                size_t n = comma != NULL ? (size_t)(comma - value) : vlen, m = n;
                while (m != 0 && (value[m - 1] == ' ' || value[m - 1] == '\t'))
                    m--;
                if (cl++ == 0)
                    first = value, first_len = m;
                else if (m != first_len || memcmp(value, first, m) != 0)
                    return 1;
                if (comma == NULL)
                    break;
                vlen -= n + 1;
                value = comma + 1;
                while (vlen != 0 && (*value == ' ' || *value == '\t'))
                    value++, vlen--;
            }
        }
        line = nl != NULL ? nl + 1 : end;
    }
    return te && cl;
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    wh_http_server *server = ((handler *)self)->server;
    wh_http_request in = {0};
    wh_http_response out = {0};
    const char *content_type;
    ssize_t ct;
    conn *c;

    in.method = pool_strndup(&req->pool, req->method.base, req->method.len);
    in.path = pool_strndup(&req->pool, req->path_normalized.base, req->path_normalized.len);
    in.path_len = req->path_normalized.len;
    in.raw_path = req->path.base; /* as sent: the router routes on it as Go's ServeMux does */
    in.raw_path_len = req->query_at != SIZE_MAX ? req->query_at : req->path.len;
    if (req->query_at != SIZE_MAX) {
        in.query = req->path.base + req->query_at + 1;
        in.query_len = req->path.len - req->query_at - 1;
    }
    if ((ct = h2o_find_header(&req->headers, H2O_TOKEN_CONTENT_TYPE, -1)) != -1) {
        in.content_type = req->headers.entries[ct].value.base;
        in.content_type_len = req->headers.entries[ct].value.len;
    }
    in.body = req->entity.base; /* NULL when there was no body (P6) */
    in.body_len = req->entity.len;
    if ((c = conn_of(req)) != NULL) {
        in.client_cert = c->client_cert;
        in.client_cert_error = c->client_cert_error;
    }

    if (conflicting_framing(req)) {
        out.status = 400;
        out.content_type = "text/plain; charset=utf-8";
        wh_buf_puts(&out.body, "conflicting Content-Length and Transfer-Encoding headers\n");
        req->http1_is_persistent = 0; /* what follows the body is ambiguous too */
    } else if (req->entity.len != 0 && refused_at_bound(server, req)) {
        /* Fast and cheap: no parsing, and closing frees the request's buffer. */
        out.status = 503;
        out.content_type = "text/plain; charset=utf-8";
        wh_buf_puts(&out.body, INFLIGHT_TEXT);
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_RETRY_AFTER, NULL, H2O_STRLIT("1"));
        req->http1_is_persistent = 0;
        wh_metric_add(server->inflight_rejected, server->listener, 1);
    } else if (server->cfg.monitoring) {
        wh_router_serve_monitoring(server->cfg.router, &in, &out);
    } else {
        wh_router_serve(server->cfg.router, &in, &out);
    }
    /* What h2o had read when this answer started: if it reads nothing more
     * before shutdown, the connection is between requests (close_idle). */
    if ((c = conn_of(req)) != NULL) {
        c->answers++;
        if (c->revoked)
            req->http1_is_persistent = 0; /* its client reconnects and is verified afresh */
        if (req->version < 0x200) {
            c->answered = 1;
            c->read_at_answer = c->sock->bytes_read;
        }
    }

    /* Content-Length, never chunked (P7); the body goes in one TLS record
     * with the head (P19). */
    content_type = out.content_type != NULL ? out.content_type : "application/json";
    req->res.status = out.status;
    req->res.reason = reason_phrase(out.status);
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, content_type, strlen(content_type));
    if (out.allow != NULL)
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, out.allow, strlen(out.allow));
    if (out.location.len != 0)
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_LOCATION, NULL,
                       pool_strndup(&req->pool, out.location.data, out.location.len), out.location.len);
    wh_buf_free(&out.location);
    req->res.content_length = out.body.len;
    /* 2.2.5 does not end HTTP/1.1 keep-alives on shutdown by itself (P10):
     * answer "Connection: close" so each busy connection ends after its
     * current request instead of running into the deadline. */
    if (req->conn->ctx->shutdown_requested || atomic_load_explicit(&server->draining, memory_order_relaxed))
        req->http1_is_persistent = 0;
    send_answer(server, req, &out.body);
    return 0;
}

/* --- connections ---------------------------------------------------------- */

/* h2o closes a connection right after its own refusal of a body still
 * arriving (P15), and closing with the client's bytes unread sends a reset
 * that can overtake the answer or fail the client's write before it reads
 * it.  So the refusal keeps a duplicate of the descriptor: h2o's close(2)
 * then ends nothing, and once h2o is done the duplicate half-closes (the
 * FIN follows the answer) and reads and drops what the client still sends,
 * until it stops or LINGER_MS pass. */
typedef struct lingerer {
    h2o_linklist_t link; /* in worker.lingering */
    h2o_socket_t *sock;
    uint64_t until;
} lingerer;

static void end_lingering(lingerer *l)
{
    h2o_linklist_unlink(&l->link);
    h2o_socket_close(l->sock);
    free(l);
}

static void on_lingerer_read(h2o_socket_t *sock, const char *err)
{
    if (err != NULL)
        end_lingering(sock->data);
    else
        h2o_buffer_consume(&sock->input, sock->input->size);
}

static void linger(worker *w, int fd)
{
    lingerer *l = wh_calloc(1, sizeof(*l));

    shutdown(fd, SHUT_WR);
    l->until = h2o_now(w->loop) + LINGER_MS;
    l->sock = h2o_evloop_socket_create(w->loop, fd, 0);
    l->sock->data = l;
    h2o_linklist_insert(&w->lingering, &l->link);
    h2o_socket_read_start(l->sock, on_lingerer_read);
}

static void forget_stream_recs(conn *c);

static void on_sock_close(void *data)
{
    conn *c = data;
    worker *w = c->w;

    if (c->linger_fd != -1)
        linger(w, c->linger_fd);
    forget_stream_recs(c);
    hold(w->server, c, 0);
    h2o_linklist_unlink(&c->link);
    free(c);
    w->num_conns--;
    wh_metric_add(w->server->open_connections, w->server->listener, -1);
}

static void on_accept(h2o_socket_t *listener, const char *err);

/* Have the sweep run within SWEEP_MS (it re-arms itself while it has
 * connections, lingerers or a paused accept to look after). */
static void sweep_soon(worker *w)
{
    if (!h2o_timeout_is_linked(&w->sweep_entry))
        h2o_timeout_link(w->loop, &w->sweep_timeout, &w->sweep_entry);
}

/* Out of descriptors: the pending connection stays queued and the listener
 * stays readable, so accepting again at once would spin.  Stop for
 * ACCEPT_PAUSE_MS (the sweep resumes), say so at most once a second. */
static void stop_accepting_for_a_moment(worker *w, int err)
{
    wh_http_server *s = w->server;
    long long now = (long long)h2o_now(w->loop), last = atomic_load(&s->accept_error_logged_ms);

    wh_metric_add(s->accept_paused,
                  (const char *const[]){s->listener[0], err == EMFILE || err == ENFILE ? "fd_limit" : "memory"}, 1);
    if (now - last >= 1000 && atomic_compare_exchange_strong(&s->accept_error_logged_ms, &last, now))
        wh_log(WH_LOG_WARN, "cannot accept connections; pausing accepts", "error", strerror(err), "pauseMillis", "250",
               NULL);
    if (w->listener != NULL && !w->accept_stopped) {
        h2o_socket_read_stop(w->listener);
        w->accept_stopped = 1;
    }
    w->accept_resume_at = h2o_now(w->loop) + ACCEPT_PAUSE_MS;
    sweep_soon(w);
}

static void accept_some(worker *w, size_t max)
{
    struct sockaddr_storage peer;
    socklen_t peerlen;
    size_t i;
    int fd, on = 1;

    for (i = 0; i < max; i++) {
        conn *c;
        peerlen = sizeof(peer);
        if ((fd = accept4(w->listen_fd, (struct sockaddr *)&peer, &peerlen, SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                stop_accepting_for_a_moment(w, errno);
            break; /* EAGAIN, or a connection reset before we got to it */
        }
        c = wh_calloc(1, sizeof(*c));
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
        c->w = w;
        c->fd = fd;
        c->linger_fd = -1;
        h2o_linklist_init_anchor(&c->streams);
        c->sock = h2o_evloop_socket_create(w->loop, fd, H2O_SOCKET_FLAG_IS_ACCEPTED_CONNECTION);
        h2o_socket_setpeername(c->sock, (struct sockaddr *)&peer, peerlen);
        h2o_linklist_insert(&w->conns, &c->link);
        w->num_conns++;
        sweep_soon(w);
        wh_metric_add(w->server->open_connections, w->server->listener, 1);
        wh_metric_add(w->server->accepted, w->server->listener, 1);
        c->sock->on_close.cb = on_sock_close; /* the only per-connection close hook in 2.2.5 */
        c->sock->on_close.data = c;
        h2o_accept(&w->accept_ctx, c->sock); /* reads accept_ctx.ssl_ctx now */
    }
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    if (err == NULL)
        accept_some(listener->data, ACCEPT_BATCH);
}

/* --- HTTP/2 connections (P16) ------------------------------------------- */

/* The stream `id` of `node`'s subtree of a connection's priority tree,
 * where every open stream sits (its stream table is opaque: khash.h). */
static h2o_http2_stream_t *find_stream(h2o_http2_scheduler_node_t *node, uint32_t id)
{
    h2o_linklist_t *l;

    for (l = node->_all_refs.next; l != &node->_all_refs; l = l->next) {
        h2o_http2_scheduler_openref_t *ref = H2O_STRUCT_FROM_MEMBER(h2o_http2_scheduler_openref_t, _all_link, l);
        h2o_http2_stream_t *stream = H2O_STRUCT_FROM_MEMBER(h2o_http2_stream_t, _refs.scheduler, ref);
        if (stream->stream_id == id || (stream = find_stream(&ref->node, id)) != NULL)
            return stream;
    }
    return NULL;
}

/* What webhookd keeps about an HTTP/2 stream whose body arrives, in the
 * stream's request pool (h2o disposes it when the stream closes):
 * - its promise: a body is admitted at its HEADERS with the buffer it can
 *   grow to reserved against --max-inflight-bytes (h2o doubles a body
 *   buffer until the next DATA frame fits: under twice its declared length,
 *   or the limit's, plus one frame; at most the whole bound, so that any
 *   one body can be admitted), released when the stream closes; once
 *   admitted it is never refused, and one that does not fit gets 503 at
 *   once.  What a stream holds beyond its promise (a Content-Length that
 *   lied, a stream opened before on_h2_frame was in place) is held by its
 *   connection as it grows (h2_held, the sweep), like an HTTP/1.1 upload;
 * - an answer given before the body ended (too large, or no room at the
 *   bound): what the client still sends is dropped (h2o would reset the
 *   stream and lose the answer), and once h2o has sent the answer and
 *   closed the stream, RST_STREAM NO_ERROR asks the client to stop sending,
 *   as Go's HTTP/2 server does after a handler returns without reading the
 *   whole body. */
typedef struct stream_rec {
    h2o_linklist_t link; /* in conn.streams */
    conn *c;             /* NULL once the connection is gone */
    wh_http_server *server;
    uint32_t id;
    size_t promised; /* reserved for the whole body, 0 = held by the connection */
    int answered;    /* answered before its body ended */
    int ended;       /* the client ended its side (END_STREAM on a dropped frame) */
} stream_rec;

static void on_stream_closed(void *p)
{
    stream_rec *r = p;
    h2o_http2_conn_t *h;

    if (r->promised != 0)
        atomic_fetch_sub(&r->server->reserved, r->promised);
    if (r->c == NULL)
        return;
    h2o_linklist_unlink(&r->link);
    h = r->c->h2;
    if (r->answered && !r->ended && h->state < H2O_HTTP2_CONN_STATE_IS_CLOSING) {
        h2o_http2__encode_rst_stream_frame(&h->_write.buf, r->id, H2O_HTTP2_ERROR_NONE);
        h2o_http2_conn_request_write(h);
    }
}

static void forget_stream_recs(conn *c)
{
    while (!h2o_linklist_is_empty(&c->streams)) {
        stream_rec *r = H2O_STRUCT_FROM_MEMBER(stream_rec, link, c->streams.next);
        h2o_linklist_unlink(&r->link);
        r->c = NULL;
    }
}

static stream_rec *stream_rec_of(conn *c, uint32_t id)
{
    h2o_linklist_t *l;

    for (l = c->streams.next; l != &c->streams; l = l->next)
        if (H2O_STRUCT_FROM_MEMBER(stream_rec, link, l)->id == id)
            return H2O_STRUCT_FROM_MEMBER(stream_rec, link, l);
    return NULL;
}

static stream_rec *stream_rec_for(conn *c, h2o_http2_stream_t *stream)
{
    stream_rec *r = stream_rec_of(c, stream->stream_id);

    if (r == NULL) {
        r = h2o_mem_alloc_shared(&stream->req.pool, sizeof(*r), on_stream_closed);
        memset(r, 0, sizeof(*r));
        r->c = c;
        r->server = c->w->server;
        r->id = stream->stream_id;
        h2o_linklist_insert(&c->streams, &r->link);
    }
    return r;
}

/* What an HTTP/2 connection holds beyond its streams' promises: its input
 * buffer and every body buffer (or the part of one past its promise). */
static size_t h2_body_bytes(conn *c, h2o_http2_scheduler_node_t *node)
{
    h2o_linklist_t *l;
    size_t total = 0;

    for (l = node->_all_refs.next; l != &node->_all_refs; l = l->next) {
        h2o_http2_scheduler_openref_t *ref = H2O_STRUCT_FROM_MEMBER(h2o_http2_scheduler_openref_t, _all_link, l);
        h2o_http2_stream_t *stream = H2O_STRUCT_FROM_MEMBER(h2o_http2_stream_t, _refs.scheduler, ref);
        if (stream->_req_body != NULL && stream->_req_body->bytes != NULL) {
            stream_rec *r = stream_rec_of(c, stream->stream_id);
            size_t promised = r != NULL ? r->promised : 0;
            if (stream->_req_body->capacity > promised)
                total += stream->_req_body->capacity - promised;
        }
        total += h2_body_bytes(c, &ref->node);
    }
    return total;
}

static size_t h2_held(conn *c)
{
    return input_of(c) + h2_body_bytes(c, &c->h2->scheduler);
}

/* Answer a stream whose body is still arriving: h2o's own way to answer a
 * request at its HEADERS (the stream fast-forwarded to sending).  A 413 is
 * the one h2o gives a body over the limit, which the refusal filter turns
 * into the router's answer (P15): istiod's "Request entity too large". */
static void answer_early(conn *c, h2o_http2_conn_t *h, h2o_http2_stream_t *stream, int status)
{
    wh_http_server *server = c->w->server;

    stream_rec_for(c, stream)->answered = 1;
    h2o_http2_stream_set_state(h, stream, H2O_HTTP2_STREAM_STATE_REQ_PENDING);
    h2o_http2_stream_set_state(h, stream, H2O_HTTP2_STREAM_STATE_SEND_HEADERS);
    if (h->pull_stream_ids.max_processed < stream->stream_id)
        h->pull_stream_ids.max_processed = stream->stream_id;
    if (status == 413) {
        h2o_send_error_generic(&stream->req, 413, "Payload Too Large", "request entity is too large", 0);
        return;
    }
    h2o_add_header(&stream->req.pool, &stream->req.res.headers, H2O_TOKEN_RETRY_AFTER, NULL, H2O_STRLIT("1"));
    wh_metric_add(server->inflight_rejected, server->listener, 1);
    h2o_send_error_generic(&stream->req, 503, "Service Unavailable", INFLIGHT_TEXT, 0);
}

/* Admit a body at its HEADERS (see stream_rec); answer 503 when its
 * promise does not fit. */
static void admit_body(conn *c, h2o_http2_conn_t *h, h2o_http2_stream_t *stream)
{
    wh_http_server *server = c->w->server;
    size_t len = stream->_expected_content_length, bound = server->cfg.max_inflight_bytes, promise;

    if (stream_rec_of(c, stream->stream_id) != NULL)
        return;
    if (len == SIZE_MAX)
        len = h->super.ctx->globalconf->max_request_entity_size;
    promise = bound > 2 * 16384 && len <= (bound - 2 * 16384) / 2 ? 2 * (len + 16384) : bound;
    if (!reserve(server, promise)) {
        answer_early(c, h, stream, 503);
        return;
    }
    stream_rec_for(c, stream)->promised = promise;
}

/* A DATA frame webhookd takes instead of h2o still counts against the
 * connection's flow-control window, refilled as h2o refills it. */
static void consume_connection_window(h2o_http2_conn_t *h, size_t length)
{
    ssize_t avail;

    h2o_http2_window_consume_window(&h->_input_window, length);
    avail = h2o_http2_window_get_window(&h->_input_window);
    if (avail * 2 < (ssize_t)H2O_HTTP2_SETTINGS_HOST.initial_window_size) {
        int32_t delta = (int32_t)(H2O_HTTP2_SETTINGS_HOST.initial_window_size - avail);
        h2o_http2_encode_window_update_frame(&h->_write.buf, 0, delta);
        h2o_http2_conn_request_write(h);
        h2o_http2_window_update(&h->_input_window, delta);
    }
}

/* Whether a stream's declared length, or its body with `more` bytes, is
 * over what h2o buffers (P6). */
static int over_limit(const h2o_http2_conn_t *h, const h2o_http2_stream_t *stream, size_t more)
{
    size_t limit = h->super.ctx->globalconf->max_request_entity_size;

    return (stream->_expected_content_length != SIZE_MAX && stream->_expected_content_length > limit) ||
           stream->_req_body->size + more > limit;
}

/* Every frame of a hooked HTTP/2 connection passes here before h2o's reader
 * (the conn record's _read_expect, which h2o switches between its readers:
 * the hook is put back after each).  A body over the limit is answered 413
 * at its HEADERS when its Content-Length says so, else at the DATA frame
 * that crosses it, where h2o would reset the stream with REFUSED_STREAM
 * (an invitation to retry); DATA for a stream answered that way is dropped.
 * It also counts the client's RST_STREAMs against RESET_BUDGET (P20). */
static ssize_t on_h2_frame(h2o_http2_conn_t *h, const uint8_t *src, size_t len, const char **err_desc)
{
    conn *c = h->sock->on_close.data;
    int monitoring = c->w->server->cfg.monitoring;
    uint32_t length = 0, id = 0;
    uint8_t type = 0xff, flags = 0;
    h2o_http2_stream_t *stream;
    ssize_t ret;

    if (len >= H2O_HTTP2_FRAME_HEADER_SIZE) {
        length = h2o_http2_decode24u(src);
        type = src[3];
        flags = src[4];
        id = h2o_http2_decode32u(src + 5) & 0x7fffffff;
    }
    /* DATA h2o would accept as a frame and payload (else h2o reports the error) */
    if (type == H2O_HTTP2_FRAME_TYPE_DATA && id != 0 && h->state == H2O_HTTP2_CONN_STATE_OPEN &&
        length <= H2O_HTTP2_SETTINGS_HOST.max_frame_size && len - H2O_HTTP2_FRAME_HEADER_SIZE >= length &&
        ((flags & H2O_HTTP2_FRAME_FLAG_PADDED) == 0 || (length != 0 && (size_t)src[9] < length))) {
        size_t payload = (flags & H2O_HTTP2_FRAME_FLAG_PADDED) != 0 ? length - 1 - src[9] : length;
        stream_rec *r = stream_rec_of(c, id);

        if ((r == NULL || !r->answered) && (stream = find_stream(&h->scheduler, id)) != NULL &&
            stream->state == H2O_HTTP2_STREAM_STATE_RECV_BODY && over_limit(h, stream, payload)) {
            answer_early(c, h, stream, 413);
            r = stream_rec_of(c, id);
        }
        if (r != NULL && r->answered) {
            r->ended |= (flags & H2O_HTTP2_FRAME_FLAG_END_STREAM) != 0;
            consume_connection_window(h, length);
            return H2O_HTTP2_FRAME_HEADER_SIZE + (ssize_t)length;
        }
    }
    ret = c->h2_next(h, src, len, err_desc);
    if (h->_read_expect != on_h2_frame) {
        c->h2_next = h->_read_expect;
        h->_read_expect = on_h2_frame;
    }
    if (ret > 0 && type == H2O_HTTP2_FRAME_TYPE_RST_STREAM && id != 0 && ++c->resets > RESET_BUDGET &&
        2 * (size_t)c->resets > c->answers) {
        *err_desc = "too many streams cancelled";
        return H2O_HTTP2_ERROR_ENHANCE_YOUR_CALM; /* h2o sends GOAWAY with it and closes (P20) */
    }
    if (ret > 0 && (type == H2O_HTTP2_FRAME_TYPE_HEADERS || type == H2O_HTTP2_FRAME_TYPE_CONTINUATION) &&
        h->state == H2O_HTTP2_CONN_STATE_OPEN && !monitoring && (stream = find_stream(&h->scheduler, id)) != NULL &&
        stream->state == H2O_HTTP2_STREAM_STATE_RECV_BODY) {
        if (over_limit(h, stream, 0))
            answer_early(c, h, stream, 413);
        else
            admit_body(c, h, stream);
    }
    return ret;
}

/* The streams of `node`'s subtree whose bodies arrive unadmitted (no
 * promise, not answered), into *out (grown as needed). */
static void unadmitted_streams(conn *c, h2o_http2_scheduler_node_t *node, h2o_http2_stream_t ***out, size_t *n,
                               size_t *cap)
{
    h2o_linklist_t *l;

    for (l = node->_all_refs.next; l != &node->_all_refs; l = l->next) {
        h2o_http2_scheduler_openref_t *ref = H2O_STRUCT_FROM_MEMBER(h2o_http2_scheduler_openref_t, _all_link, l);
        h2o_http2_stream_t *stream = H2O_STRUCT_FROM_MEMBER(h2o_http2_stream_t, _refs.scheduler, ref);
        stream_rec *r = stream_rec_of(c, stream->stream_id);
        if (stream->state == H2O_HTTP2_STREAM_STATE_RECV_BODY && (r == NULL || (r->promised == 0 && !r->answered))) {
            if (*n == *cap)
                *out = wh_realloc(*out, (*cap = *cap * 2 + 4) * sizeof(**out));
            (*out)[(*n)++] = stream;
        }
        unadmitted_streams(c, &ref->node, out, n, cap);
    }
}

/* Streams h2o opened before on_h2_frame was in place (their HEADERS came
 * with the handshake) get what on_h2_frame gives a stream at its HEADERS:
 * no other frame has been read since. */
static void screen_open_streams(conn *c, h2o_http2_conn_t *h)
{
    h2o_http2_stream_t **streams = NULL;
    size_t i, n = 0, cap = 0;

    unadmitted_streams(c, &h->scheduler, &streams, &n, &cap);
    for (i = 0; i < n; i++) {
        if (over_limit(h, streams[i], 0))
            answer_early(c, h, streams[i], 413);
        else if (!c->w->server->cfg.monitoring)
            admit_body(c, h, streams[i]);
    }
    free(streams);
}

/* P17: a BIO whose reads would block, h2o's socket as its data (on_tls_info finds the connection through it). */
static int held_read(BIO *b, char *out, int len)
{
    (void)out;
    (void)len;
    BIO_clear_retry_flags(b);
    BIO_set_retry_read(b);
    return -1;
}

static long held_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH;
}

static BIO_METHOD *held_method;
static pthread_once_t held_method_once = PTHREAD_ONCE_INIT;

static void make_held_method(void)
{
    held_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "webhookd first flight held");
    if (held_method == NULL || !BIO_meth_set_read(held_method, held_read) || !BIO_meth_set_ctrl(held_method, held_ctrl))
        wh_oom(0);
}

/* At the end of a handshake (inside SSL_accept) of a server that speaks h2: what the client sent with its last flight
 * stays encrypted, in h2o's buffer, until release_first_flight.  h2o then makes its HTTP/2 (ALPN h2) or HTTP/1.1
 * connection with no input; on_handshakes_done puts on_h2_frame before the HTTP/2 reader, or watch_preface before the
 * HTTP/1.1 one (P18), and has it read the held input, so that every frame passes on_h2_frame. */
static void hold_first_flight(conn *c, SSL *ssl)
{
    BIO *held;

    pthread_once(&held_method_once, make_held_method);
    if ((held = BIO_new(held_method)) == NULL)
        wh_oom(0);
    BIO_set_data(held, c->sock);
    BIO_set_init(held, 1);
    c->held_rbio = SSL_get_rbio(ssl);
    BIO_up_ref(c->held_rbio); /* (h2o's BIO is also the write BIO: one reference for both) */
    SSL_set0_rbio(ssl, held);
}

/* Give h2o's BIO back and decode what was held, as h2o decodes input (sock->input), then let h2o's reader (now behind
 * on_h2_frame) read it.  c may be closed when this returns. */
static void release_first_flight(conn *c)
{
    SSL *ssl = (SSL *)c->ssl;
    h2o_socket_t *sock = c->sock;
    const char *err = NULL;
    int n;

    SSL_set0_rbio(ssl, c->held_rbio); /* frees the held BIO */
    c->held_rbio = NULL;
    for (;;) {
        h2o_iovec_t buf = h2o_buffer_reserve(&sock->input, 4096);
        ERR_clear_error();
        if ((n = SSL_read(ssl, buf.base, (int)buf.len)) <= 0) {
            if (n < 0 && SSL_get_error(ssl, n) != SSL_ERROR_WANT_READ)
                err = h2o_socket_error_ssl_decode;
            break;
        }
        sock->input->size += (size_t)n;
    }
    if ((sock->input->size != 0 || err != NULL) && sock->_cb.read != NULL)
        sock->_cb.read(sock, err);
}

/* Point the worker's connection records at h2o's HTTP/2 connections (ALPN
 * h2 or the prior-knowledge preface alike: each one's socket is ours) and
 * put on_h2_frame before the frame reader of those that lack it. */
static void find_h2_conns(worker *w)
{
    h2o_linklist_t *node;

    for (node = w->ctx.http2._conns.next; node != &w->ctx.http2._conns; node = node->next) {
        h2o_http2_conn_t *h = H2O_STRUCT_FROM_MEMBER(h2o_http2_conn_t, _conns, node);
        conn *c;
        if (h->sock == NULL || h->sock->on_close.cb != on_sock_close)
            continue;
        c = h->sock->on_close.data;
        c->h2 = h;
        if (h->_read_expect != on_h2_frame && h->state == H2O_HTTP2_CONN_STATE_OPEN) {
            c->h2_next = h->_read_expect;
            h->_read_expect = on_h2_frame;
            screen_open_streams(c, h);
        }
    }
}

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

/* P18: a client may speak HTTP/2 over TLS without ALPN saying so (prior knowledge: its first bytes are the preface).
 * h2o's HTTP/1.1 reader then makes an HTTP/2 connection and reads every frame that came with the preface before
 * on_h2_frame can be put in place: a body over the cap in them got REFUSED_STREAM.  The first bytes of an HTTP/1.1
 * connection pass here: when they are the preface, h2o's reader gets the preface alone, the new connection is hooked
 * (find_h2_conns), and then its reader (behind on_h2_frame) gets what followed it.  Anything else gives the socket back
 * to h2o's reader for good. */
static void watch_preface(h2o_socket_t *sock, const char *err)
{
    conn *c = sock->on_close.data;
    h2o_socket_cb h1_read = c->h1_read;
    size_t n = sock->input->size, seen = n < sizeof(H2_PREFACE) - 1 ? n : sizeof(H2_PREFACE) - 1;
    char *rest = NULL;
    size_t rest_len = 0;

    if (err != NULL || n == 0 || memcmp(sock->input->bytes, H2_PREFACE, seen) != 0) {
        sock->_cb.read = h1_read;
        c->h1_read = NULL;
        h1_read(sock, err);
        return;
    }
    if (n > seen) { /* the frames after the preface wait for the hook */
        rest_len = n - seen;
        rest = wh_memdup(sock->input->bytes + seen, rest_len);
        sock->input->size = seen;
    }
    h1_read(sock, NULL); /* from 12 bytes of the preface on, h2o's HTTP/2 reader replaces it (and reads those) */
    if (sock->_cb.read == watch_preface) {
        free(rest); /* (nothing followed: less than the whole preface came) */
        return;
    }
    c->h1_read = NULL;
    find_h2_conns(c->w);
    if (rest != NULL) {
        h2o_iovec_t buf = h2o_buffer_reserve(&sock->input, rest_len);
        memcpy(buf.base, rest, rest_len);
        sock->input->size += rest_len;
        free(rest);
        sock->_cb.read(sock, NULL); /* (may close c) */
    }
}

/* Whether h2o has made its connection on c's socket (its handshake callback ran: sock->data is the h2o_conn_t of
 * an HTTP/1.1 or HTTP/2 connection of this worker, no longer h2o's accept record). */
static int h2o_accepted(conn *c)
{
    const h2o_conn_t *hc = c->sock->data;

    return hc != NULL && hc->ctx == &c->w->ctx;
}

/* find_h2_conns, then the first flights held back (P17) of the connections it hooked are read, and those of the
 * HTTP/1.1 connections through watch_preface (P18). */
static void hook_h2_conns(worker *w)
{
    h2o_linklist_t *l, *next;

    find_h2_conns(w);
    for (l = w->conns.next; l != &w->conns; l = next) {
        conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, l);
        next = l->next; /* (reading the held input may close c, no other) */
        if (c->held_rbio == NULL)
            continue;
        if (c->h2 == NULL && h2o_accepted(c)) {
            c->h1_read = c->sock->_cb.read;
            c->sock->_cb.read = watch_preface;
        }
        if (c->h2 != NULL || c->h1_read != NULL)
            release_first_flight(c);
    }
}

/* Run once the loop is done with the sockets that finished a handshake, so
 * that h2o has made their HTTP/2 connections (with no input read: P17; a
 * handshake whose last write had to wait is found by the sweep). */
static void on_handshakes_done(h2o_timeout_entry_t *entry)
{
    hook_h2_conns(H2O_STRUCT_FROM_MEMBER(worker, hook_entry, entry));
}

/* A revoked HTTP/2 connection ends the way h2o's own graceful shutdown
 * ends one: once every stream it opened is being answered, it turns
 * half-closed and h2o closes it after the last answer.  Until then its
 * streams still arriving keep flowing (h2o drops DATA on a half-closed
 * connection) and are answered by the new verdict. */
static void close_when_answered(conn *c)
{
    h2o_http2_conn_t *h = c->h2;

    if (!c->goaway || h->state != H2O_HTTP2_CONN_STATE_OPEN ||
        h->num_streams.pull.open != h->num_streams.pull.half_closed)
        return;
    h->state = H2O_HTTP2_CONN_STATE_HALF_CLOSED;
    h2o_http2_conn_request_write(h);
}

/* GOAWAY (NO_ERROR, the last stream the client opened): it opens no new
 * stream and reconnects, presenting whatever certificate it has now, as
 * an HTTP/1.1 client does after "Connection: close". */
static void send_goaway(conn *c)
{
    h2o_http2_conn_t *h = c->h2;

    if (c->goaway || h->state != H2O_HTTP2_CONN_STATE_OPEN)
        return;
    h2o_http2_encode_goaway_frame(&h->_write.buf, h->pull_stream_ids.max_open, H2O_HTTP2_ERROR_NONE,
                                  h2o_iovec_init(H2O_STRLIT("client certificate no longer trusted")));
    h2o_http2_conn_request_write(h);
    c->goaway = 1;
    close_when_answered(c);
}

/* --- control messages (from the main thread) ------------------------------ */

static int between_requests(conn *c);
static wh_http_client_cert rejudged_verdict(SSL_CTX *ctx, const SSL *ssl, const char **reason);

/* A new bundle of client CAs judges the connections already open too: a
 * keep-alive connection is not a licence to keep the verdict of a CA that
 * was removed (or to stay refused by a bundle that now trusts it).  One that
 * loses its verdict is closed at once when it sits between requests (its
 * client reconnects and presents whatever certificate it has now), else its
 * current request is answered by the new verdict with "Connection: close";
 * an HTTP/2 one gets GOAWAY and its open streams the new verdict. */
static void rejudge_client_certs(worker *w, SSL_CTX *ctx)
{
    h2o_linklist_t *node;
    unsigned verified = 0, refused = 0;
    char nv[16], nr[16];

    if ((SSL_CTX_get_verify_mode(ctx) & SSL_VERIFY_PEER) == 0)
        return;
    find_h2_conns(w);
    for (node = w->conns.next; node != &w->conns; node = node->next) {
        conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, node);
        wh_http_client_cert was = c->client_cert;

        if (c->ssl == NULL || was == WH_CLIENT_CERT_NONE)
            continue;
        c->client_cert = rejudged_verdict(ctx, c->ssl, &c->client_cert_error);
        if (c->client_cert == WH_CLIENT_CERT_VERIFIED) {
            verified += was != WH_CLIENT_CERT_VERIFIED;
            c->revoked = 0;
        } else if (was == WH_CLIENT_CERT_VERIFIED) {
            refused++;
            c->revoked = 1;
            if (c->h2 != NULL) {
                send_goaway(c);
            } else if (!c->shut && between_requests(c)) {
                shutdown(c->fd, SHUT_RDWR); /* h2o sees the end and closes it */
                c->shut = 1;
            }
        }
    }
    if (verified == 0 && refused == 0)
        return;
    snprintf(nv, sizeof(nv), "%u", verified);
    snprintf(nr, sizeof(nr), "%u", refused);
    wh_log(WH_LOG_INFO, "client CA changed: connections re-verified", "verified", nv, "refused", nr, NULL);
}

static void on_control(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    worker *w = H2O_STRUCT_FROM_MEMBER(worker, receiver, receiver);

    while (!h2o_linklist_is_empty(messages)) {
        control *m = H2O_STRUCT_FROM_MEMBER(control, super.link, messages->next);
        h2o_linklist_unlink(&m->super.link);
        if (m->type == CONTROL_TLS) {
            /* h2o keeps a borrowed SSL_CTX* in sockets mid-handshake, so the
             * old context is freed one generation late (P11). */
            SSL_CTX_free(w->retired);
            w->retired = w->accept_ctx.ssl_ctx;
            w->accept_ctx.ssl_ctx = m->ssl_ctx;
            rejudge_client_certs(w, m->ssl_ctx);
        } else {
            w->stop = 1;
            w->stop_timeout_ms = m->timeout_ms;
        }
        free(m);
    }
}

static void send_control(worker *w, int type, SSL_CTX *ssl_ctx, uint64_t timeout_ms)
{
    control *m = wh_calloc(1, sizeof(*m));

    m->type = type;
    m->ssl_ctx = ssl_ctx;
    m->timeout_ms = timeout_ms;
    h2o_multithread_send_message(&w->receiver, &m->super);
}

/* --- worker threads ------------------------------------------------------- */

/* Whether an HTTP/1.1 connection sits between requests: an answer was
 * written and nothing arrived since (h2o read nothing more: it reads
 * whatever the loop sees arrive; the kernel holds nothing unread).  A TLS
 * record cut in two right after an answer is the one arrival this cannot
 * see (h2o buffers it undecrypted). */
static int between_requests(conn *c)
{
    int unread;

    return c->answered && c->sock->bytes_read == c->read_at_answer && !h2o_socket_is_writing(c->sock) &&
           ioctl(c->fd, SIOCINQ, &unread) == 0 && unread == 0;
}

/* Close the idle connections (see IDLE_QUIET_MS): shutdown(2) makes h2o see
 * EOF and close each through its own path. */
static void close_idle(worker *w)
{
    h2o_linklist_t *node;

    for (node = w->conns.next; node != &w->conns; node = node->next) {
        conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, node);
        struct tcp_info ti;
        socklen_t len = sizeof(ti);
        uint32_t quiet;
        int idle;

        if (c->shut || h2o_socket_is_writing(c->sock) || getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
            len < sizeof(ti))
            continue;
        quiet = ti.tcpi_last_data_recv < ti.tcpi_last_data_sent ? ti.tcpi_last_data_recv : ti.tcpi_last_data_sent;
        /* (A TLS record cut in two right after an answer gets the idle delay
         * rather than the stalled one.) */
        idle = between_requests(c);
        if (quiet >= (idle ? IDLE_QUIET_MS : STALLED_QUIET_MS)) {
            shutdown(c->fd, SHUT_RDWR);
            c->shut = 1;
            wh_log(WH_LOG_DEBUG, "draining: closing a connection", "reason", idle ? "idle" : "stalled", NULL);
        }
    }
}

static void drain(worker *w)
{
    uint64_t deadline;

    /* Take what the kernel already queued on this listener: closing a
     * SO_REUSEPORT socket resets its pending connections (P9). */
    accept_some(w, SIZE_MAX);
    if (!w->accept_stopped)
        h2o_socket_read_stop(w->listener);
    h2o_socket_close(w->listener);
    w->listener = NULL;
    w->listen_fd = -1;

    /* h2: GOAWAY; h1: on_req() answers "Connection: close" from now on, so
     * busy connections end after their current request.  Idle ones are
     * closed by close_idle(). */
    h2o_context_request_shutdown(&w->ctx);
    deadline = h2o_now(w->loop) + w->stop_timeout_ms;
    while (w->num_conns != 0 && h2o_now(w->loop) < deadline) {
        h2o_evloop_run(w->loop, 10);
        close_idle(w);
    }

    /* Deadline: cut the stragglers, and let h2o close them through its own
     * EOF path so that the context can be disposed of cleanly. */
    w->cut = w->num_conns;
    if (w->cut != 0) {
        h2o_linklist_t *node;
        for (node = w->conns.next; node != &w->conns; node = node->next) {
            conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, node);
            shutdown(c->fd, SHUT_RDWR);
            c->shut = 1;
        }
        deadline = h2o_now(w->loop) + 1000;
        while (w->num_conns != 0 && h2o_now(w->loop) < deadline)
            h2o_evloop_run(w->loop, 10);
    }
}

/* --- the sweep: write timeouts, the in-flight bound, accept pauses ------- */

/* Refusing a request that is still arriving (the in-flight bound): answer
 * 503 ourselves (h2o only answers once the whole body is in), then half-close
 * and read and drop what the client still sends for up to LINGER_MS, so
 * that the answer reaches it instead of a reset; then h2o's own read path
 * sees the end and closes the connection. */

static void on_linger_read(h2o_socket_t *sock, const char *err)
{
    conn *c = sock->on_close.data;

    if (err == NULL && !c->shut) {
        h2o_buffer_consume(&sock->input, sock->input->size);
        return;
    }
    c->paused = 0;
    h2o_socket_read_start(sock, c->paused_read); /* h2o's callback closes on the error */
    c->paused_read(sock, err != NULL ? err : "closed");
}

static void on_refusal_written(h2o_socket_t *sock, const char *err)
{
    conn *c = sock->on_close.data;

    shutdown(c->fd, err != NULL ? SHUT_RDWR : SHUT_WR);
    c->linger_until = h2o_now(c->w->loop) + LINGER_MS;
    h2o_socket_read_start(sock, on_linger_read);
}

/* HTTP/2: the connection stays (its other streams are admitted or done);
 * the streams growing without a promise are answered 503 on their own,
 * and what they still send is dropped (stream_rec). */
static void refuse_arriving_streams(worker *w, conn *c)
{
    h2o_http2_stream_t **streams = NULL;
    size_t i, n = 0, cap = 0;

    unadmitted_streams(c, &c->h2->scheduler, &streams, &n, &cap);
    for (i = 0; i < n; i++)
        answer_early(c, c->h2, streams[i], 503);
    free(streams);
    hold(w->server, c, c->held_now); /* held until those streams close */
}

static void refuse_arriving_request(worker *w, conn *c)
{
    static h2o_iovec_t answer = {H2O_STRLIT("HTTP/1.1 503 Service Unavailable\r\n"
                                            "Server: webhookd\r\n"
                                            "Content-Type: text/plain; charset=utf-8\r\n"
                                            "Retry-After: 1\r\n"
                                            "Connection: close\r\n"
                                            "Content-Length: 78\r\n\r\n" INFLIGHT_TEXT)};
    if (c->h2 != NULL) {
        refuse_arriving_streams(w, c);
        return;
    }
    c->paused_read = c->sock->_cb.read;
    c->paused = 1;
    h2o_socket_read_stop(c->sock);
    h2o_buffer_consume(&c->sock->input, c->sock->input->size);
    hold(w->server, c, 0);
    c->promised = 0;
    wh_metric_add(w->server->inflight_rejected, w->server->listener, 1);
    h2o_socket_write(c->sock, &answer, 1, on_refusal_written);
}

static int cmp_input_desc(const void *a, const void *b)
{
    size_t x = (*(conn *const *)a)->held_now, y = (*(conn *const *)b)->held_now;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* What admitting the request arriving on `c` reserves: once its head is in
 * and declares a Content-Length, what its input buffer will grow to (h2o
 * 2.2.5 starts it at 8 KiB and doubles it, keeping 4 KiB free for each
 * read), at most the whole bound so that any one request can be admitted;
 * otherwise (head still arriving, chunked, HTTP/2: stream_rec) what it
 * holds now.
 * Sets *whole when the figure covers the complete request. */
static size_t admission_bytes(const wh_http_server *s, const conn *c, int *whole)
{
    const h2o_buffer_t *in = c->sock->input;
    const char *head = in->bytes, *end, *line, *value;
    size_t vlen, need, cap = 8192, held = c->held_now;
    unsigned long long len = 0;
    int cl = 0;

    *whole = 0;
    if (c->h2 != NULL || (end = memmem(head, in->size, "\r\n\r\n", 4)) == NULL)
        return held;
    for (line = head; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = (size_t)((nl != NULL ? nl : end) - line);
        char digits[24];

        if (header_line(line, n, "transfer-encoding", &value, &vlen)) {
            /* Chunked: h2o refuses the body once it reaches the limit (P6),
             * so the decoded body never holds more than that. */
            len = wh_http_entity_limit(s->cfg.max_request_bytes);
            cl = 1;
            break;
        }
        if (header_line(line, n, "content-length", &value, &vlen) && vlen != 0 && vlen < sizeof(digits)) {
            memcpy(digits, value, vlen);
            digits[vlen] = '\0';
            len = strtoull(digits, NULL, 10);
            cl = 1;
        }
        line = nl != NULL ? nl + 1 : end;
    }
    if (!cl || len > wh_http_entity_limit(s->cfg.max_request_bytes)) /* no body, or h2o's 413 */
        return held;
    need = (size_t)(end + 4 - head) + (size_t)len + 4096; /* h2o reads into the free 4 KiB */
    while (cap < need && cap <= s->cfg.max_inflight_bytes / 2)
        cap *= 2;
    *whole = 1;
    if (cap > s->cfg.max_inflight_bytes)
        cap = s->cfg.max_inflight_bytes;
    return cap > held ? cap : held;
}

/* Whether what a connection holds beyond its reservation is a request
 * arriving (on HTTP/2: stream bodies, see stream_rec). */
static int arriving(const conn *c)
{
    if (c->h2 != NULL)
        return !c->shut && c->h2->state == H2O_HTTP2_CONN_STATE_OPEN;
    return !c->paused && !c->shut && c->sock->input->size != 0 && c->sock->_cb.read != NULL &&
           !h2o_socket_is_writing(c->sock);
}

static void on_sweep(h2o_timeout_entry_t *entry)
{
    worker *w = H2O_STRUCT_FROM_MEMBER(worker, sweep_entry, entry);
    wh_http_server *s = w->server;
    uint64_t now = h2o_now(w->loop);
    h2o_linklist_t *node;
    conn **growing = wh_malloc(w->num_conns * sizeof(*growing) + 1);
    size_t n = 0;

    hook_h2_conns(w); /* those upgraded from HTTP/1.1 too, and handshakes that ended late */

    for (node = w->conns.next; node != &w->conns; node = node->next) {
        conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, node);
        size_t want;

        /* Write timeout: an answer (or a run of answers) still not drained
         * after --write-timeout pins its memory for a client that does not
         * read; cut it (shutdown(2): h2o's write fails and it closes). */
        if (!h2o_socket_is_writing(c->sock) || c->answers != c->answers_seen) {
            c->writing_since = h2o_socket_is_writing(c->sock) ? now : 0;
            c->answers_seen = c->answers;
        } else if (c->writing_since == 0) {
            c->writing_since = now;
        } else if (!c->shut && now - c->writing_since >= s->cfg.write_timeout_ms) {
            shutdown(c->fd, SHUT_RDWR);
            c->shut = 1;
            wh_metric_add(s->write_timeouts, s->listener, 1);
            wh_log(WH_LOG_DEBUG, "write timeout: closing a connection that does not read its answer", NULL);
        }

        /* What each connection holds: an admitted request keeps its promise
         * until it is answered; bytes already buffered are held anyway. */
        if (c->promised != 0 && c->promised_at != c->answers)
            c->promised = 0;
        c->held_now = held_by(c);
        want = c->held_now > c->promised ? c->held_now : c->promised;
        if (want <= c->reserved || c->promised != 0 || !arriving(c))
            hold(s, c, want);
        else
            growing[n++] = c;
    }

    /* The in-flight bound: requests growing without a promise are admitted
     * from the most advanced down while their bytes can be reserved; the
     * rest are new requests beyond the bound and get a fast 503 (on_req
     * refuses the complete ones the same way). */
    qsort(growing, n, sizeof(*growing), cmp_input_desc);
    for (size_t i = 0; i < n; i++) {
        conn *c = growing[i];
        int whole;
        size_t want = admission_bytes(s, c, &whole);

        if (want > c->reserved && !reserve(s, want - c->reserved)) {
            refuse_arriving_request(w, c);
            continue;
        }
        c->reserved = want > c->reserved ? want : c->reserved;
        if (whole) {
            c->promised = want;
            c->promised_at = c->answers;
        }
    }
    free(growing);
    for (node = w->conns.next; node != &w->conns; node = node->next) {
        conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, node);
        if (c->goaway)
            close_when_answered(c);
        if (c->linger_until != 0 && now >= c->linger_until && !c->shut) {
            shutdown(c->fd, SHUT_RDWR); /* the lingering read sees the end */
            c->shut = 1;
        }
    }
    while (!h2o_linklist_is_empty(&w->lingering) &&
           now >= H2O_STRUCT_FROM_MEMBER(lingerer, link, w->lingering.next)->until)
        end_lingering(H2O_STRUCT_FROM_MEMBER(lingerer, link, w->lingering.next)); /* in the order they began */
    if (w->listener != NULL && w->accept_stopped && now >= w->accept_resume_at) {
        h2o_socket_read_start(w->listener, on_accept);
        w->accept_stopped = 0;
    }
    if (w->num_conns != 0 || !h2o_linklist_is_empty(&w->lingering) || w->accept_stopped)
        h2o_timeout_link(w->loop, &w->sweep_timeout, &w->sweep_entry);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    wh_http_server *s = w->server;

    w->loop = h2o_evloop_create();
    h2o_context_init(&w->ctx, w->loop, &s->globalconf);
    w->accept_ctx.ctx = &w->ctx;
    w->accept_ctx.hosts = s->globalconf.hosts;
    h2o_multithread_register_receiver(w->ctx.queue, &w->receiver, on_control);
    h2o_linklist_init_anchor(&w->conns);
    h2o_linklist_init_anchor(&w->lingering);
    /* The listener socket only reports readiness; accept_some() accepts. */
    w->listener = h2o_evloop_socket_create(w->loop, w->listen_fd, H2O_SOCKET_FLAG_DONT_READ);
    w->listener->data = w;
    h2o_socket_read_start(w->listener, on_accept);
    h2o_timeout_init(w->loop, &w->sweep_timeout, SWEEP_MS);
    w->sweep_entry.cb = on_sweep;
    w->hook_entry.cb = on_handshakes_done;
    h2o_barrier_wait(&s->started); /* every receiver exists before main sends anything */

    while (!w->stop)
        h2o_evloop_run(w->loop, INT32_MAX);
    drain(w);
    while (!h2o_linklist_is_empty(&w->lingering))
        end_lingering(H2O_STRUCT_FROM_MEMBER(lingerer, link, w->lingering.next));

    h2o_multithread_unregister_receiver(w->ctx.queue, &w->receiver);
    if (w->num_conns == 0) {
        /* The 1-second GOAWAY re-send timer must not be pending at dispose
         * (P10); with no connection left it has nothing to do. */
        if (h2o_timeout_is_linked(&w->ctx.http2._graceful_shutdown_timeout))
            h2o_timeout_unlink(&w->ctx.http2._graceful_shutdown_timeout);
        h2o_multithread_queue_t *queue = w->ctx.queue;
        if (h2o_timeout_is_linked(&w->sweep_entry))
            h2o_timeout_unlink(&w->sweep_entry);
        if (h2o_timeout_is_linked(&w->hook_entry))
            h2o_timeout_unlink(&w->hook_entry);
        h2o_timeout_dispose(w->loop, &w->sweep_timeout);
        h2o_context_dispose(&w->ctx);
        free(queue); /* 2.2.5: dispose destroys the queue but never frees it */
        h2o_evloop_destroy(w->loop);
        w->loop = NULL;
    }
    /* else: a connection h2o would not close even after shutdown(2) still
     * owns parts of the loop; the process is about to exit, so it is left. */
    return NULL;
}

/* --- listeners ------------------------------------------------------------ */

static wh_code resolve(const char *listen, struct sockaddr_storage *addr, socklen_t *addrlen, wh_err *err)
{
    const char *colon = strrchr(listen, ':');
    char host[256];
    size_t hlen;
    struct addrinfo hints = {0}, *res = NULL;
    int gai;

    if (colon == NULL || colon[1] == '\0')
        return wh_err_set(err, WH_E_INVALID, "--listen %s: want [HOST]:PORT", listen);
    hlen = (size_t)(colon - listen);
    if (hlen >= 2 && listen[0] == '[' && listen[hlen - 1] == ']')
        listen++, hlen -= 2;
    if (hlen >= sizeof(host))
        return wh_err_set(err, WH_E_INVALID, "--listen %s: host name too long", listen);
    memcpy(host, listen, hlen);
    host[hlen] = '\0';

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if (hlen == 0) {
        /* Every address: dual-stack IPv6 when the host has it (see listen_one). */
        struct sockaddr_in6 *any = (struct sockaddr_in6 *)addr;
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (*end != '\0' || port < 0 || port > 65535)
            return wh_err_set(err, WH_E_INVALID, "--listen: invalid port \"%s\"", colon + 1);
        memset(addr, 0, sizeof(*addr));
        any->sin6_family = AF_INET6;
        any->sin6_addr = in6addr_any;
        any->sin6_port = htons((uint16_t)port);
        *addrlen = sizeof(*any);
        return WH_OK;
    }
    if ((gai = getaddrinfo(host, colon + 1, &hints, &res)) != 0)
        return wh_err_set(err, WH_E_INVALID, "--listen %s: %s", listen, gai_strerror(gai));
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return WH_OK;
}

static int listen_one(struct sockaddr_storage *addr, socklen_t *addrlen)
{
    int fd, on = 1, off = 0;

    if ((fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1 &&
        addr->ss_family == AF_INET6 && (errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT) &&
        IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)addr)->sin6_addr)) {
        /* No IPv6 here: every address means every IPv4 address. */
        uint16_t port = ((struct sockaddr_in6 *)addr)->sin6_port;
        struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
        memset(addr, 0, sizeof(*addr));
        v4->sin_family = AF_INET;
        v4->sin_addr.s_addr = htonl(INADDR_ANY);
        v4->sin_port = port;
        *addrlen = sizeof(*v4);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    }
    if (fd == -1)
        return -1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 ||
        (addr->ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) != 0) ||
        bind(fd, (struct sockaddr *)addr, *addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

static void format_address(const struct sockaddr_storage *addr, char *out, size_t size)
{
    char host[INET6_ADDRSTRLEN];

    if (addr->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)addr;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
        snprintf(out, size, "[%s]:%u", host, ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)addr;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
        snprintf(out, size, "%s:%u", host, ntohs(a->sin_port));
    }
}

/* --- the server ----------------------------------------------------------- */

static const h2o_iovec_t alpn_http1_only[] = {{H2O_STRLIT("http/1.1")}, {NULL}};

/* What a finished handshake says about the client's certificate (the
 * context verifies it, if it asked for one: certs/wh_certs.h
 * wh_certs_ctx_set_client_ca); *reason is OpenSSL's static text of a failed
 * verification, else NULL. */
static wh_http_client_cert verdict_of(long result, const char **reason)
{
    *reason = NULL;
    if (result == X509_V_OK)
        return WH_CLIENT_CERT_VERIFIED;
    *reason = X509_verify_cert_error_string(result);
    switch (result) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
        return WH_CLIENT_CERT_EXPIRED;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_UNTRUSTED:
        return WH_CLIENT_CERT_UNTRUSTED;
    default:
        return WH_CLIENT_CERT_INVALID;
    }
}

static wh_http_client_cert client_verdict(const SSL *ssl, const char **reason)
{
    *reason = NULL;
    return SSL_get0_peer_certificate(ssl) == NULL ? WH_CLIENT_CERT_NONE
                                                  : verdict_of(SSL_get_verify_result(ssl), reason);
}

/* The verdict `ctx`'s client CAs give the certificate `ssl`'s peer presented,
 * checked as OpenSSL checks it in a handshake: the chain the peer sent as
 * untrusted intermediates (a session resumed from a ticket has them from the
 * ticket: wh_server_tickets.h), purpose sslclient, the context's parameters. */
static wh_http_client_cert rejudged_verdict(SSL_CTX *ctx, const SSL *ssl, const char **reason)
{
    X509 *peer = SSL_get0_peer_certificate(ssl);
    STACK_OF(X509) *kept = NULL;
    X509_STORE_CTX *vc;
    long result;

    *reason = NULL;
    if (peer == NULL)
        return WH_CLIENT_CERT_NONE;
    if ((vc = X509_STORE_CTX_new()) == NULL)
        wh_oom(sizeof(void *)); /* OpenSSL's own malloc failed: the same policy (wh_alloc.h) */
    if (X509_STORE_CTX_init(vc, SSL_CTX_get_cert_store(ctx), peer, wh_server_peer_intermediates(ssl, &kept)) != 1 ||
        X509_STORE_CTX_set_default(vc, "ssl_client") != 1 ||
        X509_VERIFY_PARAM_set1(X509_STORE_CTX_get0_param(vc), SSL_CTX_get0_param(ctx)) != 1)
        result = X509_V_ERR_UNSPECIFIED;
    else
        result = X509_verify_cert(vc) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(vc);
    X509_STORE_CTX_free(vc);
    sk_X509_pop_free(kept, X509_free);
    ERR_clear_error();
    return verdict_of(result, reason);
}

/* SSL_CB_HANDSHAKE_DONE: record the verdict on our connection (P14).  TLS
 * 1.3 may report it again after post-handshake messages; it is the same. */
static void on_tls_info(const SSL *ssl, int where, int ret)
{
    BIO *bio;
    h2o_socket_t *sock;
    conn *c;

    (void)ret;
    if (!(where & SSL_CB_HANDSHAKE_DONE) || (bio = SSL_get_rbio(ssl)) == NULL || (sock = BIO_get_data(bio)) == NULL ||
        sock->on_close.cb != on_sock_close)
        return;
    c = sock->on_close.data;
    if (c->ssl == NULL && c->w->server->cfg.http2)
        hold_first_flight(c, (SSL *)ssl); /* the first time only (P17) */
    c->ssl = ssl;
    if (!h2o_timeout_is_linked(&c->w->hook_entry))
        h2o_timeout_link(c->w->loop, &c->w->ctx.zero_timeout, &c->w->hook_entry);
    /* A handshake that began before a reload finishes under the previous
     * context (P11): judge it by the client CAs in force now. */
    if (SSL_get_SSL_CTX(ssl) != c->w->accept_ctx.ssl_ctx && c->w->accept_ctx.ssl_ctx != NULL)
        c->client_cert = rejudged_verdict(c->w->accept_ctx.ssl_ctx, ssl, &c->client_cert_error);
    else
        c->client_cert = client_verdict(ssl, &c->client_cert_error);
}

static void prepare_tls(wh_http_server *s, SSL_CTX *ssl_ctx)
{
    /* Without h2 in ALPN every connection is HTTP/1.1 (P3, P5). */
    h2o_ssl_register_alpn_protocols(ssl_ctx, s->cfg.http2 ? h2o_alpn_protocols : alpn_http1_only);
    SSL_CTX_set_info_callback(ssl_ctx, on_tls_info);
    wh_server_tickets_keep_chain(ssl_ctx);
}

wh_code wh_http_start(const wh_http_config *cfg, SSL_CTX *ssl_ctx, wh_http_server **out, wh_err *err)
{
    static const char *const by_listener[] = {"listener", NULL};
    wh_http_server *s = NULL;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    h2o_hostconf_t *hostconf;
    h2o_pathconf_t *pathconf;
    handler *h;
    refusal_filter *refusals;
    size_t i;
    wh_code rc = WH_OK;

    *out = NULL;
    if (cfg->threads < 1)
        return wh_err_set(err, WH_E_INVALID, "need at least one thread");
    if ((rc = resolve(cfg->listen, &addr, &addrlen, err)) != WH_OK)
        return rc;
    s = wh_calloc(1, sizeof(*s));
    s->workers = wh_calloc((size_t)cfg->threads, sizeof(worker));
    s->cfg = *cfg;
    s->nworkers = (size_t)cfg->threads;
    for (i = 0; i < s->nworkers; i++)
        s->workers[i].listen_fd = -1;
    /* Both listeners (webhook, monitoring) share the registry: their
     * connections are told apart by a label, so probes and scrapes never
     * show up as webhook traffic. */
    s->listener[0] = cfg->monitoring ? "monitoring" : "webhook";
    s->open_connections = wh_metrics_gauge(cfg->metrics, "webhookd_open_connections",
                                           "Open client connections, by listener.", by_listener);
    s->accepted = wh_metrics_counter(cfg->metrics, "webhookd_connections_accepted_total",
                                     "Accepted connections, by listener.", by_listener);
    s->write_timeouts = wh_metrics_counter(cfg->metrics, "webhookd_write_timeouts_total",
                                           "Connections closed because their answer was not read within "
                                           "--write-timeout, by listener.",
                                           by_listener);
    s->inflight_rejected =
        wh_metrics_counter(cfg->metrics, "webhookd_inflight_rejected_total",
                           "Requests answered 503 at the --max-inflight-bytes bound, by listener.", by_listener);
    s->accept_paused = wh_metrics_counter(cfg->metrics, "webhookd_accept_pauses_total",
                                          "Times accepting stopped for a moment because accept(2) failed "
                                          "(fd_limit: EMFILE/ENFILE; memory: ENOBUFS/ENOMEM), by listener.",
                                          (const char *const[]){"listener", "reason", NULL});
    s->cfg.write_timeout_ms = cfg->write_timeout_ms != 0 ? cfg->write_timeout_ms : 15000;
    if (s->cfg.max_inflight_bytes < wh_http_entity_limit(cfg->max_request_bytes))
        s->cfg.max_inflight_bytes = wh_http_entity_limit(cfg->max_request_bytes);

    /* Bind every listener before starting anything, so a busy port is an
     * error at start-up.  With port 0 the first bind picks the port. */
    for (i = 0; i < s->nworkers; i++) {
        if ((s->workers[i].listen_fd = listen_one(&addr, &addrlen)) == -1) {
            rc = wh_err_set(err, WH_E_IO, "cannot listen on %s: %s", cfg->listen, strerror(errno));
            goto fail;
        }
        if (i == 0) {
            getsockname(s->workers[0].listen_fd, (struct sockaddr *)&addr, &addrlen);
            format_address(&addr, s->bound, sizeof(s->bound));
        }
    }

    h2o_config_init(&s->globalconf);
    s->globalconf.server_name = h2o_iovec_init(H2O_STRLIT("webhookd")); /* P7 */
    /* h2o buffers the whole body first and checks this limit as it arrives
     * (P6): one byte over the router's cap.  A declared Content-Length over
     * it and a chunked body reaching it are refused at once, with the
     * router's answer (P15); a body of exactly cap + 1 bytes is read and gets
     * the endpoint's 413 (istiod's text) from the admission layer. */
    s->globalconf.max_request_entity_size = wh_http_entity_limit(cfg->max_request_bytes);
    s->globalconf.http1.upgrade_to_http2 = cfg->http2; /* P5: refuse the h2 preface unless h2 is on */
    hostconf = h2o_config_register_host(&s->globalconf, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    pathconf = h2o_config_register_path(hostconf, "/", 0);
    h = (handler *)h2o_create_handler(pathconf, sizeof(*h));
    h->super.on_req = on_req;
    h->server = s;
    refusals = (refusal_filter *)h2o_create_filter(&hostconf->fallback_path, sizeof(*refusals));
    refusals->super.on_setup_ostream = on_setup_refusal;
    refusals->server = s;

    if (ssl_ctx != NULL)
        prepare_tls(s, ssl_ctx);
    h2o_barrier_init(&s->started, s->nworkers + 1);
    for (i = 0; i < s->nworkers; i++) {
        worker *w = &s->workers[i];
        w->server = s;
        if (ssl_ctx != NULL)
            SSL_CTX_up_ref(ssl_ctx);
        w->accept_ctx.ssl_ctx = ssl_ctx;                              /* NULL: plain HTTP (the monitoring listener) */
        h2o_multithread_create_thread(&w->tid, NULL, worker_main, w); /* aborts on failure */
        w->thread_started = 1;
    }
    h2o_barrier_wait(&s->started);
    *out = s;
    return WH_OK;

fail:
    for (i = 0; i < s->nworkers; i++)
        if (s->workers[i].listen_fd != -1)
            close(s->workers[i].listen_fd);
    free(s->workers);
    free(s);
    return rc;
}

size_t wh_http_entity_limit(size_t max_request_bytes)
{
    return max_request_bytes == SIZE_MAX ? SIZE_MAX : max_request_bytes + 1;
}

const char *wh_http_bound_address(const wh_http_server *s)
{
    return s->bound;
}

void wh_http_set_tls(wh_http_server *s, SSL_CTX *ssl_ctx)
{
    size_t i;

    prepare_tls(s, ssl_ctx);
    for (i = 0; i < s->nworkers; i++) {
        SSL_CTX_up_ref(ssl_ctx);
        send_control(&s->workers[i], CONTROL_TLS, ssl_ctx, 0);
    }
}

void wh_http_begin_drain(wh_http_server *s)
{
    atomic_store(&s->draining, 1);
}

size_t wh_http_shutdown(wh_http_server *s, double timeout)
{
    uint64_t ms = timeout <= 0 ? 0 : (uint64_t)(timeout * 1000);
    size_t i, cut = 0;

    for (i = 0; i < s->nworkers; i++)
        send_control(&s->workers[i], CONTROL_STOP, NULL, ms);
    for (i = 0; i < s->nworkers; i++) {
        if (s->workers[i].thread_started) {
            pthread_join(s->workers[i].tid, NULL);
            s->workers[i].thread_started = 0;
            cut += s->workers[i].cut;
        }
    }
    return cut;
}

void wh_http_free(wh_http_server *s)
{
    size_t i, undisposed = 0;

    if (s == NULL)
        return;
    for (i = 0; i < s->nworkers; i++)
        undisposed += s->workers[i].loop != NULL;
    for (i = 0; i < s->nworkers; i++) {
        SSL_CTX_free(s->workers[i].retired);
        if (undisposed == 0)
            SSL_CTX_free(s->workers[i].accept_ctx.ssl_ctx);
    }
    if (undisposed == 0) {
        h2o_config_dispose(&s->globalconf); /* P13: silences the mimemap blocks */
        free(s->workers);
        free(s);
    }
}
