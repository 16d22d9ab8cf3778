/*
 * wh_inject_proxyconfig.c - Istio's MeshConfig and ProxyConfig as the
 * injector sees them: built-in defaults, the mesh file applied onto them,
 * the proxy.istio.io/config annotation merged on top, and protoToJSON's
 * compact encoding (defaults cleared, .proto field order, enums by name).
 *
 * Both are kept as JSON objects with proto JSON (lowerCamelCase) names.
 */
#include "wh_inject_proxyconfig.h"

#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_yaml.h"
#include "wh_alloc.h"
#include "wh_json_arena.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char default_proxy_config[] =
    "{\"configPath\":\"./etc/istio/proxy\",\"binaryPath\":\"/usr/local/bin/envoy\","
    "\"serviceCluster\":\"istio-proxy\",\"drainDuration\":\"45s\",\"discoveryAddress\":"
    "\"istiod.istio-system.svc:15012\",\"proxyAdminPort\":15000,\"controlPlaneAuthPolicy\":\"MUTUAL_TLS\","
    "\"statNameLength\":189,\"statusPort\":15020,\"terminationDrainDuration\":\"5s\"}";

static const char default_mesh[] =
    "{\"enableTracing\":true,\"accessLogFile\":\"\",\"accessLogEncoding\":\"TEXT\",\"accessLogFormat\":\"\","
    "\"enableEnvoyAccessLogService\":false,\"protocolDetectionTimeout\":\"0s\","
    "\"ingressService\":\"istio-ingressgateway\",\"ingressControllerMode\":\"STRICT\",\"ingressClass\":\"istio\","
    "\"trustDomain\":\"cluster.local\",\"trustDomainAliases\":[],\"enableAutoMtls\":true,"
    "\"outboundTrafficPolicy\":{\"mode\":\"ALLOW_ANY\"},\"inboundTrafficPolicy\":{\"mode\":\"PASSTHROUGH\"},"
    "\"localityLbSetting\":{\"enabled\":true},\"certificates\":[],\"defaultConfig\":null,"
    "\"rootNamespace\":\"istio-system\",\"proxyListenPort\":15001,\"proxyInboundListenPort\":15006,"
    "\"connectTimeout\":\"10s\",\"defaultServiceExportTo\":[\"*\"],\"defaultVirtualServiceExportTo\":[\"*\"],"
    "\"defaultDestinationRuleExportTo\":[\"*\"],\"dnsRefreshRate\":\"60s\",\"serviceSettings\":[],"
    "\"enablePrometheusMerge\":true,\"defaultProviders\":{},\"extensionProviders\":["
    "{\"name\":\"prometheus\",\"prometheus\":{}},{\"name\":\"stackdriver\",\"stackdriver\":{}},"
    "{\"name\":\"envoy\",\"envoyFileAccessLog\":{\"path\":\"/dev/stdout\"}}]}";

/* DefaultProxyConfig, with the zipkin tracer of the releases that had one. */
static json_t *default_proxy_config_of(int zipkin)
{
    json_t *pc = json_loads(default_proxy_config, 0, NULL); /* a constant: it parses */

    if (zipkin)
        json_object_set_new(pc, "tracing", json_pack("{s{ss}}", "zipkin", "address", "zipkin.istio-system:9411"));
    return pc;
}

json_t *wh_inject_default_proxy_config(const wh_inject_release *rel)
{
    return default_proxy_config_of(wh_inject_release_has(rel, WH_REL_DEFAULT_ZIPKIN_TRACER));
}

json_t *wh_inject_default_mesh(const wh_inject_release *rel)
{
    json_t *m = json_loads(default_mesh, 0, NULL); /* a constant: it parses */

    json_object_set_new(m, "defaultConfig", wh_inject_default_proxy_config(rel));
    if (!wh_inject_release_has(rel, WH_REL_DEFAULT_INBOUND_POLICY))
        json_object_del(m, "inboundTrafficPolicy");
    return m;
}

/* ------------------------------------------------------------------------ */
/* ProxyConfig fields in .proto declaration order (the encoding order).      */

enum pc_kind { PC_STR, PC_INT, PC_ENUM, PC_DUR, PC_BOOLW, PC_INTW, PC_MAP, PC_LIST, PC_MSG, PC_ANY };

struct pc_field {
    const char *name;
    enum pc_kind kind;
    const char *const *enums; /* PC_ENUM: names by value (NULL-terminated); gaps as "" */
};

