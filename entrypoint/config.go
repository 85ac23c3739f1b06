package main

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// Environment variables and names the entrypoint knows.
const (
	envSysroot    = "JETBAKE_SYSROOT"
	envOverride   = "JETBAKE_COMPUTE_CAP"
	envProbe      = "JETBAKE_CUDAPROBE"
	envSkipL4T    = "JETBAKE_SKIP_L4T_CHECK"
	envExplain    = "JETBAKE_EXPLAIN"
	envLibraryDir = "LD_LIBRARY_PATH"
	envPath       = "PATH"
	envDigest     = evidencespec.DigestFromEnv
	explainFlag   = "--explain"
	probeFlag     = "--probe"
	smokeFlag     = "--smoke"
	kernelFlag    = "--kernel"
	serveFlag     = "--serve"
	downloadFlag  = "--allow-download"
	loadFlag      = "--load-timeout"
	outFlag       = "--out"
	probeName     = "jetbake-cudaprobe"
)

// config is what the command line and the environment ask for.
type config struct {
	// root is the directory every host and image path is read under.
	root host.Root
	// table is the table of Jetson facts: the shipped one, or in tests one
	// with rows added.
	table *computecap.Table
	// env is the process environment, passed on to the router.
	env environ
	// explain prints the decision instead of acting on it.
	explain bool
	// routerArgs are the arguments passed to the router.
	routerArgs []string
	// skipL4T turns off the host L4T check.
	skipL4T bool
	// probe writes hardware evidence instead of starting the router.
	probe bool
	// smoke runs the chosen binary's smoke test during the probe.
	smoke bool
	// kernel runs the CUDA kernel check during the probe.
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
	// out is the file the probe writes its evidence to; "" for stdout.
	out string
	// usageErr is set when the probe's arguments cannot be read.
	usageErr string
}

// newConfig reads args (without the program name) and env.
func newConfig(args, env []string) config {
	cfg := config{root: "/", table: computecap.DefaultTable(), env: environ(env), routerArgs: args}
	if r := cfg.env.get(envSysroot); r != "" {
		cfg.root = host.Root(r)
	}
	if len(args) > 0 {
		switch args[0] {
		case explainFlag:
			cfg.explain, cfg.routerArgs = true, args[1:]
		case probeFlag:
			cfg.probe, cfg.routerArgs = true, nil
			cfg.readProbeArgs(args[1:])
		}
	}
	cfg.explain = cfg.explain || truthy(cfg.env.get(envExplain))
	cfg.skipL4T = truthy(cfg.env.get(envSkipL4T))
	return cfg
}

// readProbeArgs reads what follows --probe: --smoke, --kernel, --serve
// MODEL, --allow-download, --load-timeout DURATION and --out FILE (each
// flag with a value also as --flag=VALUE), in any order. Anything else is
// a usage error: in probe mode no argument goes to the router.
func (c *config) readProbeArgs(args []string) {
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		switch {
		case args[i] == smokeFlag:
			c.smoke = true
		case args[i] == kernelFlag:
			c.kernel = true
		case args[i] == downloadFlag:
			c.allowDownload = true
		case name == outFlag || name == serveFlag || name == loadFlag:
			if !inline && i+1 < len(args) {
				value = args[i+1]
				i++
			}
			if value == "" {
				c.usageErr = name + " needs a value, as in " + probeUsage
				return
			}
			c.setProbeValue(name, value)
			if c.usageErr != "" {
				return
			}
		default:
			c.usageErr = probeFlag + " takes only " + smokeFlag + ", " + kernelFlag + ", " + serveFlag + " MODEL, " + downloadFlag +
				", " + loadFlag + " DURATION and " + outFlag + " FILE after it, not " + computecap.QuoteShort(args[i]) + "; run it as: " + probeUsage
			return
		}
	}
}

// probeUsage is how --probe is run.
const probeUsage = "jetbake-entrypoint " + probeFlag + " [" + smokeFlag + "] [" + kernelFlag + "] [" + serveFlag + " /model [" +
	downloadFlag + "] [" + loadFlag + " 5m]] [" + outFlag + " evidence.json]"

// setProbeValue sets the flag name's value.
func (c *config) setProbeValue(name, value string) {
	switch name {
	case outFlag:
		c.out = value
	case serveFlag:
		c.serve = value
	case loadFlag:
		d, err := time.ParseDuration(value)
		if err != nil || d < time.Second || d > time.Hour {
			c.usageErr = loadFlag + " " + computecap.QuoteShort(value) + " is not a duration from 1s to 1h, such as 5m or 90s"
			return
		}
		c.loadTimeout = d.Round(time.Second)
	}
}

// probePath is where jetbake-cudaprobe is: JETBAKE_CUDAPROBE, or next to
// this executable. It is a path on the real filesystem, not under the root.
func (c *config) probePath() string {
	if p := c.env.get(envProbe); p != "" {
		return p
	}
	self, err := os.Executable()
	if err != nil {
		return filepath.Join("/usr/local/bin", probeName)
	}
	return filepath.Join(filepath.Dir(self), probeName)
}

// truthy reports whether an environment value means yes.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// environ is a process environment as "KEY=value" entries.
type environ []string

// lookup returns the first value of key, as the C library's getenv does.
func (e environ) lookup(key string) (string, bool) {
	for _, kv := range e {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// get returns the value of key, or "" when it is not set.
func (e environ) get(key string) string {
	v, _ := e.lookup(key)
	return v
}

// with returns a copy of e in which key has the single value value.
func (e environ) with(key, value string) environ {
	out := make(environ, 0, len(e)+1)
	for _, kv := range e {
		if k, _, ok := strings.Cut(kv, "="); ok && k == key {
			continue
		}
		out = append(out, kv)
	}
	return append(out, key+"="+value)
}

// without returns a copy of e with no entry for key.
func (e environ) without(key string) environ {
	out := make(environ, 0, len(e))
	for _, kv := range e {
		if k, _, ok := strings.Cut(kv, "="); ok && k == key {
			continue
		}
		out = append(out, kv)
	}
	return out
}
