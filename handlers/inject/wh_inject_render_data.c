/*
 * wh_inject_render_data.c - the value injection templates execute with, shaped
 * like istiod's SidecarTemplateData: Go field names over the pod's JSON
 * (ObjectMeta, PodSpec, Container, ContainerPort), over the proxy and mesh
 * config (proto messages with nil-safe GetX getters, enums that print their
 * names, wrapper types with .GetValue), plus Values as a plain
 * map[string]interface{}.  Fields resolve lazily, straight from the JSON.
 */
#include "wh_inject_render_int.h"

#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_inject_schema.h"
#include "wh_yaml.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum fkind {
    F_STR,    /* string ("" when absent) */
    F_I32,    /* int32 */
    F_I64,    /* int64 */
    F_BOOL,   /* bool */
    F_MAPSS,  /* map[string]string */
    F_LSTR,   /* []string */
    F_LIST,   /* []sub (structs) */
    F_STRUCT, /* sub, by value */
    F_PTR,    /* *sub */
    F_ANY,    /* anything else: the JSON as encoding/json would decode it */
    F_ENUM,   /* proto enum: int with a name */
    F_BOOLW,  /* *wrapperspb.BoolValue */
    F_I32W,   /* *wrapperspb.Int32Value */
    F_DUR     /* *durationpb.Duration */
};

struct stype;

struct sfield {
    const char *go;   /* Go field name */
    const char *json; /* JSON name */
    enum fkind kind;
    const struct stype *sub;  /* F_LIST / F_STRUCT / F_PTR */
    const char *const *enums; /* F_ENUM names by value */
    int always;               /* no omitempty: encoded even when zero */
};

/* A Go struct type backed by a JSON object (u.host is the json_t*, NULL for
 * a nil pointer or an absent value struct). */
struct stype {
    wh_tmpl_type t; /* first: the engine hands us &t */
    const struct sfield *fields;
    size_t n;
    int proto;                /* generated proto message: GetX getters, nil-safe */
    int ordered;              /* encoding/json output rebuilt in Go field order */
    const wh_tmpl_type *list; /* []T of this struct */
};

static wh_code struct_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                            size_t nargs, wh_tmpl_value *out);
static json_t *struct_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v);

#define STRUCT_TYPE(var, goname, ptr, fieldtab, isproto, isordered, listtype)                                          \
    static const struct stype var = {{goname, WH_TMPL_HOST, NULL, struct_field, NULL, struct_json, ptr, 1},            \
                                     fieldtab,                                                                         \
                                     sizeof(fieldtab) / sizeof(fieldtab[0]),                                           \
                                     isproto,                                                                          \
                                     isordered,                                                                        \
                                     listtype}

/* ---- Kubernetes core/v1 ----
 *
 * The Pod's types are the table of wh_inject_schema.h, the one description
 * of them: templates see its fields under their Go names, with the kinds
 * below (built once, on the first render).  What the template engine gives
 * no Go type of its own (nested structs, other lists, pointers) reads as
 * the JSON encoding/json would decode into an interface{}. */

#define V1_TYPE(var, goname, isordered, listtype)                                                                      \
    static struct stype var = {                                                                                        \
        {goname, WH_TMPL_HOST, NULL, struct_field, NULL, struct_json, 0, 1}, NULL, 0, 0, isordered, listtype}

static const wh_tmpl_type port_list_type, container_list_type;
V1_TYPE(port_type, "v1.ContainerPort", 1, &port_list_type);
V1_TYPE(container_type, "v1.Container", 0, &container_list_type);
V1_TYPE(meta_type, "v1.ObjectMeta", 0, NULL);
V1_TYPE(spec_type, "v1.PodSpec", 0, NULL);
static const wh_tmpl_type port_list_type = {"[]v1.ContainerPort", WH_TMPL_LIST, &port_type.t, NULL, NULL, NULL, 0, 0};
static const wh_tmpl_type container_list_type = {
    "[]v1.Container", WH_TMPL_LIST, &container_type.t, NULL, NULL, NULL, 0, 0};

static struct sfield v1_fields[256]; /* the four types' fields (~90 today) */
static char v1_names[4096];          /* their derived Go names (~1.3 KB) */
static pthread_once_t v1_once = PTHREAD_ONCE_INIT;