static const char *const tracing_service_names[] = {"APP_LABEL_AND_NAMESPACE", "CANONICAL_NAME_ONLY",
                                                    "CANONICAL_NAME_AND_NAMESPACE", NULL};
static const char *const interception_modes[] = {"REDIRECT", "TPROXY", "NONE", NULL};
static const char *const auth_policies[] = {"NONE", "MUTUAL_TLS", NULL}; /* INHERIT = 1000 handled below */

static const struct pc_field pc_fields[] = {
    {"configPath", PC_STR, NULL},
    {"binaryPath", PC_STR, NULL},
    {"serviceCluster", PC_STR, NULL},
    {"tracingServiceName", PC_ENUM, tracing_service_names},
    {"drainDuration", PC_DUR, NULL},
    {"parentShutdownDuration", PC_DUR, NULL},
    {"discoveryAddress", PC_STR, NULL},
    {"discoveryRefreshDelay", PC_DUR, NULL},
    {"zipkinAddress", PC_STR, NULL},
    {"statsdUdpAddress", PC_STR, NULL},
    {"envoyMetricsServiceAddress", PC_STR, NULL},
    {"proxyAdminPort", PC_INT, NULL},
    {"availabilityZone", PC_STR, NULL},
    {"controlPlaneAuthPolicy", PC_ENUM, auth_policies},
    {"customConfigFile", PC_STR, NULL},
    {"statNameLength", PC_INT, NULL},
    {"concurrency", PC_INTW, NULL},
    {"proxyBootstrapTemplatePath", PC_STR, NULL},
    {"interceptionMode", PC_ENUM, interception_modes},
    {"tracing", PC_MSG, NULL},
    {"sds", PC_MSG, NULL},
    {"envoyAccessLogService", PC_MSG, NULL},
    {"envoyMetricsService", PC_MSG, NULL},
    {"proxyMetadata", PC_MAP, NULL},
    {"runtimeValues", PC_MAP, NULL},
    {"statusPort", PC_INT, NULL},
    {"extraStatTags", PC_LIST, NULL},
    {"gatewayTopology", PC_MSG, NULL},
    {"terminationDrainDuration", PC_DUR, NULL},
    {"meshId", PC_STR, NULL},
    {"readinessProbe", PC_MSG, NULL},
    {"proxyStatsMatcher", PC_MSG, NULL},
    {"holdApplicationUntilProxyStarts", PC_BOOLW, NULL},
    {"caCertificatesPem", PC_LIST, NULL},
    {"image", PC_MSG, NULL},
    {"privateKeyProvider", PC_MSG, NULL},
    {"proxyHeaders", PC_MSG, NULL},
    {"fileFlushInterval", PC_DUR, NULL},
    {"fileFlushMinSizeKb", PC_ANY, NULL},
};
#define PC_NFIELDS (sizeof(pc_fields) / sizeof(pc_fields[0]))

/* The other member of a field's oneof (cluster_name), or NULL: a member
 * set, even to its zero value, is present (protojson prints it) and unsets
 * the other. */
static const char *pc_oneof(const struct pc_field *f)
{
    if (strcmp(f->name, "serviceCluster") == 0)
        return "tracingServiceName";
    if (strcmp(f->name, "tracingServiceName") == 0)
        return "serviceCluster";
    return NULL;
}

static const struct pc_field *pc_field(const char *name)
{
    for (size_t i = 0; i < PC_NFIELDS; i++)
        if (pc_fields[i].name[0] == name[0] && strcmp(pc_fields[i].name, name) == 0)
            return &pc_fields[i];
    return NULL;
}

/* snake_case (the proto name, also accepted by jsonpb) -> lowerCamelCase. */
static void camel(const char *in, char *out, size_t size)
{
    size_t o = 0;
    int up = 0;

    for (; *in && o + 1 < size; in++) {
        if (*in == '_') {
            up = 1;
            continue;
        }
        out[o++] = up ? (char)toupper((unsigned char)*in) : *in;
        up = 0;
    }
    out[o] = '\0';
}

/* Parse a protobuf Duration string ("45s", "1.5s", "-2s") into seconds and
 * nanoseconds; 0 on success. */
