package attach

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// aliasPrefix starts every alias rail writes; nothing else is touched.
const aliasPrefix = "rail:"

// maxAliasLen is IFALIASZ-1, the longest alias the kernel stores.
const maxAliasLen = 255

// aliasRecord is what rail stores in a pod interface's alias (IFLA_IFALIAS),
// the only state that travels with the device:
//
//	moved device: rail:<host name>:name=<pod name>:mtu=<mtu>:up=<0|1>[:rdma=<dev>][:table=<n>][vf][owner]
//	vf:           :pf=<PF>:vf=<index> and the settings changed through the PF (vfRecord)
//	child link:   rail:<parent>:name=<pod name>:kind=<macvlan|ipoib>[:table=<n>][owner]
//	owner:        [:sb=<sandbox>][:att=<attachment>][:net=<network>][:pool=<pool>][:nic=<nic>][:nicport=<port>]
//
// ':' cannot occur in interface names (nor, by validation, in the owner's
// fields), so it separates the fields.
type aliasRecord struct {
	Host  string    // original host name of a moved device, or a child's parent
	Name  string    // pod-side name given at attach time
	Kind  string    // "" for a moved device, else the child's mode
	MTU   int       // moved device: MTU in the host before the move
	Up    bool      // moved device: administratively up in the host before
	RDMA  string    // moved device: RDMA device moved with it (exclusive mode)
	Table int       // policy routing table of the interface's source rules
	Owner Owner     // the lease the interface belongs to, when the Spec said
	VF    *vfRecord // a VF attached in vf mode: its PF, index and old settings
}

func (r aliasRecord) String() string {
	var b strings.Builder
	b.WriteString(aliasPrefix)
	b.WriteString(r.Host)
	b.WriteString(":name=")
	b.WriteString(r.Name)
	if r.Kind != "" {
		b.WriteString(":kind=")
		b.WriteString(r.Kind)
	} else {
		fmt.Fprintf(&b, ":mtu=%d:up=%d", r.MTU, boolDigit(r.Up))
	}
	if r.RDMA != "" {
		b.WriteString(":rdma=")
		b.WriteString(r.RDMA)
	}
	if r.Table > 0 {
		fmt.Fprintf(&b, ":table=%d", r.Table)
	}
	if r.VF != nil {
		r.VF.write(&b)
	}
	for _, f := range r.Owner.fields() {
		if *f.value != "" {
			b.WriteString(":" + f.key + "=" + *f.value)
		}
	}
	return b.String()
}

// parseAlias decodes an alias written by aliasRecord.String. Aliases that
// rail did not write, or that are damaged, are reported as not ours.
func parseAlias(alias string) (aliasRecord, bool) {
	rest, ok := strings.CutPrefix(alias, aliasPrefix)
	if !ok {
		return aliasRecord{}, false
	}
	fields := strings.Split(rest, ":")
	rec := aliasRecord{Host: fields[0]}
	if checkIfName(rec.Host) != nil {
		return aliasRecord{}, false
	}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		key, value, ok := strings.Cut(f, "=")
		if !ok || seen[key] || !rec.set(key, value) {
			return aliasRecord{}, false
		}
		seen[key] = true
	}
	if rec.Name == "" {
		return aliasRecord{}, false
	}
	if rec.Kind == "" && (!seen["mtu"] || !seen["up"]) {
		return aliasRecord{}, false
	}
	if rec.VF != nil && (rec.Kind != "" || !seen["pf"] || !seen["vf"] || seen["ng"] != seen["pg"]) {
		return aliasRecord{}, false
	}
	return rec, true
}

