package podinfo

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// answer is what a failed kubelet call means for the client.
type answer int

const (
	answerOther       answer = iota
	answerNoGet              // the kubelet has no usable Get: use List
	answerNotFound           // the kubelet does not know the pod
	answerUnreachable        // nothing (or nothing in time) on the socket
	answerTooLarge           // more than raild reads (a client-side limit)
)

// classify reads a gRPC error from the kubelet. Kubelets before 1.27 answer
// Get with Unimplemented; with the KubeletPodResourcesGet gate off, and for
// an unknown pod, the kubelet returns a plain error (code Unknown), so its
// text is the only signal.
func classify(err error) answer {
	st, ok := status.FromError(err)
	if !ok {
		return answerOther
	}
	msg := strings.ToLower(st.Message())
	switch st.Code() {
	case codes.Unimplemented:
		return answerNoGet
	case codes.NotFound:
		return answerNotFound
	case codes.Unavailable, codes.DeadlineExceeded:
		return answerUnreachable
	case codes.ResourceExhausted:
		return answerTooLarge
	case codes.Unknown:
		switch {
		case strings.Contains(msg, "get method disabled"):
			return answerNoGet
		case strings.Contains(msg, "not found"):
			return answerNotFound
		}
	}
	return answerOther
}
