package main

import (
	"io"
	"os"
	"time"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/verbs"
)

// plugin holds what the verbs need from outside the process — the config
// loader and raild — so that their decisions are table-tested without
// root, as rail's are.
type plugin struct {
	loadConf func(stdin []byte) (*netconf.IPAMConf, error)
	raild    func(socket string, timeout time.Duration) verbs.Raild
	stdout   io.Writer // where results go
}

func newPlugin() *plugin {
	return &plugin{
		loadConf: netconf.LoadIPAM,
		raild:    func(socket string, timeout time.Duration) verbs.Raild { return api.NewClient(socket, timeout) },
		stdout:   os.Stdout,
	}
}

// load reads the netconf and makes the raild client it names.
func (p *plugin) load(stdin []byte) (*netconf.IPAMConf, verbs.Raild, error) {
	conf, err := p.loadConf(stdin)
	if err != nil {
		return nil, nil, err
	}
	return conf, p.raild(conf.IPAM.Socket, conf.IPAM.CallTimeout), nil
}

// print writes result in the version the runtime asked for.
func (p *plugin) print(result types.Result, cniVersion string) error {
	return verbs.Print(p.stdout, result, cniVersion)
}
