package podreport

import (
	"encoding/json"
	"strings"
	"testing"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"

	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/pkg/api"
)

// primary is what a primary plugin (or Multus for it) wrote, with a field
// this client does not know, which must survive.
const primary = `{"name":"k8s-pod-network","interface":"eth0","ips":["10.244.1.7"],"default":true,"dns":{},"future-field":1}`

func railAttach(ifname, cidr string) service.Attached {
	return service.Attached{Pod: service.PodRef{Namespace: "ns", Name: "p", UID: "u1"}, Sandbox: "sb", Netns: "/var/run/netns/x",
		Network: "rail", Mode: api.ModeMacvlan, Chained: true, Interfaces: []service.AttachedInterface{{
			PlanInterface: api.PlanInterface{Name: ifname, Pool: "rail", MTU: 4200, Addresses: []api.Address{{CIDR: cidr}},
				NIC: &api.NIC{RDMADevice: "mlx5_0", Netdev: "ens1f0", PCI: "0000:17:00.0"}}}}}
}

func puts(t *testing.T, ifname, cidr string) []entryChange {
	t.Helper()
	c, err := attachedEntries(railAttach(ifname, cidr))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func removal(ifname, cidr string) []entryChange {
	return releasedEntries(service.Released{Network: "rail", Interfaces: []service.ReleasedInterface{{Name: ifname, Address: cidr}}})
}

// summary is each entry as name/interface=ips.
func summary(t *testing.T, list []json.RawMessage) string {
	t.Helper()
	var out []string
	for _, raw := range list {
		k, ips := keyOf(raw)
		out = append(out, k.Network+"/"+k.Interface+"="+strings.Join(ips, ","))
	}
	return strings.Join(out, " ")
}

func TestMergeStatus(t *testing.T) {
	tests := []struct {
		name        string
		annotation  string
		changes     [][]entryChange
		want        string
		wantChanged bool
	}{
		{name: "no annotation: rail's entry alone", changes: [][]entryChange{puts(t, "rail0", "10.77.0.2/24")},
			want: "rail/rail0=10.77.0.2", wantChanged: true},
		{name: "appended after the primary's", annotation: "[" + primary + "]",
			changes: [][]entryChange{puts(t, "rail0", "10.77.0.2/24")},
			want:    "k8s-pod-network/eth0=10.244.1.7 rail/rail0=10.77.0.2", wantChanged: true},
		{name: "retry replaces rail's own entry in place", annotation: "[" + primary + "]",
			changes: [][]entryChange{puts(t, "rail0", "10.77.0.2/24"), puts(t, "rail1", "10.77.0.3/24"), puts(t, "rail0", "10.77.0.9/24")},
			want:    "k8s-pod-network/eth0=10.244.1.7 rail/rail0=10.77.0.9 rail/rail1=10.77.0.3", wantChanged: true},
		{name: "DEL removes rail's entry, keeps the primary's", annotation: "[" + primary + "]",
			changes: [][]entryChange{puts(t, "rail0", "10.77.0.2/24"), removal("rail0", "10.77.0.2/24")},
			want:    "k8s-pod-network/eth0=10.244.1.7"},
		{name: "a late DEL of an old sandbox keeps the new sandbox's entry", annotation: "[" + primary + "]",
			changes: [][]entryChange{puts(t, "rail0", "10.77.0.5/24"), removal("rail0", "10.77.0.2/24")},
			want:    "k8s-pod-network/eth0=10.244.1.7 rail/rail0=10.77.0.5", wantChanged: true},
		{name: "another network's entry of the same name stays",
			annotation: `[{"name":"other","interface":"rail0","ips":["1.2.3.4"]}]`,
			changes:    [][]entryChange{puts(t, "rail0", "10.77.0.2/24"), removal("rail0", "10.77.0.2/24")},
			want:       "other/rail0=1.2.3.4"},
		{name: "DEL of a pass-through (Multus-named) entry changes nothing",
			annotation: `[{"name":"ns/rail-nad","interface":"net1","ips":["10.77.0.2"]}]`,
			changes:    [][]entryChange{removal("net1", "10.77.0.2/24")},
			want:       "ns/rail-nad/net1=10.77.0.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := parseStatus(tt.annotation)
			if err != nil {
				t.Fatal(err)
			}
			var all []entryChange
			for _, c := range tt.changes {
				all = append(all, c...)
			}
			got, changed, err := mergeStatus(list, all)
			if err != nil {
				t.Fatal(err)
			}
			if summary(t, got) != tt.want || changed != tt.wantChanged {
				t.Fatalf("got %s (changed %v), want %s (changed %v)", summary(t, got), changed, tt.want, tt.wantChanged)
			}
			if tt.annotation != "" && strings.Contains(tt.annotation, "future-field") && !strings.Contains(string(got[0]), `"future-field":1`) {
				t.Errorf("the primary's entry lost a field: %s", got[0])
			}
			again, changed, err := mergeStatus(got, all)
			if err != nil || changed || summary(t, again) != tt.want {
				t.Fatalf("applying the same changes again: %s changed=%v err=%v; want no change", summary(t, again), changed, err)
			}
		})
	}
}

// rail's entry carries what Multus would write for it, device-info included.
func TestAttachedEntryContent(t *testing.T) {
	changes := puts(t, "rail0", "10.77.0.2/24")
	if len(changes) != 1 {
		t.Fatalf("changes = %+v", changes)
	}
	s := changes[0].Status
	if s.Name != "rail" || s.Interface != "rail0" || strings.Join(s.IPs, ",") != "10.77.0.2" || s.Mtu != 4200 || s.Default {
		t.Errorf("status = %+v", s)
	}
	if d := s.DeviceInfo; d == nil || d.Type != nadv1.DeviceInfoTypePCI || d.Pci.PciAddress != "0000:17:00.0" || d.Pci.RdmaDevice != "mlx5_0" {
		t.Errorf("device-info = %+v", s.DeviceInfo)
	}
}

func TestParseStatusRefusesWhatItCannotRead(t *testing.T) {
	for _, bad := range []string{"{", `{"name":"x"}`, "[1,"} {
		if _, err := parseStatus(bad); err == nil || !strings.Contains(err.Error(), nadv1.NetworkStatusAnnot) {
			t.Errorf("parseStatus(%q) = %v, want an error naming the annotation", bad, err)
		}
	}
}
