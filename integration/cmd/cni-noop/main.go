// Command cni-noop is the exec floor of `make bench`: a CNI plugin that
// does no work. ADD prints the previous result it was given (chained) or an
// empty result of the configured version; DEL, CHECK, GC and STATUS
// succeed at once. Timing it through libcni measures what any exec'd
// plugin pays before doing anything: fork/exec, the Go runtime starting,
// stdin config parsing and result encoding.
package main

import (
	"encoding/json"
	"fmt"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
)

func main() {
	nothing := func(*skel.CmdArgs) error { return nil }
	skel.PluginMainFuncs(skel.CNIFuncs{Add: add, Del: nothing, Check: nothing, GC: nothing, Status: nothing},
		version.All, "cni-noop: the exec floor of rail's benchmark")
}

func add(args *skel.CmdArgs) error {
	var conf types.PluginConf
	if err := json.Unmarshal(args.StdinData, &conf); err != nil {
		return fmt.Errorf("parse network config: %w", err)
	}
	if err := version.ParsePrevResult(&conf); err != nil {
		return fmt.Errorf("parse prevResult: %w", err)
	}
	var result types.Result = &current.Result{CNIVersion: current.ImplementedSpecVersion}
	if conf.PrevResult != nil {
		result = conf.PrevResult
	}
	return types.PrintResult(result, conf.CNIVersion)
}
