package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr, syscall.Exec))
}

// execFunc replaces the process with the program at path, as syscall.Exec.
type execFunc func(path string, argv, env []string) error

// run is the whole entrypoint: it reads the image description, detects the
// GPU, chooses a binary and execs it, or explains, or with --probe writes
// hardware evidence. It returns the exit
// status; after a successful exec it does not return in production.
func run(ctx context.Context, args, env []string, stdout, stderr io.Writer, exec execFunc) int {
	cfg := newConfig(args, env)
	if cfg.probe {
		return probeMain(ctx, &cfg, stdout, stderr, probeSetup{now: time.Now(), arch: runtime.GOARCH})
	}
	img, imgErr := loadImageWith(cfg.root, cfg.table)
	if imgErr != nil && !cfg.explain {
		return fail(stderr, imgErr.Error())
	}
	host := detect(ctx, &cfg, wantDriver(&cfg, img))
	var d decision
	if imgErr != nil {
		d.Failure = imgErr.Error()
	} else {
		d = decide(&cfg, img, host)
	}
	if cfg.explain {
		return explain(stdout, stderr, &cfg, img, host, &d)
	}
	if d.Failure != "" {
		return fail(stderr, d.Failure)
	}
	argv := append([]string{d.Choice}, cfg.routerArgs...)
	if err := exec(cfg.root.Path(d.Choice), argv, d.Env); err != nil {
		return fail(stderr, execFailedMessage(&d, host, err))
	}
	return 0
}

// fail prints the failure paragraph and returns exit status 1.
func fail(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "jetbake-entrypoint: %s\n", msg)
	return 1
}
