/*
 * tag_int.h - the parts of `webhookctl tag` that are pure (JSON in, JSON out):
 * rendering the tag objects from the revision's injector webhook and the
 * overlap analysis (tag_render.c, tag_analyze.c).  tag.c does the flags, the
 * cluster calls and the output.
 */
#ifndef WH_CTL_TAG_INTERNAL_H
#define WH_CTL_TAG_INTERNAL_H

#include <jansson.h>

#include "wh_buf.h"
#include "wh_kube.h"
#include "wh_result.h"

#define TAG_LABEL "istio.io/tag"
#define REV_LABEL "istio.io/rev"
#define TAG_DEFAULT "default"
#define TAG_NEVER_MATCH_KEY "istio.io/deactivated"
#define TAG_NEVER_MATCH_VALUE "never-match"
#define TAG_DEFAULT_VALIDATOR "istiod-default-validator"
#define TAG_SERVICE_PREFIX "istiod-revision-tag-"
#define TAG_MWC_PREFIX "istio-revision-tag-"
#define TAG_FIELD_MANAGER "istio-ci" /* istioctl's, so either tool can take over the other's tags */

typedef struct tag_render_opts {
    const char *tag;
    const char *revision_flag;  /* --revision as typed */
    const char *istio_ns;       /* -i */
    const char *webhook_name;   /* --webhook-name or NULL */
    int auto_inject_namespaces; /* --auto-inject-namespaces (default tag only) */
} tag_render_opts;

/* The tag MWC built from the canonical (revision) MWC `canonical`; new reference. */
wh_code tag_render_mwc(const tag_render_opts *o, const json_t *canonical, json_t **out, wh_err *err);

/* istiod-default-validator for the default tag.  `existing` is the cluster's
 * current validator or NULL; its failure policies are inherited. */
wh_code tag_render_validator(const tag_render_opts *o, const json_t *canonical, const json_t *existing, json_t **out,
                             wh_err *err);

/* Service istiod-revision-tag-<tag>. */
wh_code tag_render_service(const tag_render_opts *o, json_t **out, wh_err *err);

/* The MWC name a tag gets: --webhook-name, else istio-revision-tag-<tag>[-<ns>]. */
wh_code tag_mwc_name(const tag_render_opts *o, wh_buf *out);

/* Replace every entry's selectors with the never-match selector (in place). */
wh_code tag_deactivate(json_t *mwc, wh_err *err);

/* Does every entry carry the never-match selectors? */
int tag_is_deactivated(const json_t *mwc);

/* Undo tag_deactivate: give every entry the selectors the chart gives it for
 * the MWC's own istio.io/rev (by entry name: rev.namespace., rev.object.,
 * namespace., object., auto.).  WH_E_UNSUPPORTED for other entry names. */
wh_code tag_reactivate(json_t *mwc, wh_err *err);

/* Overlap analysis of `webhooks` (an array of MWCs: the cluster's, with the
 * planned changes already applied).  Appends to `findings` (an array of
 * strings, "Error [IST0139] (MutatingWebhookConfiguration <n>) <msg>") the
 * findings for the MWC named `target`. */
wh_code tag_analyze_overlaps(const json_t *webhooks, const char *target, json_t *findings, wh_err *err);

/* Delete the objects of tag `tag`: its MutatingWebhookConfigurations
 * (`mwcs`, listed here when NULL), the ValidatingWebhookConfigurations
 * labelled with it, then its Services in `istio_ns` (`svcs`, likewise).
 * Prints each deletion; 0, or 1 with an "Error: ..." on stderr. */
int tag_delete_objects(wh_kube_client *c, const char *istio_ns, const char *tag, const json_t *mwcs,
                       const json_t *svcs);

#endif