static int parse_duration(const char *s, long long *sec, int *nanos)
{
    int neg = 0, nd = 0;
    long long secs = 0, frac = 0;
    const char *p = s;

    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (!isdigit((unsigned char)*p))
        return -1;
    while (isdigit((unsigned char)*p)) {
        if (secs > 315576000000LL)
            return -1;
        secs = secs * 10 + (*p++ - '0');
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            if (nd == 9)
                return -1;
            frac = frac * 10 + (*p++ - '0');
            nd++;
        }
    }
    if (strcmp(p, "s") != 0)
        return -1;
    while (nd++ < 9)
        frac *= 10;
    *sec = neg ? -secs : secs;
    *nanos = (int)(neg ? -frac : frac);
    return 0;
}

/* protojson's Duration text: seconds plus 0, 3, 6 or 9 fractional digits. */
static json_t *format_duration(long long sec, int nanos)
{
    char buf[64];
    int neg = sec < 0 || nanos < 0;
    long long s = sec < 0 ? -sec : sec;
    int n = nanos < 0 ? -nanos : nanos;

    if (n == 0)
        snprintf(buf, sizeof(buf), "%s%llds", neg ? "-" : "", s);
    else if (n % 1000000 == 0)
        snprintf(buf, sizeof(buf), "%s%lld.%03ds", neg ? "-" : "", s, n / 1000000);
    else if (n % 1000 == 0)
        snprintf(buf, sizeof(buf), "%s%lld.%06ds", neg ? "-" : "", s, n / 1000);
    else
        snprintf(buf, sizeof(buf), "%s%lld.%09ds", neg ? "-" : "", s, n);
    return json_string(buf);
}

static int is_integral(const json_t *v, long long *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return 1;
    }
    if (json_is_real(v) && json_real_value(v) == (double)(long long)json_real_value(v)) {
        *out = (long long)json_real_value(v);
        return 1;
    }
    if (json_is_string(v)) { /* protojson accepts quoted integers */
        char *end;
        long long n = strtoll(json_string_value(v), &end, 10);
        if (json_string_length(v) > 0 && *end == '\0') {
            *out = n;
            return 1;
        }
    }
    return 0;
}

/* Normalise one field value to what protojson would print, or fail.  *out
 * is a value of its own, never `v` itself: `v` may be a cluster snapshot's
 * (a ProxyConfig resource) and *out ends in a request's tree, which is
 * dropped whole (common/wh_json_arena.h). */
static wh_code normalise(const struct pc_field *f, const json_t *v, json_t **out, wh_err *err)
{
    long long n;

    *out = NULL;
    if (json_is_null(v))
        return WH_OK; /* null leaves the field unset */
    switch (f->kind) {
    case PC_STR:
        if (!json_is_string(v))
            return wh_err_set(err, WH_E_INVALID, "invalid value for string field %s", f->name);
        *out = json_copy((json_t *)v);
        return WH_OK;
    case PC_INT:
    case PC_INTW:
        if (!is_integral(v, &n) || n < -2147483648LL || n > 2147483647LL)
            return wh_err_set(err, WH_E_INVALID, "invalid value for int32 field %s", f->name);
        *out = json_integer(n);
        return WH_OK;
    case PC_BOOLW:
        if (!json_is_boolean(v))
            return wh_err_set(err, WH_E_INVALID, "invalid value for bool field %s", f->name);
        *out = json_copy((json_t *)v);
        return WH_OK;
    case PC_ENUM:
        if (json_is_string(v)) {
            const char *s = json_string_value(v);
            for (size_t i = 0; f->enums[i]; i++)
                if (strcmp(f->enums[i], s) == 0) {
                    *out = json_copy((json_t *)v);
                    return WH_OK;
                }
            if (f->enums == auth_policies && strcmp(s, "INHERIT") == 0) {
                *out = json_copy((json_t *)v);
                return WH_OK;
            }
            return wh_err_set(err, WH_E_INVALID, "invalid value for enum field %s: \"%s\"", f->name, s);
        }
        if (is_integral(v, &n)) {
            size_t count = 0;
            while (f->enums[count])
                count++;
            if (n >= 0 && (size_t)n < count)
                *out = json_string(f->enums[n]);
            else if (f->enums == auth_policies && n == 1000)
                *out = json_string("INHERIT");
            else
                *out = json_integer(n); /* unknown numbers are kept as numbers */
            return WH_OK;
        }
        return wh_err_set(err, WH_E_INVALID, "invalid value for enum field %s", f->name);
    case PC_DUR: {
        long long sec;
        int nanos;
        if (!json_is_string(v) || parse_duration(json_string_value(v), &sec, &nanos) != 0)
            return wh_err_set(err, WH_E_INVALID, "invalid google.protobuf.Duration value for field %s", f->name);
        *out = format_duration(sec, nanos);
        return WH_OK;
    }
    case PC_MAP: {
        const char *k;
        json_t *e;
        if (!json_is_object(v))
            return wh_err_set(err, WH_E_INVALID, "invalid value for map field %s", f->name);
        json_object_foreach((json_t *)v, k, e) if (!json_is_string(e)) return wh_err_set(
            err, WH_E_INVALID, "invalid value for string field %s.%s", f->name, k);
        *out = json_deep_copy(v);
        return WH_OK;
    }
    case PC_LIST:
        if (!json_is_array(v))
            return wh_err_set(err, WH_E_INVALID, "invalid value for repeated field %s", f->name);
        *out = json_deep_copy(v);
        return WH_OK;
    case PC_MSG:
        if (!json_is_object(v))
            return wh_err_set(err, WH_E_INVALID, "invalid value for message field %s", f->name);
        *out = json_deep_copy(v);
        return WH_OK;
    case PC_ANY:
    default:
        *out = json_deep_copy(v);
        return WH_OK;
    }
}

