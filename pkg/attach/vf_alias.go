package attach

import (
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/railcni/rail/pkg/vfnetdev"
	"github.com/railcni/rail/pkg/vfpf"
)

// vfRecord is the part of a VF's alias that vf mode adds: where the VF
// sits and, for each setting attach changed through the PF, the value it
// had before (nil: not changed, never restored):
//
//	:pf=<PF netdev>:vf=<index>[:vm=<admin MAC>][:hm=<netdev MAC>][:vl=<vlan>.<qos>.<proto>]
//	[:sc=<0|1>][:tr=<0|1>][:ls=<link state>][:rt=<min>.<max>][:ng=<node GUID>:pg=<port GUID>]
//
// MACs and GUIDs are written as hex without separators, the VLAN protocol
// in hex.
type vfRecord struct {
	PF             string
	Index          int
	vfnetdev.MACs  // the admin MAC and the VF netdev's own MAC before
	vfpf.Settings  // the settings through the PF before
	vfnetdev.GUIDs // an InfiniBand VF's GUIDs before
}

// place is where the record's VF sits.
func (v *vfRecord) place() vfpf.VF { return vfpf.VF{PF: v.PF, Index: v.Index} }

// hasGUIDs reports whether attach set the VF's GUIDs (restoring them
// rebinds its driver).
func (v *vfRecord) hasGUIDs() bool { return v.NodeGUID != nil && v.PortGUID != nil }

// vfKeys are the alias keys of a vfRecord.
var vfKeys = []string{"pf", "vf", "vm", "hm", "vl", "sc", "tr", "ls", "rt", "ng", "pg"}

func (v *vfRecord) write(b *strings.Builder) {
	fmt.Fprintf(b, ":pf=%s:vf=%d", v.PF, v.Index)
	if v.MAC != nil {
		b.WriteString(":vm=" + hex.EncodeToString(v.MAC))
	}
	if v.HostMAC != nil {
		b.WriteString(":hm=" + hex.EncodeToString(v.HostMAC))
	}
	if v.VLAN != nil {
		fmt.Fprintf(b, ":vl=%d.%d.%x", v.VLAN.VLAN, v.VLAN.QoS, v.VLAN.Proto)
	}
	if v.Spoofchk != nil {
		fmt.Fprintf(b, ":sc=%d", boolDigit(*v.Spoofchk))
	}
	if v.Trust != nil {
		fmt.Fprintf(b, ":tr=%d", boolDigit(*v.Trust))
	}
	if v.LinkState != nil {
		fmt.Fprintf(b, ":ls=%d", uint32(*v.LinkState))
	}
	if v.Rate != nil {
		fmt.Fprintf(b, ":rt=%d.%d", v.Rate.Min, v.Rate.Max)
	}
	if v.NodeGUID != nil {
		b.WriteString(":ng=" + hex.EncodeToString(v.NodeGUID))
	}
	if v.PortGUID != nil {
		b.WriteString(":pg=" + hex.EncodeToString(v.PortGUID))
	}
}

// set stores one vfRecord field; false for a value that does not parse.
func (v *vfRecord) set(key, value string) bool {
	switch key {
	case "pf":
		v.PF = value
		return checkIfName(value) == nil
	case "vf":
		n, err := strconv.ParseUint(value, 10, 16)
		v.Index = int(n)
		return err == nil
	case "vm", "hm":
		mac, err := hex.DecodeString(value)
		if err != nil || len(mac) == 0 {
			return false
		}
		if key == "vm" {
			v.MAC = mac
		} else {
			v.HostMAC = mac
		}
		return true
	case "ng", "pg":
		guid, err := hex.DecodeString(value)
		if key == "ng" {
			v.NodeGUID = guid
		} else {
			v.PortGUID = guid
		}
		return err == nil && len(guid) == 8
	case "vl":
		return v.setVLAN(value)
	case "sc", "tr":
		on := value == "1"
		if key == "sc" {
			v.Spoofchk = &on
		} else {
			v.Trust = &on
		}
		return value == "0" || value == "1"
	case "ls":
		n, err := strconv.ParseUint(value, 10, 32)
		state := VFLinkState(n)
		v.LinkState = &state
		return err == nil
	case "rt":
		minS, maxS, ok := strings.Cut(value, ".")
		lo, err1 := strconv.ParseUint(minS, 10, 32)
		hi, err2 := strconv.ParseUint(maxS, 10, 32)
		v.Rate = &vfpf.Rate{Min: uint32(lo), Max: uint32(hi)}
		return ok && err1 == nil && err2 == nil
	}
	return false
}

func (v *vfRecord) setVLAN(value string) bool {
	parts := strings.Split(value, ".")
	if len(parts) != 3 {
		return false
	}
	vlan, err1 := strconv.ParseUint(parts[0], 10, 16)
	qos, err2 := strconv.ParseUint(parts[1], 10, 8)
	proto, err3 := strconv.ParseUint(parts[2], 16, 16)
	v.VLAN = &vfpf.VLAN{VLAN: int(vlan), QoS: int(qos), Proto: uint16(proto)}
	return err1 == nil && err2 == nil && err3 == nil
}

// worstVFRecord is the longest record attaching s can write, for the
// alias length check: every setting s changes, with its widest old value.
func worstVFRecord(s Spec) *vfRecord {
	if s.VF == nil {
		return nil
	}
	c := s.VF.Config
	rec := &vfRecord{PF: s.VF.PF, Index: 65535}
	if c.MAC != nil {
		rec.MAC, rec.HostMAC = make(net.HardwareAddr, 6), make(net.HardwareAddr, 6)
	}
	if c.VLAN != nil {
		rec.VLAN = &vfpf.VLAN{VLAN: 4095, QoS: 7, Proto: 0xffff}
	}
	on, state := true, VFLinkState(^uint32(0))
	if c.Spoofchk != nil {
		rec.Spoofchk = &on
	}
	if c.Trust != nil {
		rec.Trust = &on
	}
	if c.LinkState != nil {
		rec.LinkState = &state
	}
	if c.MinTxRate != nil || c.MaxTxRate != nil {
		rec.Rate = &vfpf.Rate{Min: ^uint32(0), Max: ^uint32(0)}
	}
	if s.VF.GUID != nil {
		rec.NodeGUID, rec.PortGUID = make(net.HardwareAddr, 8), make(net.HardwareAddr, 8)
	}
	return rec
}
