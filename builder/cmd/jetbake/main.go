// Command jetbake builds text-embeddings-router images for NVIDIA Jetson
// from matrix.json. Install it with
//
//	go install github.com/jetbake/jetbake/builder/cmd/jetbake@latest
//
// See `jetbake --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/jetbake/jetbake/builder/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