/* Istio's MergeProxyConfig (correctProxyHeaders): five headers of a new
 * proxyHeaders the document leaves unset (absent, null, or
 * forwardedClientCert's UNDEFINED) keep the value they had below; its other
 * fields replace as any message's do.  `ph` is the new value (our own copy),
 * `below` the old one or NULL. */
static void keep_proxy_headers(json_t *ph, const json_t *below)
{
    static const char *const kept[][2] = {{"forwardedClientCert", "forwarded_client_cert"},
                                          {"requestId", "request_id"},
                                          {"attemptCount", "attempt_count"},
                                          {"server", "server"},
                                          {"envoyDebugHeaders", "envoy_debug_headers"}};

    if (!json_is_object(below))
        return;
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        const json_t *now = json_object_get(ph, kept[i][0]), *old = json_object_get(below, kept[i][0]);
        const char *snake = kept[i][1];
        if (now == NULL && (now = json_object_get(ph, snake)) != NULL && !json_is_null(now))
            continue; /* set under its proto name */
        if (old == NULL && (old = json_object_get(below, snake)) == NULL)
            continue;
        if (now == NULL || json_is_null(now) ||
            (json_is_string(now) && strcmp(json_string_value(now), "UNDEFINED") == 0) ||
            (json_is_integer(now) && json_integer_value(now) == 0)) {
            json_object_del(ph, snake);
            json_object_set_new(ph, kept[i][0], json_deep_copy(old));
        }
    }
}

wh_code wh_inject_proxy_config_apply(json_t *pc, const json_t *doc, wh_err *err)
{
    const char *key;
    json_t *val;
    char name[128];
    wh_code rc;

    if (json_is_null(doc))
        return WH_OK;
    if (!json_is_object(doc))
        return wh_err_set(err, WH_E_INVALID, "ProxyConfig must be an object");
    json_object_foreach((json_t *)doc, key, val)
    {
        const struct pc_field *f;
        json_t *norm;

        camel(key, name, sizeof(name));
        if ((f = pc_field(name)) == NULL)
            return wh_err_set(err, WH_E_INVALID, "unknown field \"%s\" in ProxyConfig", key);
        if ((rc = normalise(f, val, &norm, err)) != WH_OK)
            return rc;
        if (norm == NULL)
            continue; /* jsonpb skips a null: the field keeps its value */
        if (f->kind == PC_MAP && strcmp(f->name, "proxyMetadata") == 0 &&
            json_is_object(json_object_get(pc, f->name))) {
            /* proxyMetadata: the new keys win, the others stay. */
            json_t *merged = json_deep_copy(json_object_get(pc, f->name));
            json_object_update(merged, norm); /* both objects (normalise checked norm) */
            json_decref(norm);
            norm = merged;
        } else if (strcmp(f->name, "proxyHeaders") == 0) {
            keep_proxy_headers(norm, json_object_get(pc, f->name));
        }
        if (pc_oneof(f) != NULL)
            json_object_del(pc, pc_oneof(f));
        json_object_set_new(pc, f->name, norm);
    }
    return WH_OK;
}

