/*
 * wh_inject_schema.c - the core/v1 Pod field table (see wh_inject_schema.h).
 *
 * Transcribed from the Kubernetes API types: json names, whether a scalar is a
 * pointer (kept when zero) or an omitempty value (dropped when zero), and the
 * patchStrategy/patchMergeKey tags strategic merge patch reads.
 */
#include "wh_inject_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One field row (wh_inject_field): JSON name, kind, flags, merge key, element
 * type, Go name; the short forms below fill in the rest. */
#define FG(n, kind, flags, key, type, go)                                                                              \
    {                                                                                                                  \
        n, kind, flags, sizeof(n) - 1, key, type, go                                                                   \
    }
#define F(n, kind, flags, key, type) FG(n, kind, flags, key, type, NULL)
#define S(n) F(n, WH_K_STR, WH_F_OMIT, NULL, NULL)
#define SREQ(n) F(n, WH_K_STR, 0, NULL, NULL)
#define I(n) F(n, WH_K_INT, WH_F_OMIT, NULL, NULL)
#define IREQ(n) F(n, WH_K_INT, 0, NULL, NULL)
#define B(n) F(n, WH_K_BOOL, WH_F_OMIT, NULL, NULL)
#define P(n) F(n, WH_K_PTR, 0, NULL, NULL)
#define ANY(n) F(n, WH_K_ANY, 0, NULL, NULL)
#define OBJ(n, t) F(n, WH_K_OBJ, 0, NULL, &t)
#define LIST(n, key, t) F(n, WH_K_LIST, 0, key, t)
#define PLIST(n) F(n, WH_K_PLIST, 0, NULL, NULL)
#define PLIST_MERGE(n) F(n, WH_K_PLIST, WH_F_MERGE, NULL, NULL)
#define MAP(n) F(n, WH_K_MAP, 0, NULL, NULL)
#define QTY(n) F(n, WH_K_QTY, 0, NULL, NULL)
#define QMAP(n) F(n, WH_K_QMAP, 0, NULL, NULL)
#define END                                                                                                            \
    {                                                                                                                  \
        NULL, 0, 0, 0, NULL, NULL, NULL                                                                                \
    }
