/*
 * cluster.c - the cluster flags every cluster command inherits (one table,
 * so that --kubeconfig, --context, -n, -i, --as and --request-timeout mean
 * the same everywhere) and the Kubernetes client built from them.
 */
#include <stdlib.h>

#include "wh_ctl.h"

static const wh_ctl_flag cluster_flags[] = {
    {.name = "as", .type = WH_CTL_STRING, .usage = "Username to impersonate for the operation"},
    {.name = "as-group", .type = WH_CTL_STRING_ARRAY, .usage = "Group to impersonate for the operation (repeatable)"},
    {.name = "context", .type = WH_CTL_STRING, .usage = "Name of the kubeconfig context to use"},
    {.name = "istioNamespace",
     .shorthand = 'i',
     .type = WH_CTL_STRING,
     .usage = "Namespace of the Istio control plane (env ISTIOCTL_ISTIONAMESPACE)",
     .def = "istio-system",
     .aliases = "istio-namespace",
     .env = "ISTIOCTL_ISTIONAMESPACE"},
    {.name = "kubeconfig",
     .shorthand = 'c',
     .type = WH_CTL_STRING,
     .usage = "Kubernetes configuration file (default $KUBECONFIG or ~/.kube/config)"},
    {.name = "namespace",
     .shorthand = 'n',
     .type = WH_CTL_STRING,
     .usage = "Kubernetes namespace (default: the kubeconfig context's namespace)"},
    {.name = "request-timeout",
     .type = WH_CTL_DURATION,
     .usage = "How long to wait for each API request, e.g. 10s, 1m (a plain number is seconds; always bounded)",
     .def = "30s",
     .aliases = "kubeclient-timeout",
     .opts = WH_CTL_BARE_SECONDS},
};

const wh_ctl_flagset wh_ctl_cluster_flags = {cluster_flags, sizeof(cluster_flags) / sizeof(cluster_flags[0])};

wh_code wh_ctl_kube_client(const wh_ctl_args *a, wh_kube_client **out, wh_err *err)
{
    wh_kube_options o = {0};
    size_t ngroups;
    const char *const *groups = wh_ctl_strings(a, "as-group", &ngroups);
    long long ns = wh_ctl_duration_ns(a, "request-timeout");

    if (ns <= 0)
        return wh_err_set(err, WH_E_INVALID, "invalid --request-timeout \"%s\": must be positive (e.g. 10s, 1m)",
                          wh_ctl_string(a, "request-timeout"));
    o.kubeconfig = wh_ctl_string(a, "kubeconfig");
    o.context = wh_ctl_string(a, "context");
    o.impersonate_user = wh_ctl_string(a, "as");
    o.impersonate_groups = ngroups > 0 ? groups : NULL;
    o.timeout_ms = ns < 1000000 ? 1 : (long)(ns / 1000000);
    return wh_kube_client_new(&o, out, err);
}
