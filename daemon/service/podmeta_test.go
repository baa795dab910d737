package service

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// fakeMeta is the API server's view of pods, keyed "ns/name", with UIDs.
type fakeMeta struct {
	mu    sync.Mutex
	pods  map[string]fakeMetaPod
	calls int
}

type fakeMetaPod struct {
	uid         string
	annotations map[string]string
}

func (f *fakeMeta) PodAnnotations(_ context.Context, ns, name, uid string) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	p, ok := f.pods[ns+"/"+name]
	if !ok || (uid != "" && p.uid != uid) {
		return nil, fmt.Errorf("pod %s/%s: not seen within kubernetes.podWait (1s)", ns, name)
	}
	return p.annotations, nil
}

func TestAnnotationsFromPodMeta(t *testing.T) {
	pools := []ipam.PoolConfig{{Name: "prefill", Subnet: "10.1.0.0/24"}, {Name: "decode", Subnet: "10.2.0.0/24"}}
	cluster := map[string]fakeMetaPod{
		"default/pod-a": {uid: "ua", annotations: map[string]string{api.AnnotationPool: "prefill", api.AnnotationGPUs: "0"}},
		"default/pod-b": {uid: "ub", annotations: map[string]string{}},
	}
	tests := []struct {
		name        string
		meta        bool // wire a PodMeta
		pod, uid    string
		annotations map[string]string // what the runtime passed
		args        *api.CNIArgs
		wantPool    string // "pass": a pass-through; else the pool of every interface
		wantErr     string
		wantCalls   int
	}{
		{name: "runtime passed annotations: the cluster is not asked", meta: true, pod: "a", uid: "ua",
			annotations: map[string]string{api.AnnotationPool: "decode", api.AnnotationGPUs: "0"}, wantPool: "decode"},
		{name: "runtime passed none-but-empty: the cluster is not asked", meta: true, pod: "a", uid: "ua",
			annotations: map[string]string{}, wantPool: "pass"},
		{name: "runtime silent: annotations from the cluster", meta: true, pod: "a", uid: "ua", wantPool: "prefill", wantCalls: 1},
		{name: "runtime silent, no uid in the request", meta: true, pod: "a", wantPool: "prefill", wantCalls: 1},
		{name: "runtime silent, pod without annotations passes", meta: true, pod: "b", uid: "ub", wantPool: "pass", wantCalls: 1},
		{name: "runtime silent, cni-args still win", meta: true, pod: "a", uid: "ua", args: &api.CNIArgs{Pool: "decode"},
			wantPool: "decode", wantCalls: 1},
		{name: "recreated pod: uid mismatch fails with code 11", meta: true, pod: "a", uid: "other",
			wantErr: "pod default/pod-a: not seen within kubernetes.podWait", wantCalls: 1},
		{name: "unknown pod fails with code 11", meta: true, pod: "zz", uid: "uz",
			wantErr: "pod default/pod-zz: not seen", wantCalls: 1},
		{name: "no API connection: runtime silent passes as before", meta: false, pod: "a", uid: "ua", wantPool: "pass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := &fakeMeta{pods: cluster}
			svc, _ := newService(t, "h100x8-cx7x4", pools, nil, func(o *Options) {
				if tt.meta {
					o.PodMeta = meta
				}
			})
			req := allocReq("s1", "")
			req.PodName, req.PodUID, req.Annotations, req.CNIArgs = "pod-"+tt.pod, tt.uid, tt.annotations, tt.args
			plan, err := svc.Allocate(context.Background(), req)
			if meta.calls != tt.wantCalls {
				t.Errorf("PodMeta asked %d times, want %d", meta.calls, tt.wantCalls)
			}
			if tt.wantErr != "" {
				if !api.IsCode(err, api.CodeTryAgainLater) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want code 11 with %q", err, tt.wantErr)
				}
				if len(svc.Leases()) != 0 {
					t.Fatal("a failed allocation recorded leases")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantPool == "pass" {
				if !plan.PassThrough {
					t.Fatalf("want a pass-through, got %+v", plan)
				}
				return
			}
			if plan.PassThrough || len(plan.Interfaces) == 0 {
				t.Fatalf("want interfaces, got %+v", plan)
			}
			for _, i := range plan.Interfaces {
				if i.Pool != tt.wantPool {
					t.Errorf("interface %s from pool %s, want %s", i.Name, i.Pool, tt.wantPool)
				}
			}
		})
	}
}

// TestRetriedADDDoesNotAskAgain: an ADD retried for a recorded attachment
// answers from the lease, without the cluster (which may be down by then).
func TestRetriedADDDoesNotAskAgain(t *testing.T) {
	meta := &fakeMeta{pods: map[string]fakeMetaPod{"default/pod-a": {uid: "ua", annotations: map[string]string{api.AnnotationGPUs: "0"}}}}
	svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil, func(o *Options) { o.PodMeta = meta })
	req := allocReq("s1", "")
	req.PodName, req.PodUID, req.Annotations = "pod-a", "ua", nil
	first, err := svc.Allocate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	meta.mu.Lock()
	meta.pods = nil // the API server is gone
	meta.mu.Unlock()
	again, err := svc.Allocate(context.Background(), req)
	if err != nil || nicsOf(again)[0] != nicsOf(first)[0] {
		t.Fatalf("retry = %+v, %v; want the first plan", again, err)
	}
	if meta.calls != 1 {
		t.Errorf("PodMeta asked %d times, want 1", meta.calls)
	}
}

// TestAllocateRecordsPrimaryAndPKey: what the plugin names for the comms
// env (the pod's primary interface, the IPoIB P_Key) is in every lease of
// the attachment.
func TestAllocateRecordsPrimaryAndPKey(t *testing.T) {
	svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil)
	req := allocReq("s1", "0,2")
	req.PrimaryIfName, req.PKey = "net0", 0x8001
	if _, err := svc.Allocate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	leases := svc.SandboxLeases("s1")
	if len(leases) != 2 {
		t.Fatalf("%d leases, want 2", len(leases))
	}
	for _, l := range leases {
		if l.PrimaryIf != "net0" || l.PKey != 0x8001 {
			t.Errorf("lease %s: primary %q, pkey %#x; want net0, 0x8001", l.IfName, l.PrimaryIf, l.PKey)
		}
	}
}
