#!/usr/bin/env bash
# Starts a real single-node Kubernetes for Rail's tests, everything under $RAIL_K8S_RUN (default
# /tmp/rail-k8s): etcd + kube-apiserver (loopback) -> containerd (CRI + NRI) -> kubelet -> kube-scheduler,
# kube-controller-manager, and the fake GPU device plugin (8 x nvidia.com/gpu). Writes $RUN/kubeconfig.
# Host state it changes (sysctls the kubelet rewrites, the rknode0 veth, dirs the kubelet creates) is
# recorded in $RUN/host-state.env; stop-node.sh undoes it and stops only the PIDs recorded here.
#
#   start-node.sh CRI_RIG_DIR K8S_RIG_DIR FAKE_GPU_PLUGIN PRIMARY_CONFLIST
# PRIMARY_CONFLIST is installed as the node's only conflist (@POD_CIDR@ and @RUN@ replaced).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CRI=${1:?usage: start-node.sh CRI_RIG_DIR K8S_RIG_DIR FAKE_GPU_PLUGIN PRIMARY_CONFLIST}
KBIN=${2:?}/bin; FAKEGPU=${3:?}; CONFLIST=${4:?}
RUN=$K8S_RUN; CRUN=$RUN/containerd; P=$RUN/pki; NODE=$K8S_NODE; NODE_IP=$K8S_NODE_IP
TOKEN=rail-rig-admin
CRILOCAL=$(ls -d "$CRI"/local-*/ | head -1)
PAUSE_IMAGE=localhost/rail-rig/pause:1
export PATH=$KBIN:$CRI/bin:$PATH KUBECONFIG=$RUN/kubeconfig
T0=$(date +%s%N)
say() { echo "[$(awk -v a="$T0" -v b="$(date +%s%N)" 'BEGIN{printf "%6.2fs", (b-a)/1e9}')] $*"; }
die() { echo "start-node: $*" >&2; exit 1; }
alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }
launch() { # launch NAME CMD...: in the background, log to $RUN/log/NAME.log, pid to $RUN/NAME.pid
  local n=$1; shift
  alive "$n" && die "$n already running (pid $(cat "$RUN/$n.pid"))"
  nohup "$@" >>"$RUN/log/$n.log" 2>&1 &
  echo $! > "$RUN/$n.pid"
}
waitfor() { # waitfor NAME TIMEOUT_S CMD...: poll CMD; fail when NAME died or after TIMEOUT_S
  local n=$1 t=$2; shift 2; local end=$(( $(date +%s) + t ))
  until "$@" >/dev/null 2>&1; do
    alive "$n" || { tail -30 "$RUN/log/$n.log" >&2; die "$n exited"; }
    [ "$(date +%s)" -lt "$end" ] || { tail -30 "$RUN/log/$n.log" >&2; die "$n not ready after ${t}s"; }
    sleep 0.1
  done
}
[ "$(id -u)" = 0 ] || die "must run as root"
for f in "$KBIN/etcd" "$KBIN/kube-apiserver" "$KBIN/kubelet" "$CRI/bin/containerd" "$FAKEGPU" "$CRILOCAL/images/pause.tar"; do
  [ -x "$f" ] || [ -f "$f" ] || die "missing $f: run setup.sh"
done
mkdir -p "$RUN"/{pki,etcd,log,manifests,pod-logs,cni/bin,cni/ipam,kubelet/root,kubelet/pki} \
         "$CRUN"/{root,state,tmp,opt,conf.d,cni/net.d,nri/plugins,nri/conf.d}

# ---- the runtime's pod netns dir: raild's DaemonSet mounts it with HostToContainer propagation, which
# needs a shared or slave mount (a real node's / is shared; this machine's is private): bind it onto
# itself and make it shared. stop-node.sh unmounts everything under $RUN.
NETNS_DIR=$CRUN/state/io.containerd.grpc.v1.cri/netns
mkdir -p "$NETNS_DIR"
mountpoint -q "$NETNS_DIR" || mount --bind "$NETNS_DIR" "$NETNS_DIR"
mount --make-shared "$NETNS_DIR"

# ---- host state we change, recorded once so stop-node.sh can restore it
if [ ! -f "$RUN/host-state.env" ]; then
  {
    # the kubelet rewrites these with no opt-out (protectKernelDefaults only turns it into a failure)
    for s in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
      echo "sysctl /proc/sys/$s $(cat "/proc/sys/$s")"
    done
    # paths the kubelet hard-codes outside --root-dir
    for d in /var/lib/kubelet /var/log/containers /var/lib/cni/results /run/rail; do
      if [ -e "$d" ]; then echo "existed $d"; else echo "created $d"; fi
    done
  } > "$RUN/host-state.env"
