package fabric

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// side is where one end of an exchange runs: a pod's container (crictl
// exec: the container's devices, limits and environment) or a network
// namespace made by hand (the floor).
type side interface {
	host() *node
	label() string
	// command is the guest's command line that runs script there.
	command(script string) string
}

func (p *pod) host() *node                  { return p.n }
func (p *pod) label() string                { return "pod " + p.n.name + "/" + p.name }
func (p *pod) command(script string) string { return p.execScript(script) }

// exchangeTimeout bounds each side of an exchange (TCG: a few MB/s).
const exchangeTimeout = 4 * time.Minute

// retryScript runs cmd until it succeeds, at most 40 times a second apart:
// the client starts while the server may still be starting (it fails fast
// while nobody listens). A failed run prints why, so a client that failed
// after it reached the server is not hidden behind the retries that follow.
func retryScript(cmd string) string {
	return fmt.Sprintf(`tries=0
until out=$(%s 2>&1); do
  tries=$((tries+1))
  case "$out" in *"Couldn't connect"*|*"REJECTED"*|*"Connection refused"*) ;; *) echo "attempt $tries: $out" ;; esac
  if [ $tries -ge 40 ]; then echo "$out"; echo "(failed $tries times)"; exit 1; fi
  sleep 1
done
echo "$out"`, cmd)
}

// exchange runs server on srv (in the background), waits until its output
// holds ready (the program's own "waiting" line; "": none, the client's
// retries cover the start), then runs client on cli until it connects, and
// returns both outputs; both must succeed. A client that reached a server
// still starting can leave it waiting for a peer that is gone (perftest's
// rdma_cm client crashes when rejected), hence the wait. The programs'
// servers take one client: when the client fails after the server took it
// and the server ended with it, the whole exchange runs once more (logged),
// as an engine reconnects; a second failure fails the test.
func exchange(t *testing.T, what string, srv side, server, ready string, cli side, client string) (srvOut, cliOut string) {
	t.Helper()
	srvOut, cliOut, failed, again := exchangeOnce(what, srv, server, ready, cli, client)
	if failed != "" && again {
		t.Logf("%s: the exchange failed after the server took the client; running it once more:\n%s", what, failed)
		srvOut, cliOut, failed, _ = exchangeOnce(what, srv, server, ready, cli, client)
	}
	if failed != "" {
		t.Fatal(failed)
	}
	return srvOut, cliOut
}

// exchangeOnce is one exchange: the outputs, or why it failed and whether
// the server ended (so that the exchange may run again on its port).
func exchangeOnce(what string, srv side, server, ready string, cli side, client string) (srvOut, cliOut, failed string, serverEnded bool) {
	j := srv.host().start(what+" server", exchangeTimeout, srv.command(server))
	if ready != "" {
		if out, ok := j.waitOutput(ready, exchangeTimeout); !ok {
			return "", "", fmt.Sprintf("%s: the server on %s never printed %q:\n%s", what, srv.label(), ready, out), false
		}
	}
	cliOut, cliRC, cliErr := cli.host().try(what+" client", exchangeTimeout, cli.command(retryScript(client)))
	if cliErr != nil || cliRC != 0 {
		// a server whose client gave up waits until its timeout: read what it said so far
		srvOut, _ = j.waitOutput("\x00", 10*time.Second)
		_, ended := j.ended()
		return "", "", fmt.Sprintf("%s: client on %s: exit %d %v\n%s\nserver on %s (still running or ended):\n%s", what, cli.label(), cliRC, cliErr, cliOut,
			srv.label(), srvOut), ended
	}
	srvOut, srvRC, srvErr := j.wait(exchangeTimeout)
	if srvErr != nil || srvRC != 0 {
		return "", "", fmt.Sprintf("%s: client on %s: exit %d %v\n%s\nserver on %s: exit %d %v\n%s", what, cli.label(), cliRC, cliErr, cliOut,
			srv.label(), srvRC, srvErr, srvOut), false
	}
	return srvOut, cliOut, "", false
}

// The programs, as the tests run them in a side. $DEV is the side's RDMA
// device, read from the UCX_NET_DEVICES Rail injected (<device>:<port>).
const devFromEnv = `DEV=${UCX_NET_DEVICES%%:*}; [ -n "$DEV" ] || { echo "no UCX_NET_DEVICES in the environment"; exit 3; }; `

// rpingServer / rpingClient: rdma_cm connection, RDMA read and write of
// count pings.
func rpingServer(addr string, count int) string {
	return fmt.Sprintf("rping -s -a %s -C %d -S 4096", addr, count)
}

func rpingClient(addr, src string, count int) string {
	bind := ""
	if src != "" {
		bind = " -I " + src
	}
	return fmt.Sprintf("rping -c -a %s%s -C %d -S 4096", addr, bind, count)
}

// writeBW is ib_write_bw over rdma_cm (-R) on the side's device: iters
// RDMA writes of 64 KiB; the client names the server's address. Its output
// is line-buffered, so that the server's writeBWReady shows while it waits.
func writeBW(port, iters int, server string) string {
	return devFromEnv + fmt.Sprintf("stdbuf -oL ib_write_bw -R -d $DEV -p %d -n %d -s 65536 %s", port, iters, server)
}

// writeBWVerbs is ib_write_bw without rdma_cm: the QPs connect over raw
// verbs on the side's device and the GID index the environment names
// (NCCL_IB_GID_INDEX, as NCCL's IB transport would use it); the client
// reaches the server's address over TCP for the QP numbers only.
func writeBWVerbs(port, iters int, server string) string {
	return devFromEnv + fmt.Sprintf("stdbuf -oL ib_write_bw -d $DEV -x ${NCCL_IB_GID_INDEX:?} -p %d -n %d -s 65536 %s", port, iters, server)
}

// writeBWReady is what ib_write_bw's server prints once it listens;
// ucxReady ucx_perftest's.
const (
	writeBWReady = "Waiting for client to connect"
	ucxReady     = "Waiting for connection"
)

// ucxPerftest is ucx_perftest's tag_bw on whatever UCX picks from the
// environment (only UCX_LOG_LEVEL=info is added: it makes UCX print the
// transport and device each endpoint uses, and changes no choice).
func ucxPerftest(port, iters int, server string) string {
	return fmt.Sprintf("UCX_LOG_LEVEL=info stdbuf -oL ucx_perftest -p %d -t tag_bw -s 65536 -n %d %s", port, iters, server)
}

// ucxInfo lists UCX's devices with its debug log, keeping the lines about
// IB devices, the verbs transports and why a device was skipped.
const ucxInfo = `UCX_LOG_LEVEL=debug ucx_info -d 2>&1 | grep -iE 'ib|rxe|verbs|device|skip|not' | head -80 || true`

// writeBWAverage is the BW average (MB/s) ib_write_bw's client reports.
func writeBWAverage(out string) (float64, bool) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "BW average") || i+1 >= len(lines) {
			continue
		}
		f := strings.Fields(lines[i+1])
		if len(f) >= 4 {
			v, err := strconv.ParseFloat(f[3], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// ucxBandwidth is the average bandwidth (MB/s) of ucx_perftest's final
// line ("Final: iterations, typical/average/overall latency, average and
// overall bandwidth, ...").
func ucxBandwidth(out string) (float64, bool) {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 7 && f[0] == "Final:" {
			v, err := strconv.ParseFloat(f[5], 64)
			return v, err == nil
		}
	}
	return 0, false
}