static void v1_type(struct stype *st, const wh_inject_type *schema, size_t *used, size_t *names)
{
    const wh_inject_field *f;

    st->fields = v1_fields + *used;
    for (f = schema->fields; f->name != NULL && *used < sizeof(v1_fields) / sizeof(v1_fields[0]); f++) {
        struct sfield *sf = &v1_fields[(*used)++];
        char *name = v1_names + *names;
        wh_inject_schema_go_name(f, name, sizeof(v1_names) - *names);
        if (f->go == NULL)
            *names += strlen(name) + 1;
        sf->go = f->go != NULL ? f->go : name;
        sf->json = f->name;
        sf->always = !(f->flags & WH_F_OMIT) && (f->kind == WH_K_STR || f->kind == WH_K_INT || f->kind == WH_K_BOOL);
        switch (f->kind) {
        case WH_K_STR:
            sf->kind = F_STR;
            break;
        case WH_K_INT:
            sf->kind = (f->flags & WH_F_INT64) ? F_I64 : F_I32;
            break;
        case WH_K_BOOL:
            sf->kind = F_BOOL;
            break;
        case WH_K_MAP:
            sf->kind = F_MAPSS;
            break;
        case WH_K_PLIST:
            sf->kind = F_LSTR;
            break;
        case WH_K_LIST:
            sf->kind = F_LIST;
            if (f->type == &wh_inject_type_container)
                sf->sub = &container_type;
            else if (f->type == &wh_inject_type_container_port)
                sf->sub = &port_type;
            else
                sf->kind = F_ANY;
            break;
        default:
            sf->kind = F_ANY;
        }
    }
    st->n = (size_t)(v1_fields + *used - st->fields);
}

static void v1_build(void)
{
    size_t used = 0, names = 0;

    v1_type(&port_type, &wh_inject_type_container_port, &used, &names);
    v1_type(&container_type, &wh_inject_type_container, &used, &names);
    v1_type(&meta_type, &wh_inject_type_object_meta, &used, &names);
    v1_type(&spec_type, &wh_inject_type_pod_spec, &used, &names);
}

/* ---- Istio mesh/v1alpha1 protos ---- */

static const char *const interception_names[] = {"REDIRECT", "TPROXY", "NONE", NULL};
static const char *const auth_policy_names[] = {"NONE", "MUTUAL_TLS", NULL};
static const char *const tracing_service_names[] = {"APP_LABEL_AND_NAMESPACE", "CANONICAL_NAME_ONLY",
                                                    "CANONICAL_NAME_AND_NAMESPACE", NULL};

static const struct sfield tls_fields[] = {
    {"Mode", "mode", F_ANY, NULL, NULL, 0},
    {"ClientCertificate", "clientCertificate", F_STR, NULL, NULL, 0},
    {"PrivateKey", "privateKey", F_STR, NULL, NULL, 0},
    {"CaCertificates", "caCertificates", F_STR, NULL, NULL, 0},
    {"CredentialName", "credentialName", F_STR, NULL, NULL, 0},
    {"SubjectAltNames", "subjectAltNames", F_LSTR, NULL, NULL, 0},
    {"Sni", "sni", F_STR, NULL, NULL, 0},
    {"InsecureSkipVerify", "insecureSkipVerify", F_BOOLW, NULL, NULL, 0},
    {"CaCrl", "caCrl", F_STR, NULL, NULL, 0},
};
STRUCT_TYPE(tls_type, "*v1alpha3.ClientTLSSettings", 1, tls_fields, 1, 0, NULL);

/* Tracer settings (older templates read e.g. .GetTracing.GetZipkin.GetAddress). */
static const struct sfield address_fields[] = {
    {"Address", "address", F_STR, NULL, NULL, 0},
};
STRUCT_TYPE(zipkin_type, "*v1alpha1.Tracing_Zipkin", 1, address_fields, 1, 0, NULL);
STRUCT_TYPE(datadog_type, "*v1alpha1.Tracing_Datadog", 1, address_fields, 1, 0, NULL);
static const struct sfield lightstep_fields[] = {
    {"Address", "address", F_STR, NULL, NULL, 0},
    {"AccessToken", "accessToken", F_STR, NULL, NULL, 0},
    {"CacertPath", "cacertPath", F_STR, NULL, NULL, 0},
};
STRUCT_TYPE(lightstep_type, "*v1alpha1.Tracing_Lightstep", 1, lightstep_fields, 1, 0, NULL);
static const struct sfield opencensus_fields[] = {
    {"Address", "address", F_STR, NULL, NULL, 0},
    {"Context", "context", F_ANY, NULL, NULL, 0},
};
STRUCT_TYPE(opencensus_type, "*v1alpha1.Tracing_OpenCensusAgent", 1, opencensus_fields, 1, 0, NULL);

static const struct sfield tracing_fields[] = {
    {"Zipkin", "zipkin", F_PTR, &zipkin_type, NULL, 0},
    {"Lightstep", "lightstep", F_PTR, &lightstep_type, NULL, 0},
    {"Datadog", "datadog", F_PTR, &datadog_type, NULL, 0},
    {"Stackdriver", "stackdriver", F_ANY, NULL, NULL, 0},
    {"OpenCensusAgent", "openCensusAgent", F_PTR, &opencensus_type, NULL, 0},
    {"CustomTags", "customTags", F_ANY, NULL, NULL, 0},
    {"MaxPathTagLength", "maxPathTagLength", F_I32, NULL, NULL, 0},
    {"Sampling", "sampling", F_ANY, NULL, NULL, 0},
    {"TlsSettings", "tlsSettings", F_PTR, &tls_type, NULL, 0},
    {"EnableIstioTags", "enableIstioTags", F_BOOLW, NULL, NULL, 0},
};
STRUCT_TYPE(tracing_type, "*v1alpha1.Tracing", 1, tracing_fields, 1, 0, NULL);

