package podinfotest

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Pod is one pod as the kubelet's PodResources API reports it.
type Pod struct {
	Namespace  string      `json:"namespace"`
	Name       string      `json:"name"`
	Containers []Container `json:"containers"`
}

// Container is one container and the devices assigned to it.
type Container struct {
	Name string `json:"name"`
	// Devices maps a resource name (nvidia.com/gpu) to its device IDs.
	Devices map[string][]string `json:"devices,omitempty"`
	// Claims are the DRA claims the container uses (dynamic_resources).
	Claims []Claim `json:"claims,omitempty"`
}

// ValidatePods checks what a kubelet would never report: a pod without a
// name or namespace, a pod listed twice, a container without a name or
// listed twice, an empty resource name or device ID.
func ValidatePods(pods []Pod) error {
	var errs []error
	seen := make(map[string]bool, len(pods))
	for i, pod := range pods {
		where := fmt.Sprintf("pods[%d]", i)
		if pod.Namespace == "" || pod.Name == "" {
			errs = append(errs, fmt.Errorf("%s: namespace and name must both be set", where))
			continue
		}
		key := pod.Namespace + "/" + pod.Name
		if seen[key] {
			errs = append(errs, fmt.Errorf("%s: pod %s is listed twice", where, key))
		}
		seen[key] = true
		errs = append(errs, validateContainers(where, pod.Containers)...)
	}
	return errors.Join(errs...)
}

func validateContainers(where string, containers []Container) []error {
	var errs []error
	seen := make(map[string]bool, len(containers))
	for j, container := range containers {
		at := fmt.Sprintf("%s.containers[%d]", where, j)
		switch {
		case container.Name == "":
			errs = append(errs, fmt.Errorf("%s: name must be set", at))
		case seen[container.Name]:
			errs = append(errs, fmt.Errorf("%s: container %q is listed twice", at, container.Name))
		}
		seen[container.Name] = true
		for resource, ids := range container.Devices {
			if resource == "" {
				errs = append(errs, fmt.Errorf("%s.devices: resource name must not be empty", at))
			}
			if slices.Contains(ids, "") {
				errs = append(errs, fmt.Errorf("%s.devices[%q]: device IDs must not be empty", at, resource))
			}
		}
		errs = append(errs, validateClaims(at, container.Claims)...)
	}
	return errs
}

// clonePods deep-copies pods so callers may reuse their slices and maps.
func clonePods(pods []Pod) []Pod {
	out := make([]Pod, len(pods))
	for i, pod := range pods {
		out[i] = Pod{Namespace: pod.Namespace, Name: pod.Name, Containers: make([]Container, len(pod.Containers))}
		for j, container := range pod.Containers {
			devices := make(map[string][]string, len(container.Devices))
			for resource, ids := range container.Devices {
				devices[resource] = slices.Clone(ids)
			}
			out[i].Containers[j] = Container{Name: container.Name, Devices: devices, Claims: cloneClaims(container.Claims)}
		}
	}
	return out
}

// toAPI converts a pod to the wire type, resources in sorted order so
// answers are deterministic.
func toAPI(pod Pod) *podresourcesapi.PodResources {
	out := &podresourcesapi.PodResources{Namespace: pod.Namespace, Name: pod.Name}
	for _, container := range pod.Containers {
		out.Containers = append(out.Containers, &podresourcesapi.ContainerResources{
			Name:             container.Name,
			Devices:          containerDevices(container.Devices),
			DynamicResources: dynamicResources(container.Claims),
		})
	}
	return out
}

func containerDevices(devices map[string][]string) []*podresourcesapi.ContainerDevices {
	var out []*podresourcesapi.ContainerDevices
	for _, resource := range slices.Sorted(maps.Keys(devices)) {
		out = append(out, &podresourcesapi.ContainerDevices{
			ResourceName: resource,
			DeviceIds:    slices.Clone(devices[resource]),
		})
	}
	return out
}
