package fabric

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/integration/harness"
)

// rig is what run.sh hands over: its run directory (one job share per
// node), this checkout, raild and rail built from it, and the CRI rig.
type rig struct {
	run      string // run.sh's run directory; <run>/a and <run>/b are the nodes' job shares
	repo     string
	bin      string // raild and rail
	criRig   string // the CRI rig's cache dir (containerd, runc, crictl, CNI plugins)
	criTools string // its own tools (ociimage)
}

// requireRig skips unless run.sh started the tests (the guests are up).
func requireRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{run: os.Getenv("RAIL_FABRIC_RUN"), repo: os.Getenv("RAIL_FABRIC_REPO"), bin: os.Getenv("RAIL_FABRIC_BIN"),
		criRig: os.Getenv("RAIL_FABRIC_CRI_RIG"), criTools: os.Getenv("RAIL_FABRIC_CRI_TOOLS")}
	if r.run == "" {
		t.Skip("the fabric rig's tests run through integration/fabric/run.sh (make test-fabric), which boots the two nodes")
	}
	if r.repo == "" || r.bin == "" || r.criRig == "" || r.criTools == "" {
		t.Fatal("RAIL_FABRIC_REPO, RAIL_FABRIC_BIN, RAIL_FABRIC_CRI_RIG and RAIL_FABRIC_CRI_TOOLS must be set with RAIL_FABRIC_RUN (run.sh sets them)")
	}
	return r
}

// engineImage is the pods' image: static busybox, the RDMA tools the
// tests run (rping, ib_write_bw, ucx_perftest, ibv_devinfo) with their
// libraries, the rxe provider and UCX's transport modules, all copied from
// the host's Debian packages. It holds no device node, sets no limit and
// no variable: those come from raild's NRI plugin or not at all.
const engineImage = "localhost/rail-fabric/engines:1"

// buildImage makes the image archive with the CRI rig's ociimage, hard
// links it into each node's job share and returns its name there.
func (r *rig) buildImage(t *testing.T, nodes ...*node) string {
	t.Helper()
	libdir := "/usr/lib/x86_64-linux-gnu"
	programs := []string{"/usr/bin/rping", "/usr/bin/ib_write_bw", "/usr/bin/ucx_perftest", "/usr/bin/ucx_info", "/usr/bin/ibv_devinfo"}
	var ucxModules []string
	for _, glob := range []string{libdir + "/libibverbs/librxe-rdmav*.so", libdir + "/ucx/libu*.so.*"} {
		m, err := filepath.Glob(glob)
		if err != nil || len(m) == 0 {
			t.Fatalf("no %s on the host (run.sh installs ibverbs-providers and ucx-utils)", glob)
		}
		programs = append(programs, m...)
		if strings.Contains(glob, "/ucx/") {
			ucxModules = m
		}
	}
	// stdbuf: the servers' output line by line, so the tests see them listen
	programs = append(programs, "/usr/bin/stdbuf", "/usr/libexec/coreutils/libstdbuf.so")
	// libgcc_s: glibc loads it at run time (no ldd names it) for
	// pthread_exit and pthread_cancel, which rping's threads call: without
	// it rping aborts after its first connection
	files, err := harness.ImageFiles([]string{"/bin/busybox", "/etc/libibverbs.d/rxe.driver", "/lib/x86_64-linux-gnu/libgcc_s.so.1"}, programs)
	if err != nil {
		t.Fatal(err)
	}
	// UCX loads its transports (rc_verbs is in libuct_ib) from "ucx/" beside
	// the libucs it was loaded from, which ldd names under /lib (the host's
	// /lib is /usr/lib; the image's is a directory of its own)
	for _, m := range ucxModules {
		files = append(files, m+":/lib/x86_64-linux-gnu/ucx/"+filepath.Base(m))
	}
	archive := filepath.Join(r.run, "engines.tar")
	args := []string{"-name", engineImage, "-o", archive, "-busybox", "/bin/busybox", "-cmd", "/bin/sh"}
	for _, f := range files {
		args = append(args, "-file", f)
	}
	if out, err := exec.Command(filepath.Join(r.criTools, "bin/ociimage"), args...).CombinedOutput(); err != nil {
		t.Fatalf("ociimage: %v\n%s", err, out)
	}
	for _, n := range nodes {
		if err := os.Link(archive, filepath.Join(n.dir, "engines.tar")); err != nil {
			t.Fatal(err)
		}
	}
	return "engines.tar"
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
