/*
 * wh_inject_schema.c - the core/v1 Pod field table (see wh_inject_schema.h).
 *
 * Transcribed from the Kubernetes API types: json names, whether a scalar is a
 * pointer (kept when zero) or an omitempty value (dropped when zero), and the
 * patchStrategy/patchMergeKey tags strategic merge patch reads.
 */
#include "wh_inject_schema.h"

#include <stdio.h>
#include <string.h>

/* One field row (wh_inject_field): JSON name, kind, flags, merge key, element
 * type, Go name; the short forms below fill in the rest. */
#define F(n, kind, flags, key, type)                                                                                   \
    {                                                                                                                  \
        n, kind, flags, key, type, NULL                                                                                \
    }
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
#define END F(NULL, 0, 0, NULL, NULL)

static const wh_inject_type t_owner_ref, t_local_ref, t_pod_security_context, t_sysctl, t_toleration, t_host_alias,
    t_volume, t_empty_dir, t_secret_vs, t_config_map_vs, t_key_to_path, t_downward_vs, t_downward_file, t_projected,
    t_volume_projection, t_secret_proj, t_config_map_proj, t_downward_proj, t_sa_token_proj, t_ephemeral_container,
    t_env_var, t_env_source, t_field_selector, t_resource_selector, t_resources, t_volume_mount, t_probe, t_exec,
    t_http_header, t_lifecycle, t_lifecycle_handler, t_security_context, t_capabilities, t_seccomp;

static const wh_inject_field f_object_meta[] = {S("name"),
                                                S("generateName"),
                                                S("namespace"),
                                                S("selfLink"),
                                                {"uid", WH_K_STR, WH_F_OMIT, NULL, NULL, "UID"},
                                                S("resourceVersion"),
                                                {"generation", WH_K_INT, WH_F_OMIT | WH_F_INT64, NULL, NULL, NULL},
                                                ANY("creationTimestamp"),
                                                P("deletionTimestamp"),
                                                P("deletionGracePeriodSeconds"),
                                                MAP("labels"),
                                                MAP("annotations"),
                                                LIST("ownerReferences", "uid", &t_owner_ref),
                                                PLIST_MERGE("finalizers"),
                                                LIST("managedFields", NULL, NULL),
                                                END};
const wh_inject_type wh_inject_type_object_meta = {"ObjectMeta", f_object_meta, 0};

static const wh_inject_field f_owner_ref[] = {
    SREQ("apiVersion"), SREQ("kind"), SREQ("name"), SREQ("uid"), P("controller"), P("blockOwnerDeletion"), END};
static const wh_inject_type t_owner_ref = {"OwnerReference", f_owner_ref, 0};

static const wh_inject_field f_local_ref[] = {S("name"), END};
static const wh_inject_type t_local_ref = {"LocalObjectReference", f_local_ref, 0};

static const wh_inject_field f_sysctl[] = {SREQ("name"), SREQ("value"), END};
static const wh_inject_type t_sysctl = {"Sysctl", f_sysctl, 0};

static const wh_inject_field f_seccomp[] = {SREQ("type"), P("localhostProfile"), END};
static const wh_inject_type t_seccomp = {"SeccompProfile", f_seccomp, 0};

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
static const wh_inject_type t_pod_security_context = {"PodSecurityContext", f_pod_security_context, 0};

static const wh_inject_field f_toleration[] = {S("key"),    S("operator"),          S("value"),
                                               S("effect"), P("tolerationSeconds"), END};
static const wh_inject_type t_toleration = {"Toleration", f_toleration, 0};

static const wh_inject_field f_host_alias[] = {SREQ("ip"), PLIST("hostnames"), END};
static const wh_inject_type t_host_alias = {"HostAlias", f_host_alias, 0};

static const wh_inject_field f_key_to_path[] = {SREQ("key"), SREQ("path"), P("mode"), END};
static const wh_inject_type t_key_to_path = {"KeyToPath", f_key_to_path, 0};

static const wh_inject_field f_empty_dir[] = {S("medium"), QTY("sizeLimit"), END};
static const wh_inject_type t_empty_dir = {"EmptyDirVolumeSource", f_empty_dir, 0};

