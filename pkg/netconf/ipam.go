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
// plugin's own fields are not ours to judge, the ipam section is.
type IPAMConf struct {
	CNIVersion    string          `json:"cniVersion"`
	Name          string          `json:"name"`
	RawIPAM       json.RawMessage `json:"ipam"`
	RuntimeConfig *RuntimeConfig  `json:"runtimeConfig,omitempty"`
	Args          *Args           `json:"args,omitempty"`
	// ValidAttachments comes with the CNI GC verb.
	ValidAttachments []types.GCAttachment `json:"cni.dev/valid-attachments,omitempty"`

	IPAM IPAM `json:"-"`
}

// LoadIPAM decodes the netconf and strictly validates its ipam section.
func LoadIPAM(data []byte) (*IPAMConf, error) {
	conf := &IPAMConf{}
	if err := json.Unmarshal(data, conf); err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "failed to decode netconf", err.Error())
	}
	if len(conf.RawIPAM) == 0 {
		return nil, fieldError("ipam", "missing: rail-ipam is configured as \"ipam\": {\"type\": \"rail-ipam\", \"pool\": \"NAME\"}")
	}
	dec := json.NewDecoder(bytes.NewReader(conf.RawIPAM))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&conf.IPAM); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field") {
			return nil, unknownFieldError("ipam: " + strings.TrimPrefix(err.Error(), "json: ") +
				"; rail-ipam accepts type, socket, pool, timeout")
		}
		return nil, types.NewError(types.ErrDecodingFailure, "failed to decode ipam section", err.Error())
	}
	return conf, conf.IPAM.validate()
}

func (i *IPAM) validate() error {
	if i.Socket == "" {
		i.Socket = api.DefaultSocket
	}
	if !strings.HasPrefix(i.Socket, "/") {
		return fieldError("ipam.socket", "%q must be an absolute path to raild's unix socket (default %s)", i.Socket, api.DefaultSocket)
	}
	if i.Pool != "" && !poolNameRE.MatchString(i.Pool) {
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