// set stores one key=value field; unknown keys are accepted and ignored so
// that a newer rail's aliases still restore with an older one.
func (r *aliasRecord) set(key, value string) bool {
	switch key {
	case "name":
		r.Name = value
		return checkIfName(value) == nil
	case "kind":
		r.Kind = value
		return Mode(value).SharesPort()
	case "mtu":
		mtu, err := strconv.Atoi(value)
		r.MTU = mtu
		return err == nil && mtu > 0
	case "up":
		r.Up = value == "1"
		return value == "0" || value == "1"
	case "table":
		table, err := strconv.ParseUint(value, 10, 32)
		r.Table = int(table)
		return err == nil && table > 0
	case "rdma":
		r.RDMA = value
		return value != "" && !strings.ContainsAny(value, ": ")
	}
	if slices.Contains(vfKeys, key) {
		if r.VF == nil {
			r.VF = &vfRecord{}
		}
		return r.VF.set(key, value)
	}
	for _, f := range r.Owner.fields() {
		if f.key == key {
			*f.value = value
			return value != ""
		}
	}
	return true
}

// belongsTo reports whether the record marks the interface s creates. A
// moved device is identified by its host name (it exists once), a child by
// parent and pod name. Without s.Parent (Detach from a cached CNI result)
// the pod name recorded at attach time identifies it.
func (r aliasRecord) belongsTo(s Spec) bool {
	wantKind := string(s.Mode)
	if movesNetdev(s.Mode) {
		wantKind = ""
	}
	switch {
	case r.Kind != wantKind:
		return false
	case s.Mode == ModeVF && s.VF != nil:
		// A VF is its PF's VF <index>, whatever its netdev is called now.
		return r.VF != nil && r.VF.PF == s.VF.PF && r.VF.Index == s.VF.Index
	case s.Parent == "":
		return r.Name == s.Name
	case r.Host != s.Parent:
		return false
	default:
		return movesNetdev(s.Mode) || r.Name == s.Name
	}
}

func boolDigit(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Owner names the lease a pod interface belongs to. When a Spec carries
// one, Attach records it in the interface's alias, so the lease can be
// rebuilt from the pod itself when raild's lease store is lost
// (raild leases --recover). Fields are optional; none may contain ':', '='
// or whitespace.
type Owner struct {
	Sandbox   string // CNI container ID of the sandbox
	CNIIfName string // CNI_IFNAME of the ADD that made the interface
	Network   string // CNI network name
	Pool      string // the pool the address came from
	NIC       string // the NIC's RDMA device (mlx5_0, or mlx4_0 for its port 2)
	// NICPort is the NIC's port when it is not port 1 of its device ("2"
	// for raild's NIC mlx4_0:2); empty for port 1, so a single-port NIC's
	// record is what it always was (and an older rail ignores the field).
	NICPort string
}

type ownerField struct {
	key   string
	value *string
}

func (o *Owner) fields() []ownerField {
	return []ownerField{{"sb", &o.Sandbox}, {"att", &o.CNIIfName}, {"net", &o.Network}, {"pool", &o.Pool}, {"nic", &o.NIC},
		{"nicport", &o.NICPort}}
}

// Recorded is what the alias of a pod interface rail made says.
type Recorded struct {
	Mode  Mode   // how it reached the pod
	Host  string // a moved device's host name, or a child's parent
	Name  string // its pod-side name at attach time
	Owner Owner
}

// ReadAlias decodes the alias of a pod interface rail made; ok is false for
// any other alias.
func ReadAlias(alias string) (rec Recorded, ok bool) {
	r, ok := parseAlias(alias)
	if !ok {
		return Recorded{}, false
	}
	return Recorded{Mode: r.mode(), Host: r.Host, Name: r.Name, Owner: r.Owner}, true
}

// modeOnLink is the mode in which rail attached the pod interface name, as
// its alias records it; ours is false for a pod link that rail did not
// make (no rail alias), which Detach then leaves alone. A link that is not
// in the pod (netns gone, or already returned) can only be a moved device:
// children die with the pod.
func modeOnLink(sess *session, name string) (mode Mode, ours bool) {
	if sess.pod == nil {
		return ModeMove, true
	}
	link, err := sess.podNL.LinkByName(name)
	if err != nil {
		return ModeMove, true
	}
	rec, ok := parseAlias(link.Attrs().Alias)
	if !ok {
		return "", false
	}
	return rec.mode(), true
}

// mode is how the interface the record labels reached the pod.
func (r aliasRecord) mode() Mode {
	switch {
	case r.VF != nil:
		return ModeVF
	case r.Kind == "":
		return ModeMove
	}
	return Mode(r.Kind)
}
