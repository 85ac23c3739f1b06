package detect

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// Environment variables and names detection knows.
const (
	envSysroot = "JETBAKE_SYSROOT"
	// EnvOverride is the manual compute capability, such as "8.7".
	EnvOverride = "JETBAKE_COMPUTE_CAP"
	// EnvProbe is the path of jetbake-cudaprobe, when it is not next to
	// the running executable.
	EnvProbe      = "JETBAKE_CUDAPROBE"
	envSkipL4T    = "JETBAKE_SKIP_L4T_CHECK"
	envLibraryDir = "LD_LIBRARY_PATH"
	envPath       = "PATH"
	probeName     = "jetbake-cudaprobe"
)

// Config is what detection and the choice are asked to do.
type Config struct {
	// Root is the directory every host and image path is read under.
	Root host.Root
	// Table is the table of Jetson facts: the shipped one, or in tests one
	// with rows added.
	Table *computecap.Table
	// Env is the process environment, passed on to the router.
	Env Environ
	// Explain runs every source, not only up to the first answer.
	Explain bool
	// SkipL4T turns off the host rule.
	SkipL4T bool
	// Full asks the driver itself (cuInit) even on a Jetson whose soc_id
	// names its SoC; FullWhy says why, for Host.PathWhy. The evidence probe
	// sets it: its evidence needs the driver's own answer.
	Full    bool
	FullWhy string
}

// NewConfig reads the environment: JETBAKE_SYSROOT (the root, default
// "/") and JETBAKE_SKIP_L4T_CHECK, with the shipped table.
func NewConfig(env []string) Config {
	cfg := Config{Root: "/", Table: computecap.DefaultTable(), Env: Environ(env)}
	if r := cfg.Env.Get(envSysroot); r != "" {
		cfg.Root = host.Root(r)
	}
	cfg.SkipL4T = Truthy(cfg.Env.Get(envSkipL4T))
	return cfg
}

// ProbePath is where jetbake-cudaprobe is: JETBAKE_CUDAPROBE, or next to
// the running executable. It is a path on the real filesystem, not under
// the root.
func (c *Config) ProbePath() string {
	if p := c.Env.Get(EnvProbe); p != "" {
		return p
	}
	self, err := os.Executable()
	if err != nil {
		return filepath.Join("/usr/local/bin", probeName)
	}
	return filepath.Join(filepath.Dir(self), probeName)
}

// Truthy reports whether an environment value means yes.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Environ is a process environment as "KEY=value" entries.
type Environ []string

// Lookup returns the first value of key, as the C library's getenv does.
func (e Environ) Lookup(key string) (string, bool) {
	for _, kv := range e {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Get returns the value of key, or "" when it is not set.
func (e Environ) Get(key string) string {
	v, _ := e.Lookup(key)
	return v
}

// With returns a copy of e in which key has the single value value.
func (e Environ) With(key, value string) Environ {
	return append(e.Without(key), key+"="+value)
}

// Without returns a copy of e with no entry for key.
func (e Environ) Without(key string) Environ {
	out := make(Environ, 0, len(e)+1)
	for _, kv := range e {
		if k, _, ok := strings.Cut(kv, "="); ok && k == key {
			continue
		}
		out = append(out, kv)
	}
	return out
}
