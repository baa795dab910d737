# Rail — see README.md. Everything here runs as root on Linux with Go only.
GO       ?= go
BIN      := bin
GOFLAGS_BUILD := -trimpath -ldflags "-s -w"
# The product binaries are static, so build turns cgo off on its own lines; nothing else does
# (-race needs cgo: make test, bench-micro and the rigs' scripts set what they need).

# Lint tools, pinned and installed like the rigs' tools: outside the repo, keyed by version.
STATICCHECK_VERSION := v0.8.2
RAIL_TOOLS ?= $(HOME)/.cache/rail-tools
STATICCHECK := $(RAIL_TOOLS)/staticcheck-$(STATICCHECK_VERSION)/staticcheck
DEADCODE_VERSION := v0.52.0
DEADCODE := $(RAIL_TOOLS)/deadcode-$(DEADCODE_VERSION)/deadcode
# Packages for tests, which no binary needs reach: integration/, a folder named *test, fakesys.
TEST_PACKAGES := ^(integration/|([^:]*/)?[a-z]*test/|pkg/topology/fakesys/)

# One image name everywhere: the Helm chart's appVersion, the kustomize base and the README use it too
# (integration/k8s checks that they agree).
VERSION  := 0.1.0
IMAGE    ?= ghcr.io/railcni/rail:$(VERSION)

.PHONY: all build test soak test-cri test-vm test-sriov test-fabric test-k8s demo bench bench-sriov lint lint-fmt lint-vet lint-staticcheck lint-deadcode lint-imports clean image image-oci image-name fuzz bench-micro

all: build

build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $(BIN)/raild ./daemon
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $(BIN)/rail ./plugins/rail
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $(BIN)/rail-ipam ./plugins/rail-ipam

# All tests, with the race detector (cgo is needed for -race). Root tests
# (netns, veth, macvlan) create and remove their own namespaces and links.
test:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m ./...

# Chaos and soak, long: raild SIGKILLed 20 times during a 1,000-pod churn,
# then 10,000 ADD/DEL cycles with leaks and raild's RSS reported (make test
# runs a short version of both).
soak:
	RAIL_SOAK=1 CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 120m -v -run 'TestChaos|TestSoak' ./integration/chaos/

# The containerd + NRI end-to-end test (builds its rig once, cached outside the repo).
test-cri: build
	bash integration/cri/run.sh

# A real single-node Kubernetes (etcd, apiserver, scheduler, controller-manager, kubelet, containerd + NRI):
# Rail installed by its Helm chart from the locally built image; rig binaries cached outside the repo.
test-k8s: build
	bash integration/k8s/run.sh

# Real RDMA: a Debian kernel with Soft-RoCE (rdma_rxe) under qemu, booted in shared and
# exclusive RDMA netns mode (kernel cached outside the repo, keyed by its pinned version).
test-vm:
	bash integration/vm/run.sh

# Real SR-IOV: QEMU 10's igb NICs (VFs under the guest's igbvf) in a Debian guest; vf mode's attach
# sequence and raild's VF sweep against a real PF driver (rig cached outside the repo by its pins).
test-sriov:
	bash integration/sriov/test.sh

# Two nodes joined by wires: two QEMU guests on the VM rig's kernel, each a whole node (containerd + NRI,
# raild on its real sysfs with GPU stand-ins, the CNI chain) with two NICs, each on its own wire to the
# other node's; pods move RDMA (Soft-RoCE) to each other across the wires (integration/fabric/README.md).
test-fabric:
	bash integration/fabric/run.sh

# The main job on a built-in simulated node: two pods, their GPUs, their NICs. Another node:
# DEMO_FLAGS="--machine gb200-tray" (or azure-ndh100v5 with --topology-file pkg/topology/testdata/ndv5-topo.xml).
demo: build
	$(GO) run ./integration/cmd/rail-demo --bin $(BIN) $(DEMO_FLAGS)

# Every fuzz target for FUZZTIME each (default 10s); CI runs this.
fuzz:
	bash .ci/fuzz.sh

# One table: rail against the upstream reference plugins through libcni, side by
# side in one run, with the exec and kernel floors (docs/performance.md). Fails
# only on an error or a leak, never on a time. BENCH_FLAGS=--quick for a short run.
bench: build
	$(GO) run ./integration/cmd/rail-bench --bin $(BIN) $(BENCH_FLAGS)

# The VF scenario of the bench in the SR-IOV rig's guest: rail vf against sriov-cni + host-local on the
# same real VFs (SRIOV_CNI=/path/to/sriov, else built once from its source by integration/sriov/sriov-cni.sh,
# else host-device + static, said so). BENCH_FLAGS=--quick for a short run (CI).
bench-sriov:
	bash integration/sriov/bench.sh $(BENCH_FLAGS)

# The Go micro-benchmarks (topology, selection, lease store, NRI, moves, ...).
bench-micro:
	CGO_ENABLED=1 $(GO) test -run '^$$' -bench . -benchmem -count=1 ./pkg/... ./ipam/... ./daemon/... ./integration/...

# gofmt, go vet, staticcheck (pinned), dead code (deadcode, pinned: a function no binary reaches, outside
# the packages for tests, is removed or moved into the tests that use it), and the import table and
# folder map of docs/architecture.md (integration/importrules). One target per check: `make -k lint`
# reports every check that fails.
lint: lint-fmt lint-vet lint-staticcheck lint-deadcode lint-imports

lint-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint-vet:
	$(GO) vet ./...

lint-staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

lint-deadcode: $(DEADCODE)
	@all=$$($(DEADCODE) ./...) || exit 1; out=$$(echo "$$all" | grep -Ev '$(TEST_PACKAGES)' || true); \
	  if [ -n "$$out" ]; then echo "dead code (no binary reaches it: remove it, or move a test's helper into its tests):"; echo "$$out"; exit 1; fi

lint-imports:
	$(GO) test -count=1 ./integration/importrules/

$(STATICCHECK):
	GOBIN=$(dir $@) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(DEADCODE):
	GOBIN=$(dir $@) $(GO) install golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)

image:
	docker build -t $(IMAGE) .

# The same image without Docker: an OCI archive from bin/ (layout of the Dockerfile's final stage),
# for `ctr -n k8s.io images import bin/rail-image.tar`.
image-oci: build
	bash integration/k8s/build-image.sh $(BIN)/rail-image.tar $(IMAGE)

image-name:
	@echo $(IMAGE)

clean:
	rm -rf $(BIN)
