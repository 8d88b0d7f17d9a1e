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

{{/* The chart's ServiceAccount (serviceAccount.create) or the existing one it names. */}}
{{- define "unstuck.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "unstuck.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create=false: the existing ServiceAccount the RBAC bindings and admission policies name" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The workers' ServiceAccount (worker.serviceAccount.create) or the existing one it names. */}}
{{- define "unstuck.workerServiceAccountName" -}}
{{- if .Values.worker.serviceAccount.create -}}
{{- default (printf "%s-worker" (include "unstuck.fullname" .) | trunc 63 | trimSuffix "-") .Values.worker.serviceAccount.name -}}
{{- else -}}
{{- required "worker.serviceAccount.name is required when worker.serviceAccount.create=false: the existing ServiceAccount the workers run as" .Values.worker.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The one ServiceAccount of the release that writes (finalizer patches, the deletion guard's
annotation): the workers' with worker.enabled, else the combined pods' (serviceAccount). The
admission policies admit those writes from it alone.
*/}}
{{- define "unstuck.writerServiceAccountName" -}}
{{- if .Values.worker.enabled -}}
{{- include "unstuck.workerServiceAccountName" . -}}
{{- else -}}
{{- include "unstuck.serviceAccountName" . -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccounts whose pods read the cluster, as a JSON list: the bot's (unless a hub's) and the workers'. */}}
{{- define "unstuck.readerServiceAccounts" -}}
{{- $readers := list -}}
{{- if and .Values.bot.enabled (not (include "unstuck.hub" .)) -}}
{{- $readers = append $readers (include "unstuck.serviceAccountName" .) -}}
{{- end -}}
{{- if .Values.worker.enabled -}}
{{- $readers = append $readers (include "unstuck.workerServiceAccountName" .) -}}
{{- end -}}
{{- toJson (uniq $readers) -}}
{{- end -}}

{{/* An image reference: <repository>@<digest> when a digest is given, else <repository>:<tag>. */}}
{{- define "unstuck.imageRef" -}}
{{- if .digest -}}
{{- printf "%s@%s" .repository .digest -}}
{{- else -}}
{{- printf "%s:%s" .repository .tag -}}
{{- end -}}
{{- end -}}

{{- define "unstuck.image" -}}
{{- include "unstuck.imageRef" (dict "repository" .Values.image.repository "tag" (.Values.image.tag | default .Chart.AppVersion) "digest" .Values.image.digest) -}}
{{- end -}}

{{/* UNSTUCK_CLUSTER_NAME: the fleet's clusterName, else the older aws.clusterName. */}}
{{- define "unstuck.clusterName" -}}
{{- .Values.clusterName | default .Values.aws.clusterName -}}
{{- end -}}

{{/* "true" when a process of this release runs the BullMQ workers (a worker or a combined bot). */}}
{{- define "unstuck.runsWorkers" -}}
{{- if or .Values.worker.enabled (and .Values.bot.enabled .Values.bot.runWorkers) -}}true{{- end -}}
{{- end -}}

{{/* UNSTUCK_ROLE of the bot Deployment: bot beside a worker Deployment or in a bot-only release, else all. */}}
{{/*
"true" for a fleet's hub: a bot-only release (its workers are other releases) serving a clusters
file and no cluster of its own. It reads no cluster and calls no AWS API: it gets no RBAC, no
admission policy and no ServiceAccount token.
*/}}
{{- define "unstuck.hub" -}}
{{- if and .Values.bot.enabled (not .Values.worker.enabled) (not .Values.bot.runWorkers) .Values.clusters (not (include "unstuck.clusterName" .)) -}}true{{- end -}}
{{- end -}}

{{- define "unstuck.botRole" -}}
{{- if or .Values.worker.enabled (not .Values.bot.runWorkers) -}}bot{{- else -}}all{{- end -}}
{{- end -}}

{{- define "unstuck.clustersName" -}}
{{- printf "%s-clusters" (include "unstuck.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "unstuck.awsConfigName" -}}
{{- printf "%s-aws-config" (include "unstuck.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The clusters file as mounted (UNSTUCK_CLUSTERS_FILE). */}}
{{- define "unstuck.clustersFile" -}}
{{- dict "clusters" .Values.clusters | toYaml -}}
{{- end -}}

{{- define "unstuck.redisName" -}}
{{- printf "%s-redis" (include "unstuck.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "unstuck.redisSecretName" -}}
{{- default (include "unstuck.redisName" .) .Values.redis.bundled.auth.existingSecret -}}
{{- end -}}

{{/* The key of the Redis password in that Secret. */}}
{{- define "unstuck.redisSecretKey" -}}
{{- if .Values.redis.bundled.auth.existingSecret -}}
{{- .Values.redis.bundled.auth.existingSecretKey -}}
{{- else -}}
password
{{- end -}}
{{- end -}}

{{/*
The shape of the deletion guard's annotation value as the bot writes it (GUARD_VALUE_PATTERN in
src/approvals/deletion-guard-token.ts; test/deploy/deletion-guard.test.ts keeps the two equal).
*/}}
{{- define "unstuck.guardValuePattern" -}}
^v2;req=[a-z2-7]{26};until=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z;sig=[A-Za-z0-9_-]{11}[.][A-Za-z0-9_-]{86}$
{{- end -}}

{{/* Fail early, naming the value, rather than render a bot that cannot start. */}}
{{- define "unstuck.validate" -}}
{{- if hasKey .Values.securityContext "pod" -}}
{{- fail "securityContext.pod moved to podSecurityContext (the standard key); securityContext is now the container's" -}}
{{- end -}}
{{- if hasKey .Values.securityContext "container" -}}
{{- fail "securityContext.container moved to securityContext itself (the container's SecurityContext, the standard key)" -}}
{{- end -}}
{{- if hasKey .Values.config "extraEnv" -}}
{{- fail "config.extraEnv moved to extraEnv (the standard key, a list of EnvVar)" -}}
{{- end -}}
{{- if and (not .Values.bot.enabled) (not .Values.serviceAccount.create) .Values.worker.serviceAccount.create -}}
{{- fail "serviceAccount is the bot's ServiceAccount and this release runs no bot: the workers run as worker.serviceAccount (set worker.serviceAccount.create=false and worker.serviceAccount.name to use an existing one)" -}}
{{- end -}}
{{- if not (or .Values.bot.enabled .Values.worker.enabled) -}}
{{- fail "bot.enabled and worker.enabled are both false: the release would run nothing" -}}
{{- end -}}
{{- /* Only the admission policies need ValidatingAdmissionPolicy v1 (Kubernetes >= 1.30); the bot runs on older clusters without them. */ -}}
{{- if semverCompare "<1.30.0-0" .Capabilities.KubeVersion.Version -}}
{{- range $guard := list "finalizerOnlyWrites" "namespaceDeletion" -}}
{{- if (index $.Values.guard $guard).enabled -}}
{{- fail (printf "guard.%s needs Kubernetes >= 1.30 (ValidatingAdmissionPolicy, admissionregistration.k8s.io/v1) and this cluster is %s: set guard.%s.enabled=false to install without it" $guard $.Capabilities.KubeVersion.Version $guard) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not .Values.image.repository -}}
{{- fail "image.repository is required: the image built from this repository's Dockerfile, in your registry" -}}
{{- end -}}
{{- if not (has .Values.slack.mode (list "socket" "http")) -}}
{{- fail (printf "slack.mode must be socket or http, not %q" .Values.slack.mode) -}}
{{- end -}}
{{- if not .Values.slack.existingSecret -}}
{{- fail "slack.existingSecret is required: the Secret holding the Slack tokens" -}}
{{- end -}}
{{- if and .Values.aws.enabled (not .Values.aws.region) (not .Values.clusters) -}}
{{- fail "aws.region is required (the cluster's AWS region), or set aws.enabled=false to diagnose in the cluster only" -}}
{{- end -}}
{{- if .Values.redis.bundled.enabled -}}
{{- $auth := .Values.redis.bundled.auth -}}
{{- if not (or $auth.existingSecret $auth.password) -}}
{{- fail "redis.bundled.auth.existingSecret (a Secret holding the password under redis.bundled.auth.existingSecretKey) or redis.bundled.auth.password is required when redis.bundled.enabled=true: the chart never invents a password, which would change on every render" -}}
{{- end -}}
{{- if and $auth.existingSecret (not $auth.existingSecretKey) -}}
{{- fail "redis.bundled.auth.existingSecretKey is required with redis.bundled.auth.existingSecret: the key holding the password" -}}
{{- end -}}
{{- if and $auth.password (not (regexMatch "^[A-Za-z0-9._~-]{16,}$" $auth.password)) -}}
{{- fail "redis.bundled.auth.password must be at least 16 URL-safe characters (letters, digits, . _ ~ -): it is part of REDIS_URL" -}}
{{- end -}}
{{- end -}}
{{- if and (not .Values.serviceAccount.create) .Values.aws.irsaRoleArn -}}
{{- fail "aws.irsaRoleArn annotates the ServiceAccount the chart creates: with serviceAccount.create=false annotate your own (eks.amazonaws.com/role-arn) and leave aws.irsaRoleArn empty" -}}
{{- end -}}
{{- if and .Values.aws.podIdentity .Values.aws.irsaRoleArn -}}
{{- fail "aws.podIdentity and aws.irsaRoleArn are two ways to give the pods an IAM role: set one" -}}
{{- end -}}
{{- $cluster := include "unstuck.clusterName" . -}}
{{- if .Values.clusters -}}
{{- if and $cluster (not (hasKey .Values.clusters $cluster)) -}}
{{- fail (printf "clusterName %q is not one of the clusters in `clusters` (%s)" $cluster (keys .Values.clusters | sortAlpha | join ", ")) -}}
{{- end -}}
{{- if and (include "unstuck.runsWorkers" .) (not $cluster) (gt (len .Values.clusters) 1) -}}
{{- fail "clusterName is required: this release runs workers and `clusters` names more than one cluster (which one do they serve?)" -}}
{{- end -}}
{{- end -}}
{{- if and (not .Values.redis.bundled.enabled) (not .Values.redis.external.url) (not .Values.redis.external.urlSecret.name) -}}
{{- fail "redis.external.url or redis.external.urlSecret.name is required when redis.bundled.enabled=false" -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.bot.enabled) -}}
{{- fail "ingress.enabled needs bot.enabled: a workers-only release serves nothing to Slack" -}}
{{- end -}}
{{- if and .Values.ingress.enabled (ne .Values.slack.mode "http") -}}
{{- fail "ingress.enabled needs slack.mode=http: in Socket Mode nothing is served to Slack" -}}
{{- end -}}
{{- if not (has .Values.rbac.readScope (list "all" "explicit")) -}}
{{- fail (printf "rbac.readScope must be all or explicit, not %q" .Values.rbac.readScope) -}}
{{- end -}}
{{- if and .Values.guard.namespaceDeletion.enabled (not .Values.worker.enabled) (or (not .Values.bot.enabled) (not .Values.bot.runWorkers) (lt (int .Values.replicaCount) 1)) -}}
{{- fail "guard.namespaceDeletion needs a process running the workers in this release (worker.enabled, or bot.runWorkers with replicaCount >= 1): they close every opened guard" -}}
{{- end -}}
{{- if and .Values.guard.namespaceDeletion.enabled .Values.worker.enabled (lt (int .Values.worker.replicaCount) 1) -}}
{{- fail "guard.namespaceDeletion needs worker.replicaCount >= 1: the workers close every opened guard" -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.host) -}}
{{- fail "ingress.host is required when ingress.enabled=true" -}}
{{- end -}}
{{- if not .Values.signing.botPublicKeys -}}
{{- fail "signing.botPublicKeys is required: every process verifies the bot's signatures with it (the public half of UNSTUCK_BOT_SIGNING_KEY; `npm run unstuck -- keys` makes a pair)" -}}
{{- end -}}
{{- if lt (len (keys (default (dict) .Values.clusters))) 2 -}}
{{- if not .Values.signing.workerPublicKeys -}}
{{- fail "signing.workerPublicKeys is required in a single-cluster release: the bot verifies what the workers execute with it (the public half of UNSTUCK_WORKER_SIGNING_KEY)" -}}
{{- end -}}
{{- else -}}
{{- range $name, $c := .Values.clusters -}}
{{- if not $c.publicKeys -}}
{{- fail (printf "clusters.%s.publicKeys is required in a fleet: the public keys of that cluster's workers, which the bot and every worker verify them with" $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
