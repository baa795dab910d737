# Shared by the Kubernetes rig's scripts (sourced, not run).
# K8S_DIR   cache of the kube binaries, etcd and helm, keyed on versions.env
# K8S_RUN   one running node (etcd data, PKI, sockets, logs); default /tmp/rail-k8s
HERE_K8S_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
. "$HERE_K8S_LIB/versions.env"
K8S_CACHE=${RAIL_RIG_CACHE:-/var/cache/rail-rig}
K8S_DIR=$K8S_CACHE/k8s-$(sha256sum < "$HERE_K8S_LIB/versions.env" | cut -c1-12)
K8S_BIN=$K8S_DIR/bin
K8S_LOG=$K8S_DIR/log
K8S_RUN=${RAIL_K8S_RUN:-/tmp/rail-k8s}
K8S_NODE=${RAIL_K8S_NODE:-rk-node}
# The kubelet refuses a loopback node IP: the rig puts this one on a veth pair of its own (rknode0/rknode1).
K8S_NODE_IP=${RAIL_K8S_NODE_IP:-10.213.7.1}
K8S_POD_CIDR=${RAIL_K8S_POD_CIDR:-10.214.7.0/24}
# Ports away from the upstream defaults and from the other rigs of this machine.
K8S_ETCD_PORT=23990
K8S_API_PORT=26643
K8S_KUBELET_PORT=10450
K8S_KUBELET_HEALTHZ=10448
K8S_SCHED_PORT=10459
K8S_KCM_PORT=10457
