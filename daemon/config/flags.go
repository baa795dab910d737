package config

import "flag"

// Flags are the command-line values that override the config file's
// (raild serve's flags; recover shares the ones it needs).
type Flags struct {
	Config, Root, Socket, StateDir, NetnsDir, NodeName, PodResources, MetricsAddr, LogLevel, Kubeconfig, ProcRoot string
}

// LoadWithFlags reads the file, then lets the flags that were set win.
func LoadWithFlags(fs *flag.FlagSet, f Flags) (*Config, error) {
	cfg, err := Load(f.Config)
	if err != nil {
		return nil, err
	}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "root":
			cfg.Root = f.Root
		case "socket":
			cfg.Socket = f.Socket
		case "state-dir":
			cfg.StateDir = f.StateDir
		case "netns-dir":
			cfg.NetnsDir = f.NetnsDir
		case "node-name":
			cfg.NodeName = f.NodeName
		case "pod-resources-socket":
			cfg.PodResourcesSocket = f.PodResources
		case "metrics-addr":
			cfg.MetricsAddr = f.MetricsAddr
		case "kubeconfig":
			cfg.Kubernetes.Kubeconfig = f.Kubeconfig
		case "proc-root":
			cfg.Readiness.ProcRoot = f.ProcRoot
		}
	})
	return cfg, cfg.Finish()
}
