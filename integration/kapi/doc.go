// Package kapi starts a real etcd and kube-apiserver for tests: the
// binaries the Kubernetes rig builds (integration/k8s/setup.sh), found
// through $RAIL_KAPI_BIN (run.sh sets it to the rig's bin directory).
// Tests that need an API server call Start; without $RAIL_KAPI_BIN they
// skip and say how to run them (make test-k8s runs them).
package kapi
