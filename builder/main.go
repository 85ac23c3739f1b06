// Command jetbake builds text-embeddings-router images for NVIDIA Jetson
// from matrix.json. See `jetbake --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/jetbake/jetbake/builder/cli"
)

// version is set at link time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, cli.WithVersion(version))
	stop()
	os.Exit(code)
}
