// Package cniconf keeps rail's entry in the primary CNI's conflist: it finds
// the file the runtime reads (as libcni does), inserts rail's entry after the
// primary's plugins by splicing bytes (every other byte of the file stays as
// it was), writes atomically with a backup, removes exactly that entry on
// uninstall, and watches the conf dir to put the entry back after the
// primary rewrites its file.
package cniconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/railcni/rail/daemon/inputfile"
	"github.com/railcni/rail/pkg/netconf"
)

// Modes of Config.Mode.
const (
	// ModeChained inserts rail into the primary's conflist and keeps it there.
	ModeChained = "chained"
	// ModeNAD leaves the conflists alone: rail is used through Multus
	// NetworkAttachmentDefinitions.
	ModeNAD = "nad"
)

// DefaultConfDir is the host's /etc/cni/net.d as mounted in raild's pod.
const DefaultConfDir = "/host/etc/cni/net.d"

// DefaultEntry is rail's conflist entry when none is configured.
const DefaultEntry = `{"type":"rail","capabilities":{"` + netconf.AnnotationsCapability + `":true}}`

// Config is the "cni" section of raild's configuration.
type Config struct {
	// Mode is chained or nad (the default).
	Mode string `json:"mode,omitempty"`
	// ConfDir is the runtime's CNI conf dir as raild sees it.
	ConfDir string `json:"confDir,omitempty"`
	// Entry is rail's plugin entry, a JSON object ("type" defaults to rail).
	Entry json.RawMessage `json:"entry,omitempty"`
	// EntryFile names a file holding Entry (the Helm chart renders one).
	EntryFile string `json:"entryFile,omitempty"`
}

// Finish applies defaults, reads EntryFile, and validates, naming the key
// at fault. Entry ends compact, with the pod-annotations capability.
func (c *Config) Finish() error {
	if c.Mode == "" {
		c.Mode = ModeNAD
	}
	if c.ConfDir == "" {
		c.ConfDir = DefaultConfDir
	}
	var errs []error
	if c.Mode != ModeChained && c.Mode != ModeNAD {
		errs = append(errs, fmt.Errorf("cni.mode %q: use %q (insert rail into the primary's conflist) or %q (Multus NetworkAttachmentDefinitions; no conflist change)",
			c.Mode, ModeChained, ModeNAD))
	}
	if !filepath.IsAbs(c.ConfDir) {
		errs = append(errs, fmt.Errorf("cni.confDir %q: want an absolute path such as %s", c.ConfDir, DefaultConfDir))
	}
	entry, err := c.loadEntry()
	if err == nil {
		entry, err = normalizeEntry(entry)
	}
	if err != nil {
		errs = append(errs, err)
	}
	c.Entry = entry
	return errors.Join(errs...)
}

func (c *Config) loadEntry() ([]byte, error) {
	switch {
	case c.EntryFile != "" && len(c.Entry) > 0:
		return nil, fmt.Errorf("cni.entry and cni.entryFile are both set: keep one")
	case c.EntryFile != "":
		data, err := inputfile.Read(c.EntryFile, MaxConfSize)
		if err != nil {
			return nil, fmt.Errorf("cni.entryFile: %w", err)
		}
		return data, nil
	case len(c.Entry) > 0:
		return c.Entry, nil
	}
	return []byte(DefaultEntry), nil
}

// normalizeEntry compacts the entry, defaults "type" to rail, adds the
// pod-annotations capability when no capabilities are given, and checks a
// rail entry as the plugin itself would.
func normalizeEntry(entry []byte) ([]byte, error) {
	var fields map[string]any
	if err := json.Unmarshal(entry, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("cni.entry: want a JSON object such as %s", DefaultEntry)
	}
	_, complete := fields["type"]
	if !complete {
		fields["type"] = "rail"
	}
	if typ, ok := fields["type"].(string); !ok || typ == "" {
		return nil, fmt.Errorf("cni.entry.type: want the plugin's name, e.g. \"rail\"")
	}
	caps, hasCaps := fields["capabilities"]
	if !hasCaps {
		complete = false
		caps = map[string]any{netconf.AnnotationsCapability: true}
		fields["capabilities"] = caps
	}
	if m, isMap := caps.(map[string]any); !isMap || m[netconf.AnnotationsCapability] != true {
		return nil, fmt.Errorf("cni.entry.capabilities: want {%q: true} so the runtime passes the pod's annotations", netconf.AnnotationsCapability)
	}
	if fields["type"] == "rail" {
		if err := checkRailEntry(fields); err != nil {
			return nil, err
		}
	}
	if !complete {
		return json.Marshal(fields)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, entry); err != nil {
		return nil, fmt.Errorf("cni.entry: %w", err)
	}
	return out.Bytes(), nil
}

// checkRailEntry runs the rail plugin's own netconf validation on the entry.
func checkRailEntry(fields map[string]any) error {
	probe := map[string]any{"cniVersion": "1.0.0", "name": "rail-entry-check"}
	for k, v := range fields {
		probe[k] = v
	}
	data, err := json.Marshal(probe)
	if err != nil {
		return fmt.Errorf("cni.entry: %w", err)
	}
	if _, err := netconf.LoadRail(data); err != nil {
		return fmt.Errorf("cni.entry: %w", err)
	}
	return nil
}

// entryType is the "type" of a normalized entry.
func entryType(entry []byte) string {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(entry, &head)
	return head.Type
}
