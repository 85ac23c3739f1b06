package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/detect"
)

// name is the probe's name, the first word of every line it prints.
const name = "jetbake-probe"

// usage is how the probe is run.
const usage = name + " [--smoke] [--kernel] [--serve /model [--allow-download] [--load-timeout 5m]] [--out evidence.json]"

func main() {
	ps := probeSetup{now: time.Now(), arch: runtime.GOARCH}
	os.Exit(run(context.Background(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr, ps))
}

// config is what the command line and the environment ask for.
type config struct {
	// Config is what detection and the choice are asked to do.
	detect.Config
	// smoke runs the chosen binary's smoke test.
	smoke bool
	// kernel runs the CUDA kernel check.
	kernel bool
	// serve is the model (a folder in the container) the serving check
	// starts the router with; "" leaves the check out.
	serve string
	// allowDownload lets the serving check give the router a Hub id to
	// download; without it only a folder is served.
	allowDownload bool
	// loadTimeout bounds the serving check's wait for the router's health
	// route; 0 for defaultLoadTimeout.
	loadTimeout time.Duration
	// out is the file the evidence is written to; "" for stdout.
	out string
}

// run parses args and env, collects the evidence and returns the exit
// status: 0 for a pass, 1 when not, 2 for bad arguments.
func run(ctx context.Context, args, env []string, stdout, stderr io.Writer, ps probeSetup) int {
	cfg, err := parseArgs(args, env)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stdout, helpText)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v; run it as: %s\n", name, err, usage)
		return 2
	}
	return probeMain(ctx, &cfg, stdout, stderr, ps)
}

// parseArgs reads the flags (-flag and --flag alike, a value as --flag
// VALUE or --flag=VALUE) and the environment.
func parseArgs(args, env []string) (config, error) {
	cfg := config{Config: detect.NewConfig(env)}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&cfg.smoke, "smoke", false, "run the chosen binary with the image's smoke arguments")
	fs.BoolVar(&cfg.kernel, "kernel", false, "run a CUDA kernel on the GPU through the host's driver")
	fs.StringVar(&cfg.serve, "serve", "", "start the router with this model (a folder) and check that it serves")
	fs.BoolVar(&cfg.allowDownload, "allow-download", false, "let --serve give the router a Hub id to download")
	fs.Func("load-timeout", "how long --serve waits for the router to load (1s to 1h; default 5m)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > time.Hour {
			return fmt.Errorf("%s is not a duration from 1s to 1h, such as 5m or 90s", computecap.QuoteShort(v))
		}
		cfg.loadTimeout = d.Round(time.Second)
		return nil
	})
	fs.StringVar(&cfg.out, "out", "", "write the evidence to this file (through a temporary file and a rename), not stdout")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("%s takes flags only, not %s", name, computecap.QuoteShort(fs.Arg(0)))
	}
	return cfg, nil
}

// helpText is what --help prints.
const helpText = "usage: " + usage + `

Writes evidence that this image works on this Jetson, for 'jetbake evidence add':
JSON with an allow-listed profile of the host and the image, and each check
passed, failed or skipped. Exit status 0 for a pass, 1 otherwise, 2 for bad
arguments.

  --smoke                 run the chosen binary with the image's smoke arguments
  --kernel                run a CUDA kernel on the GPU through the host's driver
                          (in an app image the app check, such as torch on the
                          GPU, runs by itself)
  --serve MODEL           start the router with MODEL (a folder in the container)
                          and check that it serves embeddings
  --allow-download        let --serve give the router a Hub id to download
  --load-timeout DURATION how long --serve waits for the router to load (default 5m)
  --out FILE              write the evidence to FILE, not stdout`
