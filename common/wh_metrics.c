/*
 * wh_metrics.c - Prometheus registry (see wh_metrics.h).
 *
 * Families are few and registered at startup; series are created on first
 * use and never removed.  A family keeps its series in creation order (the
 * exposition order) and in a hash index over the label values, both guarded
 * by its own mutex: an update costs one lock, one hash and, normally, one
 * label comparison, however many series exist.  Label values should come
 * from closed sets (handlers/validate/admit.c shows how); as a backstop a
 * family stops growing at WH_METRICS_MAX_SERIES series and later new series
 * are dropped (counted in webhookd_metrics_series_dropped_total).
 */
#include "wh_alloc.h"
#include "wh_go.h"
#include "wh_metrics.h"

#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum metric_type { MT_COUNTER, MT_GAUGE, MT_HISTOGRAM } metric_type;

typedef struct series {
    struct series *next;  /* creation order */
    struct series *hnext; /* same hash bucket */
    uint64_t hash;
    char **values; /* one per label */
    double value;  /* counter / gauge; histogram sum */
    unsigned long long count;
    unsigned long long *buckets; /* histogram: per-bucket (not cumulative) counts */
} series;

struct wh_metric {
    struct wh_metric *next;
    metric_type type;
    char *name, *help;
    char **labels;
    size_t nlabels;
    double *bounds;
    size_t nbounds;
    pthread_mutex_t lock;
    series *head, **tail;
    series **index; /* hash buckets, nindex a power of two (0 until the first series) */
    size_t nindex, nseries;
    unsigned long long dropped; /* new series refused at WH_METRICS_MAX_SERIES */
};

struct wh_metrics {
    pthread_mutex_t lock;
    wh_metric *head, **tail;
};

wh_metrics *wh_metrics_new(void)
{
    wh_metrics *r = wh_calloc(1, sizeof(*r));
    pthread_mutex_init(&r->lock, NULL);
    r->tail = &r->head;
    return r;
}

static void free_strv(char **v, size_t n)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void metric_free(wh_metric *m)
{
    series *s = m->head, *next;
    for (; s != NULL; s = next) {
        next = s->next;
        free_strv(s->values, m->nlabels);
        free(s->buckets);
        free(s);
    }
    free(m->index);
    free_strv(m->labels, m->nlabels);
    free(m->bounds);
    free(m->name);
    free(m->help);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

void wh_metrics_free(wh_metrics *r)
{
    wh_metric *m, *next;
    if (r == NULL)
        return;
    for (m = r->head; m != NULL; m = next) {
        next = m->next;
        metric_free(m);
    }
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static int same_labels(const wh_metric *m, const char *const *labels)
{
    size_t n = 0;
    while (labels != NULL && labels[n] != NULL)
        n++;
    if (n != m->nlabels)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(m->labels[i], labels[i]) != 0)
            return 0;
    return 1;
}

static wh_metric *reg(wh_metrics *r, metric_type type, const char *name, const char *help, const char *const *labels,
                      const double *bounds, size_t nbounds)
{
    wh_metric *m;
    size_t n = 0;

    pthread_mutex_lock(&r->lock);
    for (m = r->head; m != NULL; m = m->next) {
        if (strcmp(m->name, name) == 0) {
            wh_metric *found = m->type == type && same_labels(m, labels) ? m : NULL;
            pthread_mutex_unlock(&r->lock);
            return found;
        }
    }
    while (labels != NULL && labels[n] != NULL)
        n++;
    m = wh_calloc(1, sizeof(*m));
    pthread_mutex_init(&m->lock, NULL);
    m->tail = &m->head;
    m->type = type;
    m->nlabels = n;
    m->name = wh_strdup(name);
    m->help = wh_strdup(help != NULL ? help : "");
    if (n != 0) {
        m->labels = wh_calloc(n, sizeof(char *));
        for (size_t i = 0; i < n; i++)
            if ((m->labels[i] = wh_strdup(labels[i])) == NULL)
                goto fail;
    }
    if (type == MT_HISTOGRAM && nbounds != 0) {
        m->bounds = wh_malloc(nbounds * sizeof(double));
        memcpy(m->bounds, bounds, nbounds * sizeof(double));
        m->nbounds = nbounds;
    }
    *r->tail = m;
    r->tail = &m->next;
    pthread_mutex_unlock(&r->lock);
    return m;
fail:
    pthread_mutex_unlock(&r->lock);
    if (m != NULL)
        metric_free(m);
    return NULL;
}

wh_metric *wh_metrics_counter(wh_metrics *r, const char *name, const char *help, const char *const *labels)
{
    return reg(r, MT_COUNTER, name, help, labels, NULL, 0);
}

wh_metric *wh_metrics_gauge(wh_metrics *r, const char *name, const char *help, const char *const *labels)
{
    return reg(r, MT_GAUGE, name, help, labels, NULL, 0);
}

wh_metric *wh_metrics_histogram(wh_metrics *r, const char *name, const char *help, const char *const *labels,
                                const double *bounds, size_t nbounds)
{
    return reg(r, MT_HISTOGRAM, name, help, labels, bounds, nbounds);
}

static const char *value_of(const char *const *values, size_t i)
{
    return values != NULL && values[i] != NULL ? values[i] : "";
}

/* FNV-1a over the label values, each followed by a 0 byte. */
static uint64_t hash_values(const wh_metric *m, const char *const *values)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < m->nlabels; i++) {
        for (const unsigned char *c = (const unsigned char *)value_of(values, i);; c++) {
            h = (h ^ *c) * 1099511628211ULL;
            if (*c == '\0')
                break;
        }
    }
    return h;
}

