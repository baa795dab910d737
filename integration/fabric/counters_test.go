package fabric

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// counters are a node's packet counters at one moment: each wire NIC's
// (the guest's netdev, in its initial netns: every frame a pod sends or
// receives over its rail interface crosses it) and each RDMA device's
// (rxe's sent_pkts / rcvd_pkts, by device name).
type counters struct {
	nicTX, nicRX [2]uint64
	rdmaTX       map[string]uint64
	rdmaRX       map[string]uint64
}

// counters reads the node's counters in one script.
func (n *node) counters(t *testing.T) counters {
	t.Helper()
	script := fmt.Sprintf(`for i in %s %s; do echo "nic $(cat /sys/class/net/$i/statistics/tx_packets) $(cat /sys/class/net/$i/statistics/rx_packets)"; done
for d in /sys/class/infiniband/*; do
  [ -e "$d/ports/1/hw_counters/sent_pkts" ] || continue
  echo "rdma ${d##*/} $(cat $d/ports/1/hw_counters/sent_pkts) $(cat $d/ports/1/hw_counters/rcvd_pkts)"
done`, n.nics[0].name, n.nics[1].name)
	out := n.run(t, "read counters", time.Minute, script)
	c := counters{rdmaTX: map[string]uint64{}, rdmaRX: map[string]uint64{}}
	rail := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		num := func(s string) uint64 {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("node %s: counter %q in %q", n.name, s, l)
			}
			return v
		}
		switch {
		case len(f) == 3 && f[0] == "nic" && rail < 2:
			c.nicTX[rail], c.nicRX[rail] = num(f[1]), num(f[2])
			rail++
		case len(f) == 4 && f[0] == "rdma":
			c.rdmaTX[f[1]], c.rdmaRX[f[1]] = num(f[2]), num(f[3])
		default:
			t.Fatalf("node %s: unexpected counter line %q", n.name, l)
		}
	}
	return c
}

// delta is what moved between two readings.
func (c counters) delta(before counters) counters {
	d := counters{rdmaTX: map[string]uint64{}, rdmaRX: map[string]uint64{}}
	for r := range 2 {
		d.nicTX[r], d.nicRX[r] = c.nicTX[r]-before.nicTX[r], c.nicRX[r]-before.nicRX[r]
	}
	for dev, v := range c.rdmaTX {
		d.rdmaTX[dev] = v - before.rdmaTX[dev]
		d.rdmaRX[dev] = c.rdmaRX[dev] - before.rdmaRX[dev]
	}
	return d
}

func (c counters) String() string {
	s := fmt.Sprintf("rail0 tx %d rx %d, rail1 tx %d rx %d", c.nicTX[0], c.nicRX[0], c.nicTX[1], c.nicRX[1])
	for dev, tx := range c.rdmaTX {
		s += fmt.Sprintf("; %s sent %d rcvd %d", dev, tx, c.rdmaRX[dev])
	}
	return s
}