static const struct sfield image_fields[] = {
    {"ImageType", "imageType", F_STR, NULL, NULL, 0},
};
STRUCT_TYPE(proxy_image_type, "*v1beta1.ProxyImage", 1, image_fields, 1, 0, NULL);

static const struct sfield pc_fields[] = {
    {"ConfigPath", "configPath", F_STR, NULL, NULL, 0},
    {"BinaryPath", "binaryPath", F_STR, NULL, NULL, 0},
    {"ServiceCluster", "serviceCluster", F_STR, NULL, NULL, 0},
    {"TracingServiceName", "tracingServiceName", F_ENUM, NULL, tracing_service_names, 0},
    {"DrainDuration", "drainDuration", F_DUR, NULL, NULL, 0},
    {"ParentShutdownDuration", "parentShutdownDuration", F_DUR, NULL, NULL, 0},
    {"DiscoveryAddress", "discoveryAddress", F_STR, NULL, NULL, 0},
    {"DiscoveryRefreshDelay", "discoveryRefreshDelay", F_DUR, NULL, NULL, 0},
    {"ZipkinAddress", "zipkinAddress", F_STR, NULL, NULL, 0},
    {"StatsdUdpAddress", "statsdUdpAddress", F_STR, NULL, NULL, 0},
    {"EnvoyMetricsServiceAddress", "envoyMetricsServiceAddress", F_STR, NULL, NULL, 0},
    {"ProxyAdminPort", "proxyAdminPort", F_I32, NULL, NULL, 0},
    {"AvailabilityZone", "availabilityZone", F_STR, NULL, NULL, 0},
    {"ControlPlaneAuthPolicy", "controlPlaneAuthPolicy", F_ENUM, NULL, auth_policy_names, 0},
    {"CustomConfigFile", "customConfigFile", F_STR, NULL, NULL, 0},
    {"StatNameLength", "statNameLength", F_I32, NULL, NULL, 0},
    {"Concurrency", "concurrency", F_I32W, NULL, NULL, 0},
    {"ProxyBootstrapTemplatePath", "proxyBootstrapTemplatePath", F_STR, NULL, NULL, 0},
    {"InterceptionMode", "interceptionMode", F_ENUM, NULL, interception_names, 0},
    {"Tracing", "tracing", F_PTR, &tracing_type, NULL, 0},
    {"Sds", "sds", F_ANY, NULL, NULL, 0},
    {"EnvoyAccessLogService", "envoyAccessLogService", F_ANY, NULL, NULL, 0},
    {"EnvoyMetricsService", "envoyMetricsService", F_ANY, NULL, NULL, 0},
    {"ProxyMetadata", "proxyMetadata", F_MAPSS, NULL, NULL, 0},
    {"RuntimeValues", "runtimeValues", F_MAPSS, NULL, NULL, 0},
    {"StatusPort", "statusPort", F_I32, NULL, NULL, 0},
    {"ExtraStatTags", "extraStatTags", F_LSTR, NULL, NULL, 0},
    {"GatewayTopology", "gatewayTopology", F_ANY, NULL, NULL, 0},
    {"TerminationDrainDuration", "terminationDrainDuration", F_DUR, NULL, NULL, 0},
    {"MeshId", "meshId", F_STR, NULL, NULL, 0},
    {"ReadinessProbe", "readinessProbe", F_ANY, NULL, NULL, 0},
    {"ProxyStatsMatcher", "proxyStatsMatcher", F_ANY, NULL, NULL, 0},
    {"HoldApplicationUntilProxyStarts", "holdApplicationUntilProxyStarts", F_BOOLW, NULL, NULL, 0},
    {"CaCertificatesPem", "caCertificatesPem", F_LSTR, NULL, NULL, 0},
    {"Image", "image", F_PTR, &proxy_image_type, NULL, 0},
    {"PrivateKeyProvider", "privateKeyProvider", F_ANY, NULL, NULL, 0},
    {"ProxyHeaders", "proxyHeaders", F_ANY, NULL, NULL, 0},
    {"FileFlushInterval", "fileFlushInterval", F_DUR, NULL, NULL, 0},
    {"FileFlushMinSizeKb", "fileFlushMinSizeKb", F_ANY, NULL, NULL, 0},
};
STRUCT_TYPE(pc_type, "*v1alpha1.ProxyConfig", 1, pc_fields, 1, 0, NULL);

