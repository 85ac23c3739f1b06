# jetbake: `make demo` shows the whole path offline; `make test` is what CI runs.
GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
VPKG      := github.com/jetbake/jetbake/builder/version
LDFLAGS    = -s -w -buildid= -X $(VPKG).linkVersion=$(VERSION) -X $(VPKG).linkCommit=$(shell git rev-parse HEAD 2>/dev/null) -X $(VPKG).linkCommitTime=$(shell git log -1 --format=%ct HEAD 2>/dev/null)
# The entrypoint records its commit (vcs.revision): `jetbake build` refuses to
# put an entrypoint of another commit into an image.
EP_FLAGS  := -buildvcs=auto -ldflags '-s -w -buildid='
EP_TRIM   := -trimpath
GOFLAGS_R := -trimpath -buildvcs=false

.PHONY: all build release release-version deps kube-deps demo test test-unit bench bench-scale fuzz clean real-build

all: build

## build: bin/jetbake, and the entrypoint, the CUDA probe and the evidence probe for linux/arm64 and linux/amd64
build:
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_R) -ldflags '$(LDFLAGS)' -o $(BIN)/jetbake ./builder/cmd/jetbake
	for arch in arm64 amd64; do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build $(EP_TRIM) $(EP_FLAGS) -o $(BIN)/linux-$$arch/jetbake-entrypoint ./entrypoint || exit 1; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build $(GOFLAGS_R) -ldflags '-s -w -buildid=' -o $(BIN)/linux-$$arch/jetbake-cudaprobe ./entrypoint/cudaprobe || exit 1; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build $(GOFLAGS_R) -ldflags '-s -w -buildid=' -o $(BIN)/linux-$$arch/jetbake-probe ./entrypoint/probe || exit 1; \
	done

## release: dist/jetbake-linux-{amd64,arm64}, single binaries with the linux/arm64 entrypoints embedded,
## and dist/SHA256SUMS (`cd dist && sha256sum -c SHA256SUMS`), for the release tag on HEAD
## (git tag -a v0.1.0), or for VERSION=v0.1.0 given on the command line
EMBED_ROOT  := builder/entrypoints/embedded
EMBED_DIR   := $(EMBED_ROOT)/linux-arm64
RELEASE_TMP := $(BIN)/release.tmp
# The tag's name is the version; a version given on the command line wins
# (a target-specific value does not override it), one in the environment
# does not.
release: VERSION = $(shell git describe --tags --exact-match HEAD 2>/dev/null)
release: release-version build
	@set -e; trap 'rm -rf $(EMBED_ROOT) $(RELEASE_TMP)' EXIT; \
	rm -rf $(EMBED_ROOT) $(RELEASE_TMP) && mkdir -p $(EMBED_DIR) $(RELEASE_TMP); \
	cp $(BIN)/linux-arm64/jetbake-entrypoint $(BIN)/linux-arm64/jetbake-cudaprobe $(BIN)/linux-arm64/jetbake-probe $(EMBED_DIR)/; \
	for arch in amd64 arm64; do \
	  echo "release: jetbake $(VERSION) for linux/$$arch"; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build $(GOFLAGS_R) -tags jetbake_embed -ldflags '$(LDFLAGS)' -o $(RELEASE_TMP)/jetbake-linux-$$arch ./builder/cmd/jetbake; \
	done; \
	(cd $(RELEASE_TMP) && sha256sum jetbake-linux-amd64 jetbake-linux-arm64 > SHA256SUMS && sha256sum --check --strict --quiet SHA256SUMS); \
	rm -rf dist && mv $(RELEASE_TMP) dist; \
	echo "release: dist/ holds jetbake $(VERSION) for linux/amd64 and linux/arm64, and SHA256SUMS"

# release-version refuses a release without a version, with a version that is
# not a semantic version with a leading v, or from a tag on a modified checkout.
release-version: export RELEASE_VERSION = $(VERSION)
release-version: export RELEASE_ORIGIN = $(origin VERSION)
release-version:
	@if [ -z "$$RELEASE_VERSION" ]; then \
	  echo "make release: HEAD has no release tag: tag it (git tag -a v0.1.0) or pass VERSION=v0.1.0" >&2; exit 2; fi
	@if ! printf '%s\n' "$$RELEASE_VERSION" | grep -Eqx 'v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?'; then \
	  echo "make release: VERSION '$$RELEASE_VERSION' is not a release version such as v0.1.0 or v0.2.0-rc.1 (semantic versioning, with a v)" >&2; exit 2; fi
	@if [ "$$RELEASE_ORIGIN" != 'command line' ] && [ -n "$$(git status --porcelain --untracked-files=no)" ]; then \
	  echo "make release: the checkout has uncommitted changes: commit or stash them, so that $$RELEASE_VERSION is the tag's content" >&2; exit 2; fi