static const wh_inject_field f_secret_vs[] = {S("secretName"), LIST("items", NULL, &t_key_to_path), P("defaultMode"),
                                              P("optional"), END};
static const wh_inject_type t_secret_vs = {"SecretVolumeSource", f_secret_vs, 0};

static const wh_inject_field f_config_map_vs[] = {S("name"), LIST("items", NULL, &t_key_to_path), P("defaultMode"),
                                                  P("optional"), END};
static const wh_inject_type t_config_map_vs = {"ConfigMapVolumeSource", f_config_map_vs, 0};

static const wh_inject_field f_field_selector[] = {S("apiVersion"), SREQ("fieldPath"), END};
static const wh_inject_type t_field_selector = {"ObjectFieldSelector", f_field_selector, 0};

/* Divisor is a resource.Quantity value without a pointer: encoding/json prints
 * it ("0") even when unset, so a template without a divisor still yields one. */
static const wh_inject_field f_resource_selector[] = {
    S("containerName"), SREQ("resource"), {"divisor", WH_K_QTY, WH_F_FILL, NULL, NULL, NULL}, END};
static const wh_inject_type t_resource_selector = {"ResourceFieldSelector", f_resource_selector, 0};

static const wh_inject_field f_downward_file[] = {SREQ("path"), OBJ("fieldRef", t_field_selector),
                                                  OBJ("resourceFieldRef", t_resource_selector), P("mode"), END};
static const wh_inject_type t_downward_file = {"DownwardAPIVolumeFile", f_downward_file, 0};

static const wh_inject_field f_downward_vs[] = {LIST("items", NULL, &t_downward_file), P("defaultMode"), END};
static const wh_inject_type t_downward_vs = {"DownwardAPIVolumeSource", f_downward_vs, 0};

static const wh_inject_field f_secret_proj[] = {S("name"), LIST("items", NULL, &t_key_to_path), P("optional"), END};
static const wh_inject_type t_secret_proj = {"SecretProjection", f_secret_proj, 0};
static const wh_inject_type t_config_map_proj = {"ConfigMapProjection", f_secret_proj, 0};

static const wh_inject_field f_downward_proj[] = {LIST("items", NULL, &t_downward_file), END};
static const wh_inject_type t_downward_proj = {"DownwardAPIProjection", f_downward_proj, 0};

static const wh_inject_field f_sa_token_proj[] = {S("audience"), P("expirationSeconds"), SREQ("path"), END};
static const wh_inject_type t_sa_token_proj = {"ServiceAccountTokenProjection", f_sa_token_proj, 0};

static const wh_inject_field f_volume_projection[] = {OBJ("secret", t_secret_proj),
                                                      OBJ("downwardAPI", t_downward_proj),
                                                      OBJ("configMap", t_config_map_proj),
                                                      OBJ("serviceAccountToken", t_sa_token_proj),
                                                      ANY("clusterTrustBundle"),
                                                      ANY("podCertificate"),
                                                      END};
static const wh_inject_type t_volume_projection = {"VolumeProjection", f_volume_projection, 0};

static const wh_inject_field f_projected[] = {LIST("sources", NULL, &t_volume_projection), P("defaultMode"), END};
static const wh_inject_type t_projected = {"ProjectedVolumeSource", f_projected, 0};

static const wh_inject_field f_volume[] = {SREQ("name"),
                                           OBJ("emptyDir", t_empty_dir),
                                           OBJ("secret", t_secret_vs),
                                           OBJ("configMap", t_config_map_vs),
                                           OBJ("downwardAPI", t_downward_vs),
                                           OBJ("projected", t_projected),
                                           END};
static const wh_inject_type t_volume = {"Volume", f_volume, 0};

static const wh_inject_field f_container_port[] = {S("name"),     I("hostPort"), IREQ("containerPort"),
                                                   S("protocol"), S("hostIP"),   END};
const wh_inject_type wh_inject_type_container_port = {"ContainerPort", f_container_port, 0};

