// Package k8s is Rail's end-to-end test on a real single-node Kubernetes:
// etcd, kube-apiserver, kube-scheduler, kube-controller-manager and a
// kubelet on containerd with NRI, built by setup.sh and started by
// start-node.sh. Rail is installed the way docs/install.md
// says — its image imported into containerd, its Helm chart rendered and
// installed by the pinned helm — and every check drives the cluster with
// kubectl. run.sh (make test-k8s) builds what is needed and runs it; the
// image and manifest checks need no rig.
package k8s
