package sccache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/builder/internal/standin/tei"
)

// Client is one run of the stand-in sccache: its command line, its own
// build, its environment and where its output goes.
type Client struct {
	// Build is what this sccache was installed with.
	Build Build
	// Env is the environment as os.Environ gives it; Getenv looks it up.
	Env    []string
	Getenv Getenv
	// Dir is the working folder; StateDir where the server's state lives.
	Dir, StateDir string
	Stdout        io.Writer
	Stderr        io.Writer
}

// Run runs the stand-in sccache with args and returns its exit status:
// --version, --show-stats (-s), --zero-stats (-z), --start-server,
// --stop-server, or a compiler command line to wrap.
func (c *Client) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(c.Stderr, "sccache "+c.Build.Version+" (jetbake stand-in)\nUsage: sccache [OPTIONS] <--dist-auth|--debug-preprocessor-cache|--dist-status|--show-stats|--show-adv-stats|--start-server|--stop-server|--zero-stats|--package-toolchain <EXE> <OUT>|CMD>")
		return 2
	}
	switch args[0] {
	case "--version", "-V":
		fmt.Fprintln(c.Stdout, "sccache "+c.Build.Version)
		return 0
	case "--start-server":
		_, err := c.server(ctx)
		return c.exit(err)
	case "--show-stats", "-s", "--stop-server", "-z", "--zero-stats":
		srv, err := c.server(ctx)
		if err != nil {
			return c.exit(err)
		}
		switch args[0] {
		case "-z", "--zero-stats":
			srv.Stats = Stats{}
			fmt.Fprintln(c.Stdout, "Statistics zeroed.")
			return c.exit(srv.Save(c.StateDir))
		case "--stop-server":
			fmt.Fprintln(c.Stdout, "Stopping sccache server...")
			srv.PrintStats(c.Stdout)
			return c.exit(Stop(c.StateDir))
		}
		srv.PrintStats(c.Stdout)
		return 0
	}
	return c.compile(ctx, args[0], args[1:])
}

// exit prints err as sccache's main does ("sccache: error: ...", status 2).
func (c *Client) exit(err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(c.Stderr, "sccache: error: "+err.Error())
	return 2
}

// server returns the running server, starting it when none runs: the
// configuration is read, the storage built and checked; any failure there
// is the server's startup failure, which every call reports.
func (c *Client) server(ctx context.Context) (*Server, error) {
	srv, err := LoadServer(c.StateDir)
	if err != nil || srv != nil {
		return srv, err
	}
	_, storage, backend, err := c.storage()
	if err != nil {
		return nil, err
	}
	readOnly, err := Check(ctx, storage, c.Stderr)
	if err != nil {
		return nil, startupError(err)
	}
	srv = &Server{Backend: backend, Location: storage.Location(), ReadOnly: readOnly, Version: c.Build.Version}
	return srv, srv.Save(c.StateDir)
}

func startupError(err error) error {
	return fmt.Errorf("Server startup failed: %w\nRun with SCCACHE_LOG=debug SCCACHE_NO_DAEMON=1 to get more information", err)
}

// storage reads the configuration and opens the backend it names.
func (c *Client) storage() (Config, Storage, string, error) {
	home, _ := c.Getenv("HOME")
	cfg, err := FromEnv(c.Getenv, home)
	if err != nil {
		return cfg, nil, "", err
	}
	backend := cfg.Backend(c.Build.Features)
	s, err := Open(cfg, backend, c.Build, c.Getenv)
	if err != nil {
		return cfg, nil, "", startupError(err)
	}
	return cfg, s, backend, nil
}

// cannotCache is why sccache does not cache a rustc call
// (src/compiler/rust.rs, parse_arguments), "" when it does.
func cannotCache(r tei.Rustc) string {
	switch {
	case r.Input == "-" || len(r.Prints) > 0:
		return "-"
	case r.Input == "":
		return "missing input"
	case r.Incremental:
		return "incremental"
	case len(r.Types) == 0:
		return "crate-type"
	}
	for _, t := range r.Types {
		if t != "lib" && t != "rlib" && t != "staticlib" {
			return "crate-type"
		}
	}
	return ""
}

// entry is a cached compilation: its output files by name.
type entry struct {
	Outputs map[string][]byte `json:"outputs"`
}

// compile wraps one compiler call: a hit writes the cached outputs, a miss
// runs the compiler and stores what it wrote.
func (c *Client) compile(ctx context.Context, compiler string, args []string) int {
	srv, err := c.server(ctx)
	if err != nil {
		return c.exit(err)
	}
	_, storage, _, err := c.storage()
	if err != nil {
		return c.exit(err)
	}
	defer func() {
		if err := srv.Save(c.StateDir); err != nil {
			fmt.Fprintln(c.Stderr, "sccache: error: "+err.Error())
		}
	}()
	srv.Stats.Requests++
	r, perr := tei.ParseRustc(args)
	reason := cannotCache(r)
	if filepath.Base(compiler) != "rustc" {
		reason = "unsupported compiler"
	} else if perr != nil {
		reason = "argument parse"
	}
	rec := Record{Crate: r.Crate, Kind: kindOf(r)}
	if reason != "" {
		srv.Stats.NonCacheable++
		if srv.Stats.Reasons == nil {
			srv.Stats.Reasons = map[string]int{}
		}
		srv.Stats.Reasons[reason]++
		rec.Result, rec.Reason = "not cacheable", "("+reason+")"
		if r.Input != "-" && len(r.Prints) == 0 {
			srv.Stats.Compiles = append(srv.Stats.Compiles, rec)
		}
		return c.runCompiler(compiler, args)
	}
	srv.Stats.Executed++
	key, err := c.key(srv, compiler, r)
	if err != nil {
		return c.exit(err)
	}
	data, err := storage.Get(ctx, key)
	if err == nil {
		if err := c.writeOutputs(r, data); err == nil {
			srv.Stats.Hits++
			rec.Result = "hit"
			srv.Stats.Compiles = append(srv.Stats.Compiles, rec)
			return 0
		}
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		srv.Stats.ReadErrors++
	}
	if code := c.runCompiler(compiler, args); code != 0 {
		return code
	}
	srv.Stats.Misses++
	rec.Result = "miss"
	srv.Stats.Compiles = append(srv.Stats.Compiles, rec)
	if srv.ReadOnly {
		return 0
	}
	data, err = c.readOutputs(r)
	if err == nil {
		err = storage.Put(ctx, key, data)
	}
	if err != nil {
		srv.Stats.WriteErrors++ // sccache logs it and goes on
	}
	return 0
}

