package kubeclient

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// kubeconfigText is a kubeconfig whose CA, client certificate and token
// files are the named paths.
func kubeconfigText(ca, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: %q}
users:
- name: u
  user: {tokenFile: %q}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`, ca, token)
}

// TestConfigRefusesWhatIsNotAFile: a kubeconfig, or a file it names, that
// is a FIFO, a socket or a directory is refused naming the path and what it
// is; a FIFO would otherwise hang raild at start, deaf to SIGTERM.
func TestConfigRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	regular := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ca, token := regular("ca.crt", "not read here"), regular("token", "t0ken")
	tests := []struct {
		name, kubeconfig, want string
	}{
		{"a regular kubeconfig", regular("ok", kubeconfigText(ca, token)), ""},
		{"the kubeconfig a FIFO", fifo, fifo + ": is a FIFO"},
		{"the kubeconfig a socket", sock, sock + ": is a socket"},
		{"the kubeconfig a directory", dir, dir + ": is a directory"},
		{"its certificate-authority a FIFO", regular("ca-fifo", kubeconfigText(fifo, token)), "certificate-authority: read " + fifo + ": is a FIFO"},
		{"its tokenFile a FIFO", regular("token-fifo", kubeconfigText(ca, fifo)), "tokenFile: read " + fifo + ": is a FIFO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Config(tt.kubeconfig)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Config: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Config(%s): %v, want an error containing %q", tt.kubeconfig, err, tt.want)
			}
		})
	}
}
