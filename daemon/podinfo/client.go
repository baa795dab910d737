// Package podinfo finds a pod's GPUs: the device IDs the kubelet's
// PodResources API (v1) reports for the pod, and the mapping of device IDs
// or annotation values (indices, UUIDs, MIG ids, PCI addresses) to the
// node's GPU indices.
package podinfo

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

const (
	// DefaultSocket is where the kubelet serves the PodResources API.
	DefaultSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"
	// DefaultResource is the resource name of NVIDIA's device plugin.
	DefaultResource = "nvidia.com/gpu"
	// DefaultTimeout bounds one PodDevices call when Dial is given none.
	DefaultTimeout = 2 * time.Second

	// maxMessageSize matches the kubelet's own limit for this API: a List
	// (kubelets without Get) answers for every pod of the node. Get's
	// answer, one pod's, is bounded far lower (maxGetSize).
	maxMessageSize = 16 << 20
	// maxReconnectDelay keeps a kubelet that starts after raild from
	// waiting out gRPC's default two-minute backoff.
	maxReconnectDelay = 2 * time.Second
)

var (
	// ErrPodNotFound: the kubelet does not know the pod.
	ErrPodNotFound = errors.New("pod not known to the kubelet")
	// ErrKubeletUnreachable: nothing answers on the PodResources socket.
	ErrKubeletUnreachable = errors.New("kubelet pod-resources API unreachable")
)

// Client talks to the kubelet's PodResources API over its unix socket.
// It is safe for concurrent use.
type Client struct {
	socket  string
	timeout time.Duration
	conn    *grpc.ClientConn
	lister  podresourcesapi.PodResourcesListerClient
}

// Dial prepares a client for the PodResources socket. It does not connect:
// the first call does, and a kubelet that starts later is found then.
// timeout bounds each PodDevices call (DefaultTimeout when <= 0).
func Dial(ctx context.Context, socket string, timeout time.Duration) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("dial pod-resources socket: %w", err)
	}
	if socket == "" {
		return nil, errors.New("pod-resources socket path is empty; pass the kubelet's socket, e.g. " + DefaultSocket)
	}
	abs, err := filepath.Abs(socket)
	if err != nil {
		return nil, fmt.Errorf("pod-resources socket %q: %w", socket, err)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	reconnect := backoff.DefaultConfig
	reconnect.MaxDelay = maxReconnectDelay
	conn, err := grpc.NewClient("unix://"+abs,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize)),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnect, MinConnectTimeout: timeout}),
	)
	if err != nil {
		return nil, fmt.Errorf("pod-resources client for %s: %w", abs, err)
	}
	return &Client{
		socket:  abs,
		timeout: timeout,
		conn:    conn,
		lister:  podresourcesapi.NewPodResourcesListerClient(conn),
	}, nil
}

// Socket is the absolute path the client talks to.
func (c *Client) Socket() string { return c.socket }

// PodDevices returns the device IDs of the given resource names
// (DefaultResource when none) over all containers of the pod, each once,
// in the kubelet's order. A pod without such devices gives no IDs and no
// error. It uses Get and falls back to List on kubelets without Get.
// Errors wrap ErrPodNotFound or ErrKubeletUnreachable where they apply.
func (c *Client) PodDevices(ctx context.Context, namespace, name string, resources []string) ([]string, error) {
	devices, err := c.PodGPUs(ctx, namespace, name, resources)
	return devices.IDs, err
}

// PodGPUs is PodDevices with the DRA devices of the pod's claims beside
// the device-plugin IDs (dynamic_resources, every driver).
func (c *Client) PodGPUs(ctx context.Context, namespace, name string, resources []string) (Devices, error) {
	pod, resources, err := c.lookup(ctx, "pod devices", namespace, name, resources)
	if err != nil {
		return Devices{}, err
	}
	if err := checkBounds(pod, resources); err != nil {
		return Devices{}, err
	}
	return podDevices(pod, resources), nil
}

// ContainerDevices is PodDevices per container: container name -> device
// IDs of the given resources (DefaultResource when none), each once, in the
// kubelet's order. Containers without such devices are left out.
func (c *Client) ContainerDevices(ctx context.Context, namespace, name string, resources []string) (map[string][]string, error) {
	byCtr, err := c.ContainerGPUs(ctx, namespace, name, resources)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for ctr, devices := range byCtr {
		if len(devices.IDs) > 0 {
			out[ctr] = devices.IDs
		}
	}
	return out, nil
}

