package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/jetbake/jetbake/entrypoint/detect"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr, syscall.Exec))
}

// execFunc replaces the process with the program at path, as syscall.Exec.
type execFunc func(path string, argv, env []string) error

// run is the whole entrypoint: it reads the image description, detects the
// GPU, chooses a binary and execs it, or explains. It returns the exit
// status; after a successful exec it does not return in production.
func run(ctx context.Context, args, env []string, stdout, stderr io.Writer, exec execFunc) int {
	cfg := newConfig(args, env)
	img, imgErr := detect.LoadImage(cfg.Root, cfg.Table)
	if imgErr != nil && !cfg.Explain {
		return fail(stderr, imgErr.Error())
	}
	if img != nil {
		cfg.Table = img.Table // with the facts the image declares
	}
	host := detect.Detect(ctx, &cfg.Config, detect.WantDriver(&cfg.Config, img))
	var d detect.Decision
	if imgErr != nil {
		d.Failure = imgErr.Error()
	} else {
		d = detect.Decide(&cfg.Config, img, host)
	}
	if cfg.Explain {
		return explain(stdout, stderr, &cfg, img, host, &d)
	}
	if d.Failure != "" {
		return fail(stderr, d.Failure)
	}
	argv := img.Argv(d.Choice, cfg.routerArgs)
	if err := exec(cfg.Root.Path(d.Choice), argv, d.Env); err != nil {
		return fail(stderr, detect.ExecFailedMessage(&d, host, err))
	}
	return 0
}

// fail prints the failure paragraph and returns exit status 1.
func fail(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "jetbake-entrypoint: %s\n", msg)
	return 1
}
