package kapi_test

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// apiProxy stands between raild and the API server so a test can take
// the API server away (connections refused, open streams cut) and bring
// it back on the same address, without stopping the real one.
type apiProxy struct {
	target, addr string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startProxy(t *testing.T, target string) *apiProxy {
	t.Helper()
	p := &apiProxy{target: target, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() { p.down(); p.wg.Wait() })
	return p
}

func (p *apiProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.pipe(c) }()
		}
	}()
}

func (p *apiProxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	p.untrack(c, up)
}

func (p *apiProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil { // went down while dialing
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *apiProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}

// down refuses new connections and cuts the open ones.
func (p *apiProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// up listens again on the same address.
func (p *apiProxy) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy back up on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// kubeconfig writes a copy of the server's kubeconfig that goes through
// the proxy (the serving certificate names 127.0.0.1, whatever the port).
func (p *apiProxy) kubeconfig(t *testing.T, original string) string {
	t.Helper()
	data, err := os.ReadFile(original)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "https://"+p.target, "https://"+p.addr, 1)
	if text == string(data) {
		t.Fatalf("kubeconfig %s does not name %s", original, p.target)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