static const struct sfield mesh_fields[] = {
    {"ProxyListenPort", "proxyListenPort", F_I32, NULL, NULL, 0},
    {"ProxyInboundListenPort", "proxyInboundListenPort", F_I32, NULL, NULL, 0},
    {"ProxyHttpPort", "proxyHttpPort", F_I32, NULL, NULL, 0},
    {"ConnectTimeout", "connectTimeout", F_DUR, NULL, NULL, 0},
    {"ProtocolDetectionTimeout", "protocolDetectionTimeout", F_DUR, NULL, NULL, 0},
    {"TcpKeepalive", "tcpKeepalive", F_ANY, NULL, NULL, 0},
    {"IngressClass", "ingressClass", F_STR, NULL, NULL, 0},
    {"IngressService", "ingressService", F_STR, NULL, NULL, 0},
    {"IngressControllerMode", "ingressControllerMode", F_ANY, NULL, NULL, 0},
    {"IngressSelector", "ingressSelector", F_STR, NULL, NULL, 0},
    {"EnableTracing", "enableTracing", F_BOOL, NULL, NULL, 0},
    {"AccessLogFile", "accessLogFile", F_STR, NULL, NULL, 0},
    {"AccessLogFormat", "accessLogFormat", F_STR, NULL, NULL, 0},
    {"AccessLogEncoding", "accessLogEncoding", F_ANY, NULL, NULL, 0},
    {"EnableEnvoyAccessLogService", "enableEnvoyAccessLogService", F_BOOL, NULL, NULL, 0},
    {"DisableEnvoyListenerLog", "disableEnvoyListenerLog", F_BOOL, NULL, NULL, 0},
    {"DefaultConfig", "defaultConfig", F_PTR, &pc_type, NULL, 0},
    {"OutboundTrafficPolicy", "outboundTrafficPolicy", F_ANY, NULL, NULL, 0},
    {"InboundTrafficPolicy", "inboundTrafficPolicy", F_ANY, NULL, NULL, 0},
    {"ConfigSources", "configSources", F_ANY, NULL, NULL, 0},
    {"EnableAutoMtls", "enableAutoMtls", F_BOOLW, NULL, NULL, 0},
    {"TrustDomain", "trustDomain", F_STR, NULL, NULL, 0},
    {"TrustDomainAliases", "trustDomainAliases", F_LSTR, NULL, NULL, 0},
    {"CaCertificates", "caCertificates", F_ANY, NULL, NULL, 0},
    {"DefaultServiceExportTo", "defaultServiceExportTo", F_LSTR, NULL, NULL, 0},
    {"DefaultVirtualServiceExportTo", "defaultVirtualServiceExportTo", F_LSTR, NULL, NULL, 0},
    {"DefaultDestinationRuleExportTo", "defaultDestinationRuleExportTo", F_LSTR, NULL, NULL, 0},
    {"RootNamespace", "rootNamespace", F_STR, NULL, NULL, 0},
    {"LocalityLbSetting", "localityLbSetting", F_ANY, NULL, NULL, 0},
    {"DnsRefreshRate", "dnsRefreshRate", F_DUR, NULL, NULL, 0},
    {"H2UpgradePolicy", "h2UpgradePolicy", F_ANY, NULL, NULL, 0},
    {"InboundClusterStatName", "inboundClusterStatName", F_STR, NULL, NULL, 0},
    {"OutboundClusterStatName", "outboundClusterStatName", F_STR, NULL, NULL, 0},
    {"Certificates", "certificates", F_ANY, NULL, NULL, 0},
    {"ServiceSettings", "serviceSettings", F_ANY, NULL, NULL, 0},
    {"EnablePrometheusMerge", "enablePrometheusMerge", F_BOOLW, NULL, NULL, 0},
    {"VerifyCertificateAtClient", "verifyCertificateAtClient", F_BOOLW, NULL, NULL, 0},
    {"Ca", "ca", F_ANY, NULL, NULL, 0},
    {"ExtensionProviders", "extensionProviders", F_ANY, NULL, NULL, 0},
    {"DefaultProviders", "defaultProviders", F_ANY, NULL, NULL, 0},
    {"DiscoverySelectors", "discoverySelectors", F_ANY, NULL, NULL, 0},
    {"PathNormalization", "pathNormalization", F_ANY, NULL, NULL, 0},
    {"DefaultHttpRetryPolicy", "defaultHttpRetryPolicy", F_ANY, NULL, NULL, 0},
    {"MeshMTLS", "meshMTLS", F_ANY, NULL, NULL, 0},
    {"TlsDefaults", "tlsDefaults", F_ANY, NULL, NULL, 0},
    {"ServiceScopeConfigs", "serviceScopeConfigs", F_ANY, NULL, NULL, 0},
};
STRUCT_TYPE(mesh_type, "*v1alpha1.MeshConfig", 1, mesh_fields, 1, 0, NULL);

/* ---- enums, wrappers, durations ---- */

static wh_code enum_format(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out);
static wh_code enum_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                          size_t nargs, wh_tmpl_value *out);
/* An enum type carries its names through the elem-less type table below. */
struct etype {
    wh_tmpl_type t;
    const char *const *names;
};
static const struct etype interception_enum = {
    {"v1alpha1.ProxyConfig_InboundInterceptionMode", WH_TMPL_INT, NULL, enum_field, enum_format, NULL, 0, 1},
    interception_names};
static const struct etype auth_enum = {
    {"v1alpha1.AuthenticationPolicy", WH_TMPL_INT, NULL, enum_field, enum_format, NULL, 0, 1}, auth_policy_names};
static const struct etype tracing_name_enum = {
    {"v1alpha1.ProxyConfig_TracingServiceName", WH_TMPL_INT, NULL, enum_field, enum_format, NULL, 0, 1},
    tracing_service_names};