/* Double the index (or create it). */
static void grow_index(wh_metric *m)
{
    size_t n = m->nindex != 0 ? m->nindex * 2 : 16;
    series **index = wh_calloc(n, sizeof(*index));
    for (series *s = m->head; s != NULL; s = s->next) {
        s->hnext = index[s->hash & (n - 1)];
        index[s->hash & (n - 1)] = s;
    }
    free(m->index);
    m->index = index;
    m->nindex = n;
}

/* Find or create the series; called with m->lock held.  NULL when absent
 * and not to be created, or when the family is full. */
static series *get_series(wh_metric *m, const char *const *values, int create)
{
    uint64_t h = hash_values(m, values);
    series *s;

    for (s = m->nindex != 0 ? m->index[h & (m->nindex - 1)] : NULL; s != NULL; s = s->hnext) {
        size_t i;
        if (s->hash != h)
            continue;
        for (i = 0; i < m->nlabels; i++)
            if (strcmp(s->values[i], value_of(values, i)) != 0)
                break;
        if (i == m->nlabels)
            return s;
    }
    if (!create)
        return NULL;
    if (m->nseries >= WH_METRICS_MAX_SERIES) {
        m->dropped++;
        return NULL;
    }
    if (m->nseries >= m->nindex)
        grow_index(m);
    s = wh_calloc(1, sizeof(*s));
    if (m->nlabels != 0)
        s->values = wh_calloc(m->nlabels, sizeof(char *));
    for (size_t i = 0; i < m->nlabels; i++)
        s->values[i] = wh_strdup(value_of(values, i));
    if (m->type == MT_HISTOGRAM)
        s->buckets = wh_calloc(m->nbounds + 1, sizeof(*s->buckets));
    s->hash = h;
    s->hnext = m->index[h & (m->nindex - 1)];
    m->index[h & (m->nindex - 1)] = s;
    *m->tail = s;
    m->tail = &s->next;
    m->nseries++;
    return s;
}

void wh_metric_add(wh_metric *m, const char *const *values, double delta)
{
    series *s;
    if (m == NULL || (m->type == MT_COUNTER && !(delta >= 0)))
        return;
    pthread_mutex_lock(&m->lock);
    if ((s = get_series(m, values, 1)) != NULL)
        s->value += delta;
    pthread_mutex_unlock(&m->lock);
}

void wh_metric_set(wh_metric *m, const char *const *values, double value)
{
    series *s;
    if (m == NULL || m->type != MT_GAUGE)
        return;
    pthread_mutex_lock(&m->lock);
    if ((s = get_series(m, values, 1)) != NULL)
        s->value = value;
    pthread_mutex_unlock(&m->lock);
}

void wh_metric_observe(wh_metric *m, const char *const *values, double value)
{
    series *s;
    size_t b;
    if (m == NULL || m->type != MT_HISTOGRAM)
        return;
    for (b = 0; b < m->nbounds && value > m->bounds[b]; b++)
        ;
    pthread_mutex_lock(&m->lock);
    if ((s = get_series(m, values, 1)) != NULL) {
        s->buckets[b]++;
        s->count++;
        s->value += value;
    }
    pthread_mutex_unlock(&m->lock);
}