/* A Go type over its field rows, with the storage of its field index. */
#define TYPE(storage, var, go_name, fields, closed)                                                                    \
    static wh_inject_type_index var##_index;                                                                           \
    storage const wh_inject_type var = {go_name, fields, closed, &var##_index}

static const wh_inject_type t_owner_ref, t_local_ref, t_pod_security_context, t_sysctl, t_toleration, t_host_alias,
    t_volume, t_empty_dir, t_secret_vs, t_config_map_vs, t_key_to_path, t_downward_vs, t_downward_file, t_projected,
    t_volume_projection, t_secret_proj, t_config_map_proj, t_downward_proj, t_sa_token_proj, t_ephemeral_container,
    t_env_var, t_env_source, t_field_selector, t_resource_selector, t_resources, t_volume_mount, t_probe, t_exec,
    t_http_header, t_lifecycle, t_lifecycle_handler, t_security_context, t_capabilities, t_seccomp;

static const wh_inject_field f_object_meta[] = {S("name"),
                                                S("generateName"),
                                                S("namespace"),
                                                S("selfLink"),
                                                FG("uid", WH_K_STR, WH_F_OMIT, NULL, NULL, "UID"),
                                                S("resourceVersion"),
                                                F("generation", WH_K_INT, WH_F_OMIT | WH_F_INT64, NULL, NULL),
                                                ANY("creationTimestamp"),
                                                P("deletionTimestamp"),
                                                P("deletionGracePeriodSeconds"),
                                                MAP("labels"),
                                                MAP("annotations"),
                                                LIST("ownerReferences", "uid", &t_owner_ref),
                                                PLIST_MERGE("finalizers"),
                                                LIST("managedFields", NULL, NULL),
                                                END};
TYPE(, wh_inject_type_object_meta, "ObjectMeta", f_object_meta, 0);

static const wh_inject_field f_owner_ref[] = {
    SREQ("apiVersion"), SREQ("kind"), SREQ("name"), SREQ("uid"), P("controller"), P("blockOwnerDeletion"), END};
TYPE(static, t_owner_ref, "OwnerReference", f_owner_ref, 0);

static const wh_inject_field f_local_ref[] = {S("name"), END};
TYPE(static, t_local_ref, "LocalObjectReference", f_local_ref, 0);

static const wh_inject_field f_sysctl[] = {SREQ("name"), SREQ("value"), END};
TYPE(static, t_sysctl, "Sysctl", f_sysctl, 0);

static const wh_inject_field f_seccomp[] = {SREQ("type"), P("localhostProfile"), END};
TYPE(static, t_seccomp, "SeccompProfile", f_seccomp, 0);

static const wh_inject_field f_pod_security_context[] = {ANY("seLinuxOptions"),
                                                         ANY("windowsOptions"),
                                                         P("runAsUser"),
                                                         P("runAsGroup"),
                                                         P("runAsNonRoot"),
                                                         PLIST("supplementalGroups"),
                                                         P("supplementalGroupsPolicy"),
                                                         P("fsGroup"),
                                                         LIST("sysctls", NULL, &t_sysctl),
                                                         P("fsGroupChangePolicy"),
                                                         OBJ("seccompProfile", t_seccomp),
                                                         ANY("appArmorProfile"),
                                                         P("seLinuxChangePolicy"),
                                                         END};
TYPE(static, t_pod_security_context, "PodSecurityContext", f_pod_security_context, 0);

static const wh_inject_field f_toleration[] = {S("key"),    S("operator"),          S("value"),
                                               S("effect"), P("tolerationSeconds"), END};
TYPE(static, t_toleration, "Toleration", f_toleration, 0);

static const wh_inject_field f_host_alias[] = {SREQ("ip"), PLIST("hostnames"), END};
TYPE(static, t_host_alias, "HostAlias", f_host_alias, 0);

static const wh_inject_field f_key_to_path[] = {SREQ("key"), SREQ("path"), P("mode"), END};
TYPE(static, t_key_to_path, "KeyToPath", f_key_to_path, 0);

static const wh_inject_field f_empty_dir[] = {S("medium"), QTY("sizeLimit"), END};
TYPE(static, t_empty_dir, "EmptyDirVolumeSource", f_empty_dir, 0);

static const wh_inject_field f_secret_vs[] = {S("secretName"), LIST("items", NULL, &t_key_to_path), P("defaultMode"),
                                              P("optional"), END};
TYPE(static, t_secret_vs, "SecretVolumeSource", f_secret_vs, 0);

static const wh_inject_field f_config_map_vs[] = {S("name"), LIST("items", NULL, &t_key_to_path), P("defaultMode"),
                                                  P("optional"), END};
TYPE(static, t_config_map_vs, "ConfigMapVolumeSource", f_config_map_vs, 0);

static const wh_inject_field f_field_selector[] = {S("apiVersion"), SREQ("fieldPath"), END};
TYPE(static, t_field_selector, "ObjectFieldSelector", f_field_selector, 0);

/* Divisor is a resource.Quantity value without a pointer: encoding/json prints
 * it ("0") even when unset, so a template without a divisor still yields one. */
static const wh_inject_field f_resource_selector[] = {S("containerName"), SREQ("resource"),
                                                      FG("divisor", WH_K_QTY, WH_F_FILL, NULL, NULL, NULL), END};
TYPE(static, t_resource_selector, "ResourceFieldSelector", f_resource_selector, 0);

static const wh_inject_field f_downward_file[] = {SREQ("path"), OBJ("fieldRef", t_field_selector),
                                                  OBJ("resourceFieldRef", t_resource_selector), P("mode"), END};
TYPE(static, t_downward_file, "DownwardAPIVolumeFile", f_downward_file, 0);

static const wh_inject_field f_downward_vs[] = {LIST("items", NULL, &t_downward_file), P("defaultMode"), END};
TYPE(static, t_downward_vs, "DownwardAPIVolumeSource", f_downward_vs, 0);

static const wh_inject_field f_secret_proj[] = {S("name"), LIST("items", NULL, &t_key_to_path), P("optional"), END};
TYPE(static, t_secret_proj, "SecretProjection", f_secret_proj, 0);
TYPE(static, t_config_map_proj, "ConfigMapProjection", f_secret_proj, 0);

static const wh_inject_field f_downward_proj[] = {LIST("items", NULL, &t_downward_file), END};
TYPE(static, t_downward_proj, "DownwardAPIProjection", f_downward_proj, 0);

static const wh_inject_field f_sa_token_proj[] = {S("audience"), P("expirationSeconds"), SREQ("path"), END};
TYPE(static, t_sa_token_proj, "ServiceAccountTokenProjection", f_sa_token_proj, 0);

static const wh_inject_field f_volume_projection[] = {OBJ("secret", t_secret_proj),
                                                      OBJ("downwardAPI", t_downward_proj),
                                                      OBJ("configMap", t_config_map_proj),
                                                      OBJ("serviceAccountToken", t_sa_token_proj),
                                                      ANY("clusterTrustBundle"),
                                                      ANY("podCertificate"),
                                                      END};
TYPE(static, t_volume_projection, "VolumeProjection", f_volume_projection, 0);

static const wh_inject_field f_projected[] = {LIST("sources", NULL, &t_volume_projection), P("defaultMode"), END};
TYPE(static, t_projected, "ProjectedVolumeSource", f_projected, 0);

static const wh_inject_field f_volume[] = {SREQ("name"),
                                           OBJ("emptyDir", t_empty_dir),
                                           OBJ("secret", t_secret_vs),
                                           OBJ("configMap", t_config_map_vs),
                                           OBJ("downwardAPI", t_downward_vs),
                                           OBJ("projected", t_projected),
                                           END};
TYPE(static, t_volume, "Volume", f_volume, 0);

static const wh_inject_field f_container_port[] = {S("name"),     I("hostPort"), IREQ("containerPort"),
                                                   S("protocol"), S("hostIP"),   END};
TYPE(, wh_inject_type_container_port, "ContainerPort", f_container_port, 0);

static const wh_inject_field f_env_source[] = {OBJ("fieldRef", t_field_selector),
                                               OBJ("resourceFieldRef", t_resource_selector),
                                               ANY("configMapKeyRef"),
                                               ANY("secretKeyRef"),
                                               ANY("fileKeyRef"),
                                               END};
TYPE(static, t_env_source, "EnvVarSource", f_env_source, 0);

static const wh_inject_field f_env_var[] = {SREQ("name"), S("value"), OBJ("valueFrom", t_env_source), END};
TYPE(static, t_env_var, "EnvVar", f_env_var, 0);

static const wh_inject_field f_resources[] = {QMAP("limits"), QMAP("requests"), LIST("claims", "name", NULL), END};
TYPE(static, t_resources, "ResourceRequirements", f_resources, 0);

static const wh_inject_field f_volume_mount[] = {
    SREQ("name"), B("readOnly"),         P("recursiveReadOnly"), SREQ("mountPath"),
    S("subPath"), P("mountPropagation"), S("subPathExpr"),       END};
TYPE(static, t_volume_mount, "VolumeMount", f_volume_mount, 0);

static const wh_inject_field f_exec[] = {PLIST("command"), END};
TYPE(static, t_exec, "ExecAction", f_exec, 0);

static const wh_inject_field f_http_header[] = {SREQ("name"), SREQ("value"), END};
TYPE(static, t_http_header, "HTTPHeader", f_http_header, 0);

static const wh_inject_field f_http_get[] = {
    S("path"), ANY("port"), S("host"), S("scheme"), LIST("httpHeaders", NULL, &t_http_header), END};
TYPE(, wh_inject_type_http_get, "HTTPGetAction", f_http_get, 0);

static const wh_inject_field f_tcp_socket[] = {ANY("port"), S("host"), END};
TYPE(, wh_inject_type_tcp_socket, "TCPSocketAction", f_tcp_socket, 0);

static const wh_inject_field f_grpc[] = {IREQ("port"), P("service"), END};
TYPE(, wh_inject_type_grpc, "GRPCAction", f_grpc, 0);

static const wh_inject_field f_probe[] = {OBJ("exec", t_exec),
                                          OBJ("httpGet", wh_inject_type_http_get),
                                          OBJ("tcpSocket", wh_inject_type_tcp_socket),
                                          OBJ("grpc", wh_inject_type_grpc),
                                          I("initialDelaySeconds"),
                                          I("timeoutSeconds"),
                                          I("periodSeconds"),
                                          I("successThreshold"),
                                          I("failureThreshold"),
                                          P("terminationGracePeriodSeconds"),
                                          END};
TYPE(static, t_probe, "Probe", f_probe, 0);

static const wh_inject_field f_lifecycle_handler[] = {OBJ("exec", t_exec), OBJ("httpGet", wh_inject_type_http_get),
                                                      OBJ("tcpSocket", wh_inject_type_tcp_socket), ANY("sleep"), END};
TYPE(static, t_lifecycle_handler, "LifecycleHandler", f_lifecycle_handler, 0);

static const wh_inject_field f_lifecycle[] = {OBJ("postStart", t_lifecycle_handler),
                                              OBJ("preStop", t_lifecycle_handler), P("stopSignal"), END};
TYPE(static, t_lifecycle, "Lifecycle", f_lifecycle, 0);

static const wh_inject_field f_capabilities[] = {PLIST("add"), PLIST("drop"), END};
TYPE(static, t_capabilities, "Capabilities", f_capabilities, 1);

static const wh_inject_field f_security_context[] = {OBJ("capabilities", t_capabilities),
                                                     P("privileged"),
                                                     ANY("seLinuxOptions"),
                                                     ANY("windowsOptions"),
                                                     P("runAsUser"),
                                                     P("runAsGroup"),
                                                     P("runAsNonRoot"),
                                                     P("readOnlyRootFilesystem"),
                                                     P("allowPrivilegeEscalation"),
                                                     P("procMount"),
                                                     OBJ("seccompProfile", t_seccomp),
                                                     ANY("appArmorProfile"),
                                                     END};
TYPE(static, t_security_context, "SecurityContext", f_security_context, 1);

static const wh_inject_field f_container[] = {SREQ("name"),
                                              S("image"),
                                              PLIST("command"),
                                              PLIST("args"),
                                              S("workingDir"),
                                              LIST("ports", "containerPort", &wh_inject_type_container_port),
                                              LIST("envFrom", NULL, NULL),
                                              LIST("env", "name", &t_env_var),
                                              FG("resources", WH_K_OBJ, WH_F_ALWAYS, NULL, &t_resources, NULL),
                                              LIST("resizePolicy", NULL, NULL),
                                              P("restartPolicy"),
                                              LIST("restartPolicyRules", NULL, NULL),
                                              LIST("volumeMounts", "mountPath", &t_volume_mount),
                                              LIST("volumeDevices", "devicePath", NULL),
                                              OBJ("livenessProbe", t_probe),
                                              OBJ("readinessProbe", t_probe),
                                              OBJ("startupProbe", t_probe),
                                              OBJ("lifecycle", t_lifecycle),
                                              S("terminationMessagePath"),
                                              S("terminationMessagePolicy"),
                                              S("imagePullPolicy"),
                                              OBJ("securityContext", t_security_context),
                                              B("stdin"),
                                              B("stdinOnce"),
                                              FG("tty", WH_K_BOOL, WH_F_OMIT, NULL, NULL, "TTY"),
                                              END};
TYPE(, wh_inject_type_container, "Container", f_container, 0);
/* Go's EphemeralContainer holds a Container's fields (EphemeralContainerCommon): merged alike, but not a
 * v1.Container to templates. */
TYPE(static, t_ephemeral_container, "EphemeralContainer", f_container, 0);

static const wh_inject_field f_pod_spec[] = {
    LIST("volumes", "name", &t_volume),
    LIST("initContainers", "name", &wh_inject_type_container),
    LIST("containers", "name", &wh_inject_type_container),
    LIST("ephemeralContainers", "name", &t_ephemeral_container),
    S("restartPolicy"),
    P("terminationGracePeriodSeconds"),
    P("activeDeadlineSeconds"),
    FG("dnsPolicy", WH_K_STR, WH_F_OMIT, NULL, NULL, "DNSPolicy"),
    MAP("nodeSelector"),
    S("serviceAccountName"),
    FG("serviceAccount", WH_K_STR, WH_F_OMIT, NULL, NULL, "DeprecatedServiceAccount"),
    P("automountServiceAccountToken"),
    S("nodeName"),
    B("hostNetwork"),
    B("hostPID"),
    B("hostIPC"),
    P("shareProcessNamespace"),
    OBJ("securityContext", t_pod_security_context),
    LIST("imagePullSecrets", "name", &t_local_ref),
    S("hostname"),
    S("subdomain"),
    ANY("affinity"),
    S("schedulerName"),
    LIST("tolerations", NULL, &t_toleration),
    LIST("hostAliases", "ip", &t_host_alias),
    S("priorityClassName"),
    P("priority"),
    FG("dnsConfig", WH_K_ANY, 0, NULL, NULL, "DNSConfig"),
    LIST("readinessGates", NULL, NULL),
    P("runtimeClassName"),
    P("enableServiceLinks"),
    P("preemptionPolicy"),
    QMAP("overhead"),
    LIST("topologySpreadConstraints", "topologyKey", NULL),
    P("setHostnameAsFQDN"),
    FG("os", WH_K_ANY, 0, NULL, NULL, "OS"),
    P("hostUsers"),
    LIST("schedulingGates", "name", NULL),
    LIST("resourceClaims", "name", NULL),
    OBJ("resources", t_resources),
    END};
TYPE(, wh_inject_type_pod_spec, "PodSpec", f_pod_spec, 0);

static const wh_inject_field f_pod[] = {
    S("apiVersion"), S("kind"), OBJ("metadata", wh_inject_type_object_meta), OBJ("spec", wh_inject_type_pod_spec),
    ANY("status"),   END};
TYPE(, wh_inject_type_pod, "Pod", f_pod, 0);

/* ---- workload objects (kube-inject round-trips the whole object) ---- */

#define IFILL(n)                                                                                                       \
    {                                                                                                                  \
        n, WH_K_INT, WH_F_FILL, sizeof(n) - 1, NULL, NULL, NULL                                                        \
    }
#define BFILL(n)                                                                                                       \
    {                                                                                                                  \
        n, WH_K_BOOL, WH_F_FILL, sizeof(n) - 1, NULL, NULL, NULL                                                       \
    }
#define STATUS(t)                                                                                                      \
    {                                                                                                                  \
        "status", WH_K_OBJ, WH_F_FILL, 6, NULL, &t, NULL                                                               \
    }

static const wh_inject_field f_pod_template[] = {OBJ("metadata", wh_inject_type_object_meta),
                                                 OBJ("spec", wh_inject_type_pod_spec), END};
TYPE(static, t_pod_template, "PodTemplateSpec", f_pod_template, 0);

static const wh_inject_field f_deployment_spec[] = {P("replicas"),
                                                    ANY("selector"),
                                                    OBJ("template", t_pod_template),
                                                    ANY("strategy"),
                                                    I("minReadySeconds"),
                                                    P("revisionHistoryLimit"),
                                                    B("paused"),
                                                    P("progressDeadlineSeconds"),
                                                    END};
TYPE(static, t_deployment_spec, "DeploymentSpec", f_deployment_spec, 0);

static const wh_inject_field f_daemonset_spec[] = {ANY("selector"),           OBJ("template", t_pod_template),
                                                   ANY("updateStrategy"),     I("minReadySeconds"),
                                                   P("revisionHistoryLimit"), END};
TYPE(static, t_daemonset_spec, "DaemonSetSpec", f_daemonset_spec, 0);
static const wh_inject_field f_daemonset_status[] = {IFILL("currentNumberScheduled"),
                                                     IFILL("numberMisscheduled"),
                                                     IFILL("desiredNumberScheduled"),
                                                     IFILL("numberReady"),
                                                     I("observedGeneration"),
                                                     I("updatedNumberScheduled"),
                                                     I("numberAvailable"),
                                                     I("numberUnavailable"),
                                                     END};
TYPE(static, t_daemonset_status, "DaemonSetStatus", f_daemonset_status, 0);

static const wh_inject_field f_statefulset_spec[] = {P("replicas"),
                                                     ANY("selector"),
                                                     OBJ("template", t_pod_template),
                                                     S("serviceName"),
                                                     S("podManagementPolicy"),
                                                     ANY("updateStrategy"),
                                                     P("revisionHistoryLimit"),
                                                     I("minReadySeconds"),
                                                     END};
TYPE(static, t_statefulset_spec, "StatefulSetSpec", f_statefulset_spec, 0);
static const wh_inject_field f_statefulset_status[] = {
    I("observedGeneration"), IFILL("replicas"),          I("readyReplicas"),
    I("currentReplicas"),    I("updatedReplicas"),       S("currentRevision"),
    S("updateRevision"),     IFILL("availableReplicas"), END};
TYPE(static, t_statefulset_status, "StatefulSetStatus", f_statefulset_status, 0);

static const wh_inject_field f_replicaset_spec[] = {P("replicas"), I("minReadySeconds"), ANY("selector"),
                                                    OBJ("template", t_pod_template), END};
TYPE(static, t_replicaset_spec, "ReplicaSetSpec", f_replicaset_spec, 0);
static const wh_inject_field f_replicas_status[] = {IFILL("replicas"),       I("fullyLabeledReplicas"),
                                                    I("readyReplicas"),      I("availableReplicas"),
                                                    I("observedGeneration"), END};
TYPE(static, t_replicas_status, "ReplicaSetStatus", f_replicas_status, 0);

static const wh_inject_field f_rc_spec[] = {P("replicas"), I("minReadySeconds"), MAP("selector"),
                                            OBJ("template", t_pod_template), END};
TYPE(static, t_rc_spec, "ReplicationControllerSpec", f_rc_spec, 0);

static const wh_inject_field f_job_spec[] = {OBJ("template", t_pod_template), END};
TYPE(static, t_job_spec, "JobSpec", f_job_spec, 0);
static const wh_inject_field f_job_template[] = {OBJ("metadata", wh_inject_type_object_meta), OBJ("spec", t_job_spec),
                                                 END};
TYPE(static, t_job_template, "JobTemplateSpec", f_job_template, 0);
static const wh_inject_field f_cronjob_spec[] = {SREQ("schedule"), S("concurrencyPolicy"),
                                                 OBJ("jobTemplate", t_job_template), END};
TYPE(static, t_cronjob_spec, "CronJobSpec", f_cronjob_spec, 0);

static const wh_inject_field f_dc_spec[] = {ANY("strategy"),
                                            I("minReadySeconds"),
                                            IFILL("replicas"),
                                            P("revisionHistoryLimit"),
                                            BFILL("test"),
                                            B("paused"),
                                            MAP("selector"),
                                            OBJ("template", t_pod_template),
                                            END};
TYPE(static, t_dc_spec, "DeploymentConfigSpec", f_dc_spec, 0);
static const wh_inject_field f_dc_status[] = {
    IFILL("latestVersion"),     IFILL("observedGeneration"),  IFILL("replicas"),  IFILL("updatedReplicas"),
    IFILL("availableReplicas"), IFILL("unavailableReplicas"), I("readyReplicas"), END};
TYPE(static, t_dc_status, "DeploymentConfigStatus", f_dc_status, 0);

#define WORKLOAD(var, spec_type, status_field)                                                                         \
    static const wh_inject_field f_##var[] = {                                                                         \
        S("apiVersion"),        S("kind"),    OBJ("metadata", wh_inject_type_object_meta),                             \
        OBJ("spec", spec_type), status_field, END};                                                                    \
    TYPE(static, t_##var, #var, f_##var, 0)

WORKLOAD(Deployment, t_deployment_spec, ANY("status"));
WORKLOAD(DaemonSet, t_daemonset_spec, STATUS(t_daemonset_status));
WORKLOAD(StatefulSet, t_statefulset_spec, STATUS(t_statefulset_status));
WORKLOAD(ReplicaSet, t_replicaset_spec, STATUS(t_replicas_status));
WORKLOAD(ReplicationController, t_rc_spec, STATUS(t_replicas_status));
WORKLOAD(Job, t_job_spec, ANY("status"));
WORKLOAD(CronJob, t_cronjob_spec, ANY("status"));
WORKLOAD(DeploymentConfig, t_dc_spec, STATUS(t_dc_status));

const wh_inject_type *wh_inject_schema_workload(const char *kind)
{
    static const wh_inject_type *const all[] = {
        &t_Deployment, &t_DaemonSet, &t_StatefulSet,      &t_ReplicaSet,      &t_ReplicationController,
        &t_Job,        &t_CronJob,   &t_DeploymentConfig, &wh_inject_type_pod};
    size_t i;

    for (i = 0; kind != NULL && i < sizeof(all) / sizeof(all[0]); i++)
        if (strcmp(all[i]->name, kind) == 0)
            return all[i];
    return NULL;
}

/* ---- the field index (wh_inject_schema.h) ----
 * A scan of up to 41 names with strcmp per key was most of the type check's
 * cost; the index hashes a name to the one field to compare.  Every type's
 * index is built once, before main() (index_all), so that the lookup reads
 * it without a test or a lock. */
static unsigned slot_of(unsigned signature, unsigned seed, unsigned bits)
{
    return (signature * seed) >> (32 - bits);
}

/* The smallest table of at least four slots per field (up to 256) and the
 * first seed of a fixed odd sequence that puts no two names in one slot: a
 * few dozen seeds at most for the largest type (PodSpec, 41 fields); and
 * the Go struct's order as the first guess of the key order. */
static void index_fill(const wh_inject_type *type, wh_inject_type_index *ix)
{
    const wh_inject_field *f;
    unsigned n = 0, bits, seed, k, s;

    for (f = type->fields; f->name != NULL; f++, n++)
        ix->nfill += (f->flags & WH_F_FILL) != 0;
    if (n > WH_INJECT_TYPE_MAX_FIELDS)
        abort(); /* a table edit beyond after[]: caught by any test that starts */
    ix->nfields = (unsigned char)n;
    for (k = 0; k <= n; k++)
        ix->after[k] = (unsigned char)k;
    for (bits = 1; bits < 8 && (1u << bits) < 4 * n; bits++)
        ;
    for (; bits <= 8; bits++) {
        for (k = 0, seed = 0x2545f491u; k < 4096; k++, seed = seed * 0x9e3779b9u + 2u) {
            for (f = type->fields; f->name != NULL; f++) {
                s = slot_of(wh_inject_schema_signature(f->name, f->len), seed | 1u, bits);
                if (ix->slot[s] != 0)
                    break;
                ix->slot[s] = (unsigned char)(f - type->fields + 1);
            }
            if (f->name == NULL) {
                ix->bits = (unsigned char)bits;
                ix->seed = seed | 1u;
                return;
            }
            memset(ix->slot, 0, sizeof(ix->slot));
        }
    }
    ix->bits = 0; /* scan */
}

/* The index of `type` and of every type its fields lead to (nfields != 0
 * marks a type done: every type has a field). */
static void index_tree(const wh_inject_type *type)
{
    const wh_inject_field *f;

    if (type == NULL || type->index->nfields != 0)
        return;
    index_fill(type, type->index);
    for (f = type->fields; f->name != NULL; f++)
        index_tree(f->type);
}

/* Before main(): no thread runs yet, and every type is reachable from these
 * (the same list as wh_inject_schema_workload's). */
__attribute__((constructor)) static void index_all(void)
{
    const wh_inject_type *const roots[] = {
        &t_Deployment, &t_DaemonSet, &t_StatefulSet,      &t_ReplicaSet,      &t_ReplicationController,
        &t_Job,        &t_CronJob,   &t_DeploymentConfig, &wh_inject_type_pod};
    size_t i;

    for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
        index_tree(roots[i]);
}

const wh_inject_field *wh_inject_schema_scan(const wh_inject_type *type, const char *name, size_t len)
{
    const wh_inject_field *f;

    for (f = type->fields; f->name != NULL; f++)
        if (f->len == len && wh_inject_schema_same(f->name, name, len))
            return f;
    return NULL;
}

const char *wh_inject_schema_go_name(const wh_inject_field *f, char *buf, size_t size)
{
    if (f->go != NULL)
        return f->go;
    snprintf(buf, size, "%s", f->name);
    if (buf[0] >= 'a' && buf[0] <= 'z')
        buf[0] = (char)(buf[0] - 'a' + 'A');
    return buf;
}
