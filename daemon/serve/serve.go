package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/railcni/rail/daemon/attached"
	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/deviceplugin"
	"github.com/railcni/rail/daemon/draplugin"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podreport"
	"github.com/railcni/rail/daemon/readiness"
	"github.com/railcni/rail/daemon/server"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/daemon/sriov"
	"github.com/railcni/rail/daemon/statedir"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/topology"
)

// Run is `raild serve`: it parses the flags and serves until SIGTERM or
// SIGINT. SIGHUP is logged and otherwise ignored (see ignoreHangups).
func Run(args []string) error {
	fs := flag.NewFlagSet("raild serve", flag.ContinueOnError)
	var f config.Flags
	fs.StringVar(&f.Config, "config", "", "YAML config file")
	fs.StringVar(&f.Root, "root", "", "root of /sys, /proc and /dev (default /)")
	fs.StringVar(&f.Socket, "socket", "", "API socket (default /run/rail/raild.sock)")
	fs.StringVar(&f.StateDir, "state-dir", "", "lease store directory (default "+config.DefaultStateDir+")")
	fs.StringVar(&f.NetnsDir, "netns-dir", "", "where the runtime keeps pod netns (default "+config.DefaultNetnsDir+")")
	fs.StringVar(&f.NodeName, "node-name", "", "this node's name (default $NODE_NAME)")
	fs.StringVar(&f.PodResources, "pod-resources-socket", "", "kubelet PodResources socket (empty: GPUs from annotations and cni-args only)")
	fs.StringVar(&f.MetricsAddr, "metrics-addr", "", "address for /metrics, /healthz, /readyz (empty: off)")
	fs.StringVar(&f.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.ProcRoot, "proc-root", "", "procfs the readiness checks read containers from (default /proc)")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig file for the API server (turns the connection on under kubernetes.enabled: auto)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.LoadWithFlags(fs, f)
	if err != nil {
		return err
	}
	log, err := newLogger(f.LogLevel)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ignoreHangups(ctx, log)
	return serve(ctx, cfg, log)
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

func serve(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	discover, err := discoverer(cfg.TopologyFile, log)
	if err != nil {
		return err
	}
	inv, err := inventory.New(cfg.Root, discover(cfg.SoftRoCE), nil)
	if err != nil {
		return fmt.Errorf("discover topology under %s: %w", cfg.Root, err)
	}
	for _, p := range inv.Machine().Problems {
		log.Warn("topology problem", "device", p.Device, "reason", p.Reason)
	}
	enableVFs(inv, cfg, log.With("component", "sriov"))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clients, err := connectKube(cfg) // nil: raild runs without an API server
	if err != nil {
		return err
	}
	nodeIPs, err := readNode(ctx, cfg, clients, log) // applies the node class
	if err != nil {
		return err
	}
	if err := softRoCENICs(inv, cfg, discover, log); err != nil {
		return err
	}
	if err := protectNodeNICs(inv, cfg, nodeIPs, log); err != nil {
		return err
	}
	pools, followPools, err := nodePools(ctx, cfg, clients, log)
	if err != nil {
		return err
	}
	lock, err := statedir.LockDir(cfg.StateDir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if err := checkLostStore(cfg, pools, log); err != nil {
		return err
	}
	alloc, err := statedir.OpenLeaseStore(cfg, pools, sriov.LeasedVF(inv.Machine()))
	if err != nil {
		return err
	}
	defer alloc.Close()
	adoptLeases(inv, alloc, cfg.StateDir, log.With("component", "inventory"))
	machine := inv.Machine()
	rails, err := placement.RailIndex(cfg.Rails.NICs, cfg.UseAffinityRails(), machine, topology.Unplaceable(inv.Protected()))
	if err != nil {
		return err
	}
	gpus, closeGPUs, err := startGPUSource(ctx, clients, cfg, inv.Machine, log)
	if err != nil {
		return err
	}
	defer closeGPUs()
	netnsMode := rdmaNetnsMode(log)
	if err := checkSoftRoCE(cfg, netnsMode, inv.Machine(), log); err != nil {
		return err
	}
	claims, err := openDRAClaims(cfg)
	if err != nil {
		return err
	}
	m := metrics.New()
	k, err := newKube(clients, cfg, m, log.With("component", "kube"))
	if err != nil {
		return err
	}
	reports, err := startPodReport(ctx, clients, cfg.NodeName, m, log.With("component", "podreport"))
	if err != nil {
		return err
	}
	placed := attached.NewPlacements(nil)
	held := draHeld(cfg)
	svc, err := service.New(service.Options{DRAClaims: serviceClaims(claims), Machine: inv.Machine, Rails: rails, Alloc: alloc,
		GPUs: gpus, Policy: cfg.AttachPolicy, RDMANetnsMode: netnsMode, Log: log, Guard: inv, Limits: limits(cfg),
		SoftRoCE: cfg.SoftRoCE, DRAHeld: held, Metrics: m, PodMeta: k.podMeta(), Reporter: podEvents(placed, reports),
		HostVFs: attach.NewHostVFsAt(cfg.Root), OwnPFs: ownedPFs(inv, cfg, log), Rescan: func(cause string) {
			if _, err := inv.Rescan(cause); err != nil {
				log.Warn("rescan failed", "cause", cause, "error", err)
			}
		},
		ReadVFs:      func(cause string, vfs map[string][]string) { inv.UpdateVFs(cause, vfs) },
		ReadNICsBack: func(cause string, devices []string) { inv.NICsBack(cause, devices) }})
	if err != nil {
		return err
	}
	m.WatchPools(svc.Pools)
	m.WatchNode(nodeState(inv, svc.LeakedVFs))
	inv.SetHolders(svc.NICHolders)
	sweepSoftRoCE(svc, log.With("component", "softroce"))
	dra, err := newDRAPlugin(draDriver{cfg: cfg, clients: clients, inv: inv, svc: svc, alloc: alloc, gpus: gpus, rails: rails, claims: claims},
		log.With("component", "dra"))
	if err != nil {
		return err
	}
	var records *nri.Records // what NRI gave each container, for the readiness checks
	ready := &railReadiness{placed: placed, leases: alloc.Leases, held: held, rdmaNetns: netnsMode, softRoCE: cfg.SoftRoCE}
	if cfg.NRI.Enabled {
		records = nri.NewRecords()
		ready.containers = records.SandboxContainers
	}
	log.Info("raild starting", "node", cfg.NodeName, "nodeClass", cfg.NodeClass, "root", cfg.Root, "gpus", len(machine.GPUs), "nics", len(machine.NICs),
		"pools", pools.Names(), "leases", len(svc.Leases()), "socket", cfg.Socket)
	go followPools(ctx)
	return run(ctx, cfg, inv, svc, m, gpus, k, ready, readinessSink(reports, dra), records, held, dra, log)
}

// podEvents is the service's one Reporter: every pod event goes to the
// placements the readiness checks read, then to the API server's Events
// and network-status (when raild has an API server).
func podEvents(placed *attached.Placements, reports *podreport.Reporter) attached.Fanout {
	if reports == nil {
		return attached.Fanout{placed}
	}
	return attached.Fanout{placed, reports}
}

// run serves the socket, the ops endpoints, NRI and the device plugin
// until ctx ends: the readiness tracker first (the socket's pod reports
// and NRI's sandbox changes go to it), then each server.
func run(ctx context.Context, cfg *config.Config, inv *inventory.Inventory, svc *service.Service, m *metrics.Metrics,
	gpus *podinfo.GPUSource, k *kube, ready *railReadiness, sink readiness.Sink, records *nri.Records, held *podinfo.DRAHeld,
	dra *draplugin.Plugin, log *slog.Logger) error {
	ln, err := server.Listen(cfg.Socket)
	if err != nil {
		return err
	}
	var changed []func() // readers woken by each new snapshot
	tracker, err := ready.start(ctx, cfg, inv, m, sink, log.With("component", "readiness"))
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("readiness: %w", err)
	}
	var podReports server.PodReports
	var sandboxChanged func(string)
	if tracker != nil {
		podReports, sandboxChanged = tracker.Report, tracker.SandboxChanged
		changed = append(changed, tracker.Wake)
	}
	srv := server.New(svc, m, podReports, log)
	cniReady := startCNIWatcher(ctx, cfg.CNI, log.With("component", "cni"))
	errs := make(chan error, 5)
	go func() { errs <- srv.Serve(ln) }()
	go reconcileLoop(ctx, svc, log.With("component", "reconcile"))
	k.run(ctx)
	if cfg.MetricsAddr != "" {
		ready := []server.ReadyCheck{
			{Name: "api-socket", Err: func() error {
				_, err := api.NewClient(cfg.Socket, time.Second).Status(context.Background(), "")
				return err
			}},
			{Name: "lease-store", Err: svc.StoreHealth},
			{Name: "cni-entry", Err: cniReady},
			{Name: "api-server", Err: k.healthy},
		}
		ops := &http.Server{Addr: cfg.MetricsAddr, Handler: server.OpsHandler(m, ready, log.With("component", "ops")),
			ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
			IdleTimeout: time.Minute}
		go func() { errs <- ignoreClosed(ops.ListenAndServe()) }()
		defer ops.Close()
	}
	if cfg.NRI.Enabled {
		plugin, err := nri.New(nri.Options{Config: cfg.NRI, Machine: inv.Machine, State: svc, GPUs: gpus, TopologyFile: cfg.TopologyFile,
			Hooks: m.NRIHooks, DRAHeld: held, Records: records, Changed: sandboxChanged, Proc: cfg.Readiness.ProcRoot,
			SoftRoCE: cfg.SoftRoCE, Log: log})
		if err != nil {
			return fmt.Errorf("nri: %w", err)
		}
		go func() { errs <- plugin.Run(ctx) }()
	}
	if cfg.DevicePlugin.Enabled {
		dp := deviceplugin.New(deviceplugin.Options{Config: cfg.DevicePlugin, Machine: inv.Machine, Calls: m.DevicePlugin, Log: log})
		changed = append(changed, dp.MachineChanged)
		go func() { errs <- dp.Run(ctx) }()
	}
	if dra != nil {
		changed = append(changed, dra.MachineChanged)
		go followSlices(ctx, gpus, dra)
		go func() { errs <- dra.Run(ctx) }()
	}
	watchNode(ctx, inv, statedir.RecordsFile(cfg.StateDir), log.With("component", "inventory"), changed...)
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx) // closes ln, which removes the socket if it is still ours
	log.Info("raild stopped")
	return err
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