void wh_inject_proxy_config_drop_zero(json_t *pc)
{
    for (size_t i = 0; i < PC_NFIELDS; i++) {
        const struct pc_field *f = &pc_fields[i];
        const json_t *v = json_object_get(pc, f->name);
        int zero = 0;

        if (v == NULL || pc_oneof(f) != NULL)
            continue;
        switch (f->kind) {
        case PC_STR:
            zero = json_is_string(v) && json_string_length(v) == 0;
            break;
        case PC_INT:
            zero = json_is_integer(v) && json_integer_value(v) == 0;
            break;
        case PC_ENUM:
            zero = (json_is_string(v) && strcmp(json_string_value(v), f->enums[0]) == 0) ||
                   (json_is_integer(v) && json_integer_value(v) == 0);
            break;
        case PC_LIST:
            zero = json_array_size(v) == 0;
            break;
        case PC_MAP:
            zero = json_object_size(v) == 0;
            break;
        default: /* messages, durations, wrappers: printed whenever set */
            break;
        }
        if (zero)
            json_object_del(pc, f->name);
    }
}

wh_code wh_inject_mesh_apply(json_t *mesh, const json_t *doc, wh_err *err)
{
    const char *key;
    json_t *val;
    wh_code rc;

    if (json_is_null(doc))
        return WH_OK;
    if (!json_is_object(doc))
        return wh_err_set(err, WH_E_INVALID, "mesh config must be a YAML mapping");
    json_object_foreach((json_t *)doc, key, val)
    {
        if (strcmp(key, "defaultConfig") == 0) {
            json_t *pc = json_object_get(mesh, "defaultConfig");
            if ((rc = wh_inject_proxy_config_apply(pc, val, err)) != WH_OK)
                return wh_err_prefix(err, "defaultConfig");
        } else if (strcmp(key, "defaultProviders") == 0 && json_is_object(val)) {
            json_object_update(json_object_get(mesh, key), val); /* an object in every default mesh */
        } else if (strcmp(key, "extensionProviders") == 0 && json_is_array(val)) {
            json_t *have = json_object_get(mesh, key), *p;
            size_t i;
            json_array_foreach(val, i, p)
            {
                const char *name = wh_inject_jstr(p, "name");
                size_t j, found = (size_t)-1;
                json_t *q;
                json_array_foreach(have, j, q) if (name && wh_inject_jstr(q, "name") &&
                                                   strcmp(name, wh_inject_jstr(q, "name")) == 0) found = j;
                if (found != (size_t)-1)
                    json_array_set(have, found, p);
                else
                    json_array_append(have, p);
            }
        } else if (strcmp(key, "trustDomainAliases") == 0 && json_is_array(val)) {
            json_t *have = json_object_get(mesh, key), *p, *q;
            size_t i, j;
            json_array_foreach(val, i, p)
            {
                int dup = 0;
                json_array_foreach(have, j, q) dup |= json_equal(p, q);
                if (!dup)
                    json_array_append(have, p);
            }
        } else {
            json_object_set(mesh, key, val);
        }
    }
    return WH_OK;
}

const char *wh_inject_interception_mode(const json_t *pc)
{
    const char *m = wh_inject_jstr(pc, "interceptionMode");
    return m != NULL ? m : "REDIRECT";
}

/* A field equal to the built-in default is dropped by cleanProxyConfig. */
static int is_cleared_default(const char *name, const json_t *v, const json_t *def)
{
    static const char *const cleared[] = {"configPath",
                                          "binaryPath",
                                          "controlPlaneAuthPolicy",
                                          "serviceCluster",
                                          "drainDuration",
                                          "terminationDrainDuration",
                                          "parentShutdownDuration",
                                          "discoveryAddress",
                                          "envoyMetricsService",
                                          "envoyAccessLogService",
                                          "tracing",
                                          "proxyAdminPort",
                                          "statNameLength",
                                          "statusPort",
                                          NULL};
    for (size_t i = 0; cleared[i]; i++)
        if (cleared[i][0] == name[0] && strcmp(cleared[i], name) == 0)
            return json_equal(v, json_object_get(def, name));
    return 0;
}

