package api

import "fmt"

// What unresolvedGPUs (netconf, pool) accepts: what ADD does with a GPU
// the kubelet reports (device plugin or DRA) that raild cannot map to a
// GPU of the node.
const (
	// UnresolvedGPUsFail fails ADD naming the ID and the fix (the default).
	UnresolvedGPUsFail = "fail"
	// UnresolvedGPUsIgnore places the pod by the GPUs that resolve, or by
	// the selector alone when none does, and logs the rest.
	UnresolvedGPUsIgnore = "ignore"
)

// CheckUnresolvedGPUs checks an unresolvedGPUs value ("" is the default,
// fail); the error says what is allowed.
func CheckUnresolvedGPUs(value string) error {
	switch value {
	case "", UnresolvedGPUsFail, UnresolvedGPUsIgnore:
		return nil
	}
	return fmt.Errorf("%q: use %q (a GPU the kubelet reports that raild cannot find fails ADD, the default) "+
		"or %q (place the pod without it)", Excerpt(value, 64), UnresolvedGPUsFail, UnresolvedGPUsIgnore)
}
