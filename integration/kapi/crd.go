package kapi

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ApplyCRD creates the CustomResourceDefinition in the YAML file and waits
// until the API server serves it.
func (s *Server) ApplyCRD(tb testing.TB, path string) {
	tb.Helper()
	if err := s.applyCRD(path); err != nil {
		tb.Fatalf("apply CRD %s: %v", path, err)
	}
}

func (s *Server) applyCRD(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	crds := dyn.Resource(crdResource)
	created, err := crds.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	for ctx.Err() == nil {
		got, err := crds.Get(ctx, created.GetName(), metav1.GetOptions{})
		if err == nil && established(got) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not established: %w", created.GetName(), ctx.Err())
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
