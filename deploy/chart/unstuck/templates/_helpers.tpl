{{- define "unstuck.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "unstuck.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "unstuck.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "unstuck.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: bot or redis. */}}
{{- define "unstuck.selectorLabels" -}}
app.kubernetes.io/name: {{ include "unstuck.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "unstuck.serviceAccountName" -}}
{{- default (include "unstuck.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "unstuck.redisName" -}}
{{- printf "%s-redis" (include "unstuck.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "unstuck.redisSecretName" -}}
{{- default (include "unstuck.redisName" .) .Values.redis.bundled.auth.existingSecret -}}
{{- end -}}

{{/*
The shape of the deletion guard's annotation value as the bot writes it (GUARD_VALUE_PATTERN in
src/approvals/deletion-guard-token.ts; test/deploy/deletion-guard.test.ts keeps the two equal).
*/}}
{{- define "unstuck.guardValuePattern" -}}
^v1;req=[a-z2-7]{26};until=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z;mac=[A-Za-z0-9_-]{43}$
{{- end -}}

{{/* Fail early, naming the value, rather than render a bot that cannot start. */}}
{{- define "unstuck.validate" -}}
{{- if not .Values.image.repository -}}
{{- fail "image.repository is required: the image built from this repository's Dockerfile, in your registry" -}}
{{- end -}}
{{- if not (has .Values.slack.mode (list "socket" "http")) -}}
{{- fail (printf "slack.mode must be socket or http, not %q" .Values.slack.mode) -}}
{{- end -}}
{{- if not .Values.slack.existingSecret -}}
{{- fail "slack.existingSecret is required: the Secret holding the Slack tokens and UNSTUCK_APPROVAL_KEY" -}}
{{- end -}}
{{- if and .Values.aws.enabled (not .Values.aws.region) -}}
{{- fail "aws.region is required (the cluster's AWS region), or set aws.enabled=false to diagnose in the cluster only" -}}
{{- end -}}
{{- if and (not .Values.redis.bundled.enabled) (not .Values.redis.external.url) (not .Values.redis.external.urlSecret.name) -}}
{{- fail "redis.external.url or redis.external.urlSecret.name is required when redis.bundled.enabled=false" -}}
{{- end -}}
{{- if and .Values.ingress.enabled (ne .Values.slack.mode "http") -}}
{{- fail "ingress.enabled needs slack.mode=http: in Socket Mode nothing is served to Slack" -}}
{{- end -}}
{{- if not (has .Values.rbac.readScope (list "all" "explicit")) -}}
{{- fail (printf "rbac.readScope must be all or explicit, not %q" .Values.rbac.readScope) -}}
{{- end -}}
{{- if and .Values.guard.namespaceDeletion.enabled (not .Values.worker.enabled) (lt (int .Values.replicaCount) 1) -}}
{{- fail "guard.namespaceDeletion needs a process running the workers (replicaCount >= 1): they close every opened guard" -}}
{{- end -}}
{{- if and .Values.guard.namespaceDeletion.enabled .Values.worker.enabled (lt (int .Values.worker.replicaCount) 1) -}}
{{- fail "guard.namespaceDeletion needs worker.replicaCount >= 1: the workers close every opened guard" -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.host) -}}
{{- fail "ingress.host is required when ingress.enabled=true" -}}
{{- end -}}
{{- end -}}
