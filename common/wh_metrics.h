/*
 * wh_metrics.h - a small Prometheus registry: counters, gauges and histograms
 * with labels, updated from any worker thread, rendered in the text format.
 *
 * A family is registered once (at startup, before threads) with its label
 * names; series are created on first use and found through a hash index.
 * Updates take the family's lock only long enough to find and bump the
 * series.  Label values must come from closed sets, never from a request.
 */
#ifndef WH_METRICS_H
#define WH_METRICS_H

#include <stddef.h>

#include "wh_buf.h"
#include "wh_result.h"

/* The most series one family holds; updates that would add more are dropped. */
#define WH_METRICS_MAX_SERIES 4096

typedef struct wh_metrics wh_metrics;
typedef struct wh_metric wh_metric;

wh_metrics *wh_metrics_new(void);
void wh_metrics_free(wh_metrics *registry);

/* `labels` is a NULL-terminated list of label names (NULL for none).
 * Registering an existing name returns the existing family when the type and
 * labels match, NULL otherwise. */
wh_metric *wh_metrics_counter(wh_metrics *registry, const char *name, const char *help, const char *const *labels);
wh_metric *wh_metrics_gauge(wh_metrics *registry, const char *name, const char *help, const char *const *labels);
/* `bounds` are the upper bounds of the buckets, ascending; +Inf is implicit. */
wh_metric *wh_metrics_histogram(wh_metrics *registry, const char *name, const char *help, const char *const *labels,
                                const double *bounds, size_t nbounds);

/* `values` holds one label value per label name, in order (NULL when none).
 * Counters only go up (negative deltas are ignored). */
void wh_metric_add(wh_metric *m, const char *const *values, double delta);
void wh_metric_set(wh_metric *m, const char *const *values, double value);
void wh_metric_observe(wh_metric *m, const char *const *values, double value);

/* Read back a series' value (counter/gauge) or count (histogram); 0 if absent. */
double wh_metric_get(wh_metric *m, const char *const *values);

/* Append the whole registry in Prometheus text exposition format 0.0.4. */
void wh_metrics_render(wh_metrics *registry, wh_buf *out);

#endif
