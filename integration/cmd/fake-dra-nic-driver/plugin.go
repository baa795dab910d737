package main

import (
	"context"
	"fmt"
	"log/slog"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
)

// plugin is the kubelet side of the test driver: it prepares every claim
// of its driver by naming the allocated devices, with no CDI device and
// nothing moved (a real NIC driver would move the NIC here or at NRI).
type plugin struct {
	log    *slog.Logger
	driver string // dradriver.Driver, or dradriver.GPUDriver with --gpus
}

func (p plugin) PrepareResourceClaims(_ context.Context, claims []*resourcev1.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		var res kubeletplugin.PrepareResult
		if claim.Status.Allocation == nil {
			res.Err = fmt.Errorf("claim %s/%s is not allocated", claim.Namespace, claim.Name)
		} else {
			for _, r := range claim.Status.Allocation.Devices.Results {
				if r.Driver != p.driver {
					continue
				}
				res.Devices = append(res.Devices, kubeletplugin.Device{Requests: []string{r.Request}, PoolName: r.Pool, DeviceName: r.Device})
			}
		}
		p.log.Info("prepared claim", "claim", claim.Namespace+"/"+claim.Name, "devices", len(res.Devices), "error", res.Err)
		out[claim.UID] = res
	}
	return out, nil
}

func (p plugin) UnprepareResourceClaims(_ context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	out := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		p.log.Info("unprepared claim", "claim", claim.String())
		out[claim.UID] = nil
	}
	return out, nil
}

func (p plugin) HandleError(_ context.Context, err error, msg string) {
	p.log.Error(msg, "error", err)
}
