package raild

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// ipamPlugin execs a CNI IPAM plugin the way a main plugin does.
type ipamPlugin struct {
	bin  string
	conf []byte // the network config on stdin
}

// railIPAM is rail-ipam for network n and pool p of the raild at socket.
func railIPAM(socket string) ipamPlugin {
	conf := fmt.Sprintf(`{"cniVersion":"1.0.0","name":"n","type":"macvlan","ipam":{"type":"rail-ipam","pool":"p","socket":%q}}`, socket)
	return ipamPlugin{bin: bins.railIPAM, conf: []byte(conf)}
}

// hostLocal is upstream host-local with its own data dir.
func hostLocal(subnet, dataDir string) ipamPlugin {
	conf := fmt.Sprintf(`{"cniVersion":"1.0.0","name":"n","type":"macvlan","ipam":{"type":"host-local","subnet":%q,"dataDir":%q}}`,
		subnet, dataDir)
	return ipamPlugin{bin: bins.hostLocal, conf: []byte(conf)}
}

// add runs ADD and returns the one address of the result, in CIDR form.
func (p ipamPlugin) add(ctx context.Context, sandbox, netns string) (string, error) {
	out, err := p.run(ctx, "ADD", sandbox, netns)
	if err != nil {
		return "", err
	}
	var result struct {
		IPs []struct {
			Address string `json:"address"`
		} `json:"ips"`
	}
	if err := json.Unmarshal(out, &result); err != nil || len(result.IPs) != 1 {
		return "", fmt.Errorf("%s ADD %s printed %s, want a result with one address (%v)", p.bin, sandbox, out, err)
	}
	return result.IPs[0].Address, nil
}

// del runs DEL.
func (p ipamPlugin) del(ctx context.Context, sandbox, netns string) error {
	_, err := p.run(ctx, "DEL", sandbox, netns)
	return err
}

func (p ipamPlugin) run(ctx context.Context, command, sandbox, netns string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, p.bin)
	cmd.Env = []string{"CNI_COMMAND=" + command, "CNI_CONTAINERID=" + sandbox, "CNI_NETNS=" + netns,
		"CNI_IFNAME=net1", "CNI_PATH=" + bins.dir, "PATH=/usr/bin:/bin"}
	cmd.Stdin = bytes.NewReader(p.conf)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s %s: %w: %s %s", p.bin, command, sandbox, err,
			strings.TrimSpace(stdout.String()), strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
