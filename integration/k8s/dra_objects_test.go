package k8s

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// alignedTemplate: one GPU of the stand-in and one shared Rail port under
// the same PCIe root (docs/dra.md's template with the shared class: the
// RoCE machine's ports are shared macvlan devices).
var alignedTemplate = alignTemplate("gpu-nic-aligned", "resource.kubernetes.io/pcieRoot")

// alignTemplate: one GPU of the stand-in and one shared Rail port with the
// same value of attribute (docs/dra.md's templates with the shared class).
func alignTemplate(name, attribute string) string {
	return fmt.Sprintf(`apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: %s, namespace: %s}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com}
        - name: nic
          exactly:
            deviceClassName: rail.dev-shared
            capacity: {requests: {rail.dev/slots: "1"}}
      constraints:
        - requests: [gpu, nic]
          matchAttribute: %s
`, name, e2eNamespace, attribute)
}

// sharedTemplate: one slot of the named port; named by portTemplate (a
// template's spec cannot change).
func sharedTemplate(rdmaDevice string) string {
	return fmt.Sprintf(`apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: %s, namespace: %s}
spec:
  spec:
    devices:
      requests:
        - name: nic
          exactly:
            deviceClassName: rail.dev-shared
            selectors:
              - cel: {expression: 'device.attributes["rail.dev"].rdmaDevice == "%s"'}
            capacity: {requests: {rail.dev/slots: "1"}}
`, portTemplate(rdmaDevice), e2eNamespace, rdmaDevice)
}

// portTemplate names sharedTemplate's template of the port.
func portTemplate(rdmaDevice string) string {
	return "slot-of-" + strings.ReplaceAll(rdmaDevice, "_", "-")
}

// anyPortTemplate: one slot of any port.
var anyPortTemplate = fmt.Sprintf(`apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: any-port, namespace: %s}
spec:
  spec:
    devices:
      requests:
        - name: nic
          exactly:
            deviceClassName: rail.dev-shared
            capacity: {requests: {rail.dev/slots: "1"}}
`, e2eNamespace)

// claimPod is a pod labelled app=<name> whose container uses a claim made
// from the template.
func claimPod(name, template string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  terminationGracePeriodSeconds: 1
  resourceClaims: [{name: rdma, resourceClaimTemplateName: %[3]s}]
  containers:
    - name: main
      image: %[4]s
      imagePullPolicy: Never
      command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
      securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
      resources: {claims: [{name: rdma}]}
`, name, e2eNamespace, template, busybox)
}

// gpuPod is a pod labelled app=<name> asking gpus nvidia.com/gpu of the
// device plugin.
func gpuPod(name string, gpus int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: %[3]s
      imagePullPolicy: Never
      command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
      securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
      resources: {limits: {nvidia.com/gpu: %[4]d}}
`, name, e2eNamespace, busybox, gpus)
}

func leaseIP(l api.Lease) string { ip, _, _ := strings.Cut(l.Address, "/"); return ip }

// sliceDevice is what the test reads of a ResourceSlice device.
type sliceDevice struct {
	Name       string `json:"name"`
	Attributes map[string]struct {
		String *string `json:"string"`
		Bool   *bool   `json:"bool"`
		Int    *int64  `json:"int"`
	} `json:"attributes"`
	AllowMultipleAllocations *bool `json:"allowMultipleAllocations"`
	Taints                   []struct {
		Key    string `json:"key"`
		Effect string `json:"effect"`
	} `json:"taints"`
}

func (d sliceDevice) str(name string) string {
	if a, ok := d.Attributes[name]; ok && a.String != nil {
		return *a.String
	}
	return ""
}
func (d sliceDevice) root() string { return d.str("resource.kubernetes.io/pcieRoot") }

// numa is the device's resource.kubernetes.io/numaNode, -1 without one.
func (d sliceDevice) numa() int64 {
	if a, ok := d.Attributes["resource.kubernetes.io/numaNode"]; ok && a.Int != nil {
		return *a.Int
	}
	return -1
}
func (d sliceDevice) rdmaDevice() string { return d.str("rail.dev/rdmaDevice") }
func (d sliceDevice) shared() bool {
	a, ok := d.Attributes["rail.dev/shared"]
	return ok && a.Bool != nil && *a.Bool && d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations
}
func (d sliceDevice) tainted(key string) bool {
	for _, tn := range d.Taints {
		if tn.Key == key && tn.Effect == "NoSchedule" {
			return true
		}
	}
	return false
}

