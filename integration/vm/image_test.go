package vm

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/integration/harness"
)

// verbsImage is the containers' image: static busybox plus the ibverbs user
// space (ibv_devinfo, ibv_rc_pingpong, their shared libraries, the rxe
// provider and its driver file), copied from the Debian packages run.sh
// installed on the host. It holds no device node and sets no limit: those
// come from raild's NRI plugin or not at all.
const verbsImage = "localhost/rail-vm/verbs:1"

// verbsTools are the programs the image carries besides busybox.
var verbsTools = []string{"/usr/bin/ibv_devinfo", "/usr/bin/ibv_rc_pingpong"}

// importVerbsImage builds the image with the CRI rig's ociimage tool and
// imports it into the node's containerd.
func (n *guestNode) importVerbsImage(t *testing.T) {
	t.Helper()
	tools := os.Getenv("RAIL_VM_CRI_TOOLS")
	if tools == "" {
		t.Fatal("RAIL_VM_CRI_TOOLS is not set: run the tests with integration/vm/run.sh")
	}
	files, err := verbsImageFiles()
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(n.work, "verbs.tar")
	args := []string{"-name", verbsImage, "-o", archive, "-busybox", "/bin/busybox", "-cmd", "/bin/sh"}
	for _, f := range files {
		args = append(args, "-file", f)
	}
	if out, err := exec.Command(filepath.Join(tools, "bin/ociimage"), args...).CombinedOutput(); err != nil {
		t.Fatalf("ociimage: %v\n%s", err, out)
	}
	ctr := exec.Command(filepath.Join(n.rig, "bin/ctr"), "--address", filepath.Join(n.run, "containerd.sock"),
		"-n", "k8s.io", "images", "import", "--platform", "linux/amd64", archive)
	if out, err := ctr.CombinedOutput(); err != nil {
		t.Fatalf("ctr images import: %v\n%s", err, out)
	}
}

// verbsImageFiles lists HOST:IMAGE pairs: busybox, the tools, the rxe
// provider and driver file, and every library ldd says they load, each at
// its host path.
func verbsImageFiles() ([]string, error) {
	provider, err := filepath.Glob("/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so")
	if err != nil || len(provider) == 0 {
		return nil, errors.New("no /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so: run.sh installs ibverbs-providers on the host")
	}
	return harness.ImageFiles([]string{"/bin/busybox", "/etc/libibverbs.d/rxe.driver"}, append(append([]string{}, verbsTools...), provider...))
}
