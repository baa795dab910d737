package vfnetdev

import (
	"net"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/vfpf"
)

func mustMAC(t *testing.T, s string) net.HardwareAddr {
	t.Helper()
	mac, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return mac
}

// TestGUIDsBefore: the GUIDs the GUID step records are the PF's report,
// else the port GUID of the netdev's IPoIB address for both, else none
// (an error: nothing is set then).
func TestGUIDsBefore(t *testing.T) {
	ipoib := mustMAC(t, "00:00:10:49:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:5e:5f:a4")
	tests := []struct {
		name       string
		st         vfpf.State
		addr       net.HardwareAddr
		node, port string
		wantErr    string
	}{
		{"the PF reports them", vfpf.State{NodeGUID: mustMAC(t, "00:00:00:00:00:00:00:01"), PortGUID: mustMAC(t, "00:00:00:00:00:00:00:02")}, ipoib,
			"00:00:00:00:00:00:00:01", "00:00:00:00:00:00:00:02", ""},
		{"from the IPoIB address", vfpf.State{}, ipoib, "0c:42:a1:03:00:5e:5f:a4", "0c:42:a1:03:00:5e:5f:a4", ""},
		{"neither", vfpf.State{}, mustMAC(t, "02:00:00:00:00:01"), "", "", "neither the PF reports the VF's GUIDs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := guidsBefore(tt.st, tt.addr)
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if err == nil && (got.NodeGUID.String() != tt.node || got.PortGUID.String() != tt.port) {
				t.Errorf("got %s %s, want %s %s", got.NodeGUID, got.PortGUID, tt.node, tt.port)
			}
		})
	}
}

// TestGUIDToRestore: a zero GUID is restored as all ones (mlx5: no
// administrative GUID; the kernel refuses zero), any other as it was.
func TestGUIDToRestore(t *testing.T) {
	for in, want := range map[string]string{
		"00:00:00:00:00:00:00:00": "ff:ff:ff:ff:ff:ff:ff:ff",
		"0c:42:a1:03:00:5e:5f:a4": "0c:42:a1:03:00:5e:5f:a4",
	} {
		if got := guidToRestore(mustMAC(t, in)).String(); got != want {
			t.Errorf("guidToRestore(%s) = %s, want %s", in, got, want)
		}
	}
}
