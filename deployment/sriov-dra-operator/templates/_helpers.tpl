{{/* An image reference: repository:tag, the tag defaulting to the chart's appVersion. */}}
{{- define "sriov-dra.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) -}}
{{- end -}}

{{/* True (non-empty) in the DRA driver's multus mode, whatever the case of the value. */}}
{{- define "sriov-dra.multus" -}}
{{- if eq (lower .Values.agent.configurationMode) "multus" }}true{{ end -}}
{{- end -}}

{{/* The webhook configurations' annotations: cert-manager's CA injection when it issues the
certificate. */}}
{{- define "sriov-dra.webhookAnnotations" -}}
{{- if eq .Values.webhook.certificates "certManager" -}}
annotations: {cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/sriov-dra-serving-cert}
{{- end -}}
{{- end -}}

{{/* The Secret the operator reads its serving certificate from. */}}
{{- define "sriov-dra.webhookSecretName" -}}sriov-dra-webhook-server-cert{{- end -}}

{{/* The CA of the webhook's certificate, for clientConfig.caBundle: the chart's own (generated
once, then read back from the Secret on upgrades), or the value given with certificates: secret;
none with cert-manager, whose CA injector fills it in. */}}
{{- define "sriov-dra.caBundle" -}}
{{- if eq .Values.webhook.certificates "helm" -}}
caBundle: {{ (include "sriov-dra.webhookCertificate" . | fromYaml).ca }}
{{- else if and (eq .Values.webhook.certificates "secret") .Values.webhook.caBundle -}}
caBundle: {{ .Values.webhook.caBundle }}
{{- end -}}
{{- end -}}

{{/* The chart's webhook certificate as YAML {ca, crt, key}, each base64: the one in the existing
Secret when there is one (an upgrade keeps it, and the caBundle matches it), else a new CA and a
serving certificate for the webhook Service's names, valid for 10 years. Generated once per
render: the result is memoised in .Values so that the Secret and both webhook configurations
agree. */}}
{{- define "sriov-dra.webhookCertificate" -}}
{{- if not .Values.webhook.generated -}}
{{- $secret := lookup "v1" "Secret" .Release.Namespace (include "sriov-dra.webhookSecretName" .) -}}
{{- if and $secret (index $secret.data "ca.crt") (index $secret.data "tls.crt") (index $secret.data "tls.key") -}}
{{- $_ := set .Values.webhook "generated" (dict "ca" (index $secret.data "ca.crt") "crt" (index $secret.data "tls.crt") "key" (index $secret.data "tls.key")) -}}
{{- else -}}
{{- $service := printf "sriov-dra-webhook-service.%s.svc" .Release.Namespace -}}
{{- $ca := genCA "sriov-dra-webhook-ca" 3650 -}}
{{- $cert := genSignedCert $service nil (list $service (printf "%s.cluster.local" $service)) 3650 $ca -}}
{{- $_ := set .Values.webhook "generated" (dict "ca" ($ca.Cert | b64enc) "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc)) -}}
{{- end -}}
{{- end -}}
{{- toYaml .Values.webhook.generated -}}
{{- end -}}
