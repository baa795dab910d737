package netconf

import (
	"github.com/containernetworking/cni/pkg/types"
)

// K8sArgs are the pod keys the runtime passes in CNI_ARGS, in any order.
type K8sArgs struct {
	types.CommonArgs
	K8S_POD_NAMESPACE          types.UnmarshallableString //nolint:revive // CNI_ARGS key
	K8S_POD_NAME               types.UnmarshallableString //nolint:revive // CNI_ARGS key
	K8S_POD_INFRA_CONTAINER_ID types.UnmarshallableString //nolint:revive // CNI_ARGS key
	K8S_POD_UID                types.UnmarshallableString //nolint:revive // CNI_ARGS key
}

// PodKeys is what rail needs of CNI_ARGS.
type PodKeys struct {
	Namespace, Name, UID string
}

// ParsePodKeys reads K8S_POD_* from CNI_ARGS; unknown keys are ignored and
// an empty CNI_ARGS gives empty keys.
func ParsePodKeys(cniArgs string) (PodKeys, error) {
	args := K8sArgs{}
	args.IgnoreUnknown = true
	if err := types.LoadArgs(cniArgs, &args); err != nil {
		return PodKeys{}, types.NewError(types.ErrInvalidEnvironmentVariables, "invalid CNI_ARGS", err.Error())
	}
	return PodKeys{
		Namespace: string(args.K8S_POD_NAMESPACE),
		Name:      string(args.K8S_POD_NAME),
		UID:       string(args.K8S_POD_UID),
	}, nil
}
