package fabric

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// transferIters is how many 64 KiB messages ib_write_bw and ucx_perftest
// move (TCG moves a few MB/s: 200 take seconds).
const transferIters = 200

// figures are one pair's throughput, MB/s, as the programs report it:
// ib_write_bw over raw verbs and ucx_perftest's tag_bw.
type figures struct {
	writeBW, ucx float64
}

// endpointOf is a side with its RDMA device, rail and address.
type endpointOf struct {
	s    side
	dev  string
	rail int
	addr string
}

// transfer runs, from cli to srv over their rail, each as a subtest of its
// own: rping and ib_write_bw -R (connected by rdma_cm, which resolves the
// addresses to devices), ib_write_bw over raw verbs on the device and GID
// index of the environment, and ucx_perftest, shown on rc_verbs of each
// side's own device. Each is judged on the wire by the counters. It
// returns the throughput figures.
func transfer(t *testing.T, what string, cli, srv endpointOf, port int) figures {
	t.Helper()
	var f figures
	step := func(name, server, ready, client string, check func(srvOut, cliOut string)) {
		t.Run(name, func(t *testing.T) {
			wc, ws := watch(t, cli.s, cli.dev, cli.rail), watch(t, srv.s, srv.dev, srv.rail)
			srvOut, cliOut := exchange(t, what+": "+name, srv.s, server, ready, cli.s, client)
			checkOnWire(t, what+": "+name, wc, ws)
			if check != nil {
				check(srvOut, cliOut)
			}
		})
	}
	step("rping (rdma_cm)", rpingServer(srv.addr, 20), "", rpingClient(srv.addr, "", 20), nil)
	step("ib_write_bw -R (rdma_cm)", writeBW(port, transferIters, ""), writeBWReady, writeBW(port, transferIters, srv.addr), nil)
	step("ib_write_bw (verbs, the env's GID index)", writeBWVerbs(port+1, transferIters, ""), writeBWReady, writeBWVerbs(port+1, transferIters, srv.addr),
		func(_, out string) {
			bw, ok := writeBWAverage(out)
			if !ok {
				t.Errorf("%s: no BW average in ib_write_bw's output:\n%s", what, out)
			}
			f.writeBW = bw
		})
	// what UCX's IB component sees on the client's side, for the log only
	// (a UCX that offers only tcp says here why it skipped the device)
	t.Logf("%s: ucx_info -d on %s (UCX_LOG_LEVEL=debug, IB lines):\n%s", what, cli.s.label(),
		cli.s.host().run(t, cli.s.label()+": ucx_info", time.Minute, cli.s.command(ucxInfo)))
	step("ucx_perftest (rc_verbs on the pod's device)", ucxPerftest(port+2, transferIters, ""), ucxReady, ucxPerftest(port+2, transferIters, srv.addr),
		func(srvOut, cliOut string) {
			checkUCXTransport(t, what, cli, cliOut)
			checkUCXTransport(t, what, srv, srvOut)
			bw, ok := ucxBandwidth(cliOut)
			if !ok {
				t.Errorf("%s: no Final line in ucx_perftest's output:\n%s", what, cliOut)
			}
			f.ucx = bw
		})
	t.Logf("%s: ib_write_bw %.2f MB/s, ucx_perftest tag_bw %.2f MB/s", what, f.writeBW, f.ucx)
	return f
}

// epConfig matches UCX's info line for an endpoint's configuration, e.g.
// "ep_cfg[1]: tag(rc_verbs/rxe_p:1 ...)".
var epConfig = regexp.MustCompile(`ep_cfg\[\d+\]: (.*)`)

// checkUCXTransport requires every endpoint configuration UCX printed to
// run tag traffic over rc_verbs on the side's own device, never TCP.
func checkUCXTransport(t *testing.T, what string, e endpointOf, out string) {
	t.Helper()
	want := fmt.Sprintf("rc_verbs/%s:1", e.dev)
	seen := 0
	for _, m := range epConfig.FindAllStringSubmatch(out, -1) {
		if !strings.Contains(m[1], "tag(") {
			continue // the self/loopback endpoint of the wireup
		}
		seen++
		if !strings.Contains(m[1], want) || strings.Contains(m[1], "tcp") {
			t.Errorf("%s: %s: UCX endpoint %q: want tag traffic on %s only", what, e.s.label(), m[1], want)
		}
	}
	if seen == 0 {
		t.Errorf("%s: %s: UCX printed no endpoint configuration with tag traffic:\n%s", what, e.s.label(), out)
	}
}