static const char *enum_name(const wh_tmpl_value *v)
{
    const struct etype *e = (const struct etype *)v->type;
    for (int64_t i = 0; e->names[i]; i++)
        if (i == v->u.i)
            return e->names[i];
    if (e == &auth_enum && v->u.i == 1000)
        return "INHERIT";
    return NULL;
}

static wh_code enum_format(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out)
{
    const char *n = enum_name(v);
    if (n != NULL)
        wh_buf_puts(out, n);
    else
        wh_buf_printf(out, "%lld", (long long)v->u.i);
    return WH_OK;
}

static wh_code enum_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                          size_t nargs, wh_tmpl_value *out)
{
    if (strcmp(name, "String") == 0) {
        const char *n = enum_name(recv);
        if (n != NULL) {
            *out = wh_tmpl_str(n);
            return WH_OK;
        }
        return wh_tmpl_printf(ctx, out, "%lld", (long long)recv->u.i);
    }
    if (strcmp(name, "Number") == 0) {
        *out = wh_tmpl_int_typed(recv->u.i, &wh_tmpl_type_int32);
        return WH_OK;
    }
    return WH_E_NOTFOUND;
}

static wh_code wrapper_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                             size_t nargs, wh_tmpl_value *out);
static wh_code wrapper_format(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out);
static json_t *wrapper_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v);
static const wh_tmpl_type boolw_type = {"*wrapperspb.BoolValue", WH_TMPL_HOST, NULL, wrapper_field,
                                        wrapper_format,          wrapper_json, 1,    1};
static const wh_tmpl_type i32w_type = {"*wrapperspb.Int32Value", WH_TMPL_HOST, NULL, wrapper_field,
                                       wrapper_format,           wrapper_json, 1,    1};

static wh_tmpl_value wrapper_value(const wh_tmpl_value *recv)
{
    const json_t *j = recv->u.host;
    if (recv->type == &boolw_type)
        return wh_tmpl_bool(json_is_true(j));
    return wh_tmpl_int_typed(json_is_integer(j) ? json_integer_value(j) : 0, &wh_tmpl_type_int32);
}

static wh_code wrapper_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                             size_t nargs, wh_tmpl_value *out)
{
    if (strcmp(name, "GetValue") == 0 || strcmp(name, "Value") == 0) {
        if (recv->u.host == NULL && name[0] == 'V')
            return wh_tmpl_errorf(ctx, "nil pointer evaluating %s.Value", recv->type->name);
        *out = wrapper_value(recv);
        return WH_OK;
    }
    return WH_E_NOTFOUND;
}

static wh_code wrapper_format(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out)
{
    wh_tmpl_value inner = wrapper_value(v);
    if (v->u.host == NULL) {
        wh_buf_puts(out, "<nil>");
        return WH_OK;
    }
    wh_buf_puts(out, "value:");
    return wh_tmpl_sprint(ctx, &inner, out);
}

static json_t *wrapper_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v)
{
    if (v->u.host == NULL)
        return json_null();
    return json_pack("{sO}", "value", (json_t *)v->u.host);
}

/* A protobuf Duration's JSON ("45s", "-1.5s") printed as istiod's templates
 * print it: durationpb's AsDuration (which clamps what overflows int64
 * nanoseconds to its minimum or maximum), then Go's Duration.String. */
static wh_code go_duration_string(const char *proto, wh_buf *out)
{
    unsigned long long sec = 0, frac = 0, ns, max = (unsigned long long)INT64_MAX;
    int nd = 0, neg = 0;
    const char *p = proto;

    if (*p == '-') {
        neg = 1;
        p++;
    }
    for (; *p >= '0' && *p <= '9'; p++)
        if (sec <= max / 1000000000ULL) /* past that, int64 nanoseconds overflow: clamped below */
            sec = sec * 10 + (unsigned long long)(*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9' && nd < 9; p++, nd++)
            frac = frac * 10 + (unsigned long long)(*p - '0');
    while (nd++ < 9)
        frac *= 10;
    if (neg)
        max++; /* -2^63 */
    ns = sec > max / 1000000000ULL ? max : sec * 1000000000ULL + frac;
    if (ns > max)
        ns = max;
    wh_go_duration(out, neg ? (int64_t)(0ULL - ns) : (int64_t)ns);
    return WH_OK;
}

static wh_code dur_format(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out)
{
    if (v->u.host == NULL) {
        wh_buf_puts(out, "<nil>");
        return WH_OK;
    }
    return go_duration_string(json_string_value(v->u.host), out);
}

static wh_code dur_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                         size_t nargs, wh_tmpl_value *out)
{
    if (strcmp(name, "AsDuration") == 0 || strcmp(name, "String") == 0) {
        wh_buf *b = wh_tmpl_tmpbuf(ctx);
        if (recv->u.host == NULL)
            wh_buf_puts(b, "0s");
        else
            go_duration_string(json_string_value(recv->u.host), b);
        return wh_tmpl_strdup(ctx, b->data ? b->data : "", b->len, out);
    }
    return WH_E_NOTFOUND;
}

