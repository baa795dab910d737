package verbs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
	"golang.org/x/sys/unix"
)

// TestGuardNetnsBeforeSkel: with CNI_NETNS naming a FIFO (or a regular
// file), skel never opens it (it waited for a writer forever): ADD and
// CHECK answer code 8, DEL runs and succeeds.
func TestGuardNetnsBeforeSkel(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "netns.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "netns.file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, file} {
		for _, tt := range []struct {
			cmd  string
			code uint // 0: success
		}{{"ADD", types.ErrInvalidNetNS}, {"CHECK", types.ErrInvalidNetNS}, {"DEL", 0}} {
			t.Run(filepath.Base(path)+"/"+tt.cmd, func(t *testing.T) {
				conf := `{"cniVersion":"1.0.0","name":"rail","type":"rail"}`
				if tt.cmd == "CHECK" {
					conf = `{"cniVersion":"1.0.0","name":"rail","type":"rail","prevResult":{"cniVersion":"1.0.0"}}`
				}
				stdin := filepath.Join(t.TempDir(), "stdin")
				if err := os.WriteFile(stdin, []byte(conf), 0o600); err != nil {
					t.Fatal(err)
				}
				in, err := os.Open(stdin)
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				saved := os.Stdin
				os.Stdin = in
				defer func() { os.Stdin = saved }()
				for k, v := range map[string]string{"CNI_COMMAND": tt.cmd, "CNI_CONTAINERID": "c1", "CNI_NETNS": path,
					"CNI_IFNAME": "eth0", "CNI_PATH": dir, "CNI_NETNS_OVERRIDE": ""} {
					t.Setenv(k, v)
				}
				var ran []string
				verb := func(args *skel.CmdArgs) error {
					ran = append(ran, tt.cmd)
					if tt.cmd == "DEL" || !NotNetns(args.Netns) {
						return nil
					}
					return RefuseNotNetns(args.Netns)
				}
				GuardNetns()
				cniErr := skel.PluginMainFuncsWithError(skel.CNIFuncs{Add: verb, Del: verb, Check: verb}, version.All, "test")
				if len(ran) != 1 {
					t.Fatalf("verb ran %v", ran)
				}
				switch {
				case tt.code == 0 && cniErr != nil:
					t.Fatalf("%s: %v", tt.cmd, cniErr)
				case tt.code != 0 && (cniErr == nil || cniErr.Code != tt.code || !strings.Contains(cniErr.Details, path)):
					t.Fatalf("%s: %v; want code %d naming %s", tt.cmd, cniErr, tt.code, path)
				}
			})
		}
	}
}
