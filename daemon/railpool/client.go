package railpool

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// store reads RailPools and reads and writes RailPoolBlocks through the
// dynamic client (no generated clientset: the objects are small).
type store struct {
	dyn dynamic.Interface
}

func (s store) listPools(ctx context.Context) ([]RailPool, error) {
	list, err := s.dyn.Resource(PoolResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list railpools: %w", err)
	}
	return decodeList[RailPool](list, "railpool")
}

// listBlocks returns the blocks of pool, every node's.
func (s store) listBlocks(ctx context.Context, pool string) ([]RailPoolBlock, error) {
	list, err := s.dyn.Resource(BlockResource).List(ctx, metav1.ListOptions{LabelSelector: PoolLabel + "=" + pool})
	if err != nil {
		return nil, fmt.Errorf("list railpoolblocks of pool %q: %w", pool, err)
	}
	return decodeList[RailPoolBlock](list, "railpoolblock")
}

// decodeList converts the items of a list to T.
func decodeList[T any](list *unstructured.UnstructuredList, kind string) ([]T, error) {
	out := make([]T, 0, len(list.Items))
	for _, item := range list.Items {
		var obj T
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &obj); err != nil {
			return nil, fmt.Errorf("%s %q: decode: %w", kind, item.GetName(), err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// createBlock creates b; the API server's error is returned unwrapped
// enough for apierrors.IsAlreadyExists.
func (s store) createBlock(ctx context.Context, b *RailPoolBlock) error {
	b.APIVersion, b.Kind = Group+"/"+Version, "RailPoolBlock"
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		return fmt.Errorf("railpoolblock %q: encode: %w", b.Name, err)
	}
	_, err = s.dyn.Resource(BlockResource).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create railpoolblock %q: %w", b.Name, err)
	}
	return nil
}

// deleteBlock deletes the block only if it is still the object with uid.
func (s store) deleteBlock(ctx context.Context, name string, uid types.UID) error {
	err := s.dyn.Resource(BlockResource).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil {
		return fmt.Errorf("delete railpoolblock %q: %w", name, err)
	}
	return nil
}
