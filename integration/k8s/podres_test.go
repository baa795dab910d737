package k8s

import (
	"context"
	"sort"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	podresources "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// podGPUs asks the kubelet's PodResources API which nvidia.com/gpu device
// IDs the pod's containers hold, sorted.
func podGPUs(t *testing.T, socket, namespace, name string) []string {
	t.Helper()
	return podDevices(t, socket, namespace, name, "nvidia.com/gpu")
}

// podDevices is podGPUs for any resource.
func podDevices(t *testing.T, socket, namespace, name, resource string) []string {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := podresources.NewPodResourcesListerClient(conn).Get(ctx,
		&podresources.GetPodResourcesRequest{PodName: name, PodNamespace: namespace})
	if err != nil {
		t.Fatalf("PodResources Get %s/%s: %v", namespace, name, err)
	}
	var ids []string
	for _, c := range resp.GetPodResources().GetContainers() {
		for _, d := range c.GetDevices() {
			if d.GetResourceName() == resource {
				ids = append(ids, d.GetDeviceIds()...)
			}
		}
	}
	sort.Strings(ids)
	return ids
}
