package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestVFKeysConfig(t *testing.T) {
	n := func(v int) *int { return &v }
	r := func(v int64) *int64 { return &v }
	tests := []struct {
		name    string
		keys    VFKeys
		wantKey string // the key the error names ("" no error)
	}{
		{name: "nothing asked", keys: VFKeys{}},
		{name: "every key", keys: VFKeys{VLAN: n(10), VLANQoS: n(3), VLANProto: "802.1AD", MAC: "02:00:00:00:00:01", Spoofchk: "off",
			Trust: "on", LinkState: "disable", MinTxRate: r(10), MaxTxRate: r(100)}},
		{name: "vlan out of range", keys: VFKeys{VLAN: n(4095)}, wantKey: "vlan"},
		{name: "qos without vlan", keys: VFKeys{VLANQoS: n(1)}, wantKey: "vlanQoS"},
		{name: "unknown proto", keys: VFKeys{VLAN: n(5), VLANProto: "qinq"}, wantKey: "vlanProto"},
		{name: "bad mac", keys: VFKeys{MAC: "02:00"}, wantKey: "mac"},
		{name: "spoofchk yes", keys: VFKeys{Spoofchk: "yes"}, wantKey: "spoofchk"},
		{name: "trust true", keys: VFKeys{Trust: "true"}, wantKey: "trust"},
		{name: "link_state up", keys: VFKeys{LinkState: "up"}, wantKey: "link_state"},
		{name: "negative min", keys: VFKeys{MinTxRate: r(-1)}, wantKey: "min_tx_rate"},
		{name: "max too big", keys: VFKeys{MaxTxRate: r(1 << 33)}, wantKey: "max_tx_rate"},
		{name: "min above max", keys: VFKeys{MinTxRate: r(20), MaxTxRate: r(10)}, wantKey: "min_tx_rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.keys.Config()
			if tt.wantKey == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tt.keys.First() == "" != cfg.IsZero() {
					t.Fatalf("First %q but IsZero %v for %+v", tt.keys.First(), cfg.IsZero(), cfg)
				}
				return
			}
			if err == nil || KeyOf(err) != tt.wantKey {
				t.Fatalf("got %v, want an error naming %s", err, tt.wantKey)
			}
		})
	}
}

func TestVFConfigOver(t *testing.T) {
	parse := func(k VFKeys) VFConfig {
		c, err := k.Config()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	n := func(v int) *int { return &v }
	r := func(v int64) *int64 { return &v }
	pool := parse(VFKeys{VLAN: n(200), VLANQoS: n(5), VLANProto: "802.1ad", Spoofchk: "on", Trust: "on", LinkState: "enable", MinTxRate: r(10), MaxTxRate: r(900)})
	tests := []struct {
		name    string
		netconf VFKeys
		want    VFKeys
	}{
		{name: "nothing over the pool keeps the pool's", want: VFKeys{VLAN: n(200), VLANQoS: n(5), VLANProto: "802.1ad", Spoofchk: "on", Trust: "on",
			LinkState: "enable", MinTxRate: r(10), MaxTxRate: r(900)}},
		{name: "vlan takes qos and proto with it", netconf: VFKeys{VLAN: n(7)}, want: VFKeys{VLAN: n(7), Spoofchk: "on", Trust: "on",
			LinkState: "enable", MinTxRate: r(10), MaxTxRate: r(900)}},
		{name: "each other key alone", netconf: VFKeys{MAC: "02:00:00:00:00:09", Spoofchk: "off", Trust: "off", LinkState: "auto", MaxTxRate: r(50)},
			want: VFKeys{MAC: "02:00:00:00:00:09", VLAN: n(200), VLANQoS: n(5), VLANProto: "802.1ad", Spoofchk: "off", Trust: "off",
				LinkState: "auto", MinTxRate: r(10), MaxTxRate: r(50)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := parse(tt.netconf).Over(pool), parse(tt.want); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

// TestVFConfigWire: a pool's settings cross the socket as they are; a MAC
// never does (the lease's travels as VF.MAC).
func TestVFConfigWire(t *testing.T) {
	n := func(v int) *int { return &v }
	r := func(v int64) *int64 { return &v }
	cfg, err := VFKeys{VLAN: n(3), VLANQoS: n(1), VLANProto: "802.1ad", Spoofchk: "off", Trust: "on", LinkState: "disable",
		MinTxRate: r(1), MaxTxRate: r(2), MAC: "02:00:00:00:00:01"}.Config()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var back VFConfig
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	cfg.MAC = nil
	if !reflect.DeepEqual(back, cfg) {
		t.Fatalf("%s came back as %+v, want %+v", data, back, cfg)
	}
}
