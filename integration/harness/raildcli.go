package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// Leases runs `raild leases --json` against the running raild.
func (r *Raild) Leases() ([]api.Lease, error) {
	var leases []api.Lease
	if err := r.cliJSON(&leases, "leases", "--socket", r.Socket, "--json"); err != nil {
		return nil, err
	}
	return leases, nil
}

// Pools runs `raild pools --json`.
func (r *Raild) Pools() ([]api.PoolStatus, error) {
	var pools []api.PoolStatus
	if err := r.cliJSON(&pools, "pools", "--socket", r.Socket, "--json"); err != nil {
		return nil, err
	}
	return pools, nil
}

// Topology runs `raild topo --root ROOT --json` on the fake machine.
func (r *Raild) Topology() (topology.Report, error) {
	var report topology.Report
	args := []string{"topo", "--root", r.opt.Root, "--json"}
	if f := r.opt.Config.TopologyFile; f != "" {
		args = append(args, "--topology-file", f)
	}
	err := r.cliJSON(&report, args...)
	return report, err
}

// Client is an API client for the running raild.
func (r *Raild) Client() *api.Client { return api.NewClient(r.Socket, 0) }

func (r *Raild) cliJSON(out any, args ...string) error {
	cmd := exec.Command(r.opt.Bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("raild %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("raild %s: decode output: %w", args[0], err)
	}
	return nil
}