static const wh_tmpl_type dur_type = {"*durationpb.Duration", WH_TMPL_HOST, NULL, dur_field, dur_format, NULL, 1, 1};

/* formatDuration's helper: the Go duration text of a Duration value. */
wh_code wh_inject_duration_text(const wh_tmpl_value *v, wh_buf *out)
{
    if (v->kind != WH_TMPL_HOST || v->type != &dur_type || v->u.host == NULL) {
        wh_buf_puts(out, "0s");
        return WH_OK;
    }
    return go_duration_string(json_string_value(v->u.host), out);
}

/* ---- generic struct access ---- */

static const struct sfield *find_field(const struct stype *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++) /* the first letter rules out most fields without a call */
        if (st->fields[i].go[0] == name[0] && strcmp(st->fields[i].go, name) == 0)
            return &st->fields[i];
    return NULL;
}

static wh_code field_value(wh_tmpl_ctx *ctx, const struct sfield *f, const json_t *j, wh_tmpl_value *out)
{
    if (json_is_null(j))
        j = NULL;
    switch (f->kind) {
    case F_STR:
        *out = json_is_string(j) ? wh_tmpl_strn(json_string_value(j), json_string_length(j)) : wh_tmpl_str("");
        return WH_OK;
    case F_I32:
    case F_I64:
        *out = wh_tmpl_int_typed(json_is_integer(j) ? json_integer_value(j) : (int64_t)json_number_value(j),
                                 f->kind == F_I32 ? &wh_tmpl_type_int32 : &wh_tmpl_type_int64);
        return WH_OK;
    case F_BOOL:
        *out = wh_tmpl_bool(json_is_true(j));
        return WH_OK;
    case F_MAPSS:
        *out = wh_tmpl_json_typed(json_is_object(j) ? j : NULL, &wh_tmpl_type_map_string_string);
        return WH_OK;
    case F_LSTR:
        *out = wh_tmpl_json_typed(json_is_array(j) ? j : NULL, &wh_tmpl_type_string_slice);
        return WH_OK;
    case F_LIST: {
        size_t i;
        json_t *e;
        if (!json_is_array(j)) {
            wh_tmpl_value nil = {0};
            nil.kind = WH_TMPL_LIST;
            nil.rep = WH_TMPL_REP_ENGINE;
            nil.type = f->sub->list;
            *out = nil;
            return WH_OK;
        }
        *out = wh_tmpl_list_new(ctx, json_array_size(j), f->sub->list);
        json_array_foreach(j, i, e)
        {
            wh_code rc = wh_tmpl_list_push(ctx, out, wh_tmpl_host(&f->sub->t, json_is_object(e) ? e : NULL));
            if (rc != WH_OK)
                return rc;
        }
        return WH_OK;
    }
    case F_STRUCT:
    case F_PTR:
        *out = wh_tmpl_host(&f->sub->t, json_is_object(j) ? j : NULL);
        return WH_OK;
    case F_ENUM: {
        const struct etype *et = f->enums == interception_names  ? &interception_enum
                                 : f->enums == auth_policy_names ? &auth_enum
                                                                 : &tracing_name_enum;
        int64_t n = 0;
        if (json_is_string(j)) {
            for (int64_t i = 0; f->enums[i]; i++)
                if (strcmp(f->enums[i], json_string_value(j)) == 0)
                    n = i;
            if (et == &auth_enum && strcmp(json_string_value(j), "INHERIT") == 0)
                n = 1000;
        } else if (json_is_integer(j)) {
            n = json_integer_value(j);
        }
        *out = wh_tmpl_int_typed(n, &et->t);
        return WH_OK;
    }
    case F_BOOLW:
        *out = wh_tmpl_host(&boolw_type, j);
        return WH_OK;
    case F_I32W:
        *out = wh_tmpl_host(&i32w_type, j);
        return WH_OK;
    case F_DUR:
        *out = wh_tmpl_host(&dur_type, json_is_string(j) ? j : NULL);
        return WH_OK;
    case F_ANY:
    default:
        *out = wh_tmpl_json(j);
        return WH_OK;
    }
}

static wh_code struct_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                            size_t nargs, wh_tmpl_value *out)
{
    const struct stype *st = (const struct stype *)recv->type;
    const json_t *obj = recv->u.host;
    const struct sfield *f = find_field(st, name);
    int getter = 0;

    if (f == NULL && st->proto && strncmp(name, "Get", 3) == 0 && (f = find_field(st, name + 3)) != NULL)
        getter = 1; /* generated getters are nil-safe */
    if (f == NULL)
        return WH_E_NOTFOUND;
    if (obj == NULL && st->t.pointer && !getter)
        return wh_tmpl_errorf(ctx, "nil pointer evaluating %s.%s", st->t.name, name);
    return field_value(ctx, f, json_object_get(obj, f->json), out);
}

