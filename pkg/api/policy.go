package api

import "fmt"

// AnnotationAttach opts a pod in ("true") or out ("false") of rail
// interfaces in chained mode.
const AnnotationAttach = "rail.dev/attach"

// AttachPolicy chooses which pods get rail interfaces when rail is chained
// into the node's conflist, which runs for every pod.
type AttachPolicy string

// The attach policies.
const (
	// PolicyGPUOrAnnotated: pods that hold GPUs or ask (the default).
	PolicyGPUOrAnnotated AttachPolicy = "gpu-or-annotated"
	// PolicyAnnotated: only pods that ask by annotation or cni-args.
	PolicyAnnotated AttachPolicy = "annotated"
	// PolicyAll: every pod that does not opt out.
	PolicyAll AttachPolicy = "all"
)

// AttachPolicies lists the policies, the default first.
func AttachPolicies() []AttachPolicy {
	return []AttachPolicy{PolicyGPUOrAnnotated, PolicyAnnotated, PolicyAll}
}

// Valid reports whether p is a known policy.
func (p AttachPolicy) Valid() bool {
	for _, known := range AttachPolicies() {
		if p == known {
			return true
		}
	}
	return false
}

// Ask is what a pod says about rail interfaces by itself.
type Ask int

// What a pod may say.
const (
	AskNothing Ask = iota // no rail annotation, no cni-args
	AskYes                // rail.dev/attach "true", rail.dev/pool, rail.dev/gpus, or cni-args
	AskNo                 // rail.dev/attach "false"
)

// PodAsk reads what a pod says from its annotations and Multus cni-args.
// An opt-out wins over everything else; a rail.dev/attach value other than
// "true" or "false" is an error naming the annotation.
func PodAsk(annotations map[string]string, args *CNIArgs) (Ask, error) {
	switch v, set := annotations[AnnotationAttach]; {
	case !set:
	case v == "false":
		return AskNo, nil
	case v == "true":
		return AskYes, nil
	default:
		return AskNothing, fmt.Errorf("annotation %s is %q: use \"true\" or \"false\"", AnnotationAttach, Excerpt(v, 64))
	}
	if annotations[AnnotationPool] != "" || annotations[AnnotationGPUs] != "" || args.asks() {
		return AskYes, nil
	}
	return AskNothing, nil
}

func (a *CNIArgs) asks() bool {
	return a != nil && (a.Pool != "" || len(a.GPUs) > 0 || len(a.NICs) > 0 || a.Rail != nil)
}

// Attaches decides whether a chained attachment gets rail interfaces:
// holdsGPUs is asked only when the answer depends on it.
func (p AttachPolicy) Attaches(ask Ask, holdsGPUs func() (bool, error)) (bool, error) {
	switch {
	case ask == AskNo:
		return false, nil
	case ask == AskYes || p == PolicyAll:
		return true, nil
	case p == PolicyAnnotated:
		return false, nil
	}
	return holdsGPUs()
}
