package pool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/railpool"
	"github.com/railcni/rail/integration/child"
	"github.com/railcni/rail/ipam"
)

// A process of this test binary with envNode set is a claimer: it claims
// as raild does at start and prints its outcome as JSON on stdout.
const (
	envNode       = "RAIL_POOL_CLAIM_NODE"
	envKubeconfig = "RAIL_POOL_CLAIM_KUBECONFIG"
	envAs         = "RAIL_POOL_CLAIM_AS"     // user to impersonate: the chart's service account
	envGo         = "RAIL_POOL_CLAIM_GO"     // a file whose appearance starts the claim
	envConfig     = "RAIL_POOL_CLAIM_POOL"   // a config pool name, to prove name clashes
	envFollow     = "RAIL_POOL_CLAIM_FOLLOW" // set: after the claim, follow RailPools as raild does
)

// added is a line a following claimer prints per RailPool added or refused.
type added struct {
	Pool   string `json:"pool"`
	Subnet string `json:"subnet"`
	Size   uint64 `json:"size"`
	Err    string `json:"err,omitempty"`
}

// outcome is what a claimer process prints.
type outcome struct {
	Claims []railpool.Claim  `json:"claims"`
	Sizes  map[string]uint64 `json:"sizes"` // addresses per pool after ipam.NewPools
}

func TestMain(m *testing.M) {
	if node := os.Getenv(envNode); node != "" {
		if err := claimAsRaild(node); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// claimAsRaild does what raild's nodePools does with API clients: claim,
// then build the node's pools from the config's and the claimed ones.
func claimAsRaild(node string) error {
	cfg, err := kubeclient.Config(os.Getenv(envKubeconfig))
	if err != nil {
		return err
	}
	cfg.Impersonate.UserName = os.Getenv(envAs)
	clients, err := kubeclient.New(cfg, "raild-pool-test")
	if err != nil {
		return err
	}
	claimer, err := railpool.NewClaimer(clients, node)
	if err != nil {
		return err
	}
	var configPools []ipam.PoolConfig
	if name := os.Getenv(envConfig); name != "" {
		configPools = []ipam.PoolConfig{{Name: name, Subnet: "10.99.0.0/24"}}
	}
	if gate := os.Getenv(envGo); gate != "" {
		for _, err := os.Stat(gate); err != nil; _, err = os.Stat(gate) {
			time.Sleep(time.Millisecond)
		}
	}
	res, err := claimer.NodePools(context.Background(), configPools)
	if err != nil {
		return err
	}
	pools, err := ipam.NewPools(append(configPools, res.Pools...), node)
	if err != nil {
		return err
	}
	out := outcome{Claims: res.Claims, Sizes: map[string]uint64{}}
	for _, p := range pools.List() {
		out.Sizes[p.Name()] = p.Size()
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil || os.Getenv(envFollow) == "" {
		return err
	}
	claimer.Follow(context.Background(), time.Hour, pools, configPools, func(c railpool.Claim, err error) {
		line := added{Pool: c.Pool, Subnet: c.Subnet.String()}
		if p, ok := pools.Get(c.Pool); ok && err == nil {
			line.Size = p.Size()
		}
		if err != nil {
			line.Err = err.Error()
		}
		_ = enc.Encode(line)
	})
	return nil
}

// claimProc is a running claimer process.
type claimProc struct {
	node     string
	proc     *child.Proc
	out, err bytes.Buffer
}

// startClaim starts a claimer for node; env adds variables.
func startClaim(t *testing.T, kubeconfig, as, node string, env ...string) *claimProc {
	t.Helper()
	p := &claimProc{node: node}
	cmd := claimCmd(kubeconfig, as, node, env...)
	cmd.Stdout, cmd.Stderr = &p.out, &p.err
	proc, err := child.Start(cmd, nil)
	if err != nil {
		t.Fatalf("start claimer for %s: %v", node, err)
	}
	p.proc = proc
	return p
}

// claimCmd is a claimer process for node, not started (child.Start
// starts it, dying with the test).
func claimCmd(kubeconfig, as, node string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, envNode+"="+node, envKubeconfig+"="+kubeconfig, envAs+"="+as)...)
	return cmd
}

// wait returns the claimer's outcome, or its error output when it failed.
func (p *claimProc) wait() (outcome, error) {
	var o outcome
	if err := p.proc.Wait(); err != nil {
		return o, fmt.Errorf("claimer for %s: %v: %s", p.node, err, strings.TrimSpace(p.err.String()))
	}
	if err := json.Unmarshal(p.out.Bytes(), &o); err != nil {
		return o, fmt.Errorf("claimer for %s printed %q: %w", p.node, p.out.String(), err)
	}
	return o, nil
}

// claim runs one claimer to its end.
func claim(t *testing.T, kubeconfig, as, node string, env ...string) (outcome, error) {
	t.Helper()
	return startClaim(t, kubeconfig, as, node, env...).wait()
}