/* encoding/json of the Go struct: fields in declaration order, omitempty. */
static json_t *struct_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v)
{
    const struct stype *st = (const struct stype *)v->type;
    const json_t *obj = v->u.host;
    json_t *out;

    if (obj == NULL)
        return st->t.pointer ? json_null() : json_object();
    if (!st->ordered)
        return json_deep_copy(obj);
    out = json_object();
    for (size_t i = 0; i < st->n; i++) {
        json_t *fv = json_object_get(obj, st->fields[i].json);
        if (fv == NULL && st->fields[i].always)
            json_object_set_new(out, st->fields[i].json, json_integer(0));
        else if (fv != NULL && (st->fields[i].always || !wh_go_is_empty(fv)))
            json_object_set(out, st->fields[i].json, fv);
    }
    return out;
}

/* struct_json() then wh_go_json(), without the intermediate object:
 * structToJSON runs twice per container port. */
wh_code wh_inject_struct_gojson(const wh_tmpl_value *v, wh_buf *out)
{
    const struct stype *st = (const struct stype *)v->type;
    const json_t *obj = v->u.host;
    int first = 1;

    if (v->kind != WH_TMPL_HOST || v->type == NULL || v->type->field != struct_field || !st->ordered || obj == NULL)
        return WH_E_NOTFOUND;
    wh_buf_putc(out, '{');
    for (size_t i = 0; i < st->n; i++) {
        const struct sfield *f = &st->fields[i];
        json_t *fv = json_object_get(obj, f->json);
        int zero = fv == NULL && f->always; /* encoded as 0 */
        if (!zero && (fv == NULL || (!f->always && wh_go_is_empty(fv))))
            continue;
        /* the JSON names are plain identifiers: quoting needs no escapes */
        if (!first)
            wh_buf_putc(out, ',');
        wh_buf_putc(out, '"');
        wh_buf_puts(out, f->json);
        wh_buf_append(out, "\":", 2);
        first = 0;
        if (zero)
            wh_buf_putc(out, '0');
        else
            wh_go_json(out, fv, WH_GO_JSON_HTML);
    }
    wh_buf_putc(out, '}');
    return WH_OK;
}

/* ---- SidecarTemplateData itself ---- */

static wh_code typemeta_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                              size_t nargs, wh_tmpl_value *out)
{
    const wh_inject_data *d = recv->u.host;
    if (strcmp(name, "Kind") == 0)
        *out = wh_tmpl_str(d->type_kind);
    else if (strcmp(name, "APIVersion") == 0)
        *out = wh_tmpl_str(d->type_api_version);
    else
        return WH_E_NOTFOUND;
    return WH_OK;
}

static wh_code deploymeta_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name,
                                const wh_tmpl_value *args, size_t nargs, wh_tmpl_value *out)
{
    const wh_inject_data *d = recv->u.host;
    if (strcmp(name, "Name") == 0)
        *out = wh_tmpl_str(d->deploy_name);
    else if (strcmp(name, "Namespace") == 0)
        *out = wh_tmpl_str(d->deploy_namespace);
    else
        return WH_E_NOTFOUND;
    return WH_OK;
}

static json_t *typemeta_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v)
{
    const wh_inject_data *d = v->u.host;
    json_t *o = json_object();
    if (d->type_kind[0])
        json_object_set_new(o, "kind", json_string(d->type_kind));
    if (d->type_api_version[0])
        json_object_set_new(o, "apiVersion", json_string(d->type_api_version));
    return o;
}

static json_t *deploymeta_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v)
{
    const wh_inject_data *d = v->u.host;
    return json_pack("{ssss}", "Namespace", d->deploy_namespace, "Name", d->deploy_name);
}

static const wh_tmpl_type typemeta_type = {"v1.TypeMeta", WH_TMPL_HOST,  NULL, typemeta_field,
                                           NULL,          typemeta_json, 0,    0};
static const wh_tmpl_type deploymeta_type = {
    "types.NamespacedName", WH_TMPL_HOST, NULL, deploymeta_field, NULL, deploymeta_json, 0, 0};

/* `.Values`: the revision's values, the same for every render of its
 * templates (wh_inject_bind_values). */
static wh_tmpl_value values_value(const json_t *values)
{
    return wh_tmpl_json_typed(values, &wh_tmpl_type_map_string_interface);
}