static const wh_inject_field f_env_source[] = {OBJ("fieldRef", t_field_selector),
                                               OBJ("resourceFieldRef", t_resource_selector),
                                               ANY("configMapKeyRef"),
                                               ANY("secretKeyRef"),
                                               ANY("fileKeyRef"),
                                               END};
static const wh_inject_type t_env_source = {"EnvVarSource", f_env_source, 0};

static const wh_inject_field f_env_var[] = {SREQ("name"), S("value"), OBJ("valueFrom", t_env_source), END};
static const wh_inject_type t_env_var = {"EnvVar", f_env_var, 0};

static const wh_inject_field f_resources[] = {QMAP("limits"), QMAP("requests"), LIST("claims", "name", NULL), END};
static const wh_inject_type t_resources = {"ResourceRequirements", f_resources, 0};

static const wh_inject_field f_volume_mount[] = {
    SREQ("name"), B("readOnly"),         P("recursiveReadOnly"), SREQ("mountPath"),
    S("subPath"), P("mountPropagation"), S("subPathExpr"),       END};
static const wh_inject_type t_volume_mount = {"VolumeMount", f_volume_mount, 0};

static const wh_inject_field f_exec[] = {PLIST("command"), END};
static const wh_inject_type t_exec = {"ExecAction", f_exec, 0};

static const wh_inject_field f_http_header[] = {SREQ("name"), SREQ("value"), END};
static const wh_inject_type t_http_header = {"HTTPHeader", f_http_header, 0};

static const wh_inject_field f_http_get[] = {
    S("path"), ANY("port"), S("host"), S("scheme"), LIST("httpHeaders", NULL, &t_http_header), END};
const wh_inject_type wh_inject_type_http_get = {"HTTPGetAction", f_http_get, 0};

static const wh_inject_field f_tcp_socket[] = {ANY("port"), S("host"), END};
const wh_inject_type wh_inject_type_tcp_socket = {"TCPSocketAction", f_tcp_socket, 0};

static const wh_inject_field f_grpc[] = {IREQ("port"), P("service"), END};
const wh_inject_type wh_inject_type_grpc = {"GRPCAction", f_grpc, 0};

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
static const wh_inject_type t_probe = {"Probe", f_probe, 0};

static const wh_inject_field f_lifecycle_handler[] = {OBJ("exec", t_exec), OBJ("httpGet", wh_inject_type_http_get),
                                                      OBJ("tcpSocket", wh_inject_type_tcp_socket), ANY("sleep"), END};
static const wh_inject_type t_lifecycle_handler = {"LifecycleHandler", f_lifecycle_handler, 0};

static const wh_inject_field f_lifecycle[] = {OBJ("postStart", t_lifecycle_handler),
                                              OBJ("preStop", t_lifecycle_handler), P("stopSignal"), END};
static const wh_inject_type t_lifecycle = {"Lifecycle", f_lifecycle, 0};

static const wh_inject_field f_capabilities[] = {PLIST("add"), PLIST("drop"), END};
static const wh_inject_type t_capabilities = {"Capabilities", f_capabilities, 1};

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
static const wh_inject_type t_security_context = {"SecurityContext", f_security_context, 1};

static const wh_inject_field f_container[] = {SREQ("name"),
                                              S("image"),
                                              PLIST("command"),
                                              PLIST("args"),
                                              S("workingDir"),
                                              LIST("ports", "containerPort", &wh_inject_type_container_port),
                                              LIST("envFrom", NULL, NULL),
                                              LIST("env", "name", &t_env_var),
                                              {"resources", WH_K_OBJ, WH_F_ALWAYS, NULL, &t_resources, NULL},
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
                                              {"tty", WH_K_BOOL, WH_F_OMIT, NULL, NULL, "TTY"},
                                              END};
const wh_inject_type wh_inject_type_container = {"Container", f_container, 0};
/* Go's EphemeralContainer holds a Container's fields (EphemeralContainerCommon): merged alike, but not a
 * v1.Container to templates. */
static const wh_inject_type t_ephemeral_container = {"EphemeralContainer", f_container, 0};

