package kapi

import (
	"context"
	"path/filepath"
	"testing"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServerServesNADs proves the harness: a real API server that stores
// NetworkAttachmentDefinitions through the NAD client.
func TestServerServesNADs(t *testing.T) {
	s := Start(t)
	s.ApplyCRD(t, filepath.Join("crds", "network-attachment-definitions.yaml"))
	ctx := context.Background()
	nad := &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Name: "rail-test", Namespace: "default"},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","type":"rail"}`}}
	if _, err := s.Clients.NAD.K8sCniCncfIoV1().NetworkAttachmentDefinitions("default").Create(ctx, nad, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create NAD: %v", err)
	}
	got, err := s.Clients.NAD.K8sCniCncfIoV1().NetworkAttachmentDefinitions("default").Get(ctx, "rail-test", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get NAD: %v", err)
	}
	if got.Spec.Config != nad.Spec.Config {
		t.Fatalf("config = %q, want %q", got.Spec.Config, nad.Spec.Config)
	}
}
