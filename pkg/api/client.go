package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// DefaultTimeout bounds one call from a plugin to raild.
const DefaultTimeout = 10 * time.Second

// Client talks to raild over its unix socket. Every failure it returns is an
// *Error carrying a CNI error code, so plugins can hand it on unchanged.
type Client struct {
	socket  string
	timeout time.Duration
	http    *http.Client
}

// NewClient returns a client for the socket; timeout <= 0 means DefaultTimeout.
func NewClient(socket string, timeout time.Duration) *Client {
	if socket == "" {
		socket = DefaultSocket
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dialer := &net.Dialer{Timeout: timeout}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", socket)
		},
		DisableCompression: true,
		MaxIdleConns:       2,
	}
	return &Client{socket: socket, timeout: timeout, http: &http.Client{Transport: transport, Timeout: timeout}}
}

// Socket is the path the client dials.
func (c *Client) Socket() string { return c.socket }

// Allocate asks for the plan of one attachment (re-entrant).
func (c *Client) Allocate(ctx context.Context, req AllocateRequest) (*Plan, error) {
	var plan Plan
	if err := c.call(ctx, http.MethodPost, "/allocate", req, &plan); err != nil {
		return nil, err
	}
	return &plan, nil
}

// Release frees what an attachment holds; unknown attachments are not an error.
func (c *Client) Release(ctx context.Context, req AttachmentRequest) error {
	return c.call(ctx, http.MethodPost, "/release", req, nil)
}

// Check returns the plan recorded for an attachment (CodeUnknownContainer if none).
func (c *Client) Check(ctx context.Context, req AttachmentRequest) (*Plan, error) {
	var plan Plan
	if err := c.call(ctx, http.MethodPost, "/check", req, &plan); err != nil {
		return nil, err
	}
	return &plan, nil
}

// Status reports whether raild is healthy and the pools have room; pool
// narrows the answer to one pool when not empty.
func (c *Client) Status(ctx context.Context, pool string) (*Status, error) {
	var st Status
	path := "/status"
	if pool != "" {
		path += "?pool=" + pool
	}
	if err := c.call(ctx, http.MethodGet, path, nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// GC releases every lease of the network that is not in req.Valid.
func (c *Client) GC(ctx context.Context, req GCRequest) (*GCResult, error) {
	var res GCResult
	if err := c.call(ctx, http.MethodPost, "/gc", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Leases lists every lease on the node.
func (c *Client) Leases(ctx context.Context) ([]Lease, error) {
	var leases []Lease
	err := c.call(ctx, http.MethodGet, "/leases", nil, &leases)
	return leases, err
}

// Pools lists the pools with their use on this node.
func (c *Client) Pools(ctx context.Context) ([]PoolStatus, error) {
	var pools []PoolStatus
	err := c.call(ctx, http.MethodGet, "/pools", nil, &pools)
	return pools, err
}

// Topology returns the node's topology report as raw JSON (the shape of `raild topo --json`).
func (c *Client) Topology(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.call(ctx, http.MethodGet, "/topology", nil, &raw)
	return raw, err
}

// PodReport is one pod's RDMA path as raild sees it (`raild doctor --pod`).
func (c *Client) PodReport(ctx context.Context, namespace, name string) (*PodReport, error) {
	var r PodReport
	err := c.call(ctx, http.MethodGet, "/pods/"+url.PathEscape(namespace)+"/"+url.PathEscape(name), nil, &r)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return &Error{Code: CodeInternal, Msg: "encode request", Details: err.Error()}
		}
		body = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://raild/"+Version+path, body)
	if err != nil {
		return &Error{Code: CodeInternal, Msg: "build request", Details: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return c.unreachable(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		// Headers came and the body did not (a raild that stalls or dies
		// mid-answer): as unreachable as one that never answered.
		return c.unreachable(err)
	}
	if len(data) > maxAnswer {
		return &Error{Code: CodeIO, Msg: "raild's answer is over 8 MiB"}
	}
	return decodeResponse(resp.StatusCode, resp.Status, data, out)
}

// maxAnswer bounds what the client reads of one answer.
const maxAnswer = 8 << 20

func (c *Client) unreachable(err error) *Error {
	msg := fmt.Sprintf("raild is unreachable at %s", c.socket)
	if errors.Is(err, context.DeadlineExceeded) {
		msg = fmt.Sprintf("raild at %s did not answer within %s", c.socket, c.timeout)
	}
	return &Error{Code: CodeTryAgainLater, Msg: msg, unreachable: true,
		Details: err.Error() + " (is the raild DaemonSet running on this node? check `raild doctor`, or set \"socket\" in the netconf)"}
}

func decodeResponse(statusCode int, status string, data []byte, out any) error {
	if statusCode/100 != 2 {
		apiErr := &Error{}
		if json.Unmarshal(data, apiErr) != nil || apiErr.Msg == "" {
			return &Error{Code: CodeInternal, Msg: fmt.Sprintf("raild answered %s", status), Details: Excerpt(string(data), MaxDetails)}
		}
		return apiErr.Bounded()
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &Error{Code: CodeDecode, Msg: "decode raild answer", Details: Excerpt(err.Error(), MaxDetails)}
	}
	return nil
}
