{{- define "kernelcache.fullname" -}}
{{- printf "%s-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "kernelcache.labels" -}}
app.kubernetes.io/name: kernelcache
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
{{- define "kernelcache.selector" -}}
app.kubernetes.io/name: kernelcache
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