## deps: runc, QEMU binfmt for aarch64, arm64 busybox, Debian docker.io (dockerd for the Docker-engine tests), buildkitd and buildctl from the BuildKit pinned in go.mod,
## NVIDIA's container runtime, nvidia-ctk and nvidia-cdi-hook from the toolkit pinned in builder/internal/nvtoolkit/toolkit,
## and the test bed's real fat binaries (NVIDIA's ptxas and fatbinary, sm_72 and sm_87) in bin/nvidia-fatbins
# BuildKit refuses `go install pkg@version` (exclude directives); building it
# inside this module uses exactly the version go.mod pins. The binaries are
# rebuilt only when that version changes or buildkitd does not report it.
# BuildKit's release builds stamp version.Version and version.Revision (the
# git commit) at link time; the module proxy serves no commit, so Revision is
# the module's go.sum hash, which names the same source tree.
BK_MOD     := github.com/moby/buildkit
BK_LDFLAGS  = -X $(BK_MOD)/version.Version=$$v -X $(BK_MOD)/version.Revision=$$sum -X $(BK_MOD)/version.Package=$(BK_MOD)
# NVIDIA's container toolkit comes from its own module (see its tools.go for
# why), at the version that module's go.mod pins; the binaries are rebuilt
# only when that version changes or they do not report it. Its release builds
# link with these flags (the runtime loads libcuda.so.1 through cgo) and stamp
# internal/info's version and gitCommit; the commit is the go.sum hash here.
NVTK_DIR     := builder/internal/nvtoolkit/toolkit
NVTK_MOD     := github.com/NVIDIA/nvidia-container-toolkit
NVTK_CMDS    := nvidia-container-runtime nvidia-ctk nvidia-cdi-hook
NVTK_LDFLAGS  = -s -w '-extldflags=-Wl,--export-dynamic -Wl,--unresolved-symbols=ignore-in-object-files -Wl,-z,lazy' \
                -X $(NVTK_MOD)/internal/info.version=$$v -X $(NVTK_MOD)/internal/info.gitCommit=$$sum
deps: kube-deps
	bash builder/internal/tools/deps.sh
	$(GO) run ./builder/internal/nvreal/cmd/nvfatbins
	@v=$$($(GO) list -m -f '{{.Version}}' $(BK_MOD)); sum=$$($(GO) list -m -f '{{.Sum}}' $(BK_MOD)); \
	if [ "$$(cat $(BIN)/.buildkit-version 2>/dev/null)" != "$$v" ] || [ ! -x $(BIN)/buildkitd ] || [ ! -x $(BIN)/buildctl ] || \
	   ! $(BIN)/buildkitd --version 2>/dev/null | grep -qF " $$v "; then \
	  echo "deps: building buildkitd and buildctl $$v (a few minutes the first time)"; \
	  $(GO) build -ldflags "$(BK_LDFLAGS)" -o $(BIN)/buildkitd $(BK_MOD)/cmd/buildkitd && \
	  $(GO) build -ldflags "$(BK_LDFLAGS)" -o $(BIN)/buildctl $(BK_MOD)/cmd/buildctl && \
	  echo "$$v" > $(BIN)/.buildkit-version; \
	else echo "deps: buildkitd $$v is built"; fi
	@v=$$(cd $(NVTK_DIR) && $(GO) list -m -f '{{.Version}}' $(NVTK_MOD)) || exit 1; \
	sum=$$(cd $(NVTK_DIR) && $(GO) list -m -f '{{.Sum}}' $(NVTK_MOD)); \
	if [ "$$(cat $(BIN)/.nvidia-container-toolkit-version 2>/dev/null)" != "$$v" ] || \
	   ! $(BIN)/nvidia-ctk --version 2>/dev/null | grep -qF "version $$v" || \
	   ! $(BIN)/nvidia-container-runtime --version 2>/dev/null | grep -qF "version $$v" || [ ! -x $(BIN)/nvidia-cdi-hook ]; then \
	  echo "deps: building NVIDIA's container toolkit $$v: $(NVTK_CMDS) (cgo; a minute or two the first time)"; \
	  for c in $(NVTK_CMDS); do \
	    (cd $(NVTK_DIR) && CGO_ENABLED=1 CGO_CFLAGS='-O2 -Wno-deprecated-declarations' \
	      $(GO) build -trimpath -ldflags "$(NVTK_LDFLAGS)" -o $(CURDIR)/$(BIN)/$$c $(NVTK_MOD)/cmd/$$c) || \
	    { echo "deps: building $$c of NVIDIA's container toolkit $$v failed (it needs cgo: gcc and the Go module proxy)" >&2; exit 1; }; \
	  done; \
	  echo "$$v" > $(BIN)/.nvidia-container-toolkit-version; \
	else echo "deps: NVIDIA's container toolkit $$v is built"; fi


