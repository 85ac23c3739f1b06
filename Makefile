# jetbake: `make demo` shows the whole path offline; `make test` is what CI runs.
GO        ?= go
BIN       := bin
LDFLAGS   := -s -w -buildid= -X main.version=$(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOFLAGS_R := -trimpath -buildvcs=false
E2E_BINS  := $(BIN)/buildkitd $(BIN)/buildctl

.PHONY: all build deps demo test test-unit test-e2e bench fuzz lint clean

all: build

## build: bin/jetbake, and the entrypoint and CUDA probe for linux/arm64 and linux/amd64
build:
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_R) -ldflags '$(LDFLAGS)' -o $(BIN)/jetbake ./builder
	for arch in arm64 amd64; do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build $(GOFLAGS_R) -ldflags '-s -w -buildid=' -o $(BIN)/linux-$$arch/jetbake-entrypoint ./entrypoint || exit 1; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build $(GOFLAGS_R) -ldflags '-s -w -buildid=' -o $(BIN)/linux-$$arch/jetbake-cudaprobe ./entrypoint/cudaprobe || exit 1; \
	done

## deps: runc, QEMU binfmt for aarch64, arm64 busybox, buildkitd and buildctl from the BuildKit pinned in go.mod
deps: $(E2E_BINS)
	bash builder/tools/deps.sh

# BuildKit refuses `go install pkg@version` (exclude directives); building it
# inside this module uses exactly the version go.mod pins.
$(BIN)/buildkitd: go.mod go.sum
	$(GO) build -o $@ github.com/moby/buildkit/cmd/buildkitd
$(BIN)/buildctl: go.mod go.sum
	$(GO) build -o $@ github.com/moby/buildkit/cmd/buildctl

## demo: build the real matrix with stand-in bases and router, push to a local registry, run the images on fake Jetsons
demo: deps build
	$(GO) run ./builder/demo

## test: unit tests and the end-to-end tests on a real buildkitd, registry and runc
test: deps build
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 25m ./...

test-unit:
	$(GO) test -short -count=1 ./...

## bench: benchmarks of the rules, planning and the entrypoint, and jetbake against buildx bake
bench: deps build
	$(GO) test -run '^$$' -bench . -benchmem ./compute_cap/ ./builder/plan/ ./entrypoint/
	$(GO) run ./builder/bench

fuzz:
	for t in FuzzParse FuzzParseCUDAVersion; do $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime 20s ./compute_cap/ || exit 1; done

clean:
	rm -rf $(BIN)/jetbake $(BIN)/linux-*
