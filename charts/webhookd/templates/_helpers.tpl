{{/* Names, labels, and the serving certificate shared by every template. */}}

{{- define "webhookd.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "webhookd.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "webhookd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "webhookd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "webhookd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "webhookd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Where the kubelet's probes go: the plain-HTTP monitoring port (server.monitoringPort), or
the TLS webhook port when that is off. */}}
{{- define "webhookd.probePort" -}}
{{- if .Values.server.monitoringPort -}}
port: http-monitoring
scheme: HTTP
{{- else -}}
port: https
scheme: HTTPS
{{- end -}}
{{- end -}}

{{- define "webhookd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "webhookd.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "webhookd.tlsSecretName" -}}
{{- if eq .Values.certificates.mode "secret" -}}
{{- required "certificates.existingSecret is required with mode=secret" .Values.certificates.existingSecret -}}
{{- if not (or .Values.certificates.caBundle (index (.Values.certificates.patchCABundle | default dict) "enabled")) -}}
{{- fail "certificates.mode=secret needs certificates.caBundle or certificates.patchCABundle.enabled: without the CA the API server verifies no call to webhookd" -}}
{{- end -}}
{{- else -}}
{{- printf "%s-tls" (include "webhookd.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The names the serving certificate must cover. */}}
{{- define "webhookd.dnsNames" -}}
{{- $svc := include "webhookd.fullname" . -}}
{{- $names := list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) -}}
{{- concat $names .Values.certificates.extraDNSNames | toJson -}}
{{- end -}}

{{/*
webhookd.selfSignedCerts: in mode selfSigned, generate an ECDSA P-256 CA and
serving certificate (Helm >= 3.11 for genCAWithKey) once per render (Helm re-runs a named template on every include,
so the result is memoised in .Values._webhookdCerts) and reuse the Secret of
a previous release when there is one, so upgrades keep the caBundle.
*/}}
{{- define "webhookd.selfSignedCerts" -}}
{{- if not (hasKey .Values "_webhookdCerts") -}}
{{- $secret := lookup "v1" "Secret" .Release.Namespace (include "webhookd.tlsSecretName" .) -}}
{{- if and $secret (hasKey $secret.data "ca.crt") -}}
{{- $_ := set .Values "_webhookdCerts" (dict "ca" (index $secret.data "ca.crt" | b64dec) "crt" (index $secret.data "tls.crt" | b64dec) "key" (index $secret.data "tls.key" | b64dec)) -}}
{{- else -}}
{{- $days := int .Values.certificates.validityDays -}}
{{- $ca := genCAWithKey (printf "%s-ca" (include "webhookd.fullname" .)) $days (genPrivateKey "ecdsa") -}}
{{- $names := include "webhookd.dnsNames" . | fromJsonArray -}}
{{- $cert := genSignedCertWithKey (index $names 2) nil $names $days $ca (genPrivateKey "ecdsa") -}}
{{- $_ := set .Values "_webhookdCerts" (dict "ca" $ca.Cert "crt" $cert.Cert "key" $cert.Key) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
webhookd.caBundle: the base64 caBundle for a webhook configuration's
clientConfig (empty in certManager mode: cert-manager injects it).
*/}}
{{- define "webhookd.caBundle" -}}
{{- if eq .Values.certificates.mode "selfSigned" -}}
{{- include "webhookd.selfSignedCerts" . -}}
{{- .Values._webhookdCerts.ca | b64enc -}}
{{- else if eq .Values.certificates.mode "secret" -}}
{{- .Values.certificates.caBundle | b64enc -}}
{{- end -}}
{{- end -}}

{{/*
webhookd.webhookAnnotations: annotations every webhook configuration of this
chart carries (cert-manager's CA injection).
*/}}
{{- define "webhookd.webhookAnnotations" -}}
{{- if eq .Values.certificates.mode "certManager" -}}
cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace (include "webhookd.fullname" .) }}
{{- end -}}
{{- end -}}