static const wh_inject_field f_pod_spec[] = {
    LIST("volumes", "name", &t_volume),
    LIST("initContainers", "name", &wh_inject_type_container),
    LIST("containers", "name", &wh_inject_type_container),
    LIST("ephemeralContainers", "name", &t_ephemeral_container),
    S("restartPolicy"),
    P("terminationGracePeriodSeconds"),
    P("activeDeadlineSeconds"),
    {"dnsPolicy", WH_K_STR, WH_F_OMIT, NULL, NULL, "DNSPolicy"},
    MAP("nodeSelector"),
    S("serviceAccountName"),
    {"serviceAccount", WH_K_STR, WH_F_OMIT, NULL, NULL, "DeprecatedServiceAccount"},
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
    {"dnsConfig", WH_K_ANY, 0, NULL, NULL, "DNSConfig"},
    LIST("readinessGates", NULL, NULL),
    P("runtimeClassName"),
    P("enableServiceLinks"),
    P("preemptionPolicy"),
    QMAP("overhead"),
    LIST("topologySpreadConstraints", "topologyKey", NULL),
    P("setHostnameAsFQDN"),
    {"os", WH_K_ANY, 0, NULL, NULL, "OS"},
    P("hostUsers"),
    LIST("schedulingGates", "name", NULL),
    LIST("resourceClaims", "name", NULL),
    OBJ("resources", t_resources),
    END};
const wh_inject_type wh_inject_type_pod_spec = {"PodSpec", f_pod_spec, 0};

static const wh_inject_field f_pod[] = {
    S("apiVersion"), S("kind"), OBJ("metadata", wh_inject_type_object_meta), OBJ("spec", wh_inject_type_pod_spec),
    ANY("status"),   END};
const wh_inject_type wh_inject_type_pod = {"Pod", f_pod, 0};

/* ---- workload objects (kube-inject round-trips the whole object) ---- */

#define IFILL(n)                                                                                                       \
    {                                                                                                                  \
        n, WH_K_INT, WH_F_FILL, NULL, NULL, NULL                                                                       \
    }
#define BFILL(n)                                                                                                       \
    {                                                                                                                  \
        n, WH_K_BOOL, WH_F_FILL, NULL, NULL, NULL                                                                      \
    }
#define STATUS(t)                                                                                                      \
    {                                                                                                                  \
        "status", WH_K_OBJ, WH_F_FILL, NULL, &t, NULL                                                                  \
    }

static const wh_inject_field f_pod_template[] = {OBJ("metadata", wh_inject_type_object_meta),
                                                 OBJ("spec", wh_inject_type_pod_spec), END};
static const wh_inject_type t_pod_template = {"PodTemplateSpec", f_pod_template, 0};

static const wh_inject_field f_deployment_spec[] = {P("replicas"),
                                                    ANY("selector"),
                                                    OBJ("template", t_pod_template),
                                                    ANY("strategy"),
                                                    I("minReadySeconds"),
                                                    P("revisionHistoryLimit"),
                                                    B("paused"),
                                                    P("progressDeadlineSeconds"),
                                                    END};
static const wh_inject_type t_deployment_spec = {"DeploymentSpec", f_deployment_spec, 0};

static const wh_inject_field f_daemonset_spec[] = {ANY("selector"),           OBJ("template", t_pod_template),
                                                   ANY("updateStrategy"),     I("minReadySeconds"),
                                                   P("revisionHistoryLimit"), END};
static const wh_inject_type t_daemonset_spec = {"DaemonSetSpec", f_daemonset_spec, 0};
static const wh_inject_field f_daemonset_status[] = {IFILL("currentNumberScheduled"),
                                                     IFILL("numberMisscheduled"),
                                                     IFILL("desiredNumberScheduled"),
                                                     IFILL("numberReady"),
                                                     I("observedGeneration"),
                                                     I("updatedNumberScheduled"),
                                                     I("numberAvailable"),
                                                     I("numberUnavailable"),
                                                     END};
static const wh_inject_type t_daemonset_status = {"DaemonSetStatus", f_daemonset_status, 0};

