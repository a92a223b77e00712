{{- define "kernelcache.fullname" -}}
{{- printf "%s-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kernelcache.labels" -}}
app.kubernetes.io/name: kernelcache
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "kernelcache.selector" -}}
app.kubernetes.io/name: kernelcache
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
An image reference from {registry, repository, tag} and the chart.
Usage: include "kernelcache.image" (list $ .Values.image)
global.imageRegistry wins over the image's own registry; a repository whose
first path component names a registry (contains "." or ":", or is
"localhost", the rule of Docker's reference parser) is used as written.
*/}}
{{- define "kernelcache.image" -}}
{{- $root := index . 0 -}}
{{- $img := index . 1 -}}
{{- $repo := $img.repository -}}
{{- $first := index (splitList "/" $repo) 0 -}}
{{- $hasRegistry := and (contains "/" $repo) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- $registry := "" -}}
{{- if not $hasRegistry -}}
{{- $registry = ($root.Values.global).imageRegistry | default $img.registry | default "" -}}
{{- end -}}
{{- $tag := $img.tag | default $root.Chart.AppVersion | toString -}}
{{- if $registry -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $registry) $repo $tag -}}
{{- else -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}
{{- end -}}

{{/* The Secret the webhook serving certificate lives in. */}}
{{- define "kernelcache.webhookSecret" -}}
{{- printf "%s-webhook-tls" (include "kernelcache.fullname" .) -}}
{{- end -}}

{{/*
The namespaces the operator works in when watchNamespaces is set (unique,
in the order given). Empty: all namespaces.
*/}}
{{- define "kernelcache.watchNamespaces" -}}
{{- .Values.watchNamespaces | uniq | join "," -}}
{{- end -}}

{{/*
Kubelet service-discovery variable of a Service in the pod's own namespace:
kc-operator -> KC_OPERATOR_SERVICE_HOST (the real test node has no DNS).
*/}}
{{- define "kernelcache.serviceEnv" -}}
{{- . | upper | replace "-" "_" | replace "." "_" -}}
{{- end -}}

{{/*
The namespaced rules (a ClusterRole without watchNamespaces, a Role in each
watched namespace with it); docs/helm.md says why each verb is needed.
*/}}
{{- define "kernelcache.namespacedRules" -}}
# Informer (list/watch); one GET of a KernelCache after a failed pass;
# metadata.finalizers by merge patch. Never update.
- apiGroups: ["kernelcache.io"]
  resources: ["kernelcaches"]
  verbs: ["get", "list", "watch", "patch"]
# The one status write per reconcile pass (merge patch on /status).
- apiGroups: ["kernelcache.io"]
  resources: ["kernelcaches/status"]
  verbs: ["patch"]
# Not called directly: the Jobs and the claim it creates carry an
# ownerReference with blockOwnerDeletion: true, which the
# OwnerReferencesPermissionEnforcement admission plugin allows only to who
# may update the owner's finalizers.
- apiGroups: ["kernelcache.io"]
  resources: ["kernelcaches/finalizers"]
  verbs: ["update"]
# Informers: warmup pods (seal termination messages) and gated model pods.
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch"]
# Warmup and GC Jobs: informer, create, delete.
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["list", "watch", "create", "delete"]
# The cache claim it owns: informer, create, delete; existing claims are
# read from the informer.
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["list", "watch", "create", "delete"]
# Deployments and StatefulSets (informers, spec.template kept): the pod
# template a server warmup names in spec.warmup.server.workloadRef.
- apiGroups: ["apps"]
  resources: ["deployments", "statefulsets"]
  verbs: ["list", "watch"]
# Events (core v1) on KernelCaches: create, then patch the count of a repeat.
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end -}}
