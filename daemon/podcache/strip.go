package podcache

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lastApplied is kubectl's copy of the whole object: often the largest
// annotation, and never read by raild.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// strip keeps of a pod only what raild reads, before it is stored: the
// spec, the status and the managed fields are most of a pod's memory.
func strip(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil // a tombstone: stored as the informer gives it
	}
	annotations := pod.Annotations
	if _, ok := annotations[lastApplied]; ok {
		annotations = make(map[string]string, len(pod.Annotations)-1)
		for k, v := range pod.Annotations {
			if k != lastApplied {
				annotations[k] = v
			}
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			Annotations: annotations, OwnerReferences: pod.OwnerReferences, DeletionTimestamp: pod.DeletionTimestamp,
		},
		Spec: corev1.PodSpec{NodeName: pod.Spec.NodeName},
	}, nil
}
