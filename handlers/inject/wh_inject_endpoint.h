/*
 * wh_inject_endpoint.h - constructor of webhookd's /inject endpoint, listed
 * in server/wh_server_endpoints.c with its flags:
 *   --revisions-dir DIR         one subdirectory per revision (config, values, mesh)
 *   --native-sidecars MODE      true|false|auto (istiod's ENABLE_NATIVE_SIDECARS)
 *   --compliance-policy NAME    istiod's COMPLIANCE_POLICY
 *   --platform NAME             istiod's PLATFORM (openshift)
 *   --env KEY=VALUE[,KEY=VALUE] environment the templates read (a comma starts a new
 *                               pair only before KEY=, so values may hold commas)
 */
#ifndef WH_INJECT_ENDPOINT_H
#define WH_INJECT_ENDPOINT_H

#include "wh_endpoint.h"
#include "wh_result.h"

wh_code wh_inject_endpoint_new(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err);

#endif
