package netconf

import (
	"encoding/json"

	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
)

// Load reads a rail netconf and, when chained, the previous result.
func Load(stdin []byte) (*Rail, *current.Result, error) {
	conf, err := LoadRail(stdin)
	if err != nil {
		return nil, nil, err
	}
	if conf.RawPrevResult == nil {
		return conf, nil, nil
	}
	if err := version.ParsePrevResult(&conf.PluginConf); err != nil {
		return nil, nil, types.NewError(types.ErrDecodingFailure, "cannot parse prevResult", err.Error())
	}
	prev, err := current.NewResultFromResult(conf.PrevResult)
	if err != nil {
		return nil, nil, types.NewError(types.ErrDecodingFailure, "cannot convert prevResult", err.Error())
	}
	return conf, prev, nil
}

// LoadDel is Load for DEL, which ignores a cached prevResult that
// does not parse: DEL needs it only to name rail's interfaces when raild
// holds no lease, and then the alias on each pod link says which are
// rail's. Failing instead would fail the DEL forever, and the runtime
// would never finish the pod's teardown.
func LoadDel(stdin []byte) (*Rail, *current.Result, error) {
	conf, prev, err := Load(stdin)
	if err == nil {
		return conf, prev, nil
	}
	stripped, ok := withoutPrevResult(stdin)
	if !ok {
		return nil, nil, err
	}
	// What is wrong besides the prevResult is what DEL must report.
	conf, _, err = Load(stripped)
	if err != nil {
		return nil, nil, err
	}
	return conf, nil, nil
}

// withoutPrevResult is the netconf without its prevResult key; ok is
// false when it is not a JSON object or has no prevResult.
func withoutPrevResult(stdin []byte) ([]byte, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(stdin, &fields) != nil {
		return nil, false
	}
	if _, ok := fields["prevResult"]; !ok {
		return nil, false
	}
	delete(fields, "prevResult")
	out, err := json.Marshal(fields)
	return out, err == nil
}
