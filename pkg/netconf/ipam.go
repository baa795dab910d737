package netconf

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
)

// IPAM is the "ipam" section for rail-ipam.
type IPAM struct {
	Type    string `json:"type"`
	Socket  string `json:"socket,omitempty"`
	Pool    string `json:"pool,omitempty"`
	Timeout string `json:"timeout,omitempty"`

	CallTimeout time.Duration `json:"-"`
}

// IPAMConf is a main plugin's netconf as rail-ipam sees it: the main
// plugin's own fields are not ours to judge, the ipam section is. Only
// keys spelt exactly as below are read (encoding/json alone would take
// "IPAM" or "Name" for them).
type IPAMConf struct {
	CNIVersion    string
	Name          string
	RuntimeConfig *RuntimeConfig
	Args          *Args
	// ValidAttachments comes with the CNI GC verb.
	ValidAttachments []types.GCAttachment

	IPAM IPAM
}

const ipamKeys = "rail-ipam accepts type, socket, pool, timeout"

// LoadIPAM decodes the netconf and strictly validates its ipam section.
func LoadIPAM(data []byte) (*IPAMConf, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, types.NewError(types.ErrDecodingFailure, "failed to decode netconf", "want a JSON object")
	}
	conf := &IPAMConf{}
	fields := []struct {
		key  string
		into any
	}{
		{"cniVersion", &conf.CNIVersion}, {"name", &conf.Name}, {"cni.dev/valid-attachments", &conf.ValidAttachments},
	}
	for _, f := range fields {
		if raw, ok := top[f.key]; ok {
			if err := json.Unmarshal(raw, f.into); err != nil {
				return nil, types.NewError(types.ErrDecodingFailure, "failed to decode netconf field "+f.key, api.Excerpt(err.Error(), 400))
			}
		}
	}
	var err error
	if conf.RuntimeConfig, err = runtimeConfigOf(top["runtimeConfig"]); err != nil {
		return nil, err
	}
	if conf.Args, err = argsOf(top["args"]); err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(top["ipam"])
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fieldError("ipam", "missing or not an object: rail-ipam is configured as \"ipam\": {\"type\": \"rail-ipam\", \"pool\": \"NAME\"}")
	}
	if err := decodeStrict(raw, &conf.IPAM, ipamKeys); err != nil {
		return nil, err
	}
	return conf, conf.IPAM.validate()
}

// runtimeConfigOf reads the pod annotations from runtimeConfig; other
// capabilities there belong to the main plugin.
func runtimeConfigOf(raw json.RawMessage) (*RuntimeConfig, error) {
	var all map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &all) != nil || all[AnnotationsCapability] == nil {
		return nil, nil
	}
	rc := &RuntimeConfig{}
	if err := json.Unmarshal(all[AnnotationsCapability], &rc.PodAnnotations); err != nil {
		return nil, fieldError("runtimeConfig."+AnnotationsCapability, "want an object of strings: %s", api.Excerpt(err.Error(), 200))
	}
	return rc, nil
}

// argsOf reads Multus' cni-args (args.cni); other args belong to the main plugin.
func argsOf(raw json.RawMessage) (*Args, error) {
	var all map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &all) != nil || all["cni"] == nil {
		return nil, nil
	}
	args := &Args{CNI: &api.CNIArgs{}}
	if err := decodeStrict(all["cni"], args.CNI, "cni-args rail reads: pool, gpus, nics, rail"); err != nil {
		return nil, err
	}
	return args, nil
}

func (i *IPAM) validate() error {
	if i.Type == "" {
		return fieldError("ipam.type", "missing: the main plugin calls the IPAM plugin named here, \"rail-ipam\"")
	}
	if i.Socket == "" {
		i.Socket = api.DefaultSocket
	}
	if !strings.HasPrefix(i.Socket, "/") {
		return fieldError("ipam.socket", "%q must be an absolute path to raild's unix socket (default %s)", i.Socket, api.DefaultSocket)
	}
	if i.Pool != "" && !api.ValidPoolName(i.Pool) {
		return fieldError("ipam.pool", "%q is not a pool name: letters, digits, '.', '_' and '-', at most 63", i.Pool)
	}
	i.CallTimeout = api.DefaultTimeout
	if i.Timeout != "" {
		d, err := time.ParseDuration(i.Timeout)
		if err != nil || d <= 0 || d > 5*time.Minute {
			return fieldError("ipam.timeout", "%q must be a duration between 1ms and 5m, e.g. \"10s\"", i.Timeout)
		}
		i.CallTimeout = d
	}
	return nil
}

// Annotations returns the pod annotations the runtime passed, if any.
func (c *IPAMConf) Annotations() map[string]string {
	if c.RuntimeConfig == nil {
		return nil
	}
	return c.RuntimeConfig.PodAnnotations
}

// CNIArgs returns the Multus cni-args, if any.
func (c *IPAMConf) CNIArgs() *api.CNIArgs {
	if c.Args == nil {
		return nil
	}
	return c.Args.CNI
}
