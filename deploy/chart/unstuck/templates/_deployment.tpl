{{/*
One Deployment of the bot's image: `component` (bot | worker) names it and selects its pods, `role`
is its UNSTUCK_ROLE (all | bot | worker), `replicas` and `resources` its own.
*/}}
{{- define "unstuck.deployment" -}}
{{- $root := .root -}}
{{- $component := .component -}}
{{- $role := .role -}}
{{- $name := ternary (include "unstuck.fullname" $root) (printf "%s-%s" (include "unstuck.fullname" $root) $component | trunc 63 | trimSuffix "-") (eq $component "bot") -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "unstuck.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
spec:
  replicas: {{ .replicas }}
  selector:
    matchLabels:
      {{- include "unstuck.selectorLabels" (dict "root" $root "component" $component) | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }
  template:
    metadata:
      labels:
        {{- include "unstuck.selectorLabels" (dict "root" $root "component" $component) | nindent 8 }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- $annotations := deepCopy (default (dict) $root.Values.podAnnotations) }}
      {{- /* A changed clusters file or AWS config rolls the pods (neither holds a secret). */}}
      {{- if $root.Values.clusters }}
      {{- $_ := set $annotations "checksum/clusters" (include "unstuck.clustersFile" $root | sha256sum) }}
      {{- end }}
      {{- if $root.Values.aws.config }}
      {{- $_ := set $annotations "checksum/aws-config" ($root.Values.aws.config | sha256sum) }}
      {{- end }}
      {{- with $annotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ ternary (include "unstuck.workerServiceAccountName" $root) (include "unstuck.serviceAccountName" $root) (eq $component "worker") }}
      {{- if include "unstuck.hub" $root }}
      # A fleet's hub talks to Slack and Redis only: no Kubernetes API token in its pods.
      automountServiceAccountToken: false
      {{- end }}
      {{- with $root.Values.priorityClassName }}
      priorityClassName: {{ . | quote }}
      {{- end }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      # A graceful stop (stop taking work, let running jobs finish, close Redis) is bounded by
      # UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS; the kubelet waits a little longer before SIGKILL.
      terminationGracePeriodSeconds: {{ add $root.Values.config.shutdownTimeoutSeconds 15 }}
      containers:
        - name: unstuck
          image: {{ include "unstuck.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            {{- if ne $role "worker" }}
            - { name: http, containerPort: {{ $root.Values.http.port }}, protocol: TCP }
            {{- end }}
            - { name: ops, containerPort: {{ $root.Values.ops.port }}, protocol: TCP }
          env:
            - { name: UNSTUCK_ROLE, value: {{ $role }} }
            {{- if ne $role "worker" }}
            - { name: PORT, value: {{ $root.Values.http.port | quote }} }
            {{- end }}
            {{- with $root.Values.nodeOptions }}
            - { name: NODE_OPTIONS, value: {{ . | quote }} }
            {{- end }}
            - { name: UNSTUCK_OPS_PORT, value: {{ $root.Values.ops.port | quote }} }
            - name: SLACK_BOT_TOKEN
              valueFrom: { secretKeyRef: { name: {{ $root.Values.slack.existingSecret }}, key: {{ $root.Values.slack.keys.botToken }} } }
            {{- if eq $role "worker" }}
            {{- /* A worker receives nothing from Slack: the bot token is all it needs. */}}
            {{- else if eq $root.Values.slack.mode "socket" }}
            - name: SLACK_APP_TOKEN
              valueFrom: { secretKeyRef: { name: {{ $root.Values.slack.existingSecret }}, key: {{ $root.Values.slack.keys.appToken }} } }
            {{- else }}
            - name: SLACK_SIGNING_SECRET
              valueFrom: { secretKeyRef: { name: {{ $root.Values.slack.existingSecret }}, key: {{ $root.Values.slack.keys.signingSecret }} } }
            {{- end }}
            {{- /* Each role mounts its own private key only: a worker pod never holds the bot's. */}}
            {{- $signing := $root.Values.signing }}
            {{- if ne $role "worker" }}
            - name: UNSTUCK_BOT_SIGNING_KEY
              valueFrom: { secretKeyRef: { name: {{ $signing.botKeySecret.name }}, key: {{ $signing.botKeySecret.key }} } }
            {{- with $signing.legacyApprovalKeySecret.name }}
            - name: UNSTUCK_APPROVAL_KEY
              valueFrom: { secretKeyRef: { name: {{ . }}, key: {{ $signing.legacyApprovalKeySecret.key }} } }
            {{- end }}
            {{- end }}
            {{- if ne $role "bot" }}
            - name: UNSTUCK_WORKER_SIGNING_KEY
              valueFrom: { secretKeyRef: { name: {{ $signing.workerKeySecret.name }}, key: {{ $signing.workerKeySecret.key }} } }
            {{- end }}
            - { name: UNSTUCK_BOT_PUBLIC_KEYS, value: {{ join "," $signing.botPublicKeys | quote }} }
            {{- with $signing.workerPublicKeys }}
            - { name: UNSTUCK_WORKER_PUBLIC_KEYS, value: {{ join "," . | quote }} }
            {{- end }}
            {{- if $root.Values.redis.bundled.enabled }}
            # Defined before REDIS_URL, which expands it.
            - name: REDIS_PASSWORD
              valueFrom: { secretKeyRef: { name: {{ include "unstuck.redisSecretName" $root }}, key: {{ include "unstuck.redisSecretKey" $root }} } }
            - { name: REDIS_URL, value: "redis://:$(REDIS_PASSWORD)@{{ include "unstuck.redisName" $root }}:6379" }
            {{- else if $root.Values.redis.external.urlSecret.name }}
            - name: REDIS_URL
              valueFrom: { secretKeyRef: { name: {{ $root.Values.redis.external.urlSecret.name }}, key: {{ $root.Values.redis.external.urlSecret.key }} } }
            {{- else }}
            - { name: REDIS_URL, value: {{ $root.Values.redis.external.url | quote }} }
            {{- end }}
            {{- if and (not $root.Values.redis.bundled.enabled) $root.Values.redis.external.caSecret.name }}
            - { name: REDIS_TLS_CA_FILE, value: "/etc/unstuck/redis-ca/{{ $root.Values.redis.external.caSecret.key }}" }
            {{- end }}
            - { name: UNSTUCK_CHANNELS, value: {{ join "," $root.Values.config.channels | quote }} }
            - { name: UNSTUCK_APPROVERS, value: {{ join "," $root.Values.config.approvers | quote }} }
            - { name: UNSTUCK_APPROVALS_REQUIRED, value: {{ $root.Values.config.approvalsRequired | quote }} }
            - { name: UNSTUCK_REQUEST_TTL_SECONDS, value: {{ $root.Values.config.requestTtlSeconds | quote }} }
            {{- if $root.Values.guard.namespaceDeletion.enabled }}
            - { name: UNSTUCK_DELETION_WINDOW_SECONDS, value: {{ $root.Values.guard.namespaceDeletion.windowSeconds | quote }} }
            {{- end }}
            {{- with $root.Values.config.auditChannel }}
            - { name: UNSTUCK_AUDIT_CHANNEL, value: {{ . | quote }} }
            {{- end }}
            {{- with $root.Values.config.watchChannel }}
            - { name: UNSTUCK_WATCH_CHANNEL, value: {{ . | quote }} }
            {{- end }}
            - { name: UNSTUCK_COMMAND, value: {{ $root.Values.config.command | quote }} }
            - { name: UNSTUCK_LOG_LEVEL, value: {{ $root.Values.config.logLevel | quote }} }
            - { name: UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS, value: {{ $root.Values.config.shutdownTimeoutSeconds | quote }} }
            {{- with $root.Values.config.kubeRequestBudget }}
            - { name: UNSTUCK_KUBE_REQUEST_BUDGET, value: {{ . | quote }} }
            {{- end }}
            {{- if and $root.Values.aws.enabled $root.Values.aws.region }}
            - { name: AWS_REGION, value: {{ $root.Values.aws.region | quote }} }
            {{- end }}
            {{- with include "unstuck.clusterName" $root }}
            - { name: UNSTUCK_CLUSTER_NAME, value: {{ . | quote }} }
            {{- end }}
            {{- if $root.Values.clusters }}
            - { name: UNSTUCK_CLUSTERS_FILE, value: /etc/unstuck/clusters/clusters.yaml }
            {{- end }}
            {{- if $root.Values.aws.config }}
            - { name: AWS_CONFIG_FILE, value: /etc/unstuck/aws/config }
            {{- end }}
            {{- with $root.Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- with $root.Values.envFrom }}
          envFrom:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          livenessProbe:
            httpGet: { path: /healthz, port: ops }
            periodSeconds: 20
            timeoutSeconds: 5
            failureThreshold: 3
          readinessProbe:
            httpGet: { path: /readyz, port: ops }
            periodSeconds: 10
            timeoutSeconds: 5
            failureThreshold: 3
          resources:
            {{- toYaml .resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            # The only writable path (readOnlyRootFilesystem); the bot itself writes nothing.
            - { name: tmp, mountPath: /tmp }
            {{- if and (not $root.Values.redis.bundled.enabled) $root.Values.redis.external.caSecret.name }}
            - { name: redis-ca, mountPath: /etc/unstuck/redis-ca, readOnly: true }
            {{- end }}
            {{- if $root.Values.clusters }}
            - { name: clusters, mountPath: /etc/unstuck/clusters, readOnly: true }
            {{- end }}
            {{- if $root.Values.aws.config }}
            - { name: aws-config, mountPath: /etc/unstuck/aws, readOnly: true }
            {{- end }}
            {{- with $root.Values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: { sizeLimit: 64Mi }
        {{- if and (not $root.Values.redis.bundled.enabled) $root.Values.redis.external.caSecret.name }}
        - name: redis-ca
          secret: { secretName: {{ $root.Values.redis.external.caSecret.name }} }
        {{- end }}
        {{- if $root.Values.clusters }}
        - name: clusters
          configMap: { name: {{ include "unstuck.clustersName" $root }} }
        {{- end }}
        {{- if $root.Values.aws.config }}
        - name: aws-config
          configMap: { name: {{ include "unstuck.awsConfigName" $root }} }
        {{- end }}
        {{- with $root.Values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $root.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.topologySpreadConstraints }}
      {{- $constraints := list }}
      {{- range . }}
      {{- $c := deepCopy . }}
      {{- if not (hasKey $c "labelSelector") }}
      {{- $_ := set $c "labelSelector" (dict "matchLabels" (include "unstuck.selectorLabels" (dict "root" $root "component" $component) | fromYaml)) }}
      {{- end }}
      {{- $constraints = append $constraints $c }}
      {{- end }}
      topologySpreadConstraints:
        {{- toYaml $constraints | nindent 8 }}
      {{- end }}
      affinity:
        {{- if $root.Values.affinity }}
        {{- toYaml $root.Values.affinity | nindent 8 }}
        {{- else }}
        # Replicas of one Deployment on different nodes when there are several.
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    {{- include "unstuck.selectorLabels" (dict "root" $root "component" $component) | nindent 20 }}
        {{- end }}
{{- end -}}
