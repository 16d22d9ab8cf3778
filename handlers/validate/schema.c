/*
 * schema.c - the shapes of the Istio (and Gateway API) specs, as far as the
 * typed decode needs them: field names, scalar types, enums (names in number
 * order), nested messages, lists, maps and oneofs.  Fields not listed here are
 * unknown and ignored, exactly as istiod ignores unknown spec fields; listing
 * a field makes its type errors fail the decode.  Declared bottom-up, so every
 * message is defined before its users.
 */
#include "wh_validate_int.h"

#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define ENUM(var, name, ...)                                                                                           \
    static const char *const var##_v[] = {__VA_ARGS__};                                                                \
    static const wh_venum_desc var = {name, var##_v, (int)N(var##_v)}
#define MSGX(var, name, k8s, ...)                                                                                      \
    static const wh_vfield var##_f[] = {__VA_ARGS__};                                                                  \
    static const wh_vmsg var = {name, var##_f, N(var##_f), k8s}
#define MSG(var, name, ...) MSGX(var, name, 0, __VA_ARGS__)
#define KMSG(var, name, ...) MSGX(var, name, 1, __VA_ARGS__)

/* One field row (wh_vfield): JSON name, type, cardinality, oneof group,
 * message or enum, proto name; the short forms below fill in the rest. */
#define F(j, t, card, g, ref, proto)                                                                                   \
    {                                                                                                                  \
        j, t, card, g, ref, proto                                                                                      \
    }
#define T(j, t) F(j, t, WH_VC_ONE, 0, NULL, NULL)
#define S(j) T(j, WH_VT_STR)
#define L(j, t) F(j, t, WH_VC_LIST, 0, NULL, NULL)
#define LS(j) L(j, WH_VT_STR)
#define MP(j, t) F(j, t, WH_VC_MAP, 0, NULL, NULL)
#define MPS(j) MP(j, WH_VT_STR)
#define M(j, m) F(j, WH_VT_MSG, WH_VC_ONE, 0, &m, NULL)
#define LM(j, m) F(j, WH_VT_MSG, WH_VC_LIST, 0, &m, NULL)
#define MPM(j, m) F(j, WH_VT_MSG, WH_VC_MAP, 0, &m, NULL)
#define E(j, e) F(j, WH_VT_ENUM, WH_VC_ONE, 0, &e, NULL)
#define O(j, t, g) F(j, t, WH_VC_ONE, g, NULL, NULL)
#define OM(j, m, g) F(j, WH_VT_MSG, WH_VC_ONE, g, &m, NULL)
#define OE(j, e, g) F(j, WH_VT_ENUM, WH_VC_ONE, g, &e, NULL)
#define P(j, t, proto) F(j, t, WH_VC_ONE, 0, NULL, proto)

/* ------------------------------------------------------------------ shared types */

MSG(m_type_selector, "istio.type.v1beta1.WorkloadSelector", MPS("matchLabels"));
MSG(m_target_ref, "istio.type.v1beta1.PolicyTargetReference", S("group"), S("kind"), S("name"), S("namespace"));
MSG(m_net_selector, "istio.networking.v1.WorkloadSelector", MPS("labels"));
MSG(m_port_selector, "istio.networking.v1.PortSelector", T("number", WH_VT_U32));
MSG(m_destination, "istio.networking.v1.Destination", S("host"), S("subset"), M("port", m_port_selector));
MSG(m_percent, "istio.networking.v1.Percent", T("value", WH_VT_DBL));
MSG(m_string_match, "istio.networking.v1.StringMatch", O("exact", WH_VT_STR, 1), O("prefix", WH_VT_STR, 1),
    O("regex", WH_VT_STR, 1));

/* ------------------------------------------------------------------ traffic policy */

ENUM(e_simple_lb, "istio.networking.v1alpha3.LoadBalancerSettings.SimpleLB", "UNSPECIFIED", "LEAST_CONN", "RANDOM",
     "PASSTHROUGH", "ROUND_ROBIN", "LEAST_REQUEST");
MSG(m_cookie_attr, "HTTPCookie.Attribute", S("name"), S("value"));
MSG(m_http_cookie, "ConsistentHashLB.HTTPCookie", S("name"), S("path"), T("ttl", WH_VT_DUR),
    LM("attributes", m_cookie_attr));
MSG(m_ring_hash, "ConsistentHashLB.RingHash", T("minimumRingSize", WH_VT_U64));
MSG(m_maglev, "ConsistentHashLB.MagLev", T("tableSize", WH_VT_U64));
MSG(m_consistent_hash, "LoadBalancerSettings.ConsistentHashLB", O("httpHeaderName", WH_VT_STR, 1),
    OM("httpCookie", m_http_cookie, 1), O("useSourceIp", WH_VT_BOOL, 1), O("httpQueryParameterName", WH_VT_STR, 1),
    OM("ringHash", m_ring_hash, 2), OM("maglev", m_maglev, 2), T("minimumRingSize", WH_VT_U64));
MSG(m_loc_distribute, "LocalityLoadBalancerSetting.Distribute", S("from"), MP("to", WH_VT_U32));
MSG(m_loc_failover, "LocalityLoadBalancerSetting.Failover", S("from"), S("to"));
MSG(m_locality_lb, "LocalityLoadBalancerSetting", LM("distribute", m_loc_distribute), LM("failover", m_loc_failover),
    LS("failoverPriority"), T("enabled", WH_VT_BOOL));
MSG(m_za_failover, "ZoneAwareLoadBalancerSetting.Failover", S("from"), S("to"));
MSG(m_zone_aware_lb, "ZoneAwareLoadBalancerSetting", T("enabled", WH_VT_BOOL), LM("failover", m_za_failover),
    LS("failoverPriority"), T("minClusterSize", WH_VT_U32));
MSG(m_warmup, "WarmupConfiguration", T("duration", WH_VT_DUR), T("minimumPercent", WH_VT_DBL),
    T("aggression", WH_VT_DBL));
/* The third member of the lb_policy oneof at istio master (crd-all.gen.yaml): ORCA utilization weights.  istiod
 * only decodes it (no Go check reads it), so its type errors are all there is to match. */
MSG(m_backend_util, "LoadBalancerSettings.BackendUtilizationLB", T("weightUpdatePeriod", WH_VT_DUR),
    T("weightExpirationPeriod", WH_VT_DUR), T("weightStabilizationPeriod", WH_VT_DUR),
    T("errorUtilizationPenaltyPercent", WH_VT_U32), LS("metricNamesForComputingUtilization"));
MSG(m_load_balancer, "LoadBalancerSettings", OE("simple", e_simple_lb, 1), OM("consistentHash", m_consistent_hash, 1),
    OM("backendUtilization", m_backend_util, 1), M("localityLbSetting", m_locality_lb),
    M("zoneAwareLbSetting", m_zone_aware_lb), T("warmupDurationSecs", WH_VT_DUR), M("warmup", m_warmup));

MSG(m_tcp_keepalive, "ConnectionPoolSettings.TCPSettings.TcpKeepalive", T("probes", WH_VT_U32), T("time", WH_VT_DUR),
    T("interval", WH_VT_DUR));
MSG(m_tcp_settings, "ConnectionPoolSettings.TCPSettings", T("maxConnections", WH_VT_I32),
    T("connectTimeout", WH_VT_DUR), M("tcpKeepalive", m_tcp_keepalive), T("maxConnectionDuration", WH_VT_DUR),
    T("idleTimeout", WH_VT_DUR));
ENUM(e_h2_upgrade, "istio.networking.v1alpha3.ConnectionPoolSettings.HTTPSettings.H2UpgradePolicy", "DEFAULT",
     "DO_NOT_UPGRADE", "UPGRADE");
MSG(m_http2_keepalive, "ConnectionPoolSettings.HTTPSettings.Http2KeepAlive", T("interval", WH_VT_DUR),
    T("timeout", WH_VT_DUR));
MSG(m_http_settings, "ConnectionPoolSettings.HTTPSettings", T("http1MaxPendingRequests", WH_VT_I32),
    T("http2MaxRequests", WH_VT_I32), T("maxRequestsPerConnection", WH_VT_I32), T("maxRetries", WH_VT_I32),
    T("idleTimeout", WH_VT_DUR), E("h2UpgradePolicy", e_h2_upgrade), T("useClientProtocol", WH_VT_BOOL),
    T("maxConcurrentStreams", WH_VT_I32), M("http2KeepAlive", m_http2_keepalive));
MSG(m_conn_pool, "ConnectionPoolSettings", M("tcp", m_tcp_settings), M("http", m_http_settings));

MSG(m_outlier, "OutlierDetection", T("consecutiveErrors", WH_VT_I32), T("splitExternalLocalOriginErrors", WH_VT_BOOL),
    T("consecutiveLocalOriginFailures", WH_VT_U32), T("consecutiveGatewayErrors", WH_VT_U32),
    P("consecutive5xxErrors", WH_VT_U32, "consecutive_5xx_errors"), T("interval", WH_VT_DUR),
    T("baseEjectionTime", WH_VT_DUR), T("maxEjectionPercent", WH_VT_I32), T("minHealthPercent", WH_VT_I32),
    L("outlierDetectionHttpErrorCodes", WH_VT_U32));

ENUM(e_client_tls_mode, "istio.networking.v1alpha3.ClientTLSSettings.TLSmode", "DISABLE", "SIMPLE", "MUTUAL",
     "ISTIO_MUTUAL");
MSG(m_client_tls, "ClientTLSSettings", E("mode", e_client_tls_mode), S("clientCertificate"), S("privateKey"),
    S("caCertificates"), S("credentialName"), LS("subjectAltNames"), S("sni"), T("insecureSkipVerify", WH_VT_BOOL),
    S("caCrl"));

MSG(m_port_policy, "TrafficPolicy.PortTrafficPolicy", M("port", m_port_selector), M("loadBalancer", m_load_balancer),
    M("connectionPool", m_conn_pool), M("outlierDetection", m_outlier), M("tls", m_client_tls));
MSG(m_tunnel, "TrafficPolicy.TunnelSettings", S("protocol"), S("targetHost"), T("targetPort", WH_VT_U32));
ENUM(e_proxy_protocol_version, "istio.networking.v1alpha3.TrafficPolicy.ProxyProtocol.VERSION", "V1", "V2");
MSG(m_proxy_protocol, "TrafficPolicy.ProxyProtocol", E("version", e_proxy_protocol_version));
MSG(m_retry_budget, "TrafficPolicy.RetryBudget", T("percent", WH_VT_DBL), T("minRetryConcurrency", WH_VT_U32),
    T("budgetInterval", WH_VT_DUR));
MSG(m_traffic_policy, "TrafficPolicy", M("loadBalancer", m_load_balancer), M("connectionPool", m_conn_pool),
    M("outlierDetection", m_outlier), M("tls", m_client_tls), LM("portLevelSettings", m_port_policy),
    M("tunnel", m_tunnel), M("proxyProtocol", m_proxy_protocol), M("retryBudget", m_retry_budget));

/* ------------------------------------------------------------------ DestinationRule */

MSG(m_subset, "Subset", S("name"), MPS("labels"), M("trafficPolicy", m_traffic_policy));
MSG(m_destination_rule, "DestinationRule", S("host"), M("trafficPolicy", m_traffic_policy), LM("subsets", m_subset),
    LS("exportTo"), M("workloadSelector", m_type_selector));

/* ------------------------------------------------------------------ VirtualService */

MSG(m_header_ops, "Headers.HeaderOperations", MPS("set"), MPS("add"), LS("remove"));
MSG(m_headers, "Headers", M("request", m_header_ops), M("response", m_header_ops));
MSG(m_http_match, "HTTPMatchRequest", S("name"), M("uri", m_string_match), M("scheme", m_string_match),
    M("method", m_string_match), M("authority", m_string_match), MPM("headers", m_string_match), T("port", WH_VT_U32),
    MPS("sourceLabels"), LS("gateways"), MPM("queryParams", m_string_match), T("ignoreUriCase", WH_VT_BOOL),
    MPM("withoutHeaders", m_string_match), S("sourceNamespace"), S("statPrefix"));
MSG(m_http_route_dest, "HTTPRouteDestination", M("destination", m_destination), T("weight", WH_VT_I32),
    M("headers", m_headers));
MSG(m_route_dest, "RouteDestination", M("destination", m_destination), T("weight", WH_VT_I32));
ENUM(e_derive_port, "istio.networking.v1alpha3.HTTPRedirect.RedirectPortSelection", "FROM_PROTOCOL_DEFAULT",
     "FROM_REQUEST_PORT");
MSG(m_redirect, "HTTPRedirect", S("uri"), S("authority"), O("port", WH_VT_U32, 1), OE("derivePort", e_derive_port, 1),
    S("scheme"), T("redirectCode", WH_VT_U32), S("prefixRewrite"));
MSG(m_http_body, "HTTPBody", O("string", WH_VT_STR, 1), O("bytes", WH_VT_BYTES, 1));
MSG(m_direct_response, "HTTPDirectResponse", T("status", WH_VT_U32), M("body", m_http_body));
MSG(m_delegate, "Delegate", S("name"), S("namespace"));
MSG(m_regex_rewrite, "RegexRewrite", S("match"), S("rewrite"));
MSG(m_rewrite, "HTTPRewrite", S("uri"), S("authority"), M("uriRegexRewrite", m_regex_rewrite));
MSG(m_retry, "HTTPRetry", T("attempts", WH_VT_I32), T("perTryTimeout", WH_VT_DUR), S("retryOn"),
    T("retryRemoteLocalities", WH_VT_BOOL), T("retryIgnorePreviousHosts", WH_VT_BOOL), T("backoff", WH_VT_DUR));
MSG(m_fault_delay, "HTTPFaultInjection.Delay", T("percent", WH_VT_I32), O("fixedDelay", WH_VT_DUR, 1),
    O("exponentialDelay", WH_VT_DUR, 1), M("percentage", m_percent));
MSG(m_fault_abort, "HTTPFaultInjection.Abort", O("httpStatus", WH_VT_I32, 1), O("grpcStatus", WH_VT_STR, 1),
    O("http2Error", WH_VT_STR, 1), M("percentage", m_percent));
MSG(m_fault, "HTTPFaultInjection", M("delay", m_fault_delay), M("abort", m_fault_abort));
MSG(m_mirror_policy, "HTTPMirrorPolicy", M("destination", m_destination), M("percentage", m_percent));
ENUM(e_unmatched_preflights, "istio.networking.v1alpha3.CorsPolicy.UnmatchedPreflights", "UNSPECIFIED", "FORWARD",
     "IGNORE");
MSG(m_cors, "CorsPolicy", LS("allowOrigin"), LM("allowOrigins", m_string_match), LS("allowMethods"), LS("allowHeaders"),
    LS("exposeHeaders"), T("maxAge", WH_VT_DUR), T("allowCredentials", WH_VT_BOOL),
    E("unmatchedPreflights", e_unmatched_preflights));
MSG(m_http_route, "HTTPRoute", S("name"), LM("match", m_http_match), LM("route", m_http_route_dest),
    M("redirect", m_redirect), M("directResponse", m_direct_response), M("delegate", m_delegate),
    M("rewrite", m_rewrite), T("timeout", WH_VT_DUR), M("retries", m_retry), M("fault", m_fault),
    M("mirror", m_destination), LM("mirrors", m_mirror_policy), T("mirrorPercent", WH_VT_U32),
    M("mirrorPercentage", m_percent), M("corsPolicy", m_cors), M("headers", m_headers));
MSG(m_tls_match, "TLSMatchAttributes", LS("sniHosts"), LS("destinationSubnets"), T("port", WH_VT_U32),
    MPS("sourceLabels"), LS("gateways"), S("sourceNamespace"));
MSG(m_tls_route, "TLSRoute", LM("match", m_tls_match), LM("route", m_route_dest));
MSG(m_l4_match, "L4MatchAttributes", LS("destinationSubnets"), T("port", WH_VT_U32), S("sourceSubnet"),
    MPS("sourceLabels"), LS("gateways"), S("sourceNamespace"));
MSG(m_tcp_route, "TCPRoute", LM("match", m_l4_match), LM("route", m_route_dest));
MSG(m_virtual_service, "VirtualService", LS("hosts"), LS("gateways"), LM("http", m_http_route), LM("tls", m_tls_route),
    LM("tcp", m_tcp_route), LS("exportTo"));

/* ------------------------------------------------------------------ ServiceEntry, WorkloadEntry, WorkloadGroup */

MSG(m_workload_entry, "WorkloadEntry", S("address"), MP("ports", WH_VT_U32), MPS("labels"), S("network"), S("locality"),
    T("weight", WH_VT_U32), S("serviceAccount"));
MSG(m_service_port, "ServicePort", T("number", WH_VT_U32), S("protocol"), S("name"), T("targetPort", WH_VT_U32));
ENUM(e_se_location, "istio.networking.v1alpha3.ServiceEntry.Location", "MESH_EXTERNAL", "MESH_INTERNAL");
ENUM(e_se_resolution, "istio.networking.v1alpha3.ServiceEntry.Resolution", "NONE", "STATIC", "DNS", "DNS_ROUND_ROBIN",
     "DYNAMIC_DNS");
MSG(m_service_entry, "ServiceEntry", LS("hosts"), LS("addresses"), LM("ports", m_service_port),
    E("location", e_se_location), E("resolution", e_se_resolution), LM("endpoints", m_workload_entry),
    M("workloadSelector", m_net_selector), LS("exportTo"), LS("subjectAltNames"));

MSG(m_wg_meta, "WorkloadGroup.ObjectMeta", MPS("labels"), MPS("annotations"));
MSG(m_http_header, "HTTPHeader", S("name"), S("value"));
MSG(m_http_health, "HTTPHealthCheckConfig", S("path"), T("port", WH_VT_U32), S("host"), S("scheme"),
    LM("httpHeaders", m_http_header));
MSG(m_tcp_health, "TCPHealthCheckConfig", S("host"), T("port", WH_VT_U32));
MSG(m_exec_health, "ExecHealthCheckConfig", LS("command"));
MSG(m_grpc_health, "GrpcHealthCheckConfig", T("port", WH_VT_U32), S("service"));
MSG(m_probe, "ReadinessProbe", T("initialDelaySeconds", WH_VT_I32), T("timeoutSeconds", WH_VT_I32),
    T("periodSeconds", WH_VT_I32), T("successThreshold", WH_VT_I32), T("failureThreshold", WH_VT_I32),
    OM("httpGet", m_http_health, 1), OM("tcpSocket", m_tcp_health, 1), OM("exec", m_exec_health, 1),
    OM("grpc", m_grpc_health, 1));
MSG(m_workload_group, "WorkloadGroup", M("metadata", m_wg_meta), M("template", m_workload_entry), M("probe", m_probe));

/* ------------------------------------------------------------------ Gateway, Sidecar */

MSG(m_port, "Port", T("number", WH_VT_U32), S("protocol"), S("name"), T("targetPort", WH_VT_U32));
ENUM(e_server_tls_mode, "istio.networking.v1alpha3.ServerTLSSettings.TLSmode", "PASSTHROUGH", "SIMPLE", "MUTUAL",
     "AUTO_PASSTHROUGH", "ISTIO_MUTUAL", "OPTIONAL_MUTUAL");
ENUM(e_tls_protocol, "istio.networking.v1alpha3.ServerTLSSettings.TLSProtocol", "TLS_AUTO", "TLSV1_0", "TLSV1_1",
     "TLSV1_2", "TLSV1_3");
MSG(m_tls_certificate, "ServerTLSSettings.TLSCertificate", S("serverCertificate"), S("privateKey"),
    S("caCertificates"));
MSG(m_server_tls, "ServerTLSSettings", T("httpsRedirect", WH_VT_BOOL), E("mode", e_server_tls_mode),
    S("serverCertificate"), S("privateKey"), S("caCertificates"), S("caCrl"), S("credentialName"),
    LS("credentialNames"), S("caCertCredentialName"), LM("tlsCertificates", m_tls_certificate), LS("subjectAltNames"),
    LS("verifyCertificateSpki"), LS("verifyCertificateHash"), E("minProtocolVersion", e_tls_protocol),
    E("maxProtocolVersion", e_tls_protocol), LS("cipherSuites"), T("insecureSkipVerify", WH_VT_BOOL), LS("ecdhCurves"));
MSG(m_server, "Server", M("port", m_port), S("bind"), LS("hosts"), M("tls", m_server_tls), S("defaultEndpoint"),
    S("name"));
MSG(m_gateway, "Gateway", LM("servers", m_server), MPS("selector"));

ENUM(e_capture_mode, "istio.networking.v1alpha3.CaptureMode", "DEFAULT", "IPTABLES", "NONE");
MSG(m_sidecar_port, "SidecarPort", T("number", WH_VT_U32), S("protocol"), S("name"), T("targetPort", WH_VT_U32));
MSG(m_ingress_listener, "IstioIngressListener", M("port", m_sidecar_port), S("bind"), E("captureMode", e_capture_mode),
    S("defaultEndpoint"), M("tls", m_server_tls), M("connectionPool", m_conn_pool));
MSG(m_egress_listener, "IstioEgressListener", M("port", m_sidecar_port), S("bind"), E("captureMode", e_capture_mode),
    LS("hosts"));
ENUM(e_outbound_mode, "istio.networking.v1alpha3.OutboundTrafficPolicy.Mode", "REGISTRY_ONLY", "ALLOW_ANY");
MSG(m_outbound_policy, "OutboundTrafficPolicy", E("mode", e_outbound_mode), M("egressProxy", m_destination));
MSG(m_sidecar, "Sidecar", M("workloadSelector", m_net_selector), LM("ingress", m_ingress_listener),
    LM("egress", m_egress_listener), M("inboundConnectionPool", m_conn_pool),
    M("outboundTrafficPolicy", m_outbound_policy));

/* ------------------------------------------------------------------ EnvoyFilter, ProxyConfig */

ENUM(e_apply_to, "istio.networking.v1alpha3.EnvoyFilter.ApplyTo", "INVALID", "LISTENER", "FILTER_CHAIN",
     "NETWORK_FILTER", "HTTP_FILTER", "ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE", "CLUSTER",
     "EXTENSION_CONFIG", "BOOTSTRAP", "LISTENER_FILTER");
ENUM(e_patch_context, "istio.networking.v1alpha3.EnvoyFilter.PatchContext", "ANY", "SIDECAR_INBOUND",
     "SIDECAR_OUTBOUND", "GATEWAY", "WAYPOINT");
ENUM(e_patch_op, "istio.networking.v1alpha3.EnvoyFilter.Patch.Operation", "INVALID", "MERGE", "ADD", "REMOVE",
     "INSERT_BEFORE", "INSERT_AFTER", "INSERT_FIRST", "REPLACE", "MERGE_AND_REPLACE_LIST");
ENUM(e_filter_class, "istio.networking.v1alpha3.EnvoyFilter.Patch.FilterClass", "UNSPECIFIED", "AUTHN", "AUTHZ",
     "STATS");
MSG(m_proxy_match, "EnvoyFilter.ProxyMatch", S("proxyVersion"), MPS("metadata"));
MSG(m_ef_sub_filter, "EnvoyFilter.ListenerMatch.SubFilterMatch", S("name"));
MSG(m_ef_filter, "EnvoyFilter.ListenerMatch.FilterMatch", S("name"), M("subFilter", m_ef_sub_filter));
MSG(m_ef_filter_chain, "EnvoyFilter.ListenerMatch.FilterChainMatch", S("name"), S("sni"), S("transportProtocol"),
    S("applicationProtocols"), M("filter", m_ef_filter), T("destinationPort", WH_VT_U32), S("transportSocket"));
MSG(m_ef_listener, "EnvoyFilter.ListenerMatch", T("portNumber", WH_VT_U32), S("portName"),
    M("filterChain", m_ef_filter_chain), S("listenerFilter"), S("name"));
ENUM(e_ef_route_action, "istio.networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch.RouteMatch.Action", "ANY",
     "ROUTE", "REDIRECT", "DIRECT_RESPONSE");
MSG(m_ef_route, "EnvoyFilter.RouteConfigurationMatch.RouteMatch", S("name"), E("action", e_ef_route_action));
MSG(m_ef_vhost, "EnvoyFilter.RouteConfigurationMatch.VirtualHostMatch", S("name"), S("domainName"),
    M("route", m_ef_route));
MSG(m_ef_route_config, "EnvoyFilter.RouteConfigurationMatch", T("portNumber", WH_VT_U32), S("portName"), S("gateway"),
    M("vhost", m_ef_vhost), S("name"));
MSG(m_ef_cluster, "EnvoyFilter.ClusterMatch", T("portNumber", WH_VT_U32), S("service"), S("subset"), S("name"));
MSG(m_ef_wp_sub_filter, "EnvoyFilter.WaypointMatch.SubFilterMatch", S("name"));
MSG(m_ef_wp_filter, "EnvoyFilter.WaypointMatch.FilterMatch", S("name"), M("subFilter", m_ef_wp_sub_filter));
MSG(m_ef_wp_route, "EnvoyFilter.WaypointMatch.RouteMatch", S("name"));
MSG(m_ef_waypoint, "EnvoyFilter.WaypointMatch", T("portNumber", WH_VT_U32), M("route", m_ef_wp_route),
    M("filter", m_ef_wp_filter));
MSG(m_ef_match, "EnvoyFilter.EnvoyConfigObjectMatch", E("context", e_patch_context), M("proxy", m_proxy_match),
    OM("listener", m_ef_listener, 1), OM("routeConfiguration", m_ef_route_config, 1), OM("cluster", m_ef_cluster, 1),
    OM("waypoint", m_ef_waypoint, 1));
MSG(m_ef_patch, "EnvoyFilter.Patch", E("operation", e_patch_op), T("value", WH_VT_PBSTRUCT),
    E("filterClass", e_filter_class));
MSG(m_ef_config_patch, "EnvoyFilter.EnvoyConfigObjectPatch", E("applyTo", e_apply_to), M("match", m_ef_match),
    M("patch", m_ef_patch));
MSG(m_envoy_filter, "EnvoyFilter", M("workloadSelector", m_net_selector), LM("targetRefs", m_target_ref),
    LM("configPatches", m_ef_config_patch), T("priority", WH_VT_I32));
MSG(m_proxy_image, "ProxyImage", S("imageType"));
MSG(m_proxy_config, "ProxyConfig", M("selector", m_type_selector), T("concurrency", WH_VT_I32),
    MPS("environmentVariables"), M("image", m_proxy_image));

/* ------------------------------------------------------------------ security.istio.io */

MSG(m_authz_source, "Source", LS("principals"), LS("notPrincipals"), LS("requestPrincipals"),
    LS("notRequestPrincipals"), LS("namespaces"), LS("notNamespaces"), LS("serviceAccounts"), LS("notServiceAccounts"),
    LS("ipBlocks"), LS("notIpBlocks"), LS("remoteIpBlocks"), LS("notRemoteIpBlocks"), LS("trustDomains"),
    LS("notTrustDomains"));
MSG(m_authz_operation, "Operation", LS("hosts"), LS("notHosts"), LS("ports"), LS("notPorts"), LS("methods"),
    LS("notMethods"), LS("paths"), LS("notPaths"));
MSG(m_authz_from, "Rule.From", M("source", m_authz_source));
MSG(m_authz_to, "Rule.To", M("operation", m_authz_operation));
MSG(m_authz_condition, "Condition", S("key"), LS("values"), LS("notValues"));
MSG(m_authz_rule, "Rule", LM("from", m_authz_from), LM("to", m_authz_to), LM("when", m_authz_condition));
ENUM(e_authz_action, "istio.security.v1beta1.AuthorizationPolicy.Action", "ALLOW", "DENY", "AUDIT", "CUSTOM");
MSG(m_authz_provider, "AuthorizationPolicy.ExtensionProvider", S("name"));
MSG(m_authorization_policy, "AuthorizationPolicy", M("selector", m_type_selector), M("targetRef", m_target_ref),
    LM("targetRefs", m_target_ref), LM("rules", m_authz_rule), E("action", e_authz_action),
    M("provider", m_authz_provider));

ENUM(e_mtls_mode, "istio.security.v1beta1.PeerAuthentication.MutualTLS.Mode", "UNSET", "DISABLE", "PERMISSIVE",
     "STRICT");
MSG(m_mtls, "PeerAuthentication.MutualTLS", E("mode", e_mtls_mode));
MSG(m_peer_authentication, "PeerAuthentication", M("selector", m_type_selector), M("mtls", m_mtls),
    {"portLevelMtls", WH_VT_MSG, WH_VC_UMAP, 0, &m_mtls, NULL});

MSG(m_jwt_header, "JWTHeader", S("name"), S("prefix"));
MSG(m_claim_to_header, "ClaimToHeader", S("header"), S("claim"));
/* presence (istio/api #3737, in master's CRD): an enum nested in JWTRule (istio's policy_applier reads
 * JWTRule_REQUIRED), OPTIONAL = 0; its type name is the one the API change gave it (JWTRequirement).  istiod's
 * validateJwtRule does not read it, so only its decode is checked. */
ENUM(e_jwt_presence, "istio.security.v1beta1.JWTRule.JWTRequirement", "OPTIONAL", "REQUIRED");
MSG(m_jwt_rule, "JWTRule", S("issuer"), LS("audiences"), S("jwksUri"), S("jwks"), LM("fromHeaders", m_jwt_header),
    LS("fromParams"), S("outputPayloadToHeader"), LS("fromCookies"), T("forwardOriginalToken", WH_VT_BOOL),
    LM("outputClaimToHeaders", m_claim_to_header), T("timeout", WH_VT_DUR), LS("spaceDelimitedClaims"),
    E("presence", e_jwt_presence));
MSG(m_request_authentication, "RequestAuthentication", M("selector", m_type_selector), M("targetRef", m_target_ref),
    LM("targetRefs", m_target_ref), LM("jwtRules", m_jwt_rule));

/* ------------------------------------------------------------------ telemetry.istio.io, extensions.istio.io */

MSG(m_provider_ref, "ProviderRef", S("name"));
ENUM(e_telemetry_mode, "istio.telemetry.v1alpha1.WorkloadMode", "CLIENT_AND_SERVER", "CLIENT", "SERVER");
ENUM(e_istio_metric, "istio.telemetry.v1alpha1.MetricSelector.IstioMetric", "ALL_METRICS", "REQUEST_COUNT",
     "REQUEST_DURATION", "REQUEST_SIZE", "RESPONSE_SIZE", "TCP_OPENED_CONNECTIONS", "TCP_CLOSED_CONNECTIONS",
     "TCP_SENT_BYTES", "TCP_RECEIVED_BYTES", "GRPC_REQUEST_MESSAGES", "GRPC_RESPONSE_MESSAGES");
ENUM(e_tag_operation, "istio.telemetry.v1alpha1.MetricsOverrides.TagOverride.Operation", "UPSERT", "REMOVE");
MSG(m_telemetry_selector, "istio.telemetry.v1alpha1.Selector", E("mode", e_telemetry_mode));
MSG(m_tag_literal, "Tracing.Literal", S("value"));
MSG(m_tag_environment, "Tracing.Environment", S("name"), S("defaultValue"));
MSG(m_tag_header, "Tracing.RequestHeader", S("name"), S("defaultValue"));
MSG(m_tag_formatter, "Tracing.Formatter", S("value"));
MSG(m_custom_tag, "Tracing.CustomTag", OM("literal", m_tag_literal, 1), OM("environment", m_tag_environment, 1),
    OM("header", m_tag_header, 1), OM("formatter", m_tag_formatter, 1));
MSG(m_tracing, "Tracing", M("match", m_telemetry_selector), LM("providers", m_provider_ref),
    T("randomSamplingPercentage", WH_VT_DBL), T("disableSpanReporting", WH_VT_BOOL), MPM("customTags", m_custom_tag),
    T("useRequestIdForTraceSampling", WH_VT_BOOL), T("enableIstioTags", WH_VT_BOOL),
    T("disableContextPropagation", WH_VT_BOOL));
MSG(m_metric_selector, "MetricSelector", OE("metric", e_istio_metric, 1), O("customMetric", WH_VT_STR, 1),
    E("mode", e_telemetry_mode));
MSG(m_tag_override, "MetricsOverrides.TagOverride", E("operation", e_tag_operation), S("value"));
MSG(m_metric_override, "MetricsOverrides", M("match", m_metric_selector), T("disabled", WH_VT_BOOL),
    MPM("tagOverrides", m_tag_override));
MSG(m_metrics, "Metrics", LM("providers", m_provider_ref), LM("overrides", m_metric_override),
    T("reportingInterval", WH_VT_DUR));
MSG(m_access_log_filter, "AccessLogging.Filter", S("expression"));
MSG(m_access_logging, "AccessLogging", M("match", m_telemetry_selector), LM("providers", m_provider_ref),
    T("disabled", WH_VT_BOOL), M("filter", m_access_log_filter));
MSG(m_telemetry, "Telemetry", M("selector", m_type_selector), M("targetRef", m_target_ref),
    LM("targetRefs", m_target_ref), LM("tracing", m_tracing), LM("metrics", m_metrics),
    LM("accessLogging", m_access_logging));

ENUM(e_pull_policy, "istio.extensions.v1alpha1.PullPolicy", "UNSPECIFIED_POLICY", "IfNotPresent", "Always");
ENUM(e_plugin_phase, "istio.extensions.v1alpha1.PluginPhase", "UNSPECIFIED_PHASE", "AUTHN", "AUTHZ", "STATS");
ENUM(e_fail_strategy, "istio.extensions.v1alpha1.FailStrategy", "FAIL_CLOSE", "FAIL_OPEN", "FAIL_RELOAD");
ENUM(e_plugin_type, "istio.extensions.v1alpha1.PluginType", "UNSPECIFIED_PLUGIN_TYPE", "HTTP", "NETWORK");
ENUM(e_execution_phase, "istio.extensions.v1alpha1.TrafficExtension.ExecutionPhase", "UNSPECIFIED", "AUTHN", "AUTHZ",
     "STATS");
ENUM(e_workload_mode, "istio.type.v1beta1.WorkloadMode", "UNDEFINED", "CLIENT", "SERVER", "CLIENT_AND_SERVER");
MSG(m_type_port_selector, "istio.type.v1beta1.PortSelector", T("number", WH_VT_U32));
MSG(m_traffic_selector, "istio.extensions.v1alpha1.TrafficSelector", E("mode", e_workload_mode),
    LM("ports", m_type_port_selector));
ENUM(e_env_value_source, "istio.extensions.v1alpha1.EnvValueSource", "INLINE", "HOST");
MSG(m_env_var, "EnvVar", S("name"), E("valueFrom", e_env_value_source), S("value"));
MSG(m_vm_config, "VmConfig", LM("env", m_env_var));
MSG(m_wasm_plugin, "WasmPlugin", M("selector", m_type_selector), M("targetRef", m_target_ref),
    LM("targetRefs", m_target_ref), S("url"), S("sha256"), E("imagePullPolicy", e_pull_policy), S("imagePullSecret"),
    S("verificationKey"), T("pluginConfig", WH_VT_PBSTRUCT), S("pluginName"), E("phase", e_plugin_phase),
    T("priority", WH_VT_I32), E("failStrategy", e_fail_strategy), M("vmConfig", m_vm_config),
    LM("match", m_traffic_selector), E("type", e_plugin_type));
MSG(m_wasm_config, "istio.extensions.v1alpha1.WasmConfig", S("url"), S("sha256"), E("imagePullPolicy", e_pull_policy),
    S("imagePullSecret"), S("verificationKey"), T("pluginConfig", WH_VT_PBSTRUCT), S("pluginName"),
    E("failStrategy", e_fail_strategy), M("vmConfig", m_vm_config), E("type", e_plugin_type));
MSG(m_lua_config, "istio.extensions.v1alpha1.LuaConfig", S("inlineCode"));
MSG(m_traffic_extension, "TrafficExtension", M("selector", m_type_selector), LM("targetRefs", m_target_ref),
    E("phase", e_execution_phase), T("priority", WH_VT_I32), LM("match", m_traffic_selector),
    OM("wasm", m_wasm_config, 1), OM("lua", m_lua_config, 1));

/* ------------------------------------------------------------------ Gateway API (Go structs, encoding/json) */

KMSG(k_parent_ref, "ParentReference", S("group"), S("kind"), S("namespace"), S("name"), S("sectionName"),
     T("port", WH_VT_I32));
KMSG(k_backend_ref, "BackendRef", S("group"), S("kind"), S("name"), S("namespace"), T("port", WH_VT_I32),
     T("weight", WH_VT_I32), T("filters", WH_VT_ANYLIST));
KMSG(k_route_rule, "RouteRule", S("name"), T("matches", WH_VT_ANYLIST), T("filters", WH_VT_ANYLIST),
     LM("backendRefs", k_backend_ref), T("timeouts", WH_VT_STRUCT));
KMSG(k_route, "RouteSpec", LM("parentRefs", k_parent_ref), LS("hostnames"), LM("rules", k_route_rule));
KMSG(k_listener, "Listener", S("name"), S("hostname"), T("port", WH_VT_I32), S("protocol"), T("tls", WH_VT_STRUCT),
     T("allowedRoutes", WH_VT_STRUCT));
KMSG(k_gw_address, "GatewayAddress", S("type"), S("value"));
KMSG(k_gateway, "GatewaySpec", S("gatewayClassName"), LM("listeners", k_listener), LM("addresses", k_gw_address),
     T("infrastructure", WH_VT_STRUCT));
KMSG(k_gateway_class, "GatewayClassSpec", S("controllerName"), T("parametersRef", WH_VT_STRUCT), S("description"));
KMSG(k_grant_from, "ReferenceGrantFrom", S("group"), S("kind"), S("namespace"));
KMSG(k_grant_to, "ReferenceGrantTo", S("group"), S("kind"), S("name"));
KMSG(k_reference_grant, "ReferenceGrantSpec", LM("from", k_grant_from), LM("to", k_grant_to));
KMSG(k_backend_tls, "BackendTLSPolicySpec", T("targetRefs", WH_VT_ANYLIST), T("validation", WH_VT_STRUCT),
     T("options", WH_VT_STRUCT));
KMSG(k_listener_set, "ListenerSetSpec", T("parentRef", WH_VT_STRUCT), T("listeners", WH_VT_ANYLIST));
KMSG(k_opaque, "Spec", T("__none__", WH_VT_VALUE));

/* ------------------------------------------------------------------ mesh networks */

/* istio.mesh.v1alpha1.MeshNetworks: the `meshNetworks` document of istiod's mesh ConfigMap (mesh_networks.c). */
MSG(m_net_endpoints, "istio.mesh.v1alpha1.Network.NetworkEndpoints", O("fromCidr", WH_VT_STR, 1),
    O("fromRegistry", WH_VT_STR, 1));
MSG(m_net_gateway, "istio.mesh.v1alpha1.Network.IstioNetworkGateway", O("registryServiceName", WH_VT_STR, 1),
    O("address", WH_VT_STR, 1), T("port", WH_VT_U32), S("locality"));
MSG(m_network, "istio.mesh.v1alpha1.Network", LM("endpoints", m_net_endpoints), LM("gateways", m_net_gateway));
MSG(m_mesh_networks, "istio.mesh.v1alpha1.MeshNetworks", MPM("networks", m_network));
const wh_vmsg *const wh_vschema_mesh_networks = &m_mesh_networks;

/* ------------------------------------------------------------------ the kinds istiod's webhook knows */

#define NET "networking.istio.io"
#define SEC "security.istio.io"
#define GWAPI "gateway.networking.k8s.io"
#define XGWAPI "gateway.networking.x-k8s.io"

static const wh_vkind kinds[] = {
    {NET, "DestinationRule", "destinationrules", &m_destination_rule, wh_validate_destination_rule, 0},
    {NET, "VirtualService", "virtualservices", &m_virtual_service, wh_validate_virtual_service, 0},
    {NET, "ServiceEntry", "serviceentries", &m_service_entry, wh_validate_service_entry, 0},
    {NET, "Sidecar", "sidecars", &m_sidecar, wh_validate_sidecar, 0},
    {NET, "Gateway", "gateways", &m_gateway, wh_validate_gateway, 0},
    {NET, "WorkloadEntry", "workloadentries", &m_workload_entry, wh_validate_workload_entry, 0},
    {NET, "WorkloadGroup", "workloadgroups", &m_workload_group, wh_validate_workload_group, 0},
    {NET, "EnvoyFilter", "envoyfilters", &m_envoy_filter, wh_validate_envoy_filter, 0},
    {NET, "ProxyConfig", "proxyconfigs", &m_proxy_config, wh_validate_proxy_config, 0},
    {SEC, "AuthorizationPolicy", "authorizationpolicies", &m_authorization_policy, wh_validate_authorization_policy, 0},
    {SEC, "PeerAuthentication", "peerauthentications", &m_peer_authentication, wh_validate_peer_authentication, 0},
    {SEC, "RequestAuthentication", "requestauthentications", &m_request_authentication,
     wh_validate_request_authentication, 0},
    {"telemetry.istio.io", "Telemetry", "telemetries", &m_telemetry, wh_validate_telemetry, 0},
    {"extensions.istio.io", "WasmPlugin", "wasmplugins", &m_wasm_plugin, wh_validate_wasm_plugin, 0},
    {"extensions.istio.io", "TrafficExtension", "trafficextensions", &m_traffic_extension,
     wh_validate_traffic_extension, 0},
    {GWAPI, "GatewayClass", "gatewayclasses", &k_gateway_class, NULL, 0},
    {GWAPI, "Gateway", "gateways", &k_gateway, NULL, 0},
    {GWAPI, "HTTPRoute", "httproutes", &k_route, NULL, 0},
    {GWAPI, "GRPCRoute", "grpcroutes", &k_route, NULL, 0},
    {GWAPI, "TCPRoute", "tcproutes", &k_route, NULL, 0},
    {GWAPI, "TLSRoute", "tlsroutes", &k_route, NULL, 0},
    {GWAPI, "UDPRoute", "udproutes", &k_route, NULL, 1},
    {GWAPI, "ReferenceGrant", "referencegrants", &k_reference_grant, NULL, 0},
    {GWAPI, "BackendTLSPolicy", "backendtlspolicies", &k_backend_tls, NULL, 0},
    {GWAPI, "ListenerSet", "listenersets", &k_listener_set, NULL, 0},
    {XGWAPI, "XBackend", "xbackends", &k_opaque, NULL, 1},
    {XGWAPI, "XBackendTrafficPolicy", "xbackendtrafficpolicies", &k_opaque, NULL, 1},
};

/* The kind of `group` whose resource (by_resource) or kind is `name`. */
static const wh_vkind *find_kind(const char *group, const char *name, int by_resource)
{
    for (size_t i = 0; i < N(kinds); i++)
        if (strcmp(kinds[i].group, group) == 0 && strcmp(by_resource ? kinds[i].resource : kinds[i].kind, name) == 0)
            return &kinds[i];
    return NULL;
}

const wh_vkind *wh_vkind_find_resource(const char *group, const char *resource)
{
    return find_kind(group, resource, 1);
}

const wh_vkind *wh_vkind_find(const char *group, const char *kind, int alpha)
{
    const wh_vkind *k = find_kind(group, kind, 0);
    return k != NULL && k->alpha && !alpha ? NULL : k;
}
