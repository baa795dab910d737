package kapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// waitStatus waits until the pod's network-status lists exactly want
// (name/interface, space-separated) and returns the annotation.
func waitStatus(t *testing.T, kube kubernetes.Interface, name, want string) string {
	t.Helper()
	var annotation, got string
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pod, err := kube.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		annotation = pod.Annotations[nadv1.NetworkStatusAnnot]
		var list []nadv1.NetworkStatus
		if err := json.Unmarshal([]byte(annotation), &list); err != nil {
			return false, err
		}
		var keys []string
		for _, s := range list {
			keys = append(keys, s.Name+"/"+s.Interface)
		}
		got = strings.Join(keys, " ")
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("network-status of %s lists %q, want %q: %v\n%s", name, got, want, err, annotation)
	}
	return annotation
}

// waitEvents waits for n of raild's Events in default, read through the
// events.k8s.io API.
func waitEvents(t *testing.T, kube kubernetes.Interface, n int) []eventsv1.Event {
	t.Helper()
	var items []eventsv1.Event
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := kube.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		items = list.Items
		return len(items) >= n, nil
	})
	if err != nil {
		t.Fatalf("%d events, want %d: %v", len(items), n, err)
	}
	return items
}

// firstEntry is the first entry of a network-status list, compacted.
func firstEntry(t *testing.T, annotation string) string {
	t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(annotation), &list); err != nil || len(list) == 0 {
		t.Fatalf("network-status %q: %v", annotation, err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, list[0]); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// newService is raild's core on a fake 8-GPU, 4-NIC machine.
func newService(t *testing.T, reporter service.Reporter) *service.Service {
	t.Helper()
	root := t.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	pools, err := ipam.NewPools([]ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/24"}}, "node1")
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := ipam.Open(filepath.Join(t.TempDir(), "leases.db"), pools, ipam.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alloc.Close() })
	rails := map[string]int{}
	for i, nic := range m.NICs {
		rails[nic.Name] = i
	}
	svc, err := service.New(service.Options{Machine: func() *topology.Machine { return m }, Rails: rails, Alloc: alloc, Reporter: reporter,
		NetnsExists: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
