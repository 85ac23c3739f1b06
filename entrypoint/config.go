package main

import (
	"os"
	"path/filepath"
	"strings"

	computecap "github.com/jetbake/jetbake/compute_cap"
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
	outFlag       = "--out"
	probeName     = "jetbake-cudaprobe"
)

// config is what the command line and the environment ask for.
type config struct {
	// root is the directory every host and image path is read under.
	root sysroot
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
	// out is the file the probe writes its evidence to; "" for stdout.
	out string
	// usageErr is set when the probe's arguments cannot be read.
	usageErr string
}

// newConfig reads args (without the program name) and env.
func newConfig(args, env []string) config {
	cfg := config{root: "/", table: computecap.DefaultTable(), env: environ(env), routerArgs: args}
	if r := cfg.env.get(envSysroot); r != "" {
		cfg.root = sysroot(r)
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

// readProbeArgs reads what follows --probe: --smoke, --kernel and --out
// FILE (or --out=FILE), in any order. Anything else is a usage error: in probe mode
// no argument goes to the router.
func (c *config) readProbeArgs(args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == smokeFlag:
			c.smoke = true
		case a == kernelFlag:
			c.kernel = true
		case a == outFlag && i+1 < len(args) && args[i+1] != "":
			c.out = args[i+1]
			i++
		case strings.HasPrefix(a, outFlag+"=") && len(a) > len(outFlag)+1:
			c.out = a[len(outFlag)+1:]
		case a == outFlag || a == outFlag+"=":
			c.usageErr = outFlag + " needs a file name, as in " + probeFlag + " " + outFlag + " evidence.json"
			return
		default:
			c.usageErr = probeFlag + " takes only " + smokeFlag + ", " + kernelFlag + " and " + outFlag + " FILE after it, not " + quoteShort(a) +
				"; run it as: jetbake-entrypoint " + probeFlag + " [" + smokeFlag + "] [" + kernelFlag + "] [" + outFlag + " FILE]"
			return
		}
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
