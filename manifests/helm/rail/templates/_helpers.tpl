{{/* Names and labels shared by every object of the chart. */}}
{{- define "rail.name" -}}raild{{- end -}}

{{- define "rail.labels" -}}
app.kubernetes.io/name: raild
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: rail
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "rail.selector" -}}
app.kubernetes.io/name: raild
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "rail.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Paths inside raild's container. Host paths are mounted at the same place, except the machine root. */}}
{{- define "rail.socket" -}}{{ trimSuffix "/" .Values.hostPaths.socketDir }}/raild.sock{{- end -}}
{{- define "rail.podResourcesSocket" -}}{{ trimSuffix "/" .Values.hostPaths.kubeletDir }}/pod-resources/kubelet.sock{{- end -}}

{{/* rail's conflist entry: the values' entry, with the socket when it is not the default one. */}}
{{- define "rail.entry" -}}
{{- $entry := merge (dict "type" "rail") (deepCopy .Values.cni.entry) -}}
{{- if ne (include "rail.socket" .) "/run/rail/raild.sock" -}}
{{- $_ := set $entry "socket" (include "rail.socket" .) -}}
{{- end -}}
{{- toJson $entry -}}
{{- end -}}

{{/* install-cni's flags, shared by the init container and the preStop hook. */}}
{{- define "rail.installArgs" -}}
- --from=/opt/rail/bin
- --to={{ .Values.cni.binDir }}
- --conf-dir={{ .Values.cni.confDir }}
- --mode={{ .Values.cni.install }}
- --config=/etc/rail/config.yaml
{{- end -}}

{{- define "rail.validate" -}}
{{- if not (has .Values.cni.install (list "chained" "nad")) -}}
{{- fail (printf "cni.install %q: use chained or nad" .Values.cni.install) -}}
{{- end -}}
{{- if not (has .Values.attachPolicy (list "gpu-or-annotated" "annotated" "all")) -}}
{{- fail (printf "attachPolicy %q: use gpu-or-annotated, annotated or all" .Values.attachPolicy) -}}
{{- end -}}
{{- if not (has (toString .Values.kubernetes.enabled) (list "auto" "true" "false")) -}}
{{- fail (printf "kubernetes.enabled %q: use auto, true or false" (toString .Values.kubernetes.enabled)) -}}
{{- end -}}
{{- if not (kindIs "slice" .Values.pools) -}}
{{- fail "pools: give at least one pool, e.g. --set pools[0].name=rail,pools[0].subnet=10.77.0.0/24, or pools: [] when every pool is a RailPool" -}}
{{- end -}}
{{- if ne (empty .Values.apiServer.host) (empty .Values.apiServer.port) -}}
{{- fail "apiServer: set both host and port (or neither: the kubernetes Service's address)" -}}
{{- end -}}
{{- if not (kindIs "slice" .Values.nodeClasses) -}}
{{- fail "nodeClasses: want a list of classes, each with name and nodeSelector (or [] for none)" -}}
{{- end -}}
{{- range $i, $c := .Values.nodeClasses -}}
{{- if not $c.name -}}
{{- fail (printf "nodeClasses[%d].name: give each class a name" $i) -}}
{{- end -}}
{{- if not $c.nodeSelector -}}
{{- fail (printf "nodeClasses[%d].nodeSelector: give matchLabels or matchExpressions (keys for every node belong at the top level)" $i) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.nodeClasses (eq (toString .Values.kubernetes.enabled) "false") -}}
{{- fail "nodeClasses: raild reads its Node's labels to pick a class: set kubernetes.enabled to auto or true" -}}
{{- end -}}
{{- if not (hasPrefix "/" .Values.hostPaths.root) -}}
{{- fail (printf "hostPaths.root %q: want an absolute path (\"/\" on a real node)" .Values.hostPaths.root) -}}
{{- end -}}
{{- if not (has (include "rail.metricsBind" .) (list "all" "node" "localhost")) -}}
{{- fail (printf "metrics.bind %q: use all, node or localhost" (include "rail.metricsBind" .)) -}}
{{- end -}}
{{- end -}}

{{/* Where the ops port listens (metrics.bind; "all" when unset). */}}
{{- define "rail.metricsBind" -}}{{ .Values.metrics.bind | default "all" | toString }}{{- end -}}

{{/* raild's metricsAddr in its config: "node" is given by flag, from the pod's status.hostIP. */}}
{{- define "rail.metricsAddr" -}}
{{- if eq (include "rail.metricsBind" .) "localhost" -}}127.0.0.1:{{ .Values.metrics.port }}{{- else -}}:{{ .Values.metrics.port }}{{- end -}}
{{- end -}}

{{/* The probes' host: the loopback when raild listens only there (the pod's IP otherwise). */}}
{{- define "rail.probeHost" -}}
{{- if eq (include "rail.metricsBind" .) "localhost" -}}, host: 127.0.0.1{{- end -}}
{{- end -}}

{{/*
raild's containers are not privileged and hold no capability: as uid 0 they read and write the
root-owned host paths they mount (CNI dirs, sockets, state) by owner permission, and read topology
from sysfs/procfs, which needs none. The netlink work in pod network namespaces is done by the rail
plugin, which the container runtime runs on the host, not by these containers.
*/}}
{{- define "rail.securityContext" -}}
runAsUser: 0
runAsGroup: 0
privileged: false
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
  {{- with .add }}
  add: {{ toJson . }}
  {{- end }}
{{- end -}}
