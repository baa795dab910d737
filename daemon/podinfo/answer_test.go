package podinfo

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want answer
	}{
		{"kubelet before 1.27", status.Error(codes.Unimplemented, "method Get not implemented"), answerNoGet},
		{"get gate off", status.Error(codes.Unknown, "PodResources API Get method disabled"), answerNoGet},
		{"kubelet unknown pod", status.Error(codes.Unknown, "pod x in namespace y not found"), answerNotFound},
		{"not found code", status.Error(codes.NotFound, "no such pod"), answerNotFound},
		{"socket gone", status.Error(codes.Unavailable, "connection refused"), answerUnreachable},
		{"too slow", status.Error(codes.DeadlineExceeded, "context deadline exceeded"), answerUnreachable},
		{"other unknown", status.Error(codes.Unknown, "boom"), answerOther},
		{"internal", status.Error(codes.Internal, "not found"), answerOther},
		{"wrapped status", fmt.Errorf("call: %w", status.Error(codes.Unimplemented, "x")), answerNoGet},
		{"not a status", errors.New("pod not found"), answerOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.err); got != tt.want {
				t.Errorf("classify(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