/* Zero values are omitted by jsonpb (wrappers and messages are not scalars). */
static int is_zero(const struct pc_field *f, const json_t *v)
{
    if (pc_oneof(f) != NULL)
        return 0; /* a oneof member has presence: printed even at its zero value */
    switch (f->kind) {
    case PC_STR:
        return json_string_length(v) == 0;
    case PC_INT:
        return json_is_integer(v) && json_integer_value(v) == 0;
    case PC_ENUM:
        return json_is_string(v) && f->enums[0] != NULL && strcmp(json_string_value(v), f->enums[0]) == 0;
    case PC_MAP:
        return json_object_size(v) == 0;
    case PC_LIST:
        return json_array_size(v) == 0;
    default:
        return json_is_null(v);
    }
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The built-in defaults, parsed once (read-only afterwards): the newest
 * release's, and those of releases whose default carries a zipkin tracer. */
static json_t *shared_defaults, *shared_defaults_zipkin;
static pthread_once_t shared_defaults_once = PTHREAD_ONCE_INIT;

static void parse_shared_defaults(void)
{
    wh_json_arena *request = wh_json_arena_pause(); /* shared for the process's lifetime */

    shared_defaults = default_proxy_config_of(0);
    shared_defaults_zipkin = default_proxy_config_of(1);
    wh_json_arena_resume(request);
}

/* "KEY": after a ',' unless first. */
static void put_key(wh_buf *out, const char *key, int *first)
{
    if (!*first)
        wh_buf_putc(out, ',');
    *first = 0;
    wh_go_json_string(out, key, strlen(key), WH_GO_JSON_HTML);
    wh_buf_putc(out, ':');
}

/* A map field: jsonpb prints its keys sorted. */
static void sorted_map_json(const json_t *m, wh_buf *out)
{
    const char **keys = wh_calloc(json_object_size(m) + 1, sizeof(*keys));
    const char *k;
    json_t *e;
    size_t n = 0;
    int first = 1;

    json_object_foreach((json_t *)m, k, e) keys[n++] = k;
    qsort(keys, n, sizeof(*keys), cmp_keys);
    wh_buf_putc(out, '{');
    for (size_t j = 0; j < n; j++) {
        put_key(out, keys[j], &first);
        wh_go_json(out, json_object_get(m, keys[j]), WH_GO_JSON_HTML);
    }
    wh_buf_putc(out, '}');
    free(keys);
}

/* Written straight to `out` (no intermediate object): known fields in
 * declaration order, then unknown ones in the config's order. */
void wh_inject_proxy_config_json(const json_t *pc, const wh_inject_release *rel, wh_buf *out)
{
    json_t *def, *v, *known[PC_NFIELDS] = {NULL};
    const char *key;
    const struct pc_field *kf;
    int first = 1;
    size_t unknown = 0;

    pthread_once(&shared_defaults_once, parse_shared_defaults);
    def = wh_inject_release_has(rel, WH_REL_DEFAULT_ZIPKIN_TRACER) ? shared_defaults_zipkin : shared_defaults;
    /* the fields present, by declaration order (a config sets a few of them) */
    json_object_foreach((json_t *)pc, key, v)
    {
        if ((kf = pc_field(key)) != NULL)
            known[kf - pc_fields] = v;
        else
            unknown++;
    }
    wh_buf_putc(out, '{');
    for (size_t i = 0; i < PC_NFIELDS; i++) {
        const struct pc_field *f = &pc_fields[i];
        if ((v = known[i]) == NULL || is_cleared_default(f->name, v, def) || is_zero(f, v))
            continue;
        put_key(out, f->name, &first);
        if (f->kind != PC_MAP)
            wh_go_json(out, v, WH_GO_JSON_HTML);
        else
            sorted_map_json(v, out);
    }
    json_object_foreach((json_t *)pc, key, v)
    {
        if (unknown == 0 || pc_field(key) != NULL)
            continue;
        put_key(out, key, &first);
        wh_go_json(out, v, WH_GO_JSON_HTML);
    }
    wh_buf_putc(out, '}');
}

/* Istio's ValidateProxyAddress up to the port's range: net.SplitHostPort's
 * errors, strconv.Atoi's, ValidatePort's (the host name's DNS check is not
 * done).  0 when valid, else the reason appended to `why`. */
static int proxy_address(const char *a, wh_buf *why)
{
    const char *colon = strrchr(a, ':'), *port, *reason = NULL;
    size_t j = 0, k = 0;
    char *end;
    long n;

    if (colon == NULL) {
        reason = "missing port in address";
    } else if (a[0] == '[') {
        const char *close = strchr(a, ']');
        if (close == NULL)
            reason = "missing ']' in address";
        else if (close[1] == '\0')
            reason = "missing port in address";
        else if (close + 1 != colon)
            reason = close[1] == ':' ? "too many colons in address" : "missing port in address";
        j = 1;
        k = close != NULL ? (size_t)(close - a) + 1 : 0;
    } else if (memchr(a, ':', (size_t)(colon - a)) != NULL) {
        reason = "too many colons in address";
    }
    if (reason == NULL && strchr(a + j, '[') != NULL)
        reason = "unexpected '[' in address";
    if (reason == NULL && strchr(a + k, ']') != NULL)
        reason = "unexpected ']' in address";
    if (reason != NULL) {
        wh_buf_puts(why, "unable to split ");
        wh_go_quote(why, a, strlen(a), '"', 0);
        wh_buf_printf(why, ": address %s: %s", a, reason);
        return -1;
    }
    port = colon + 1;
    n = strtol(port, &end, 10);
    if (port[0] == '\0' || *end != '\0' || strspn(port, "+-0123456789") != strlen(port) || strlen(port) > 18) {
        wh_buf_printf(why, "port (%s) is not a number: strconv.Atoi: parsing ", port);
        wh_go_quote(why, port, strlen(port), '"', 0);
        wh_buf_puts(why, ": invalid syntax");
        return -1;
    }
    if (n < 1 || n > 65535) {
        wh_buf_printf(why, "port number %ld must be in the range 1..65535", n);
        return -1;
    }
    return 0;
}

char *wh_inject_proxy_config_invalid(const json_t *pc)
{
    wh_buf b = WH_BUF_INIT;
    const char *s;
    const json_t *v;
    int n = 0;

#define PROBLEM(...)                                                                                                   \
    do {                                                                                                               \
        wh_buf_printf(&b, "\n\t* ");                                                                                   \
        wh_buf_printf(&b, __VA_ARGS__);                                                                                \
        n++;                                                                                                           \
    } while (0)

    if ((s = wh_inject_jstr(pc, "configPath")) == NULL || s[0] == '\0')
        PROBLEM("config path must be set");
    if ((s = wh_inject_jstr(pc, "binaryPath")) == NULL || s[0] == '\0')
        PROBLEM("binary path must be set");
    if (json_object_get(pc, "tracingServiceName") == NULL &&
        ((s = wh_inject_jstr(pc, "serviceCluster")) == NULL || s[0] == '\0'))
        PROBLEM(s == NULL ? "oneof service cluster or tracing service name must be specified"
                          : "service cluster must be specified");
    if ((s = wh_inject_jstr(pc, "discoveryAddress")) == NULL || s[0] == '\0') {
        PROBLEM("discovery address must be set to the proxy discovery service");
    } else {
        wh_buf why = WH_BUF_INIT;
        if (proxy_address(s, &why) != 0)
            PROBLEM("invalid discovery address: %s", why.data);
        wh_buf_free(&why);
    }
    if ((v = json_object_get(pc, "proxyAdminPort")) != NULL &&
        (json_integer_value(v) <= 0 || json_integer_value(v) > 65535))
        PROBLEM("invalid proxy admin port: port number %lld must be in the range 1..65535",
                (long long)json_integer_value(v));
    if ((v = json_object_get(pc, "statusPort")) != NULL &&
        (json_integer_value(v) <= 0 || json_integer_value(v) > 65535))
        PROBLEM("invalid status port: port number %lld must be in the range 1..65535",
                (long long)json_integer_value(v));
    if ((v = json_object_get(pc, "statNameLength")) != NULL && json_integer_value(v) < 0)
        PROBLEM("invalid stat name length: %lld", (long long)json_integer_value(v));
    if ((v = json_object_get(pc, "concurrency")) != NULL && json_integer_value(v) < 0)
        PROBLEM("concurrency must be greater than or equal to 0");
#undef PROBLEM
    if (n == 0) {
        wh_buf_free(&b);
        return NULL;
    }
    {
        wh_buf m = WH_BUF_INIT;
        wh_buf_printf(&m, "%d error%s occurred:%s\n\n", n, n == 1 ? "" : "s", b.data);
        wh_buf_free(&b);
        return wh_buf_steal(&m, NULL);
    }
}
