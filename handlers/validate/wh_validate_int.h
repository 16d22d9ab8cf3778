/*
 * wh_validate_int.h - what the validator's files share: the problem
 * collector (errors and warnings, joined the way istiod joins them), JSON
 * accessors over a decoded spec, the proto schema used for the typed decode,
 * the shared building blocks (hosts, labels, ports, durations, exportTo, ...)
 * and one validator per kind.  Not installed; only handlers/validate and its
 * tests include it.
 */
#ifndef WH_VALIDATE_INT_H
#define WH_VALIDATE_INT_H

#include <jansson.h>
#include <stdint.h>

#include "wh_buf.h"
#include "wh_result.h"

/* ------------------------------------------------------------------ problems */

typedef struct wh_vstrs {
    char **v;
    size_t n, cap;
} wh_vstrs;

/* One validation run.  Errors and warnings accumulate (istiod reports every
 * problem, not only the first); any error means denial. */
typedef struct wh_vctx {
    const char *ns;            /* the object's namespace ("" when none) */
    const char *name;          /* metadata.name ("" when none) */
    const json_t *labels;      /* metadata.labels or NULL */
    const json_t *annotations; /* metadata.annotations or NULL */
    wh_vstrs errs;
    wh_vstrs warns;
    wh_vstrs arena;       /* scratch strings (quoted forms) freed with the context */
    int first_err_listed; /* the only error came from a helper that returns a 1-element multierror */
} wh_vctx;

void wh_vctx_init(wh_vctx *c, const char *ns, const char *name);
void wh_vctx_free(wh_vctx *c);

