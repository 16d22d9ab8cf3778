/*
 * wh_certs_patcher.h - webhookd keeps its webhooks' caBundle right by itself.
 *
 * The API server only calls webhookd when the webhook configurations carry
 * the CA of its serving certificate.  The patcher is one background thread
 * (its own wh_kube client; never an event loop) that writes that CA into the
 * selected configurations:
 *   - as soon as it is given a CA (start-up, once serving),
 *   - whenever it is given a new one (after every certificate reload),
 *   - when kicked (SIGHUP),
 *   - every `interval`, to repair what someone else overwrote (drift).
 * A failed attempt is logged, counted, and retried with a doubling backoff
 * (1 s up to `interval`); it never affects serving.  Every kube request is
 * bounded by `kube.timeout_ms`.
 *
 * Metrics: webhookd_cabundle_patch_total{result="updated|unchanged|failure"}
 * (one per attempt) and webhookd_cabundle_last_success_timestamp_seconds.
 */
#ifndef WH_CERTS_PATCHER_H
#define WH_CERTS_PATCHER_H

#include <stddef.h>

#include "wh_certs_cabundle.h"
#include "wh_kube.h"
#include "wh_metrics.h"
#include "wh_result.h"

typedef struct wh_certs_patcher wh_certs_patcher;

typedef struct wh_certs_patcher_config {
    wh_kube_options kube;        /* strings borrowed: they must outlive the patcher */
    wh_certs_ca_targets targets; /* borrowed likewise */
    double interval;             /* seconds between drift checks (> 0) */
    wh_metrics *metrics;         /* borrowed; the patcher registers its families */
    /* Called from the patcher thread after every attempt with a one-line
     * state ("ok at ...", "failing since ..."), e.g. for /readyz.  May be NULL. */
    void (*on_status)(void *ctx, const char *detail);
    void *status_ctx;
} wh_certs_patcher_config;

/* Start the thread; it waits for a first CA.  `cfg` is copied (its strings
 * are not).  *out is a new object (wh_certs_patcher_stop). */
wh_code wh_certs_patcher_start(const wh_certs_patcher_config *cfg, wh_certs_patcher **out, wh_err *err);

/* Hand over the CA bundle to publish (PEM, copied) and patch now.  `why`
 * (a static string: "startup", "certificate reload") goes to the logs. */
void wh_certs_patcher_set_ca(wh_certs_patcher *p, const char *ca_pem, size_t len, const char *why);

/* Check and patch now with the current CA (no-op before the first CA). */
void wh_certs_patcher_kick(wh_certs_patcher *p, const char *why);

/* Stop the thread (waits for an attempt in flight, bounded by the kube
 * timeout) and free everything.  NULL is fine. */
void wh_certs_patcher_stop(wh_certs_patcher *p);

#endif
