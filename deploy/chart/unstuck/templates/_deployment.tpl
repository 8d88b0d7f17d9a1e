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
      {{- with $root.Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "unstuck.serviceAccountName" $root }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.securityContext.pod | nindent 8 }}
      # A graceful stop (stop taking work, let running jobs finish, close Redis) is bounded by
      # UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS; the kubelet waits a little longer before SIGKILL.
      terminationGracePeriodSeconds: {{ add $root.Values.config.shutdownTimeoutSeconds 15 }}
      containers:
        - name: unstuck
          image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag | default $root.Chart.AppVersion }}"
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
            - name: UNSTUCK_APPROVAL_KEY
              valueFrom: { secretKeyRef: { name: {{ $root.Values.slack.existingSecret }}, key: {{ $root.Values.slack.keys.approvalKey }} } }
            - name: UNSTUCK_APPROVAL_KEY_PREVIOUS
              valueFrom: { secretKeyRef: { name: {{ $root.Values.slack.existingSecret }}, key: {{ $root.Values.slack.keys.approvalKeyPrevious }}, optional: true } }
            {{- if $root.Values.redis.bundled.enabled }}
            # Defined before REDIS_URL, which expands it.
            - name: REDIS_PASSWORD
              valueFrom: { secretKeyRef: { name: {{ include "unstuck.redisSecretName" $root }}, key: password } }
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
            {{- if $root.Values.aws.enabled }}
            - { name: AWS_REGION, value: {{ $root.Values.aws.region | quote }} }
            {{- end }}
            {{- with $root.Values.aws.clusterName }}
            - { name: UNSTUCK_CLUSTER_NAME, value: {{ . | quote }} }
            {{- end }}
            {{- with $root.Values.config.extraEnv }}
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
            {{- toYaml $root.Values.securityContext.container | nindent 12 }}
          volumeMounts:
            # The only writable path (readOnlyRootFilesystem); the bot itself writes nothing.
            - { name: tmp, mountPath: /tmp }
            {{- if and (not $root.Values.redis.bundled.enabled) $root.Values.redis.external.caSecret.name }}
            - { name: redis-ca, mountPath: /etc/unstuck/redis-ca, readOnly: true }
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: { sizeLimit: 64Mi }
        {{- if and (not $root.Values.redis.bundled.enabled) $root.Values.redis.external.caSecret.name }}
        - name: redis-ca
          secret: { secretName: {{ $root.Values.redis.external.caSecret.name }} }
        {{- end }}
      {{- with $root.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
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
