//go:build tools

// Package buildx pins the buildx CLI that `make bench` compares jetbake
// against. It is its own module so that buildx's dependencies (its BuildKit
// among them) never enter jetbake's go.mod; `make bench` builds bin/buildx
// from here with `go build github.com/docker/buildx/cmd/buildx`.
package buildx

import _ "github.com/docker/buildx/cmd/buildx"
