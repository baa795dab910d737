package k8s

import (
	"fmt"
	"strings"
)

// e2eNamespace holds the test's workloads.
const e2eNamespace = "rail-e2e"

// busybox is the CRI rig's image (start-node.sh imports it).
const busybox = "localhost/rail-rig/busybox:1"

// serveCmd serves the pod's name on :8000.
const serveCmd = `mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8000 -h /www`

// gpuDeployment is a Deployment of one pod asking for gpus nvidia.com/gpu,
// serving :8000: no hostNetwork, no privilege, no IPC_LOCK, nothing about
// RDMA — the kubelet gives it GPUs, Rail the rest.
func gpuDeployment(name string, gpus int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: server
          image: %[3]s
          imagePullPolicy: Never
          command: [sh, -c, %[4]q]
          ports: [{containerPort: 8000}]
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
          resources: {limits: {nvidia.com/gpu: %[5]d}}
`, name, e2eNamespace, busybox, serveCmd, gpus)
}

// plainPod is a pod without GPUs or annotations.
func plainPod(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: plain}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: %[3]s
      imagePullPolicy: Never
      command: [sh, -c, %[4]q]
`, name, e2eNamespace, busybox, serveCmd)
}

// agentDaemonSet is a monitoring-agent-like DaemonSet on the pod network.
func agentDaemonSet() string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: %[1]s}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: agent
          image: %[2]s
          imagePullPolicy: Never
          command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
`, e2eNamespace, busybox)
}

func namespace(name string) string {
	return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n"
}

// joinDocs joins YAML documents.
func joinDocs(docs ...string) string { return strings.Join(docs, "---\n") }
