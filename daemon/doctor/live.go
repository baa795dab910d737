package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// liveReport asks the running raild for its snapshot. Without an answer
// there is no report and nothing to add (socketCheck says why); an answer
// this binary cannot read is a warning.
func liveReport(socket string) (*topology.Report, []check) {
	raw, err := api.NewClient(socket, 5*time.Second).Topology(context.Background())
	if err != nil {
		return nil, nil
	}
	var live topology.Report
	if err := json.Unmarshal(raw, &live); err != nil {
		return nil, []check{{"warn", "raild's topology answer: " + err.Error(), "raild and this binary differ in version"}}
	}
	return &live, nil
}

// liveNetdevNICs says whether the running raild places NICs by their
// netdevs (a softRoCE node).
func liveNetdevNICs(live *topology.Report) bool {
	if live == nil {
		return false
	}
	for _, n := range live.NICs {
		if n.NetdevOnly {
			return true
		}
	}
	return false
}

// awayInPods counts the NICs pods hold that the host does not show.
func awayInPods(live *topology.Report, bare *topology.Machine) int {
	if live == nil {
		return 0
	}
	n := 0
	for _, nic := range live.NICs {
		if _, onHost := bare.NICByName(nic.Name); !onHost && live.Holders[nic.Name] != "" {
			n++
		}
	}
	return n
}

// compareLive reports the running raild's snapshot: each NIC a pod holds,
// and NICs raild knows that the host no longer shows (they sit in pods).

func compareLive(live topology.Report, bare *topology.Machine) []check {
	var out []check
	nics := make(map[string]topology.NIC, len(live.NICs))
	names := make([]string, 0, len(live.NICs))
	for _, nic := range live.NICs {
		nics[nic.Name] = nic
		names = append(names, nic.Name)
	}
	sort.Strings(names)
	for _, name := range names {
		nic, pods := nics[name], live.Holders[name]
		onHost := false
		if bare != nil {
			_, onHost = bare.NICByName(name)
		}
		switch {
		case pods != "" && !onHost:
			out = append(out, check{"ok", fmt.Sprintf("%s (%s) sits in pod %s: gone from the host, known to raild", name, nic.Netdev, pods), ""})
		case pods != "":
			out = append(out, check{"ok", fmt.Sprintf("%s (%s) held by %s", name, nic.Netdev, pods), ""})
		case !onHost:
			out = append(out, check{"warn", fmt.Sprintf("%s (%s) is in raild's snapshot but not on the host, and no pod holds it", name, nic.Netdev),
				"raild rescans on link events and every 30 s; if it stays, look for the NIC in pods' netns"})
		}
	}
	return out
}