/* Record an error / a warning (printf-style). */
void wh_verr(wh_vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wh_vwarn(wh_vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record an error that istiod produces through a helper returning a multierror
 * (labels), which prints as "1 error occurred:" when it is alone. */
void wh_verr_listed(wh_vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Warnings recorded after `mark` are dropped (istiod keeps only the errors of
 * nested subset / port-level traffic policies). */
static inline size_t wh_vwarn_mark(const wh_vctx *c)
{
    return c->warns.n;
}
void wh_vwarn_drop(wh_vctx *c, size_t mark);
/* The same for errors (a Go validator that replaces its error list instead of appending). */
void wh_verr_drop(wh_vctx *c, size_t mark);
static inline size_t wh_verr_mark(const wh_vctx *c)
{
    return c->errs.n;
}

/* A string set (keys borrowed; each optionally carrying a size_t value), so duplicate checks stay linear
 * on hostile input. */
typedef struct wh_vset {
    const char **keys;
    size_t *vals;
    size_t cap, n;
} wh_vset;
void wh_vset_init(wh_vset *s, size_t expected);
/* Insert key (with val); returns 1 and fills *old (when not NULL) if the key was present (its value is then
 * replaced), 0 when inserted. */
int wh_vset_put(wh_vset *s, const char *key, size_t val, size_t *old);
int wh_vset_has(const wh_vset *s, const char *key);
void wh_vset_free(wh_vset *s);
/* Hand a malloc'd string to the context (freed with it); returns it. */
const char *wh_vown(wh_vctx *c, char *owned);
/* printf into a string owned by the context (for composite set keys). */
const char *wh_vfmt(wh_vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Go's %q of s (strconv.Quote), valid until wh_vctx_free; wh_vquote appends it to a buffer. */
const char *wh_vq(wh_vctx *c, const char *s);
void wh_vquote(wh_buf *out, const char *s);
/* The joined error text: the error alone, or "N errors occurred:\n\t* a\n\t* b\n\n". */
void wh_vctx_error_text(const wh_vctx *c, wh_buf *out);

/* ------------------------------------------------------------------ JSON access (decoded spec) */

/* Decoded specs hold canonical JSON names, enum names as strings, integers as
 * JSON integers and no nulls; empty lists/maps are dropped. */
const json_t *wh_vget(const json_t *o, const char *key); /* any value or NULL */
const char *wh_vstr(const json_t *o, const char *key);   /* "" when absent */
const json_t *wh_vobj(const json_t *o, const char *key); /* object or NULL */
const json_t *wh_varr(const json_t *o, const char *key); /* non-empty array or NULL */
size_t wh_vlen(const json_t *o, const char *key);        /* array / object size, 0 when absent */
long long wh_vint(const json_t *o, const char *key);     /* 0 when absent */
double wh_vnum(const json_t *o, const char *key);        /* 0 when absent; NaN, ±Inf as jsonpb reads them */
int wh_vbool(const json_t *o, const char *key);          /* 0 when absent */
/* Enum value name ("" for the zero value / absent); unknown numbers come back as "". */
const char *wh_venum(const json_t *o, const char *key, const char *zero_name);

/* ------------------------------------------------------------------ schema (typed decode of spec) */

typedef enum wh_vtype {
    WH_VT_STR = 1,
    WH_VT_BOOL,
    WH_VT_I32,
    WH_VT_U32,
    WH_VT_I64,
    WH_VT_U64,
    WH_VT_DBL,
    WH_VT_BYTES,
    WH_VT_ENUM,
    WH_VT_DUR, /* google.protobuf.Duration: a Go duration string such as "1.5s" or "1m" */
    WH_VT_MSG,
    WH_VT_STRUCT,  /* a message whose fields are not listed: any object */
    WH_VT_VALUE,   /* google.protobuf.Value / JSON: anything */
    WH_VT_ANYLIST, /* a list of such messages (proto kinds) or of anything (Kubernetes kinds): any array */
    WH_VT_PBSTRUCT /* google.protobuf.Struct: any object, refused as jsonpb refuses a Struct */
} wh_vtype;

enum { WH_VC_ONE = 0, WH_VC_LIST, WH_VC_MAP, WH_VC_UMAP /* map<uint32, ...> */ };

typedef struct wh_venum_desc {
    const char *name;          /* the proto full name (istio.networking.v1alpha3.ClientTLSSettings.TLSmode) */
    const char *const *values; /* values[i] is the name of number i */
    int n;
} wh_venum_desc;

typedef struct wh_vmsg wh_vmsg;

typedef struct wh_vfield {
    const char *json; /* lowerCamelCase JSON name */
    unsigned char type;
    unsigned char card;
    unsigned char oneof; /* 0 = none; fields with the same number belong to one oneof */
    const void *ref;     /* wh_vmsg for WH_VT_MSG, wh_venum_desc for WH_VT_ENUM */
    const char *proto;   /* proto field name when it is not the snake_case of json */
} wh_vfield;

struct wh_vmsg {
    const char *name;
    const wh_vfield *fields;
    size_t nfields;
    int k8s; /* Kubernetes Go types (encoding/json): no proto names, no quoted numbers */
};

/* Decode `in` (borrowed) as message `m` into a canonical copy (*out, new
 * reference).  Unknown fields are ignored (istiod retries with
 * AllowUnknownFields); type errors fail with a message in err. */
wh_code wh_vdecode(const wh_vmsg *m, const json_t *in, json_t **out, wh_err *err);

/* istio.mesh.v1alpha1.MeshNetworks (schema.c). */
extern const wh_vmsg *const wh_vschema_mesh_networks;

/* Parse a Go duration string ("1h2m3.5s", "100ms", "0") into nanoseconds: 0, or -1 with, when err is not
 * NULL, time.ParseDuration's error text appended to it ("time: unknown unit \"x\" in duration \"1x\""). */
int wh_vparse_duration(const char *s, int64_t *ns, wh_buf *err);

/* What encoding/json.Unmarshal(text, new(T)) says of `len` bytes of `text` for a Go number type T
 * ("int32", "int64", "uint32", "uint64", "float64"), as jsonpb hands it the inside of a quoted number
 * (gojson.c): 0 with the value in *out (a new JSON number; JSON null gives 0), or -1 with Go's error
 * text appended to err (a syntax error of Go's scanner, "json: cannot unmarshal ..."). */
int wh_vgo_unmarshal_number(const char *text, size_t len, const char *go_type, json_t **out, wh_buf *err);
/* encoding/json's checkValid: 0 when `text` is one JSON value, else -1 with Go's syntax error in err. */
int wh_vgo_json_check(const char *text, size_t len, wh_buf *err);

/* ------------------------------------------------------------------ building blocks */

/* Go's net/netip (netip.c).  ParseAddr: 4 or 6 (the family) when s is an address, else 0 with Go's
 * error text appended to err (when not NULL); *zoned (when not NULL) = 1 for an IPv6 zone.  ParsePrefix: 1
 * when s is a prefix, else 0 with Go's "netip.ParsePrefix(...): ..." text appended to err. */
int wh_vnetip_addr(const char *s, int *zoned, wh_buf *err);
int wh_vnetip_prefix(const char *s, wh_buf *err);
/* Go's x509.ParseCertificate of n DER bytes (x509.c): NULL when Go parses them, else its error text (owned
 * by the context). */
const char *wh_vx509_problem(wh_vctx *c, const unsigned char *der, size_t n);

int wh_vis_dns1123_label(const char *s);
int wh_vis_wildcard_label(const char *s, size_t n);
int wh_vis_ip(const char *s);
int wh_vis_ipv4(const char *s);
/* Each check returns 1 when valid, 0 after recording nothing; the *_msg
 * variants hand back istiod's error text (malloc'd) instead of recording it. */
char *wh_vmsg_wildcard_domain(wh_vctx *c, const char *host);
char *wh_vmsg_fqdn(wh_vctx *c, const char *host);
char *wh_vmsg_partial_wildcard(wh_vctx *c, const char *host);
char *wh_vmsg_ip_subnet(wh_vctx *c, const char *s);
char *wh_vmsg_unix_address(wh_vctx *c, const char *path);
void wh_vadd_err(wh_vctx *c, char *owned_msg);  /* NULL is a no-op */
void wh_vadd_warn(wh_vctx *c, char *owned_msg); /* NULL is a no-op */

void wh_vcheck_port(wh_vctx *c, long long port);
void wh_vcheck_port_name(wh_vctx *c, const char *name);
void wh_vcheck_protocol(wh_vctx *c, const char *proto);
void wh_vcheck_duration(wh_vctx *c, const json_t *dur); /* string value; NULL = unset */
void wh_vcheck_percent(wh_vctx *c, long long v);
void wh_vcheck_labels(wh_vctx *c, const json_t *labels); /* map of strings; NULL ok */
void wh_vcheck_ip(wh_vctx *c, const char *s);
void wh_vcheck_export_to(wh_vctx *c, const json_t *export_to, int is_service_entry, int dr_with_selector);
/* workloadSelector{matchLabels|labels}: errors recorded; returns 1 when the selector is present without labels. */
int wh_vcheck_selector(wh_vctx *c, const json_t *selector, const char *labels_key);
/* A networking workloadSelector{labels} as istiod checks it before the rest of
 * the spec: 0 when it has errors (istiod returns them alone), else 1, with
 * "<what>: workload selector specified without labels, ..." warned when it
 * selects everything. */
int wh_vcheck_workload_selector(wh_vctx *c, const json_t *selector, const char *what);
/* The policy kinds' selector (named selector_key) / targetRef / targetRefs block: at most one of them,
 * the selector's rules, each target reference's kind and name. */
void wh_vcheck_policy_target(wh_vctx *c, const json_t *spec, const char *selector_key);
void wh_vcheck_destination(wh_vctx *c, const json_t *dest);
void wh_vcheck_subset_name(wh_vctx *c, const char *name);
void wh_vcheck_traffic_policy(wh_vctx *c, const json_t *policy);
void wh_vcheck_connection_pool(wh_vctx *c, const json_t *pool);
void wh_vcheck_server_tls(wh_vctx *c, const json_t *tls);
void wh_vcheck_regex(wh_vctx *c, const char *re, const char *where);
void wh_vcheck_cel(wh_vctx *c, const char *expr); /* cel-go's Parse of an access-log filter */
/* "namespace/dnsName" hosts of Gateway servers (gateway=1) and Sidecar egress listeners. */
void wh_vcheck_ns_host(wh_vctx *c, const char *h, int gateway);

/* Protocol predicates (case-insensitive names as istio's protocol.Parse). */
enum {
    WH_PROTO_UNSUPPORTED = 0,
    WH_PROTO_TCP,
    WH_PROTO_UDP,
    WH_PROTO_GRPC,
    WH_PROTO_GRPC_WEB,
    WH_PROTO_HTTP,
    WH_PROTO_HTTP_PROXY,
    WH_PROTO_HTTP2,
    WH_PROTO_HTTPS,
    WH_PROTO_TLS,
    WH_PROTO_MONGO,
    WH_PROTO_REDIS,
    WH_PROTO_MYSQL
};
int wh_vproto_parse(const char *s);
int wh_vproto_is_http(int p);
int wh_vproto_is_tls(int p);
int wh_vproto_is_tcp(int p);

/* Go's host.Name.Matches / SubsetOf. */
int wh_vhost_matches(const char *a, const char *b);
int wh_vhost_subset_of(const char *a, const char *b);

/* ------------------------------------------------------------------ kinds */

typedef void (*wh_vkind_fn)(wh_vctx *c, const json_t *spec);

typedef struct wh_vkind {
    const char *group;
    const char *kind;
    const char *resource; /* plural */
    const wh_vmsg *schema;
    wh_vkind_fn validate; /* NULL: metadata checks only */
    int alpha;            /* an alpha Gateway API kind: known only with settings.alpha_gateway_api */
} wh_vkind;

/* The kind `kind` of `group`; an alpha Gateway API kind only when `alpha` is set. */
const wh_vkind *wh_vkind_find(const char *group, const char *kind, int alpha);
/* By API group and plural resource name (request.resource.resource). */
const wh_vkind *wh_vkind_find_resource(const char *group, const char *resource);

void wh_validate_destination_rule(wh_vctx *c, const json_t *spec);
void wh_validate_virtual_service(wh_vctx *c, const json_t *spec);
void wh_validate_service_entry(wh_vctx *c, const json_t *spec);
void wh_validate_gateway(wh_vctx *c, const json_t *spec);
void wh_validate_sidecar(wh_vctx *c, const json_t *spec);
void wh_validate_workload_entry(wh_vctx *c, const json_t *spec);
void wh_validate_workload_group(wh_vctx *c, const json_t *spec);
void wh_validate_envoy_filter(wh_vctx *c, const json_t *spec);
void wh_validate_proxy_config(wh_vctx *c, const json_t *spec);
void wh_validate_authorization_policy(wh_vctx *c, const json_t *spec);
void wh_validate_peer_authentication(wh_vctx *c, const json_t *spec);
void wh_validate_request_authentication(wh_vctx *c, const json_t *spec);
void wh_validate_telemetry(wh_vctx *c, const json_t *spec);
void wh_validate_wasm_plugin(wh_vctx *c, const json_t *spec);
void wh_validate_traffic_extension(wh_vctx *c, const json_t *spec);

/* Shared with the ServiceEntry / WorkloadEntry validators. */
/* port_names: the ServiceEntry's port names (nports of them), or NULL outside a ServiceEntry. */
void wh_vcheck_workload_entry(wh_vctx *c, const json_t *we, const wh_vset *port_names, size_t nports, int allow_fqdn);

#endif
