# jetbake: `make demo` shows the whole path offline; `make test` is what CI runs.
GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
VPKG      := github.com/jetbake/jetbake/builder/version
LDFLAGS   := -s -w -buildid= -X $(VPKG).linkVersion=$(VERSION) -X $(VPKG).linkCommit=$(shell git rev-parse HEAD 2>/dev/null)
# The entrypoint records its commit (vcs.revision): `jetbake build` refuses to
# put an entrypoint of another commit into an image.
EP_FLAGS  := -buildvcs=auto -ldflags '-s -w -buildid='
EP_TRIM   := -trimpath
GOFLAGS_R := -trimpath -buildvcs=false

.PHONY: all build release deps demo test test-unit bench bench-scale fuzz clean real-build

all: build

## build: bin/jetbake, and the entrypoint and CUDA probe for linux/arm64 and linux/amd64
build:
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_R) -ldflags '$(LDFLAGS)' -o $(BIN)/jetbake ./builder/cmd/jetbake
	for arch in arm64 amd64; do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build $(EP_TRIM) $(EP_FLAGS) -o $(BIN)/linux-$$arch/jetbake-entrypoint ./entrypoint || exit 1; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build $(GOFLAGS_R) -ldflags '-s -w -buildid=' -o $(BIN)/linux-$$arch/jetbake-cudaprobe ./entrypoint/cudaprobe || exit 1; \
	done

## release: dist/jetbake-linux-{amd64,arm64}, single binaries with the linux/arm64 entrypoints embedded
EMBED_DIR := builder/entrypoints/embedded/linux-arm64
release: build
	rm -rf $(EMBED_DIR) && mkdir -p $(EMBED_DIR) dist
	cp $(BIN)/linux-arm64/jetbake-entrypoint $(BIN)/linux-arm64/jetbake-cudaprobe $(EMBED_DIR)/
	for arch in amd64 arm64; do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build $(GOFLAGS_R) -tags jetbake_embed -ldflags '$(LDFLAGS)' -o dist/jetbake-linux-$$arch ./builder/cmd/jetbake || exit 1; \
	done
	rm -rf $(EMBED_DIR)

## deps: runc, QEMU binfmt for aarch64, arm64 busybox, Debian docker.io (dockerd for the Docker-engine tests), buildkitd and buildctl from the BuildKit pinned in go.mod
# BuildKit refuses `go install pkg@version` (exclude directives); building it
# inside this module uses exactly the version go.mod pins. The binaries are
# rebuilt only when that version changes or buildkitd does not report it.
# BuildKit's release builds stamp version.Version and version.Revision (the
# git commit) at link time; the module proxy serves no commit, so Revision is
# the module's go.sum hash, which names the same source tree.
BK_MOD     := github.com/moby/buildkit
BK_LDFLAGS  = -X $(BK_MOD)/version.Version=$$v -X $(BK_MOD)/version.Revision=$$sum -X $(BK_MOD)/version.Package=$(BK_MOD)
deps:
	bash builder/internal/tools/deps.sh
	@v=$$($(GO) list -m -f '{{.Version}}' $(BK_MOD)); sum=$$($(GO) list -m -f '{{.Sum}}' $(BK_MOD)); \
	if [ "$$(cat $(BIN)/.buildkit-version 2>/dev/null)" != "$$v" ] || [ ! -x $(BIN)/buildkitd ] || [ ! -x $(BIN)/buildctl ] || \
	   ! $(BIN)/buildkitd --version 2>/dev/null | grep -qF " $$v "; then \
	  echo "deps: building buildkitd and buildctl $$v (a few minutes the first time)"; \
	  $(GO) build -ldflags "$(BK_LDFLAGS)" -o $(BIN)/buildkitd $(BK_MOD)/cmd/buildkitd && \
	  $(GO) build -ldflags "$(BK_LDFLAGS)" -o $(BIN)/buildctl $(BK_MOD)/cmd/buildctl && \
	  echo "$$v" > $(BIN)/.buildkit-version; \
	else echo "deps: buildkitd $$v is built"; fi

## demo: build the real matrix with stand-in bases and router, push to a local registry, run the images on fake Jetsons
demo: deps build
	$(GO) run ./builder/internal/demo

## test: unit tests and the end-to-end tests on a real buildkitd, registry and runc
test: deps build
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 25m ./...

test-unit:
	$(GO) test -short -count=1 ./...

## real-build: the pinned TEI for sm_87 on NVIDIA's real bases, then its DT_NEEDED, --version with the
## driver stub and the image size; needs network, NGC login and an arm64 BuildKit node (not run in CI)
real-build: build
	bash builder/internal/tools/real-build.sh

## bench: benchmarks of the rules, planning and the entrypoint, and jetbake against buildx bake
## (default output and rewrite-timestamp=true) on the shipped matrix and synthetic ones of 5 and 20
## releases; V=1 shows the tools' output and jetbake's phase timings, BENCH_ARGS more flags
BENCH_ARGS ?=
BENCH_V    := $(if $(V),-v)
bench: deps build $(BIN)/buildx
	$(GO) test -run '^$$' -bench . -benchmem ./compute_cap/ ./builder/plan/ ./entrypoint/
	$(GO) run ./builder/internal/benchcmd $(BENCH_V) $(BENCH_ARGS)

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