double wh_metric_get(wh_metric *m, const char *const *values)
{
    series *s;
    double v = 0;
    if (m == NULL)
        return 0;
    pthread_mutex_lock(&m->lock);
    if ((s = get_series(m, values, 0)) != NULL)
        v = m->type == MT_HISTOGRAM ? (double)s->count : s->value;
    pthread_mutex_unlock(&m->lock);
    return v;
}

/* Counts as integers; other values as Go's client prints them (strconv
 * 'g', shortest), whose NaN and infinities are Prometheus' spellings too. */
static void format_value(double v, char *out, size_t cap)
{
    wh_buf text = WH_BUF_INIT;

    if (isfinite(v) && fabs(v) < 1e15 && v == (double)(long long)v) { /* counts: 40, not 4e+01 */
        snprintf(out, cap, "%lld", (long long)v);
        return;
    }
    wh_go_float(&text, v, 'g', -1);
    snprintf(out, cap, "%s", text.data);
    wh_buf_free(&text);
}

static void put_escaped(wh_buf *out, const char *s, int is_help)
{
    for (; *s; s++) {
        if (*s == '\\')
            wh_buf_puts(out, "\\\\");
        else if (*s == '\n')
            wh_buf_puts(out, "\\n");
        else if (*s == '"' && !is_help)
            wh_buf_puts(out, "\\\"");
        else
            wh_buf_putc(out, *s);
    }
}

/* `{a="x",b="y"` plus an optional extra label, then `}`; nothing when empty. */
static void put_labels(wh_buf *out, const wh_metric *m, const series *s, const char *extra_name,
                       const char *extra_value)
{
    int first = 1;
    if (m->nlabels == 0 && extra_name == NULL)
        return;
    wh_buf_putc(out, '{');
    for (size_t i = 0; i < m->nlabels; i++) {
        wh_buf_printf(out, "%s%s=\"", first ? "" : ",", m->labels[i]);
        put_escaped(out, s->values[i], 0);
        wh_buf_putc(out, '"');
        first = 0;
    }
    if (extra_name != NULL)
        wh_buf_printf(out, "%s%s=\"%s\"", first ? "" : ",", extra_name, extra_value);
    wh_buf_putc(out, '}');
}

static void render_family(wh_metric *m, wh_buf *out)
{
    static const char *const type_names[] = {"counter", "gauge", "histogram"};
    char num[64], le[64];
    series *s;

    wh_buf_printf(out, "# HELP %s ", m->name);
    put_escaped(out, m->help, 1);
    wh_buf_printf(out, "\n# TYPE %s %s\n", m->name, type_names[m->type]);
    for (s = m->head; s != NULL; s = s->next) {
        if (m->type != MT_HISTOGRAM) {
            format_value(s->value, num, sizeof(num));
            wh_buf_puts(out, m->name);
            put_labels(out, m, s, NULL, NULL);
            wh_buf_printf(out, " %s\n", num);
            continue;
        }
        unsigned long long cum = 0;
        for (size_t b = 0; b <= m->nbounds; b++) {
            cum += s->buckets[b];
            if (b < m->nbounds)
                format_value(m->bounds[b], le, sizeof(le));
            else
                snprintf(le, sizeof(le), "+Inf");
            wh_buf_printf(out, "%s_bucket", m->name);
            put_labels(out, m, s, "le", le);
            wh_buf_printf(out, " %llu\n", cum);
        }
        format_value(s->value, num, sizeof(num));
        wh_buf_printf(out, "%s_sum", m->name);
        put_labels(out, m, s, NULL, NULL);
        wh_buf_printf(out, " %s\n", num);
        wh_buf_printf(out, "%s_count", m->name);
        put_labels(out, m, s, NULL, NULL);
        wh_buf_printf(out, " %llu\n", s->count);
    }
}

void wh_metrics_render(wh_metrics *r, wh_buf *out)
{
    wh_metric *m;
    unsigned long long dropped = 0;

    pthread_mutex_lock(&r->lock);
    for (m = r->head; m != NULL; m = m->next) {
        pthread_mutex_lock(&m->lock);
        render_family(m, out);
        dropped += m->dropped;
        pthread_mutex_unlock(&m->lock);
    }
    pthread_mutex_unlock(&r->lock);
    if (dropped != 0)
        wh_buf_printf(out,
                      "# HELP webhookd_metrics_series_dropped_total New series refused because their family "
                      "already had %d.\n# TYPE webhookd_metrics_series_dropped_total counter\n"
                      "webhookd_metrics_series_dropped_total %llu\n",
                      WH_METRICS_MAX_SERIES, dropped);
}
