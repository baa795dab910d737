package fabric

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// transferIters is how many 64 KiB messages ib_write_bw and ucx_perftest
// move (TCG moves a few MB/s: 200 take seconds).
const transferIters = 200

// figures are one pair's throughput, MB/s, as the programs report it.
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

// transfer runs rping, ib_write_bw -R and ucx_perftest from cli to srv
// over their rail, each shown on the wire by the counters, UCX shown on
// rc_verbs of each side's own device; it returns the throughput figures.
func transfer(t *testing.T, what string, cli, srv endpointOf, port int) figures {
	t.Helper()
	var f figures
	wc, ws := watch(t, cli.s, cli.dev, cli.rail), watch(t, srv.s, srv.dev, srv.rail)
	exchange(t, what+": rping", srv.s, rpingServer(srv.addr, 20), "", cli.s, rpingClient(srv.addr, "", 20))
	checkOnWire(t, what+": rping", wc, ws)

	wc, ws = watch(t, cli.s, cli.dev, cli.rail), watch(t, srv.s, srv.dev, srv.rail)
	_, out := exchange(t, what+": ib_write_bw -R", srv.s, writeBW(port, transferIters, ""), writeBWReady, cli.s, writeBW(port, transferIters, srv.addr))
	bw, ok := writeBWAverage(out)
	if !ok {
		t.Errorf("%s: no BW average in ib_write_bw's output:\n%s", what, out)
	}
	f.writeBW = bw
	checkOnWire(t, what+": ib_write_bw", wc, ws)

	wc, ws = watch(t, cli.s, cli.dev, cli.rail), watch(t, srv.s, srv.dev, srv.rail)
	srvOut, cliOut := exchange(t, what+": ucx_perftest", srv.s, ucxPerftest(port+1, transferIters, ""), ucxReady, cli.s, ucxPerftest(port+1, transferIters, srv.addr))
	for _, o := range []struct {
		e   endpointOf
		out string
	}{{cli, cliOut}, {srv, srvOut}} {
		checkUCXTransport(t, what, o.e, o.out)
	}
	bw, ok = ucxBandwidth(cliOut)
	if !ok {
		t.Errorf("%s: no Final line in ucx_perftest's output:\n%s", what, cliOut)
	}
	f.ucx = bw
	checkOnWire(t, what+": ucx_perftest", wc, ws)
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