fi

# ---- node IP on a veth pair of the rig (the kubelet refuses a loopback node IP)
if ! ip -o addr show dev rknode0 2>/dev/null | grep -q " $NODE_IP/"; then
  ip link show rknode0 >/dev/null 2>&1 || ip link add rknode0 type veth peer name rknode1
  ip addr add "$NODE_IP/32" dev rknode0
  ip link set rknode1 up; ip link set rknode0 up
fi

# ---- PKI (EC P-256: fast): CA, apiserver, kubelet serving (SAN node IP), apiserver->kubelet client, SA keys
sign() { # sign NAME SUBJECT EXTENSIONS
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$2" -keyout "$P/$1.key" -out "$P/$1.csr" 2>/dev/null
  printf '%s\n' "$3" > "$P/$1.ext"
  openssl x509 -req -in "$P/$1.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 3650 \
    -extfile "$P/$1.ext" -out "$P/$1.crt" 2>/dev/null
}
if [ ! -f "$P/sa.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 -subj "/CN=rail-rig-ca" \
    -keyout "$P/ca.key" -out "$P/ca.crt" 2>/dev/null
  sign apiserver "/CN=kube-apiserver" "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc
extendedKeyUsage=serverAuth"
  sign kubelet "/CN=system:node:$NODE/O=system:nodes" "subjectAltName=IP:$NODE_IP,DNS:$NODE
extendedKeyUsage=serverAuth"
  sign apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client/O=system:masters" "extendedKeyUsage=clientAuth"
  openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$P/sa.key"
  openssl ec -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
fi
echo "$TOKEN,admin,admin,system:masters" > "$P/tokens.csv"
cat > "$RUN/kubeconfig" <<EOK
apiVersion: v1
kind: Config
clusters:
- name: rail-rig
  cluster: {server: "https://127.0.0.1:$K8S_API_PORT", certificate-authority: "$P/ca.crt"}
users:
- name: admin
  user: {token: $TOKEN}
contexts:
- name: rail-rig
  context: {cluster: rail-rig, user: admin, namespace: default}
current-context: rail-rig
EOK

# ---- etcd, then the apiserver
launch etcd "$KBIN/etcd" --name rail-rig --data-dir "$RUN/etcd" \
  --listen-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$((K8S_ETCD_PORT+1))" --initial-advertise-peer-urls "http://127.0.0.1:$((K8S_ETCD_PORT+1))" \
  --initial-cluster "rail-rig=http://127.0.0.1:$((K8S_ETCD_PORT+1))" --listen-metrics-urls "" --unsafe-no-fsync
waitfor etcd 30 curl -fsS "http://127.0.0.1:$K8S_ETCD_PORT/health"
say "etcd healthy"
launch kube-apiserver "$KBIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$K8S_ETCD_PORT" \
  --bind-address 127.0.0.1 --advertise-address "$NODE_IP" --secure-port "$K8S_API_PORT" \
  --tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" \
  --client-ca-file "$P/ca.crt" --token-auth-file "$P/tokens.csv" \
  --kubelet-client-certificate "$P/apiserver-kubelet-client.crt" --kubelet-client-key "$P/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority "$P/ca.crt" --kubelet-preferred-address-types InternalIP,Hostname \
  --authorization-mode Node,RBAC --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$P/sa.pub" --service-account-signing-key-file "$P/sa.key" \
  --service-cluster-ip-range 10.96.0.0/16 --allow-privileged=true --cert-dir "$P"

# ---- containerd (while the apiserver starts): the CRI rig's config with a private runc root, the
# node's CNI dirs ($RUN/cni/bin holds the primary's plugins; raild install-cni adds rail there)
install -m 0755 -t "$RUN/cni/bin/" "$CRI"/cni/bin/{ptp,host-local,loopback}
sed -e "s#@RUN@#$CRUN#g" -e "s#@BIN@#$CRI/bin#g" -e "s#@CNI_BIN_DIRS@#\"$RUN/cni/bin\"#g" \
    -e "s#@PAUSE_IMAGE@#$PAUSE_IMAGE#g" \
    -e "s#^\( *\)BinaryName = .*#&\n\1Root = \"$CRUN/runc\"#" "$HERE/../cri/containerd.toml.in" > "$CRUN/config.toml"
rm -f "$CRUN"/cni/net.d/*
sed -e "s#@RUN@#$RUN#g" -e "s#@POD_CIDR@#$K8S_POD_CIDR#g" "$CONFLIST" > "$CRUN/cni/net.d/$(basename "$CONFLIST")"
cat > "$RUN/crictl.yaml" <<EOT
runtime-endpoint: unix://$CRUN/containerd.sock
image-endpoint: unix://$CRUN/containerd.sock
timeout: 60
EOT
PATH=$CRI/bin:$PATH launch containerd "$CRI/bin/containerd" --config "$CRUN/config.toml"
waitfor containerd 30 "$CRI/bin/ctr" --address "$CRUN/containerd.sock" version
for img in pause busybox; do
  "$CRI/bin/ctr" --address "$CRUN/containerd.sock" -n k8s.io images import --platform linux/amd64 "$CRILOCAL/images/$img.tar" >/dev/null
done
say "containerd up, images imported"
waitfor kube-apiserver 90 curl -fsS --cacert "$P/ca.crt" -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$K8S_API_PORT/readyz"
say "kube-apiserver ready"

# ---- kubelet (settings this machine needs: cgroup v1, no swap check, no CAP_SYS_RESOURCE, no iptables)
cat > "$RUN/kubelet/config.yaml" <<EOK
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$CRUN/containerd.sock
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
oomScoreAdj: 0
maxOpenFiles: $(ulimit -Hn)
volumePluginDir: $RUN/kubelet/volume-plugins
protectKernelDefaults: false
makeIPTablesUtilChains: false
address: $NODE_IP
port: $K8S_KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $K8S_KUBELET_HEALTHZ
tlsCertFile: $P/kubelet.crt
tlsPrivateKeyFile: $P/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $P/ca.crt}
authorization: {mode: Webhook}
staticPodPath: $RUN/manifests
podLogsDir: $RUN/pod-logs
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
nodeStatusUpdateFrequency: 2s
EOK
KSTART=$(date -u +%s)
printf '%s\n' --config "$RUN/kubelet/config.yaml" --kubeconfig "$RUN/kubeconfig" --hostname-override "$NODE" \
  --node-ip "$NODE_IP" --root-dir "$RUN/kubelet/root" --cert-dir "$RUN/kubelet/pki" -v 2 > "$RUN/kubelet/args"
mapfile -t KARGS < "$RUN/kubelet/args"
launch kubelet "$KBIN/kubelet" "${KARGS[@]}"
launch kube-scheduler "$KBIN/kube-scheduler" --kubeconfig "$RUN/kubeconfig" \
  --authentication-kubeconfig "$RUN/kubeconfig" --authorization-kubeconfig "$RUN/kubeconfig" \
  --leader-elect=false --bind-address 127.0.0.1 --secure-port "$K8S_SCHED_PORT"
launch kube-controller-manager "$KBIN/kube-controller-manager" --kubeconfig "$RUN/kubeconfig" \
  --authentication-kubeconfig "$RUN/kubeconfig" --authorization-kubeconfig "$RUN/kubeconfig" \
  --leader-elect=false --bind-address 127.0.0.1 --secure-port "$K8S_KCM_PORT" \
  --root-ca-file "$P/ca.crt" --service-account-private-key-file "$P/sa.key" \
  --flex-volume-plugin-dir "$RUN/kcm-volume-plugins" --use-service-account-credentials=false --cluster-name rail-rig
waitfor kubelet 60 curl -fsS "http://127.0.0.1:$K8S_KUBELET_HEALTHZ/healthz"
waitfor kubelet 60 kubectl get node "$NODE"
node_ready_now() { # Ready from *this* kubelet (kept etcd data still shows an old Ready=True)
  local hb; hb=$(kubectl get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}')
  [ "${hb%% *}" = True ] && [ "$(date -u -d "${hb#* }" +%s)" -ge "$KSTART" ]
}
waitfor kubelet 120 node_ready_now
say "node $NODE Ready"
waitfor kube-controller-manager 60 kubectl get sa default -n default
launch fake-gpu-plugin "$FAKEGPU" --count 8
waitfor fake-gpu-plugin 60 sh -c "kubectl get node $NODE -o jsonpath='{.status.allocatable.nvidia\.com/gpu}' | grep -qx 8"
say "node up: nvidia.com/gpu=8 allocatable; export KUBECONFIG=$RUN/kubeconfig"
