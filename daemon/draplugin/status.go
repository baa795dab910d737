package draplugin

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	resourcev1ac "k8s.io/client-go/applyconfigurations/resource/v1"

	"github.com/railcni/rail/daemon/readiness"
)

// Attachment is one rail interface of a pod, as its claims' status shows it.
type Attachment struct {
	NIC    string // the lease's NIC: a port's name (vf mode: the VF's PF's)
	VF     string // vf mode: the VF's PCI address
	IfName string
	IPs    []string // CIDRs
	MAC    string
}

// The conditions Rail writes on each of its devices in a claim's status.
const (
	// ConditionReady is True once the pod's CNI ADD attached the device.
	ConditionReady = "Ready"
	// ConditionRDMAReady is the pod's rail.dev/RDMAReady, per device.
	ConditionRDMAReady = readiness.ConditionType
)

// statusTimeout bounds one status write.
const statusTimeout = 10 * time.Second

// statusWriter writes claims' status.devices off every hook: the newest
// condition of each pod is kept until the writer gets to it.
type statusWriter struct {
	p       *Plugin
	pending chan readiness.Condition
}

func newStatusWriter(p *Plugin) *statusWriter {
	return &statusWriter{p: p, pending: make(chan readiness.Condition, 256)}
}

// RDMAReady takes a pod's readiness (the tracker's sink); it never blocks.
// Pods without Rail claims are skipped where they are written.
func (p *Plugin) RDMAReady(c readiness.Condition) {
	select {
	case p.status.pending <- c:
	default:
		p.log.Warn("claim status queue full: this condition is written with the pod's next one", "pod", c.Namespace+"/"+c.Name)
	}
}

func (w *statusWriter) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-w.pending:
			for _, prep := range w.p.claims.ForPod(c.Namespace, c.Name, c.UID) {
				if err := w.write(ctx, prep, c); err != nil {
					w.p.log.Warn("cannot write the claim's status", "claim", prep.Namespace+"/"+prep.Name, "error", err)
				}
			}
		}
	}
}

// write applies the claim's status.devices entries of Rail's driver.
func (w *statusWriter) write(ctx context.Context, prep Prepared, c readiness.Condition) error {
	ac := w.p.statusOf(prep, c, time.Now())
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	_, err := w.p.opt.Kube.ResourceV1().ResourceClaims(prep.Namespace).ApplyStatus(ctx, ac,
		metav1.ApplyOptions{FieldManager: w.p.cfg.DriverName, Force: true})
	return err
}

// statusOf is the claim's status as Rail's driver owns it: per device its
// interface, addresses and MAC, Ready and RDMAReady.
func (p *Plugin) statusOf(prep Prepared, c readiness.Condition, now time.Time) *resourcev1ac.ResourceClaimApplyConfiguration {
	var atts []Attachment
	if p.opt.Attachments != nil {
		atts = p.opt.Attachments(prep.Namespace, c.Name, c.UID)
	}
	status := resourcev1ac.ResourceClaimStatus()
	at := metav1.NewTime(now)
	for _, a := range prep.Devices {
		d := resourcev1ac.AllocatedDeviceStatus().WithDriver(p.cfg.DriverName).WithPool(a.Pool).WithDevice(a.Device)
		if a.ShareID != "" {
			d.WithShareID(a.ShareID)
		}
		ready := metav1ac.Condition().WithType(ConditionReady).WithLastTransitionTime(at).WithObservedGeneration(0)
		att, ok := attachmentOf(a, atts)
		if ok {
			nd := resourcev1ac.NetworkDeviceData().WithInterfaceName(att.IfName).WithIPs(att.IPs...)
			if att.MAC != "" {
				nd.WithHardwareAddress(att.MAC)
			}
			d.WithNetworkData(nd)
			ready.WithStatus(metav1.ConditionTrue).WithReason("Attached").WithMessage("attached by Rail as " + att.IfName + " in pod " + c.Name)
		} else {
			ready.WithStatus(metav1.ConditionFalse).WithReason("NotAttached").WithMessage("pod " + c.Name + " has no rail interface on " + a.NIC)
		}
		rdma := metav1ac.Condition().WithType(ConditionRDMAReady).WithLastTransitionTime(at).WithReason(orReason(c.Reason)).WithMessage(c.Message)
		if c.Ready {
			rdma.WithStatus(metav1.ConditionTrue)
		} else {
			rdma.WithStatus(metav1.ConditionFalse)
		}
		status.WithDevices(d.WithConditions(ready, rdma))
	}
	return resourcev1ac.ResourceClaim(prep.Name, prep.Namespace).WithStatus(status)
}

// attachmentOf finds the pod interface on an assigned device.
func attachmentOf(a Assigned, atts []Attachment) (Attachment, bool) {
	for _, att := range atts {
		if att.VF == a.VF && (a.VF != "" || att.NIC == a.NIC) {
			return att, true
		}
	}
	return Attachment{}, false
}

func orReason(r string) string {
	if r == "" {
		return "Checked"
	}
	return r
}
