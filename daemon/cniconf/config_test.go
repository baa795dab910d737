package cniconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestConfigFinish(t *testing.T) {
	entryFile := filepath.Join(t.TempDir(), "ri-entry.json")
	if err := os.WriteFile(entryFile, []byte(`{"type": "rail", "mode": "macvlan", "capabilities": {"io.kubernetes.cri.pod-annotations": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "entry.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		cfg       Config
		wantEntry string
		wantMode  string
		wantErr   string
	}{
		{name: "defaults", wantMode: ModeNAD, wantEntry: DefaultEntry},
		{name: "chained, entry without capabilities", cfg: Config{Mode: "chained", Entry: []byte(`{"type":"rail","pool":"prefill"}`)},
			wantMode: ModeChained, wantEntry: `{"capabilities":{"io.kubernetes.cri.pod-annotations":true},"pool":"prefill","type":"rail"}`},
		{name: "type defaults to rail", cfg: Config{Entry: []byte(`{"mode":"macvlan"}`)},
			wantEntry: `{"capabilities":{"io.kubernetes.cri.pod-annotations":true},"mode":"macvlan","type":"rail"}`},
		{name: "complete entry keeps its order", cfg: Config{Entry: []byte(`{"type": "rail", "capabilities": {"io.kubernetes.cri.pod-annotations": true}, "mode": "ipoib"}`)},
			wantEntry: `{"type":"rail","capabilities":{"io.kubernetes.cri.pod-annotations":true},"mode":"ipoib"}`},
		{name: "entry file", cfg: Config{EntryFile: entryFile},
			wantEntry: `{"type":"rail","mode":"macvlan","capabilities":{"io.kubernetes.cri.pod-annotations":true}}`},
		{name: "bad mode", cfg: Config{Mode: "chain"}, wantErr: `cni.mode "chain": use "chained"`},
		{name: "relative conf dir", cfg: Config{ConfDir: "etc/cni"}, wantErr: "cni.confDir"},
		{name: "entry not an object", cfg: Config{Entry: []byte(`"rail"`)}, wantErr: "cni.entry: want a JSON object"},
		{name: "entry type empty", cfg: Config{Entry: []byte(`{"type":""}`)}, wantErr: "cni.entry.type"},
		{name: "capability off", cfg: Config{Entry: []byte(`{"type":"rail","capabilities":{"io.kubernetes.cri.pod-annotations":false}}`)},
			wantErr: "cni.entry.capabilities"},
		{name: "rail's own check", cfg: Config{Entry: []byte(`{"type":"rail","mode":"bridge"}`)}, wantErr: `cni.entry: invalid netconf field "mode"`},
		{name: "unknown rail key", cfg: Config{Entry: []byte(`{"type":"rail","pools":"x"}`)}, wantErr: "cni.entry: unsupported netconf field"},
		{name: "both entry and file", cfg: Config{Entry: []byte(`{}`), EntryFile: entryFile}, wantErr: "both set"},
		{name: "missing entry file", cfg: Config{EntryFile: entryFile + ".missing"}, wantErr: "cni.entryFile"},
		{name: "entry file a FIFO", cfg: Config{EntryFile: fifo}, wantErr: "cni.entryFile: read " + fifo + ": is a FIFO"},
		{name: "entry file a folder", cfg: Config{EntryFile: filepath.Dir(fifo)}, wantErr: "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			err := cfg.Finish()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Finish() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(cfg.Entry) != tt.wantEntry {
				t.Errorf("entry %s, want %s", cfg.Entry, tt.wantEntry)
			}
			if tt.wantMode != "" && cfg.Mode != tt.wantMode {
				t.Errorf("mode %q, want %q", cfg.Mode, tt.wantMode)
			}
			if cfg.ConfDir == "" {
				t.Error("no conf dir default")
			}
		})
	}
}
