package installcni

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/railcni/rail/daemon/cniconf"
	"github.com/railcni/rail/daemon/config"
)

// Run is `raild install-cni`: it copies the plugin binaries into the host's CNI bin dir and,
// in chained mode, puts rail's entry into the primary's conflist; with
// --uninstall it removes that entry (and leaves the binaries for the DEL of
// pods still running).
func Run(args []string) error {
	return installCNI(args, os.Stdout)
}

func installCNI(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("raild install-cni", flag.ContinueOnError)
	from := fs.String("from", "/opt/rail/bin", "directory holding rail and rail-ipam")
	to := fs.String("to", "/host/opt/cni/bin", "the host's CNI bin dir")
	configPath := fs.String("config", "", "raild's YAML config: its cni section is the default for the flags below")
	var c cniconf.Config
	fs.StringVar(&c.ConfDir, "conf-dir", cniconf.DefaultConfDir, "the host's CNI conf dir")
	fs.StringVar(&c.Mode, "mode", cniconf.ModeNAD, "chained (insert rail into the primary's conflist) or nad (no conflist change)")
	entry := fs.String("entry", "", "rail's conflist entry as JSON (default "+cniconf.DefaultEntry+")")
	fs.StringVar(&c.EntryFile, "entry-file", "", "file holding rail's conflist entry as JSON")
	uninstall := fs.Bool("uninstall", false, "remove rail's entry from the conf dir's conflists (binaries stay)")
	unlessRollout := fs.Bool("unless-rollout", false, "with --uninstall: keep the entry while this raild pod's DaemonSet lives "+
		"(a rollout); needs $POD_NAMESPACE, $POD_NAME and the API server (any doubt removes it)")
	kubeconfig := fs.String("kubeconfig", "", "with --unless-rollout: kubeconfig file (default: the pod's service account)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.Entry = []byte(*entry)
	cfg, err := installConfig(fs, *configPath, c)
	if err != nil {
		return err
	}
	in := cniconf.NewInstaller(cfg)
	if *uninstall {
		if *unlessRollout && keepForRollout(*kubeconfig, out) {
			return nil
		}
		return uninstallEntry(in, out)
	}
	for _, name := range []string{"rail", "rail-ipam"} {
		if err := installFile(filepath.Join(*from, name), filepath.Join(*to, name)); err != nil {
			return err
		}
		fmt.Fprintf(out, "installed %s\n", filepath.Join(*to, name))
	}
	if cfg.Mode == cniconf.ModeChained {
		insertEntry(in, out)
	}
	return nil
}

// installConfig takes the cni section of --config, lets the flags that were
// set win, and validates.
func installConfig(fs *flag.FlagSet, path string, flags cniconf.Config) (cniconf.Config, error) {
	var cfg cniconf.Config
	if path != "" {
		full, err := config.Load(path)
		if err != nil {
			return cfg, err
		}
		cfg = full.CNI
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "conf-dir":
			cfg.ConfDir = flags.ConfDir
		case "mode":
			cfg.Mode = flags.Mode
		case "entry":
			cfg.Entry, cfg.EntryFile = flags.Entry, ""
		case "entry-file":
			cfg.Entry, cfg.EntryFile = nil, flags.EntryFile
		}
	})
	return cfg, cfg.Finish()
}

// insertEntry puts rail's entry in once. A conf dir or primary that is not
// there yet, or a file that does not parse, is said and not fatal: raild
// serve's watcher keeps trying and reports it in /readyz, instead of this
// init container crash-looping.
func insertEntry(in *cniconf.Installer, out io.Writer) {
	res, err := in.Install(nil)
	switch {
	case err != nil:
		fmt.Fprintf(out, "rail's entry is not in the primary's CNI config yet: %v\nraild serve keeps trying (see its log and /readyz)\n", err)
	case res.Changed:
		fmt.Fprintf(out, "inserted rail's entry into %s (backup of the primary's bytes: %s.rail-bak)\n", res.File, res.Target)
	default:
		fmt.Fprintf(out, "rail's entry is already in %s\n", res.File)
	}
}

func uninstallEntry(in *cniconf.Installer, out io.Writer) error {
	changed, err := in.Uninstall()
	for _, path := range changed {
		fmt.Fprintf(out, "removed rail's entry from %s\n", path)
	}
	if err == nil && len(changed) == 0 {
		fmt.Fprintln(out, "no conflist holds rail's entry")
	}
	if err != nil {
		return fmt.Errorf("uninstall: %w", err)
	}
	return nil
}

// installFile copies one binary into place atomically, so a runtime never
// executes a half-written plugin. The temp files of an install-cni killed
// mid-copy go first.
func installFile(src, dst string) error {
	if err := cniconf.RemoveStaleTemps(dst); err != nil {
		return fmt.Errorf("install %s: %w", dst, err)
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	if err := cniconf.WriteFile(dst, in, 0o755); err != nil {
		return fmt.Errorf("install %s: %w", dst, err)
	}
	return nil
}
