/*
 * wh_server_tickets.c - the client's intermediates kept in its session
 * tickets (why: wh_server_tickets.h).
 *
 * The ticket's application data is the intermediates' DER, one after the
 * other, or the single byte NOT_KEPT when they would not fit: such a ticket
 * is not resumed.  A ticket issued on a resumed connection (TLS 1.3 sends
 * fresh ones) inherits the data of the session it resumed.
 */
#include "wh_server_tickets.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include "wh_alloc.h"

/* Far under a ticket's 64 KiB, and more than any sane chain. */
#define KEPT_MAX 16384
static const unsigned char NOT_KEPT = 0;

static int on_ticket_made(SSL *ssl, void *arg)
{
    STACK_OF(X509) *chain = SSL_get_peer_cert_chain(ssl);
    SSL_SESSION *session = SSL_get_session(ssl);
    unsigned char *data = NULL, *p;
    size_t total = 0;
    int i, n = chain != NULL ? sk_X509_num(chain) : 0, ok = 1;

    (void)arg;
    if (n == 0 || session == NULL)
        return 1; /* no intermediates, or those of the resumed session (inherited) */
    for (i = 0; i < n && total <= KEPT_MAX; i++) {
        int len = i2d_X509(sk_X509_value(chain, i), NULL);
        if (len <= 0) {
            total = KEPT_MAX + 1;
            break;
        }
        total += (size_t)len;
    }
    if (total > KEPT_MAX) {
        ok = SSL_SESSION_set1_ticket_appdata(session, &NOT_KEPT, 1);
    } else {
        data = p = wh_malloc(total);
        for (i = 0; i < n; i++)
            i2d_X509(sk_X509_value(chain, i), &p);
        ok = SSL_SESSION_set1_ticket_appdata(session, data, total);
    }
    free(data);
    ERR_clear_error();
    return ok == 1;
}

static SSL_TICKET_RETURN on_ticket_opened(SSL *ssl, SSL_SESSION *session, const unsigned char *keyname,
                                          size_t keyname_len, SSL_TICKET_STATUS status, void *arg)
{
    void *data = NULL;
    size_t len = 0;

    (void)ssl, (void)keyname, (void)keyname_len, (void)arg;
    switch (status) {
    case SSL_TICKET_SUCCESS:
    case SSL_TICKET_SUCCESS_RENEW:
        if (SSL_SESSION_get0_ticket_appdata(session, &data, &len) == 1 && len == 1 &&
            *(unsigned char *)data == NOT_KEPT)
            return SSL_TICKET_RETURN_IGNORE_RENEW;
        return status == SSL_TICKET_SUCCESS ? SSL_TICKET_RETURN_USE : SSL_TICKET_RETURN_USE_RENEW;
    case SSL_TICKET_EMPTY:
    case SSL_TICKET_NO_DECRYPT:
        return SSL_TICKET_RETURN_IGNORE_RENEW;
    default:
        return SSL_TICKET_RETURN_IGNORE;
    }
}

void wh_server_tickets_keep_chain(SSL_CTX *ctx)
{
    SSL_CTX_set_session_ticket_cb(ctx, on_ticket_made, on_ticket_opened, NULL);
}

STACK_OF(X509) * wh_server_peer_intermediates(const SSL *ssl, STACK_OF(X509) * *owned)
{
    STACK_OF(X509) *chain = SSL_get_peer_cert_chain(ssl);
    SSL_SESSION *session = SSL_get_session(ssl);
    const unsigned char *p, *end;
    void *data = NULL;
    size_t len = 0;

    *owned = NULL;
    if ((chain != NULL && sk_X509_num(chain) != 0) || !SSL_session_reused(ssl) || session == NULL ||
        SSL_SESSION_get0_ticket_appdata(session, &data, &len) != 1 || len <= 1)
        return chain;
    if ((*owned = sk_X509_new_null()) == NULL)
        wh_oom(sizeof(void *)); /* OpenSSL's own malloc failed: the same policy (wh_alloc.h) */
    for (p = data, end = p + len; p < end;) {
        X509 *cert = d2i_X509(NULL, &p, (long)(end - p));
        if (cert == NULL)
            break; /* our own data: cannot happen; what was read still helps */
        if (sk_X509_push(*owned, cert) == 0)
            wh_oom(sizeof(void *));
    }
    ERR_clear_error();
    return *owned;
}
