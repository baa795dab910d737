package podinfotest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// GetMode is how the stand-in answers Get.
type GetMode int

const (
	// GetServed answers Get as kubelets from 1.27 with the gate on do.
	GetServed GetMode = iota
	// GetUnimplemented answers Unimplemented, as kubelets before 1.27.
	GetUnimplemented
	// GetDisabled answers as a kubelet with KubeletPodResourcesGet off.
	GetDisabled
)

// Calls counts the calls per method.
type Calls struct {
	List, Get, GetAllocatableResources int
}

// store holds the served state and implements the gRPC service.
type store struct {
	podresourcesapi.UnimplementedPodResourcesListerServer

	mu          sync.Mutex
	pods        []Pod
	allocatable map[string][]string
	getMode     GetMode
	calls       Calls
}

func (s *store) List(context.Context, *podresourcesapi.ListPodResourcesRequest) (*podresourcesapi.ListPodResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.List++
	resp := &podresourcesapi.ListPodResourcesResponse{}
	for _, pod := range s.pods {
		resp.PodResources = append(resp.PodResources, toAPI(pod))
	}
	return resp, nil
}

func (s *store) Get(_ context.Context, req *podresourcesapi.GetPodResourcesRequest) (*podresourcesapi.GetPodResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.Get++
	switch s.getMode {
	case GetUnimplemented:
		return nil, status.Error(codes.Unimplemented, "method Get not implemented")
	case GetDisabled:
		return nil, status.Error(codes.Unknown, "PodResources API Get method disabled")
	}
	for _, pod := range s.pods {
		if pod.Namespace == req.GetPodNamespace() && pod.Name == req.GetPodName() {
			return &podresourcesapi.GetPodResourcesResponse{PodResources: toAPI(pod)}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "pod %s in namespace %s not found", req.GetPodName(), req.GetPodNamespace())
}

func (s *store) GetAllocatableResources(context.Context, *podresourcesapi.AllocatableResourcesRequest) (*podresourcesapi.AllocatableResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.GetAllocatableResources++
	devices := s.allocatable
	if devices == nil {
		devices = unionOfDevices(s.pods)
	}
	return &podresourcesapi.AllocatableResourcesResponse{Devices: containerDevices(devices)}, nil
}

func (s *store) setPods(pods []Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods = pods
}

func (s *store) setAllocatable(devices map[string][]string) {
	var copied map[string][]string
	if devices != nil {
		copied = make(map[string][]string, len(devices))
		for resource, ids := range devices {
			copied[resource] = slices.Clone(ids)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allocatable = copied
}

func (s *store) setGetMode(mode GetMode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.getMode = mode
}

func (s *store) callCounts() Calls {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// unionOfDevices is every device any pod holds, per resource, each once.
func unionOfDevices(pods []Pod) map[string][]string {
	union := make(map[string][]string)
	for _, pod := range pods {
		for _, container := range pod.Containers {
			for _, resource := range slices.Sorted(maps.Keys(container.Devices)) {
				for _, id := range container.Devices[resource] {
					if !slices.Contains(union[resource], id) {
						union[resource] = append(union[resource], id)
					}
				}
			}
		}
	}
	return union
}
