package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

func TestClientRoundTrip(t *testing.T) {
	f := startServer(t)
	ctx := context.Background()
	c := f.client
	key := func(sb string) api.AttachmentRequest {
		return api.AttachmentRequest{Sandbox: sb, CNIIfName: "net1", Network: "n"}
	}
	alloc := func(sb, pool string) (string, error) {
		plan, err := c.Allocate(ctx, api.AllocateRequest{Sandbox: sb, CNIIfName: "net1", Network: "n", Mode: api.ModeIPAM, Pool: pool})
		if err != nil {
			return "", err
		}
		if len(plan.Interfaces) != 1 || len(plan.Interfaces[0].Addresses) != 1 || plan.Interfaces[0].NIC != nil {
			return "", errors.New("ipam plan is not one interface with one address and no NIC")
		}
		return plan.Interfaces[0].Addresses[0].CIDR, nil
	}
	addrs := map[string]string{}
	steps := []struct {
		name string
		run  func() error
	}{
		{"allocate a", func() (err error) { addrs["a"], err = alloc("a", "p"); return err }},
		{"allocate a again gives the same address", func() error {
			got, err := alloc("a", "p")
			return sameAddr(got, err, addrs["a"])
		}},
		{"check a", func() error {
			plan, err := c.Check(ctx, key("a"))
			if err != nil {
				return err
			}
			return sameAddr(plan.Interfaces[0].Addresses[0].CIDR, nil, addrs["a"])
		}},
		{"allocate b gets another address", func() (err error) {
			if addrs["b"], err = alloc("b", "p"); err == nil && addrs["b"] == addrs["a"] {
				err = errors.New("b got a's address " + addrs["a"])
			}
			return err
		}},
		{"fill tiny", func() error {
			_, err1 := alloc("t1", "tiny")
			_, err2 := alloc("t2", "tiny")
			return errors.Join(err1, err2)
		}},
		{"tiny is exhausted", func() error {
			_, err := alloc("t3", "tiny")
			return wantCode(err, api.CodePoolExhausted)
		}},
		{"status says tiny is full", func() error {
			st, err := c.Status(ctx, "")
			if err != nil {
				return err
			}
			if st.Healthy || !strings.Contains(st.Reason, "tiny") {
				return errors.New("status does not report tiny exhausted: " + st.Reason)
			}
			return nil
		}},
		{"status of p is healthy", func() error {
			st, err := c.Status(ctx, "p")
			if err != nil || !st.Healthy || len(st.Pools) != 1 || st.Pools[0].Used != 2 {
				return errors.Join(err, errors.New("status of p is not healthy with 2 used"))
			}
			return nil
		}},
		{"leases and pools", func() error {
			leases, err := c.Leases(ctx)
			pools, err2 := c.Pools(ctx)
			if err := errors.Join(err, err2); err != nil {
				return err
			}
			if len(leases) != 4 || len(pools) != 2 || pools[1].Used != 2 || pools[1].Free != 0 {
				return errors.New("want 4 leases and tiny full")
			}
			return nil
		}},
		{"topology", func() error {
			raw, err := c.Topology(ctx)
			var report topology.Report
			if err == nil {
				err = json.Unmarshal(raw, &report)
			}
			if err == nil && len(report.GPUs) != 8 {
				err = errors.New("topology lacks the 8 GPUs")
			}
			return err
		}},
		{"gc keeps a and frees the rest", func() error {
			res, err := c.GC(ctx, api.GCRequest{Network: "n", Valid: []api.Attachment{{Sandbox: "a", CNIIfName: "net1"}}})
			if err == nil && len(res.Released) != 3 {
				err = errors.New("gc released other than b, t1, t2")
			}
			return err
		}},
		{"release a", func() error { return c.Release(ctx, key("a")) }},
		{"release a again is fine", func() error { return c.Release(ctx, key("a")) }},
		{"check a after release", func() error {
			_, err := c.Check(ctx, key("a"))
			return wantCode(err, api.CodeUnknownContainer)
		}},
		{"no lease left", func() error {
			leases, err := c.Leases(ctx)
			if err == nil && len(leases) != 0 {
				err = errors.New("leases left after gc and release")
			}
			return err
		}},
	}
	for _, step := range steps {
		if err := step.run(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
	}
}

func sameAddr(got string, err error, want string) error {
	if err == nil && got != want {
		err = fmt.Errorf("address %s, want %s", got, want)
	}
	return err
}

func wantCode(err error, code uint) error {
	if !api.IsCode(err, code) {
		return fmt.Errorf("got %v, want a raild error with code %d", err, code)
	}
	return nil
}