// devicesOf lists the devices of a driver's slices by name.
func (n *dnode) devicesOf(t *testing.T, driver string) map[string]sliceDevice {
	t.Helper()
	var list struct {
		Items []struct {
			Spec struct {
				Driver  string        `json:"driver"`
				Devices []sliceDevice `json:"devices"`
			} `json:"spec"`
		} `json:"items"`
	}
	n.c.getJSON(t, &list, "resourceslices")
	out := map[string]sliceDevice{}
	for _, s := range list.Items {
		if s.Spec.Driver != driver {
			continue
		}
		for _, d := range s.Spec.Devices {
			out[d.Name] = d
		}
	}
	return out
}

// railDevices are Rail's devices by name.
func (n *dnode) railDevices(t *testing.T) map[string]sliceDevice { return n.devicesOf(t, "rail.dev") }

// gpuRoot is the pcieRoot of the stand-in's GPU device.
func (n *dnode) gpuRoot(t *testing.T, device string) string {
	return n.devicesOf(t, "gpu.nvidia.com")[device].root()
}

// resourceClaim is what the test reads of a ResourceClaim.
type resourceClaim struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Allocation *struct {
			Devices struct {
				Results []struct{ Request, Driver, Pool, Device string } `json:"results"`
			} `json:"devices"`
		} `json:"allocation"`
		Devices []deviceStatus `json:"devices"`
	} `json:"status"`
}

type deviceStatus struct {
	Driver     string `json:"driver"`
	Device     string `json:"device"`
	Conditions []struct {
		Type, Status string
	} `json:"conditions"`
	NetworkData struct {
		InterfaceName   string   `json:"interfaceName"`
		IPs             []string `json:"ips"`
		HardwareAddress string   `json:"hardwareAddress"`
	} `json:"networkData"`
}

func (s deviceStatus) condition(typ string) string {
	for _, c := range s.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// allocated lists the claim's allocated devices of a driver.
func (r resourceClaim) allocated(driver string) []string {
	var out []string
	if r.Status.Allocation != nil {
		for _, d := range r.Status.Allocation.Devices.Results {
			if d.Driver == driver {
				out = append(out, d.Device)
			}
		}
	}
	return out
}

// status is the claim's status.devices entry of a driver's device.
func (r resourceClaim) status(driver, device string) deviceStatus {
	for _, s := range r.Status.Devices {
		if s.Driver == driver && s.Device == device {
			return s
		}
	}
	return deviceStatus{}
}

func (n *dnode) claim(t *testing.T, name string) resourceClaim {
	t.Helper()
	var r resourceClaim
	n.c.getJSON(t, &r, "resourceclaim", "-n", e2eNamespace, name)
	return r
}

// podClaim is the claim the kubelet made for the pod's claim "rdma".
func (n *dnode) podClaim(t *testing.T, pod string) resourceClaim {
	t.Helper()
	name := n.c.kubectl(t, "get", "pod", "-n", e2eNamespace, pod, "-o",
		`jsonpath={.status.resourceClaimStatuses[?(@.name=="rdma")].resourceClaimName}`)
	if name == "" {
		t.Fatalf("pod %s has no claim for rdma", pod)
	}
	return n.claim(t, name)
}

// kernelGIDs plays the kernel's part that the fake machine lacks: on a
// RoCE port, every address of the port's netdev and of its macvlan
// children in pods is a RoCE v2 GID of the port. It writes, for each
// leased port, the link-local GID and one IPv4-mapped GID per lease, in
// the form sysfs prints them.
func (n *dnode) kernelGIDs(t *testing.T) {
	t.Helper()
	byNIC := map[string][]string{}
	for _, l := range n.c.leases(t) {
		for _, nic := range l.NICs {
			byNIC[nic] = append(byNIC[nic], leaseIP(l))
		}
	}
	for nic, ips := range byNIC {
		gids, types := []string{sysfsGID(netip.MustParseAddr("fe80::1"))}, []string{"RoCE v2"}
		for _, ip := range ips {
			a, err := netip.ParseAddr(ip)
			if err != nil {
				t.Fatalf("lease address %q: %v", ip, err)
			}
			gids, types = append(gids, sysfsGID(netip.AddrFrom16(a.As16()))), append(types, "RoCE v2")
		}
		if err := fakesys.WriteGIDs(n.m.root, nic, 1, gids, types); err != nil {
			t.Fatal(err)
		}
	}
}

// sysfsGID formats a GID as sysfs does: eight groups of four hex digits.
func sysfsGID(a netip.Addr) string {
	b := a.As16()
	groups := make([]string, 8)
	for i := range groups {
		groups[i] = fmt.Sprintf("%02x%02x", b[2*i], b[2*i+1])
	}
	return strings.Join(groups, ":")
}