static wh_code data_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                          size_t nargs, wh_tmpl_value *out)
{
    /* in the order of the cases below; `since`: the release row the field
     * needs (WH_REL_NBEHAVIOURS: every release has it) */
    static const struct {
        const char *name;
        wh_release_behaviour since;
    } fields[] = {{"TypeMeta", WH_REL_NBEHAVIOURS},
                  {"DeploymentMeta", WH_REL_NBEHAVIOURS},
                  {"ObjectMeta", WH_REL_NBEHAVIOURS},
                  {"Spec", WH_REL_NBEHAVIOURS},
                  {"ProxyConfig", WH_REL_NBEHAVIOURS},
                  {"MeshConfig", WH_REL_NBEHAVIOURS},
                  {"Values", WH_REL_NBEHAVIOURS},
                  {"Revision", WH_REL_NBEHAVIOURS},
                  {"NativeSidecars", WH_REL_DATA_NATIVE_SIDECARS},
                  {"ProxyImage", WH_REL_NBEHAVIOURS},
                  {"ProxyInitImage", WH_REL_DATA_PROXY_INIT_IMAGE},
                  {"ProxyUID", WH_REL_NBEHAVIOURS},
                  {"ProxyGID", WH_REL_NBEHAVIOURS},
                  {"InboundTrafficPolicyMode", WH_REL_DATA_INBOUND_MODE},
                  {"CompliancePolicy", WH_REL_DATA_COMPLIANCE_POLICY},
                  {"EstimatedConcurrency", WH_REL_NBEHAVIOURS}};
    const size_t nfields = sizeof(fields) / sizeof(fields[0]);
    const wh_inject_data *d = recv->u.host;
    size_t i;

    /* the first letter rules out most names without a call */
    for (i = 0; i < nfields; i++)
        if (fields[i].name[0] == name[0] && strcmp(fields[i].name, name) == 0)
            break;
    /* a field its release's SidecarTemplateData lacks: Go's "can't evaluate field" */
    if (i < nfields && fields[i].since != WH_REL_NBEHAVIOURS && !wh_inject_release_has(d->release, fields[i].since))
        return WH_E_NOTFOUND;
    switch (i) {
    case 0:
        *out = wh_tmpl_host(&typemeta_type, d);
        break;
    case 1:
        *out = wh_tmpl_host(&deploymeta_type, d);
        break;
    case 2:
        *out = wh_tmpl_host(&meta_type.t, d->object_meta);
        break;
    case 3:
        *out = wh_tmpl_host(&spec_type.t, d->spec);
        break;
    case 4:
        *out = wh_tmpl_host(&pc_type.t, d->proxy_config);
        break;
    case 5:
        *out = wh_tmpl_host(&mesh_type.t, d->mesh);
        break;
    case 6:
        *out = values_value(d->values);
        break;
    case 7:
        *out = wh_tmpl_str(d->revision);
        break;
    case 8:
        *out = wh_tmpl_bool(d->native);
        break;
    case 9:
        *out = wh_tmpl_str(d->proxy_image);
        break;
    case 10:
        *out = wh_tmpl_str(d->proxy_init_image);
        break;
    case 11:
        *out = wh_tmpl_int_typed(d->proxy_uid, &wh_tmpl_type_int64);
        break;
    case 12:
        *out = wh_tmpl_int_typed(d->proxy_gid, &wh_tmpl_type_int64);
        break;
    case 13:
        *out = wh_tmpl_str(d->inbound_mode);
        break;
    case 14:
        *out = wh_tmpl_str(d->compliance);
        break;
    case 15:
        *out = wh_tmpl_int_typed(d->concurrency, &wh_tmpl_type_int);
        break;
    default:
        return WH_E_NOTFOUND;
    }
    return WH_OK;
}

static const wh_tmpl_type data_type = {"*inject.SidecarTemplateData", WH_TMPL_HOST, NULL, data_field, NULL, NULL, 1, 0};

wh_tmpl_value wh_inject_data_value(const wh_inject_data *d)
{
    pthread_once(&v1_once, v1_build);
    return wh_tmpl_host(&data_type, d);
}

const char *wh_inject_inbound_mode(const json_t *mesh)
{
    const char *m = wh_inject_jstr(json_object_get(mesh, "inboundTrafficPolicy"), "mode");
    return m != NULL && strcmp(m, "LOCALHOST") == 0 ? "localhost" : "passthrough";
}

wh_code wh_inject_bind_values(wh_tmpl_set *set, const json_t *values, const json_t *mesh, const json_t *pc,
                              const wh_inject_release *release, wh_err *err)
{
    wh_code rc;

    pthread_once(&v1_once, v1_build);
    if ((rc = wh_tmpl_set_const_field(set, &data_type, "Values", values_value(values), err)) != WH_OK ||
        (rc = wh_tmpl_set_const_field(set, &data_type, "MeshConfig", wh_tmpl_host(&mesh_type.t, mesh), err)) != WH_OK)
        return rc;
    /* a release without the field fails at render (data_field) */
    if (wh_inject_release_has(release, WH_REL_DATA_INBOUND_MODE) &&
        (rc = wh_tmpl_set_const_field(set, &data_type, "InboundTrafficPolicyMode",
                                      wh_tmpl_str(wh_inject_inbound_mode(mesh)), err)) != WH_OK)
        return rc;
    if (pc == NULL)
        return WH_OK;
    return wh_tmpl_set_const_field(set, &data_type, "ProxyConfig", wh_tmpl_host(&pc_type.t, pc), err);
}

/* ---- for the functions ---- */

/* The JSON behind an ObjectMeta / Container / ... value, or NULL. */
const json_t *wh_inject_host_json(const wh_tmpl_value *v, const char *go_type)
{
    if (v->kind != WH_TMPL_HOST || v->type == NULL || v->type->field != struct_field)
        return NULL;
    if (go_type != NULL && strcmp(v->type->name, go_type) != 0)
        return NULL;
    return v->u.host;
}

/* 1 if v is the *ProxyConfig host value. */
int wh_inject_is_proxy_config(const wh_tmpl_value *v)
{
    return v->kind == WH_TMPL_HOST && v->type == &pc_type.t;
}