static const wh_inject_field f_statefulset_spec[] = {P("replicas"),
                                                     ANY("selector"),
                                                     OBJ("template", t_pod_template),
                                                     S("serviceName"),
                                                     S("podManagementPolicy"),
                                                     ANY("updateStrategy"),
                                                     P("revisionHistoryLimit"),
                                                     I("minReadySeconds"),
                                                     END};
static const wh_inject_type t_statefulset_spec = {"StatefulSetSpec", f_statefulset_spec, 0};
static const wh_inject_field f_statefulset_status[] = {
    I("observedGeneration"), IFILL("replicas"),          I("readyReplicas"),
    I("currentReplicas"),    I("updatedReplicas"),       S("currentRevision"),
    S("updateRevision"),     IFILL("availableReplicas"), END};
static const wh_inject_type t_statefulset_status = {"StatefulSetStatus", f_statefulset_status, 0};

static const wh_inject_field f_replicaset_spec[] = {P("replicas"), I("minReadySeconds"), ANY("selector"),
                                                    OBJ("template", t_pod_template), END};
static const wh_inject_type t_replicaset_spec = {"ReplicaSetSpec", f_replicaset_spec, 0};
static const wh_inject_field f_replicas_status[] = {IFILL("replicas"),       I("fullyLabeledReplicas"),
                                                    I("readyReplicas"),      I("availableReplicas"),
                                                    I("observedGeneration"), END};
static const wh_inject_type t_replicas_status = {"ReplicaSetStatus", f_replicas_status, 0};

static const wh_inject_field f_rc_spec[] = {P("replicas"), I("minReadySeconds"), MAP("selector"),
                                            OBJ("template", t_pod_template), END};
static const wh_inject_type t_rc_spec = {"ReplicationControllerSpec", f_rc_spec, 0};

static const wh_inject_field f_job_spec[] = {OBJ("template", t_pod_template), END};
static const wh_inject_type t_job_spec = {"JobSpec", f_job_spec, 0};
static const wh_inject_field f_job_template[] = {OBJ("metadata", wh_inject_type_object_meta), OBJ("spec", t_job_spec),
                                                 END};
static const wh_inject_type t_job_template = {"JobTemplateSpec", f_job_template, 0};
static const wh_inject_field f_cronjob_spec[] = {SREQ("schedule"), S("concurrencyPolicy"),
                                                 OBJ("jobTemplate", t_job_template), END};
static const wh_inject_type t_cronjob_spec = {"CronJobSpec", f_cronjob_spec, 0};

static const wh_inject_field f_dc_spec[] = {ANY("strategy"),
                                            I("minReadySeconds"),
                                            IFILL("replicas"),
                                            P("revisionHistoryLimit"),
                                            BFILL("test"),
                                            B("paused"),
                                            MAP("selector"),
                                            OBJ("template", t_pod_template),
                                            END};
static const wh_inject_type t_dc_spec = {"DeploymentConfigSpec", f_dc_spec, 0};
static const wh_inject_field f_dc_status[] = {
    IFILL("latestVersion"),     IFILL("observedGeneration"),  IFILL("replicas"),  IFILL("updatedReplicas"),
    IFILL("availableReplicas"), IFILL("unavailableReplicas"), I("readyReplicas"), END};
static const wh_inject_type t_dc_status = {"DeploymentConfigStatus", f_dc_status, 0};

#define WORKLOAD(var, spec_type, status_field)                                                                         \
    static const wh_inject_field f_##var[] = {                                                                         \
        S("apiVersion"),        S("kind"),    OBJ("metadata", wh_inject_type_object_meta),                             \
        OBJ("spec", spec_type), status_field, END};                                                                    \
    static const wh_inject_type t_##var = {#var, f_##var, 0}

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

const wh_inject_field *wh_inject_schema_field(const wh_inject_type *type, const char *name)
{
    const wh_inject_field *f;

    if (type == NULL)
        return NULL;
    for (f = type->fields; f->name != NULL; f++)
        if (f->name[0] == name[0] && strcmp(f->name, name) == 0) /* first byte: most keys differ there */
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
