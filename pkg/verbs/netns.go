package verbs

import (
	"errors"
	"os"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/nsfs"
)

// GuardNetns runs before skel. skel compares CNI_NETNS with the plugin's
// own netns by opening it, and opening a FIFO waits for a writer forever:
// a CNI_NETNS that exists and is not a network namespace is found here by
// statfs, which never opens it, and skel is told to skip its comparison
// (CNI_NETNS_OVERRIDE). The verbs then refuse it (ADD, CHECK:
// RefuseNotNetns) or treat it as a netns that is gone (DEL).
func GuardNetns() {
	if path := os.Getenv("CNI_NETNS"); path != "" && errors.Is(nsfs.Check(path), nsfs.ErrNotNetns) {
		_ = os.Setenv("CNI_NETNS_OVERRIDE", "1")
	}
}

// RefuseNotNetns is the CNI error for a bad netns (code 8) when path
// exists and is not a network namespace; nil otherwise (a missing path is
// the caller's to judge).
func RefuseNotNetns(path string) error {
	err := nsfs.Check(path)
	if !errors.Is(err, nsfs.ErrNotNetns) {
		return nil
	}
	return types.NewError(types.ErrInvalidNetNS, "CNI_NETNS is not a network namespace", err.Error())
}

// NotNetns reports whether path exists and is not a network namespace
// (a DEL treats it as a netns that is gone).
func NotNetns(path string) bool { return errors.Is(nsfs.Check(path), nsfs.ErrNotNetns) }
