package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/podinfo"
)

const prefillJSON = `[{"namespace":"default","name":"prefill","containers":[{"name":"main","devices":{"nvidia.com/gpu":["GPU-a","GPU-b"]}}]}]`

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPods(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		content  string // no file when "-"
		wantPods int
		wantErr  []string
	}{
		{name: "valid", content: prefillJSON, wantPods: 1},
		{name: "empty array", content: "[]", wantPods: 0},
		{name: "with a DRA claim", wantPods: 1, content: `[{"namespace":"a","name":"b","containers":[{"name":"c","claims":[` +
			`{"namespace":"a","name":"gpus","devices":[{"driver":"gpu.nvidia.com","pool":"n1","device":"gpu-0","cdi":["k8s.gpu.nvidia.com/device=gpu-0"]}]}]}]}]`},
		{name: "claim device unknown field", content: `[{"namespace":"a","name":"b","containers":[{"name":"c","claims":[` +
			`{"namespace":"a","name":"gpus","devices":[{"driverName":"gpu.nvidia.com"}]}]}]}]`, wantErr: []string{`unknown field "driverName"`}},
		{name: "missing file", content: "-", wantErr: []string{"read pods file", "no such file"}},
		{name: "not json", content: "pods:", wantErr: []string{"expected a JSON array"}},
		{name: "object not array", content: `{"namespace":"a"}`, wantErr: []string{"expected a JSON array"}},
		{name: "unknown field", content: `[{"namespace":"a","name":"b","containers":[{"name":"c","device":{}}]}]`, wantErr: []string{`unknown field "device"`}},
		{name: "trailing data", content: "[] []", wantErr: []string{"trailing data"}},
		{name: "invalid pod", content: `[{"namespace":"a"}]`, wantErr: []string{"pods[0]", "namespace and name"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "pods"+string(rune('a'+i))+".json")
			if tt.content != "-" {
				writeFile(t, path, tt.content)
			}
			pods, err := loadPods(path)
			if len(tt.wantErr) == 0 {
				if err != nil || len(pods) != tt.wantPods {
					t.Fatalf("loadPods = %d pods, %v; want %d", len(pods), err, tt.wantPods)
				}
				return
			}
			if err == nil {
				t.Fatal("loadPods accepted a bad file")
			}
			for _, part := range append(tt.wantErr, path) {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
		})
	}
}

func TestRunRefusesBadArguments(t *testing.T) {
	dir := t.TempDir()
	badPods := filepath.Join(dir, "bad.json")
	writeFile(t, badPods, `[{"name":"x"}]`)
	regular := filepath.Join(dir, "regular")
	writeFile(t, regular, "")
	goodPods := filepath.Join(dir, "good.json")
	writeFile(t, goodPods, prefillJSON)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no pods flag", []string{"--socket", filepath.Join(dir, "a.sock")}, exitUsage, "--pods is required"},
		{"unknown flag", []string{"--pod", "x"}, exitUsage, "flag provided but not defined"},
		{"extra argument", []string{"--pods", goodPods, "extra"}, exitUsage, `unexpected argument "extra"`},
		{"empty socket", []string{"--pods", goodPods, "--socket", ""}, exitUsage, "--socket must not be empty"},
		{"invalid pods", []string{"--pods", badPods, "--socket", filepath.Join(dir, "b.sock")}, exitError, "namespace and name"},
		{"socket path is a file", []string{"--pods", goodPods, "--socket", regular}, exitError, "not a socket"},
		{"help", []string{"-h"}, exitOK, "-socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(tt.args, &stderr); code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantErr)
			}
		})
	}
}

// TestBinary builds fake-kubelet and drives it as make demo does: serve,
// reload on SIGHUP, keep the old pods on a bad reload, exit on SIGTERM
// removing the socket.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary; skipped with -short")
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "fake-kubelet")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	podsFile := filepath.Join(dir, "pods.json")
	writeFile(t, podsFile, prefillJSON)
	socket := filepath.Join(dir, "kubelet.sock")

	var stderr syncBuffer
	cmd := exec.Command(binary, "--socket", socket, "--pods", podsFile)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // os.ErrProcessDone once it has exited
		<-exited
	})

	client, err := podinfo.Dial(context.Background(), socket, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	waitFor(t, client, "prefill", []string{"GPU-a", "GPU-b"})

	writeFile(t, podsFile, `[{"namespace":"default","name":"decode","containers":[{"name":"main","devices":{"nvidia.com/gpu":["GPU-e"]}}]}]`)
	sendSignal(t, cmd, syscall.SIGHUP)
	waitFor(t, client, "decode", []string{"GPU-e"})
	if _, err := client.PodDevices(context.Background(), "default", "prefill", nil); !errors.Is(err, podinfo.ErrPodNotFound) {
		t.Errorf("prefill after reload: err = %v, want ErrPodNotFound", err)
	}

	writeFile(t, podsFile, `[{"namespace":"default"}]`)
	sendSignal(t, cmd, syscall.SIGHUP)
	waitForLog(t, &stderr, "reload failed")
	waitFor(t, client, "decode", []string{"GPU-e"})

	sendSignal(t, cmd, syscall.SIGTERM)
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("fake-kubelet exited with %v; stderr:\n%s", waitErr, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("fake-kubelet did not exit on SIGTERM; stderr:\n%s", stderr.String())
	}
	if _, err := os.Lstat(socket); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket left after SIGTERM: %v", err)
	}
}

func sendSignal(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("send %v: %v", sig, err)
	}
}

func waitFor(t *testing.T, client *podinfo.Client, pod string, want []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := client.PodDevices(context.Background(), "default", pod, nil)
		if err == nil && slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PodDevices(%s) = %q, %v; want %q", pod, got, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncBuffer collects the child's stderr, which exec copies from another
// goroutine while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitForLog(t *testing.T, stderr *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("stderr never contained %q:\n%s", want, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