## kube-deps: the Kubernetes control plane the fleet test runs (kube-apiserver, kube-controller-manager,
## kube-scheduler from k8s.io/kubernetes, etcd from go.etcd.io/etcd/server) into bin/kube/, from the
## module builder/internal/kubebed/controlplane pins; rebuilt only when that module's versions change.
## A step of deps: the fleet test (builder/internal/kubebed) runs them.
KUBE_DIR   := builder/internal/kubebed/controlplane
KUBE_MOD   := k8s.io/kubernetes
KUBE_CV    := k8s.io/component-base/version
kube-deps:
	@v=$$(cd $(KUBE_DIR) && $(GO) list -m -f '{{.Version}}' $(KUBE_MOD)) && e=$$(cd $(KUBE_DIR) && $(GO) list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3) || exit 1; \
	if [ "$$(cat $(BIN)/kube/.version 2>/dev/null)" != "$$v $$e" ] || [ ! -x $(BIN)/kube/kube-apiserver ] || [ ! -x $(BIN)/kube/etcd ]; then \
	  echo "deps: building the Kubernetes control plane $$v and etcd $$e (many minutes the first time)"; \
	  mkdir -p $(BIN)/kube && \
	  (cd $(KUBE_DIR) && $(GO) build -trimpath -ldflags "-s -w -X $(KUBE_CV).gitVersion=$$v -X $(KUBE_CV).gitMajor=$$(echo $$v | cut -d. -f1 | tr -d v) -X $(KUBE_CV).gitMinor=$$(echo $$v | cut -d. -f2)" \
	    -o $(CURDIR)/$(BIN)/kube/ $(KUBE_MOD)/cmd/kube-apiserver $(KUBE_MOD)/cmd/kube-controller-manager $(KUBE_MOD)/cmd/kube-scheduler && \
	   $(GO) build -trimpath -ldflags "-s -w" -o $(CURDIR)/$(BIN)/kube/etcd go.etcd.io/etcd/server/v3) && \
	  echo "$$v $$e" > $(BIN)/kube/.version; \
	else echo "deps: the Kubernetes control plane $$v and etcd $$e are built"; fi

## demo: build the real matrix with stand-in bases and router, push to a local registry, run the images on fake Jetsons
demo: deps build
	$(GO) run ./builder/internal/demo

## test: unit tests (with the race detector) and the end-to-end tests on a real buildkitd, registry and runc,
## among them a short run of the bench (jetbake against buildx bake on the shipped matrix, one round on each build path)
# The race detector needs cgo (gcc and libc6-dev, from make deps). The
# packages that drive buildkitd, dockerd, QEMU and whole builds run without
# it: their concurrency is mostly in those processes, and under -race they
# take several times as long (standin, which compresses the stand-in bases'
# layers and runs the cross builds under chroot and the recipe on
# buildkitd, took 11 minutes under -race).
SLOW_TESTS = $(addprefix $(shell $(GO) list -m)/builder/internal/,e2e benchcmd ci nvtoolkit kubebed standin)
UNIT_TESTS = $(filter-out $(SLOW_TESTS),$(shell $(GO) list ./...))
test: deps build $(BIN)/buildx
	$(GO) build ./...
	$(GO) vet ./...
	$(GO) vet -tags cuda ./builder/internal/standin/tei/cmd/router
	$(GO) test -race -count=1 -timeout 25m $(UNIT_TESTS)
	$(GO) test -count=1 -timeout 50m $(SLOW_TESTS)

test-unit:
	$(GO) test -short -count=1 ./...

## real-build: the pinned TEI for sm_87 on NVIDIA's real bases, then its DT_NEEDED, --version with the
## driver stub and the image size; needs network, NGC login and an arm64 BuildKit node (not run in CI)
real-build: build
	bash builder/internal/tools/real-build.sh

## bench: benchmarks of the rules, planning and the entrypoint, and jetbake against buildx bake
## (default output and rewrite-timestamp=true) on the shipped matrix and synthetic ones of 5 and 20
## releases, each on both build paths of the routers (QEMU and cross), and jetbake audit on a 2 GB stand-in image against crane;
## V=1 shows the tools' output and every build's phase timings, BENCH_ARGS more flags; it fails when a comparison is broken
## (a peer failed every round of a matrix, a ratio no round gave) or jetbake's cold builds on a path differ in digests, never on a time
BENCH_ARGS ?=
BENCH_V    := $(if $(V),-v)
bench: deps build $(BIN)/buildx
	$(GO) test -run '^$$' -bench . -benchmem ./computecap/ ./builder/plan/ ./entrypoint/
	$(GO) run ./builder/internal/benchcmd $(BENCH_V) $(BENCH_ARGS)
	$(GO) run ./builder/internal/auditbench

## bench-scale: the bench with a synthetic matrix of 50 releases as well
bench-scale: deps build $(BIN)/buildx
	$(GO) run ./builder/internal/benchcmd -sizes shipped,5,20,50 $(BENCH_V) $(BENCH_ARGS)

# buildx for `make bench`, from its own module so its dependencies stay out of
# go.mod; rebuilt only when that module's go.mod or go.sum changes.
BUILDX_MOD := builder/internal/bench/buildx
$(BIN)/buildx: $(BUILDX_MOD)/go.mod $(BUILDX_MOD)/go.sum
	cd $(BUILDX_MOD) && $(GO) build -trimpath -ldflags "-X github.com/docker/buildx/version.Version=$$($(GO) list -m -f '{{.Version}}' github.com/docker/buildx)" -o $(CURDIR)/$@ github.com/docker/buildx/cmd/buildx

## fuzz: every fuzz target of every package, FUZZTIME each
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz: $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf $(BIN)/jetbake $(BIN)/linux-* dist