func kindOf(r tei.Rustc) string {
	if len(r.Types) == 1 {
		return r.Types[0]
	}
	return strings.Join(r.Types, ",")
}

// runCompiler runs the compiler with args, as sccache runs it on a miss.
// The stand-in images' rustc is tei.RunRustc, which runs in this process,
// sparing a process start under QEMU; any other compiler runs as a process.
func (c *Client) runCompiler(compiler string, args []string) int {
	if filepath.Base(compiler) == "rustc" {
		return tei.RunRustc(args, c.Dir, tei.EnvLookup(c.Env), c.Stdout, c.Stderr)
	}
	cmd := exec.Command(compiler, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.Dir, c.Env, c.Stdout, c.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		return c.exit(fmt.Errorf("failed to execute compile: %w", err))
	}
	return 0
}

func (c *Client) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Dir, p)
}

// key is the cache key of a rustc call, from what sccache hashes
// (src/compiler/rust.rs, generate_hash_key): the compiler's version, the
// arguments but --extern, -L and --out-dir (--cfg sorted, at the end), the
// sources rustc's dep-info lists, the --extern files, the env-deps'
// values, the CARGO_ variables but CARGO_MAKEFLAGS and CARGO_REGISTRIES_*,
// and the working folder.
func (c *Client) key(srv *Server, compiler string, r tei.Rustc) (string, error) {
	h := sha256.New()
	version, ok := srv.Compilers[compiler]
	if !ok {
		var out bytes.Buffer
		if filepath.Base(compiler) != "rustc" || tei.RunRustc([]string{"-vV"}, c.Dir, c.Getenv, &out, io.Discard) != 0 {
			return "", fmt.Errorf("failed to execute compile: %s -vV failed", compiler)
		}
		if srv.Compilers == nil {
			srv.Compilers = map[string]string{}
		}
		version = out.String()
		srv.Compilers[compiler] = version
	}
	fmt.Fprintf(h, "compiler %s\n", version)
	var cfgs []string
	for i := 0; i < len(r.Args); i++ {
		switch a := r.Args[i]; a {
		case "--extern", "-L", "--out-dir":
			i++
		case "--cfg":
			if i+1 < len(r.Args) {
				cfgs = append(cfgs, r.Args[i+1])
			}
			i++
		default:
			fmt.Fprintf(h, "arg %s\n", a)
		}
	}
	slices.Sort(cfgs)
	fmt.Fprintf(h, "cfg %s\n", strings.Join(cfgs, "\x00"))
	files, envDeps, err := tei.CrateSources(c.abs(r.Input))
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if err := hashFile(h, "source", f); err != nil {
			return "", err
		}
	}
	names := make([]string, 0, len(r.Externs))
	for n := range r.Externs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := hashFile(h, "extern "+n, c.abs(r.Externs[n])); err != nil {
			return "", err
		}
	}
	for _, e := range envDeps {
		v, _ := c.Getenv(e)
		fmt.Fprintf(h, "env-dep %s=%s\n", e, v)
	}
	env := slices.Clone(c.Env)
	slices.Sort(env)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CARGO_") && k != "CARGO_MAKEFLAGS" && !strings.HasPrefix(k, "CARGO_REGISTRIES_") {
			fmt.Fprintf(h, "env %s\n", kv)
		}
	}
	fmt.Fprintf(h, "cwd %s\n", c.Dir)
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(h io.Writer, what, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("failed to hash %s: %w", path, err)
	}
	fmt.Fprintf(h, "%s %x\n", what, sha256.Sum256(data))
	return nil
}

// readOutputs packs what the compiler wrote for r.
func (c *Client) readOutputs(r tei.Rustc) ([]byte, error) {
	e := entry{Outputs: map[string][]byte{}}
	for _, name := range r.Outputs() {
		data, err := os.ReadFile(filepath.Join(c.abs(r.OutDir), name))
		if err != nil {
			return nil, err
		}
		e.Outputs[name] = data
	}
	return json.Marshal(e)
}

// writeOutputs puts a cached entry's files where the compiler would have.
func (c *Client) writeOutputs(r tei.Rustc, data []byte) error {
	var e entry
	if err := json.Unmarshal(data, &e); err != nil {
		return err
	}
	dir := c.abs(r.OutDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range r.Outputs() {
		content, ok := e.Outputs[name]
		if !ok {
			return fmt.Errorf("the cached entry has no %s", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
