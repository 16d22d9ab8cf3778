/*
 * wh_inject_schema.h - the shape of a core/v1 Pod as Go sees it.
 *
 * Istio merges template overlays with Kubernetes' strategic merge patch, which
 * needs each list's merge key, and it round-trips every pod through the Go
 * struct, which drops zero-valued `omitempty` fields and canonicalises
 * quantities.  This table carries both facts for the Pod fields injection
 * touches; fields it does not know are treated as opaque JSON.
 */
#ifndef WH_INJECT_SCHEMA_H
#define WH_INJECT_SCHEMA_H

#include <stddef.h>

typedef enum wh_inject_kind {
    WH_K_STR,   /* string value field */
    WH_K_INT,   /* integer value field */
    WH_K_BOOL,  /* bool value field */
    WH_K_PTR,   /* pointer to a scalar: any non-null value is kept (false, 0 too) */
    WH_K_ANY,   /* opaque (IntOrString, RawExtension, unknown): kept as is */
    WH_K_OBJ,   /* struct of type `type` */
    WH_K_LIST,  /* list of struct `type`: merged by `merge_key`, atomic when NULL */
    WH_K_PLIST, /* list of scalars: union when WH_F_MERGE, else atomic */
    WH_K_MAP,   /* map[string]string: merged key by key */
    WH_K_QTY,   /* resource.Quantity */
    WH_K_QMAP,  /* map[string]Quantity (ResourceList) */
} wh_inject_kind;

enum {
    WH_F_OMIT = 1,   /* omitempty on a scalar: Go drops it when empty (wh_go_is_empty: "" / 0 / false) */
    WH_F_MERGE = 2,  /* patchStrategy merge on a scalar list */
    WH_F_ALWAYS = 4, /* a struct without omitempty: Go always prints it (`"resources":{}`) */
    WH_F_FILL = 8    /* Go prints this field even when absent from the input (a zero
                      * int/bool or a struct holding such fields, e.g. DaemonSet status) */
};

typedef struct wh_inject_type wh_inject_type;

typedef struct wh_inject_field {
    const char *name;
    unsigned char kind;
    unsigned char flags;
    const char *merge_key;
    const wh_inject_type *type;
} wh_inject_field;

struct wh_inject_type {
    const char *name;
    const wh_inject_field *fields; /* terminated by a NULL name */
    int closed;                    /* `fields` is every field of the Go type: decoding drops any other key */
};

extern const wh_inject_type wh_inject_type_pod;
extern const wh_inject_type wh_inject_type_pod_spec;
extern const wh_inject_type wh_inject_type_container;
extern const wh_inject_type wh_inject_type_object_meta;
extern const wh_inject_type wh_inject_type_http_get;
extern const wh_inject_type wh_inject_type_tcp_socket;
extern const wh_inject_type wh_inject_type_grpc;

/* The Go type of a top-level workload object kube-inject handles (Deployment,
 * DaemonSet, StatefulSet, ReplicaSet, ReplicationController, Job, CronJob,
 * DeploymentConfig, Pod), or NULL. */
const wh_inject_type *wh_inject_schema_workload(const char *kind);

/* The field `name` of `type`, or NULL when unknown (or type is NULL). */
const wh_inject_field *wh_inject_schema_field(const wh_inject_type *type, const char *name);

#endif
