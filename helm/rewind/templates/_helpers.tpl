{{/* The release's base name, at most 63 characters less room for the component suffixes. */}}
{{- define "rewind.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "rewind.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every object; selector labels are the stable subset. */}}
{{- define "rewind.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "rewind.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "rewind.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rewind.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The schema version this release needs, from Chart.yaml's annotation. */}}
{{- define "rewind.schemaVersion" -}}
{{- index .Chart.Annotations "rewind.dev/schema-version" -}}
{{- end -}}

{{- define "rewind.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "rewind.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret with DATABASE_URL and REDIS_URL: the user's, or the one this chart makes. */}}
{{- define "rewind.secretName" -}}
{{- default (printf "%s-connections" (include "rewind.fullname" .)) .Values.existingSecret -}}
{{- end -}}

{{/* The image of a runtime: {{ include "rewind.image" (dict "root" $ "runtime" "node24") }}. */}}
{{- define "rewind.image" -}}
{{- $runtime := index .root.Values.runtimes .runtime -}}
{{- if not $runtime -}}
{{- fail (printf "runtime %q is not one of runtimes: %s" .runtime (keys .root.Values.runtimes | sortAlpha | join ", ")) -}}
{{- end -}}
{{- $tag := default (printf "%s-%s" .root.Chart.AppVersion .runtime) $runtime.tag -}}
{{- printf "%s:%s" .root.Values.image.repository $tag -}}
{{- end -}}

{{/* Environment every Rewind container shares: connections, blobs, extra env. */}}
{{- define "rewind.env" -}}
- name: DATABASE_URL
  valueFrom: { secretKeyRef: { name: {{ include "rewind.secretName" . }}, key: DATABASE_URL } }
- name: REDIS_URL
  valueFrom: { secretKeyRef: { name: {{ include "rewind.secretName" . }}, key: REDIS_URL } }
{{- with .Values.blobs.s3.existingSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom: { secretKeyRef: { name: {{ . }}, key: AWS_ACCESS_KEY_ID } }
- name: AWS_SECRET_ACCESS_KEY
  valueFrom: { secretKeyRef: { name: {{ . }}, key: AWS_SECRET_ACCESS_KEY } }
{{- end }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{- define "rewind.envFrom" -}}
- configMapRef: { name: {{ include "rewind.fullname" . }}-config }
{{- range .Values.envFromSecrets }}
- secretRef: { name: {{ . }} }
{{- end }}
{{- end -}}

{{/*
Waits until the database's schema is this release's (the migration Job applies it): a service
started against an older schema would refuse to run and crash-loop meanwhile.
*/}}
{{- define "rewind.waitForSchema" -}}
- name: wait-for-schema
  image: {{ include "rewind.image" (dict "root" . "runtime" .Values.image.runtime) }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args: ["migrate", "--check", "--wait", {{ .Values.migrations.waitTimeout | quote }}]
  env:
    {{- include "rewind.env" . | nindent 4 }}
  envFrom:
    {{- include "rewind.envFrom" . | nindent 4 }}
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  resources:
    {{- toYaml .Values.migrations.resources | nindent 4 }}
{{- end -}}

{{/* A writable /tmp: the root filesystem is read-only. */}}
{{- define "rewind.tmpVolume" -}}
- name: tmp
  emptyDir: { sizeLimit: 1Gi }
{{- end -}}
{{- define "rewind.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* The migration Job's pod: only what migrating needs, so unrelated values leave it alone. */}}
{{- define "rewind.migratePod" -}}
metadata:
  labels:
    {{- include "rewind.selectorLabels" . | nindent 4 }}
    app.kubernetes.io/component: migrate
spec:
  restartPolicy: OnFailure
  serviceAccountName: {{ include "rewind.serviceAccountName" . }}
  automountServiceAccountToken: false
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  containers:
    - name: migrate
      image: {{ include "rewind.image" (dict "root" . "runtime" .Values.image.runtime) }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args: ["migrate"]
      env:
        - name: DATABASE_URL
          valueFrom: { secretKeyRef: { name: {{ include "rewind.secretName" . }}, key: DATABASE_URL } }
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      resources:
        {{- toYaml .Values.migrations.resources | nindent 8 }}
      volumeMounts:
        {{- include "rewind.tmpMount" . | nindent 8 }}
  volumes:
    {{- include "rewind.tmpVolume" . | nindent 4 }}
{{- end -}}