// ContainerGPUs is PodGPUs per container. Containers with neither
// device-plugin IDs nor DRA devices are left out.
func (c *Client) ContainerGPUs(ctx context.Context, namespace, name string, resources []string) (map[string]Devices, error) {
	pod, resources, err := c.lookup(ctx, "container devices", namespace, name, resources)
	if err != nil {
		return nil, err
	}
	if err := checkBounds(pod, resources); err != nil {
		return nil, err
	}
	out := map[string]Devices{}
	for _, container := range pod.GetContainers() {
		one := &podresourcesapi.PodResources{Containers: []*podresourcesapi.ContainerResources{container}}
		if devices := podDevices(one, resources); !devices.Empty() {
			out[container.GetName()] = devices
		}
	}
	return out, nil
}

// lookup checks the pod's name, defaults the resources and asks the kubelet,
// bounded by the client's timeout.
func (c *Client) lookup(ctx context.Context, what, namespace, name string, resources []string) (*podresourcesapi.PodResources, []string, error) {
	if namespace == "" || name == "" {
		return nil, nil, fmt.Errorf("%s: pod namespace %q and name %q must both be set", what, namespace, name)
	}
	if len(resources) == 0 {
		resources = []string{DefaultResource}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	pod, err := c.podResources(ctx, namespace, name)
	return pod, resources, err
}

// Close releases the connection.
func (c *Client) Close() error {
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("close pod-resources client for %s: %w", c.socket, err)
	}
	return nil
}

func (c *Client) podResources(ctx context.Context, namespace, name string) (*podresourcesapi.PodResources, error) {
	req := &podresourcesapi.GetPodResourcesRequest{PodNamespace: namespace, PodName: name}
	resp, err := c.lister.Get(ctx, req, grpc.MaxCallRecvMsgSize(maxGetSize))
	if err == nil {
		if resp.GetPodResources() == nil {
			return nil, fmt.Errorf("pod %s/%s: kubelet at %s answered Get without pod resources", namespace, name, c.socket)
		}
		return resp.GetPodResources(), nil
	}
	switch classify(err) {
	case answerNoGet:
		return c.listPod(ctx, namespace, name)
	case answerNotFound:
		return nil, fmt.Errorf("pod %s/%s: %w (kubelet at %s): %w", namespace, name, ErrPodNotFound, c.socket, err)
	case answerUnreachable:
		return nil, c.unreachable(err)
	case answerTooLarge:
		return nil, fmt.Errorf("pod %s/%s: the kubelet's answer at %s is larger than raild reads for one pod (%d KiB): %w; check the device plugin or DRA driver that allocated its devices: %w",
			namespace, name, c.socket, maxGetSize>>10, ErrTooManyDevices, err)
	}
	return nil, fmt.Errorf("pod %s/%s: kubelet Get at %s: %w", namespace, name, c.socket, err)
}

func (c *Client) listPod(ctx context.Context, namespace, name string) (*podresourcesapi.PodResources, error) {
	resp, err := c.lister.List(ctx, &podresourcesapi.ListPodResourcesRequest{})
	if err != nil {
		if classify(err) == answerUnreachable {
			return nil, c.unreachable(err)
		}
		return nil, fmt.Errorf("pod %s/%s: kubelet List at %s: %w", namespace, name, c.socket, err)
	}
	for _, pod := range resp.GetPodResources() {
		if pod.GetNamespace() == namespace && pod.GetName() == name {
			return pod, nil
		}
	}
	return nil, fmt.Errorf("pod %s/%s: %w (kubelet at %s lists %d pods)", namespace, name, ErrPodNotFound, c.socket, len(resp.GetPodResources()))
}

func (c *Client) unreachable(err error) error {
	return fmt.Errorf("%w at %s (is the kubelet running and the socket mounted into raild?); "+
		"GPUs fall back to the rail.dev/gpus annotation or cni-args: %w", ErrKubeletUnreachable, c.socket, err)
}

// deviceIDs collects the IDs of the wanted resources, each once, in order.
func deviceIDs(pod *podresourcesapi.PodResources, resources []string) []string {
	wanted := make(map[string]bool, len(resources))
	for _, resource := range resources {
		wanted[resource] = true
	}
	seen := make(map[string]bool)
	var ids []string
	for _, container := range pod.GetContainers() {
		for _, devices := range container.GetDevices() {
			if !wanted[devices.GetResourceName()] {
				continue
			}
			for _, id := range devices.GetDeviceIds() {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}
