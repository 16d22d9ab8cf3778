/*
 * wh_server_tickets.h - what a resumed TLS session needs to have its client
 * certificate judged again.
 *
 * A session ticket carries the client's leaf certificate but not the
 * intermediates it sent (OpenSSL serialises only the leaf), and a client-CA
 * rotation re-verifies every open connection (rejudged_verdict in
 * server/wh_server_h2o.c): a connection resumed from a ticket would then be
 * refused as "unable to get local issuer certificate" although the bundle
 * still trusts its root.  So the intermediates ride in the ticket's
 * application data, and a chain too large for a ticket makes its tickets
 * unusable (a full handshake sends the chain again).
 * tests/integration/test_client_ca.py (TestClientCAKeptConnections) covers it.
 */
#ifndef WH_SERVER_TICKETS_H
#define WH_SERVER_TICKETS_H

#include <openssl/ssl.h>

/* Install the ticket callbacks on `ctx` (every generation of the serving context). */
void wh_server_tickets_keep_chain(SSL_CTX *ctx);

/* The intermediates `ssl`'s client sent, as an untrusted chain for
 * X509_STORE_CTX_init: the handshake's, or those its resumed session kept.
 * *owned is set to what the caller frees (sk_X509_pop_free), or NULL. */
STACK_OF(X509) * wh_server_peer_intermediates(const SSL *ssl, STACK_OF(X509) * *owned);

#endif
