package netconf

import (
	"errors"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
)

// The netconf parsers take whatever a runtime, Multus or a user wrote:
// they never panic, every refusal is a CNI error with a code, an error
// never quotes more than a bounded excerpt, and what they accept is valid.
func FuzzLoadRail(f *testing.F) {
	for _, seed := range []string{
		`{"cniVersion":"1.1.0","name":"n","type":"rail"}`,
		`{"cniVersion":"0.3.1","name":"n","type":"rail","mode":"macvlan","pool":"p","nics":["mlx5_0"],"rail":1,"linkLayer":"Ethernet",
		  "prevResult":{"cniVersion":"0.3.1","interfaces":[{"name":"eth0","sandbox":"/var/run/netns/x"}],"ips":[{"version":"4","address":"10.1.0.2/24","interface":0}]},
		  "runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"rail.dev/gpus":"0,1"}},"args":{"cni":{"gpus":[0,1],"rail":"2"}}}`,
		`{"name":"n","type":"rail","MODE":"move"}`,
		`{"name":"n","type":"rail","ipam":null}`,
		`{"name":"n","type":"rail","pkey":"0x8001","mode":"ipoib","onRaildDown":"pass-through"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		conf, err := LoadRail(data)
		checkRefusal(t, err)
		if err != nil {
			return
		}
		if !conf.Mode.Attaches() || conf.Socket == "" || conf.CallTimeout <= 0 || conf.IfPrefix == "" {
			t.Fatalf("accepted an invalid netconf: %+v", conf)
		}
	})
}

func FuzzLoadIPAM(f *testing.F) {
	for _, seed := range []string{
		`{"name":"n","type":"macvlan","master":"eth1","ipam":{"type":"rail-ipam","pool":"p"}}`,
		`{"name":"n","ipam":{"type":"rail-ipam"},"runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"a":"b"},"mac":"x"},"args":{"cni":{"pool":"p"}}}`,
		`{"name":"n","ipam":null}`,
		`{"name":"n","IPAM":{"type":"rail-ipam"}}`,
		`{"cni.dev/valid-attachments":[{"containerID":"c","ifname":"eth0"}],"name":"n","ipam":{"type":"rail-ipam"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		conf, err := LoadIPAM(data)
		checkRefusal(t, err)
		if err == nil && (conf.IPAM.Type == "" || conf.IPAM.Socket == "" || conf.IPAM.CallTimeout <= 0) {
			t.Fatalf("accepted an invalid ipam section: %+v", conf.IPAM)
		}
	})
}

func checkRefusal(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var cniErr *types.Error
	if !errors.As(err, &cniErr) || cniErr.Code == 0 {
		t.Fatalf("refusal without a CNI code: %v", err)
	}
	if len(err.Error()) > 4096 {
		t.Fatalf("refusal of %d bytes: errors quote bounded excerpts", len(err.Error()))
	}
}