{{/*
webhookd.clientConfig: the clientConfig block for a webhook at `path`:
  {{- include "webhookd.clientConfig" (dict "root" $ "path" "/inject") | nindent 4 }}
*/}}
{{- define "webhookd.clientConfig" -}}
service:
  name: {{ include "webhookd.fullname" .root }}
  namespace: {{ .root.Release.Namespace }}
  path: {{ .path | quote }}
  port: {{ .root.Values.service.port }}
{{- $ca := include "webhookd.caBundle" .root }}
{{- if $ca }}
caBundle: {{ $ca }}
{{- end }}
{{- end -}}

{{/*
Names of this chart's webhook configurations, shared by their templates and by
webhookd's --patch-ca-bundle wiring (Deployment args, RBAC resourceNames):
  webhookd.injectorName (dict "root" $ "rev" R): R "" = the default revision
  webhookd.validatorName $ / webhookd.defaultValidatorName $
  webhookd.tagName (dict "root" $ "tag" T): revisionTags' configuration, as
  `webhookctl tag generate` names it (its validator is istiod-default-validator)
  webhookd.mutatingConfigNames $ / webhookd.validatingConfigNames $: the
  rendered ones, revisionTags' included, comma-separated ("" when none).
*/}}
{{- define "webhookd.injectorName" -}}
{{- if .rev -}}
{{- printf "%s-sidecar-injector-%s-%s" (include "webhookd.fullname" .root) .rev .root.Release.Namespace | trunc 253 -}}
{{- else -}}
{{- printf "%s-sidecar-injector-%s" (include "webhookd.fullname" .root) .root.Release.Namespace | trunc 253 -}}
{{- end -}}
{{- end -}}

{{- define "webhookd.validatorName" -}}
{{- $rev := .Values.revision | default "" -}}
{{- printf "%s-validator%s-%s" (include "webhookd.fullname" .) (ternary "" (printf "-%s" $rev) (eq $rev "")) .Release.Namespace | trunc 253 -}}
{{- end -}}

{{- define "webhookd.defaultValidatorName" -}}
{{- printf "%s-default-validator" (include "webhookd.fullname" .) | trunc 253 -}}
{{- end -}}

{{- define "webhookd.tagName" -}}
{{- if eq .root.Release.Namespace "istio-system" -}}
{{- printf "istio-revision-tag-%s" (toString .tag) -}}
{{- else -}}
{{- printf "istio-revision-tag-%s-%s" (toString .tag) .root.Release.Namespace -}}
{{- end -}}
{{- end -}}

{{- define "webhookd.mutatingConfigNames" -}}
{{- $v := .Values.injection | default dict -}}
{{- $names := list -}}
{{- if ne (toString (index $v "enabled")) "false" -}}
{{- range (index $v "revisions" | default list) -}}
{{- $names = append $names (include "webhookd.injectorName" (dict "root" $ "rev" (toString .))) -}}
{{- end -}}
{{- if index $v "defaultRevision" -}}
{{- $names = append $names (include "webhookd.injectorName" (dict "root" $ "rev" "")) -}}
{{- end -}}
{{- range .Values.revisionTags -}}
{{- $names = append $names (include "webhookd.tagName" (dict "root" $ "tag" .)) -}}
{{- end -}}
{{- end -}}
{{- join "," $names -}}
{{- end -}}

{{- define "webhookd.validatingConfigNames" -}}
{{- $v := .Values.validation | default dict -}}
{{- $names := list -}}
{{- if ne (toString (index $v "enabled")) "false" -}}
{{- $names = append $names (include "webhookd.validatorName" .) -}}
{{- if index $v "defaultValidator" -}}
{{- $names = append $names (include "webhookd.defaultValidatorName" .) -}}
{{- end -}}
{{- end -}}
{{- if has "default" .Values.revisionTags -}}
{{- $names = append $names "istiod-default-validator" -}}
{{- end -}}
{{- join "," $names -}}
{{- end -}}
