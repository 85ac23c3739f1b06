// Command benchcmd is the comparison half of `make bench`: on one buildkitd it
// builds matrices (the shipped one and synthetic ones of many releases, all
// with stand-in bases and router) with `jetbake build` and with an equivalent
// `buildx bake` file, in bake's default output mode and with
// rewrite-timestamp=true. Each tool builds cold (after pruning the daemon's
// cache, into a registry holding only the bases) and warm (the same build
// again), in interleaved rounds whose order rotates, and the bench prints
// medians with min-max, time per release, jetbake's peak memory, the ratios
// to both bake modes and the goals. Each tool gets its own registry so none
// finds another's layers already pushed. Every matrix is built on each build
// path of the routers (-paths): under QEMU, and cross-compiled on the build
// platform in the releases' cross build bases (issue 42); the bench then
// sets the paths side by side for each tool.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/moby/buildkit/client"

	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/plan"
)

// settle is the pause after a prune and a sync, before a cold build.
const settle = time.Second

// benchEpoch is the SOURCE_DATE_EPOCH of every build, the same for both tools.
const benchEpoch = 1767225600 // 2026-01-01

// benchRevision is the source revision both tools stamp on the images when
// the checkout's commit cannot be read.
const benchRevision = "0123456789abcdef0123456789abcdef01234567"

// config is the command line.
type config struct {
	root          string
	jetbake       string
	buildx        string
	entrypointDir string
	revision      string
	cold          int
	warm          int
	sizes         []size
	tools         []string
	// paths are the build paths of the routers, pathQEMU and/or pathCross.
	paths []string
	// standins make the stand-in bases, once per bench (newStandins).
	standins *standins
	// cacheHome is jetbake's XDG_CACHE_HOME, the bench's own, so that its
	// cold builds can clear jetbake's verdict store without touching the user's.
	cacheHome string
	// registries are each tool's registry address on each path, the same in
	// every round.
	registries  map[string]*string
	jetbakeArgs []string
	verbose     bool
	timings     bool
	keep        bool
}

func main() {
	var cfg config
	flag.StringVar(&cfg.jetbake, "jetbake", "", "jetbake binary (default: bin/jetbake of the checkout)")
	flag.StringVar(&cfg.buildx, "buildx", "", "buildx binary (default: bin/buildx of the checkout)")
	flag.StringVar(&cfg.entrypointDir, "entrypoint-dir", "", "folder with the linux/arm64 jetbake-entrypoint, jetbake-cudaprobe and jetbake-probe (default: bin/linux-arm64)")
	flag.IntVar(&cfg.cold, "cold", 3, "cold rounds; each prunes the cache before each tool's cold build and rotates which tool goes first")
	flag.IntVar(&cfg.warm, "warm", 3, "warm builds per tool and round; the table shows the median")
	sizes := flag.String("sizes", "shipped,5,20", "matrices to build: \"shipped\" (matrix.json) and synthetic release counts, comma-separated")
	toolList := flag.String("tools", strings.Join(tools, ","), "tools to compare, comma-separated: jetbake, bake (default output), bake-rts (rewrite-timestamp=true)")
	pathList := flag.String("paths", strings.Join(buildPaths, ","), "build paths of the routers, comma-separated: qemu (the build base under QEMU), cross (cross-compiled on the build platform in each release's cross build base)")
	extra := flag.String("jetbake-args", "", "extra arguments for 'jetbake build', space-separated, e.g. \"--parallel 5\"")
	flag.BoolVar(&cfg.verbose, "v", false, "show the tools' output and jetbake's phase timings")
	flag.BoolVar(&cfg.timings, "timings", false, "show jetbake's phase timings of every build")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the work folder (bake file, matrix, daemon log) and print its path")
	flag.Parse()
	cfg.jetbakeArgs = strings.Fields(*extra)
	cfg.registries = map[string]*string{}
	cfg.timings = cfg.timings || cfg.verbose
	var err error
	if cfg.tools, err = parseTools(*toolList); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if cfg.sizes, err = parseSizes(*sizes); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if cfg.paths, err = parsePaths(*pathList); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err = run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, out io.Writer) error {
	if err := cfg.resolve(); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "jetbake-bench-")
	if err != nil {
		return err
	}
	if cfg.keep {
		fmt.Fprintf(out, "==> work folder %s (kept)\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	cfg.cacheHome = filepath.Join(work, "cache")
	// This Env only holds the daemon; every tool and round gets its own registry.
	env, err := e2e.Start(cfg.root, filepath.Join(work, "daemon"))
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.CheckPrerequisites(); err != nil {
		return err
	}
	cfg.standins = newStandins(env.Kit())
	if err := env.StartDaemon(ctx, filepath.Join(work, "buildkitd"), false); err != nil {
		return err
	}
	if err := daemon.CheckPlatform(ctx, env.Daemon.Client, plan.Platform); err != nil {
		return err
	}
	var bx *buildx
	if len(cfg.tools) > 1 {
		bx = &buildx{bin: cfg.buildx, dir: filepath.Join(work, "buildx"), addr: env.Daemon.Addr, verbose: cfg.verbose}
		if err := bx.create(ctx); err != nil {
			return err
		}
	}
	if err := printHeader(ctx, out, env.Daemon.Client, bx); err != nil {
		return err
	}
	var summaries []sizeSummary
	var crossed []pathSummary
	var broken []error
	for _, sz := range cfg.sizes {
		// results are the tools' measures by path, then by tool.
		results := map[string]map[string]*timings{}
		for _, path := range cfg.paths {
			results[path] = map[string]*timings{}
			for _, t := range cfg.tools {
				results[path][t] = &timings{}
			}
		}
		fmt.Fprintf(out, "\n==> %s\n", sz)
		for round := range cfg.cold {
			// The paths take turns going first, as the tools do.
			for _, i := range roundOrder(len(cfg.paths), round) {
				path := cfg.paths[i]
				dir := filepath.Join(work, sz.name, path, fmt.Sprintf("round%d", round))
				if err := runRound(ctx, cfg, env, bx, dir, sz, path, round, results[path], out); err != nil {
					return fmt.Errorf("%s, %s: %w", sz, pathTitles[path], err)
				}
			}
		}
		for _, path := range cfg.paths {
			summaries = append(summaries, printTable(out, sz, path, cfg.tools, results[path]))
			broken = append(broken, brokenComparison(label(sz, path), cfg.tools, results[path])...)
			broken = append(broken, unstableDigests(label(sz, path), results[path][toolJetbake])...)
		}
		if len(cfg.paths) == len(buildPaths) {
			crossed = append(crossed, printPaths(out, sz, cfg.tools, results))
		}
	}
	fmt.Fprintf(out, "\n==> done%s\n", loadAverage())
	printGoals(out, summaries)
	printCrossGoal(out, crossed)
	printRatioTable(out, summaries, cfg.tools[1:])
	printPathTable(out, crossed)
	if len(broken) > 0 {
		return fmt.Errorf("the comparison is broken:\n%w", errors.Join(broken...))
	}
	return nil
}

// registryAddr is where tool's registry of path listens, "" until its
// first round.
func (cfg config) registryAddr(tool, path string) *string {
	key := tool + "/" + path
	if cfg.registries[key] == nil {
		cfg.registries[key] = new(string)
	}
	return cfg.registries[key]
}

// resolve fills the binaries' defaults and checks they exist.
func (cfg *config) resolve() error {
	root, err := e2e.FindRepoRoot()
	if err != nil {
		return err
	}
	cfg.root = root
	if cfg.revision, _ = e2e.GitSource(root); cfg.revision == "" {
		cfg.revision = benchRevision
	}
	bin := filepath.Join(root, "bin")
	def := func(v *string, path string) {
		if *v == "" {
			*v = path
		}
	}
	def(&cfg.jetbake, filepath.Join(bin, "jetbake"))
	def(&cfg.buildx, filepath.Join(bin, "buildx"))
	def(&cfg.entrypointDir, filepath.Join(bin, "linux-arm64"))
	if cfg.cold < 1 || cfg.warm < 1 {
		return fmt.Errorf("-cold %d, -warm %d: both must be at least 1", cfg.cold, cfg.warm)
	}
	need := map[string]string{
		cfg.jetbake: "run 'make build'",
		filepath.Join(cfg.entrypointDir, "jetbake-entrypoint"): "run 'make build'",
		filepath.Join(cfg.entrypointDir, "jetbake-cudaprobe"):  "run 'make build'",
		filepath.Join(cfg.entrypointDir, "jetbake-probe"):      "run 'make build'",
	}
	if len(cfg.tools) > 1 {
		need[cfg.buildx] = "run 'make bin/buildx' (it builds buildx from builder/bench/buildx)"
	}
	var errs []error
	for path, fix := range need {
		if _, err := os.Stat(path); err != nil {
			errs = append(errs, fmt.Errorf("%s is missing: %s", path, fix))
		}
	}
	return errors.Join(errs...)
}

// printHeader says what is compared, on what.
func printHeader(ctx context.Context, out io.Writer, c *client.Client, bx *buildx) error {
	info, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("buildkitd info: %w", err)
	}
	bxVersion := "no buildx"
	if bx != nil {
		if bxVersion, err = bx.version(ctx); err != nil {
			return err
		}
	}
	version := info.BuildkitVersion.Version
	if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(version, "v0.0.0") {
		for _, m := range bi.Deps {
			if m.Path == "github.com/moby/buildkit" {
				version += " (go.mod pins " + m.Version + ")"
			}
		}
	}
	fmt.Fprintf(out, "==> one buildkitd %s (runc worker, linux/arm64 through QEMU), %d CPUs%s; %s through its remote driver\n",
		version, runtime.NumCPU(), loadAverage(), bxVersion)
	return nil
}

// loadAverage is ", load average 1.00 0.50 0.25" from /proc/loadavg, or
// "": other work on the machine slows every tool, and the ratios compare
// tools that ran minutes apart.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return ", load average " + strings.Join(f[:3], " ")
	}
	return ""
}

// runRound gives each tool a fresh registry with the stand-in bases, prunes
// the cache, builds cold on path, then warm cfg.warm times. The tools' order
// changes from round to round (see roundOrder).
func runRound(ctx context.Context, cfg config, env *e2e.Env, bx *buildx, dir string, sz size, path string, round int,
	results map[string]*timings, out io.Writer) error {
	var order []*contender
	defer func() {
		for _, c := range order {
			c.close()
		}
	}()
	jb, err := newJetbake(ctx, cfg, env.Daemon.Addr, filepath.Join(dir, toolJetbake), sz, path)
	if err != nil {
		return err
	}
	order = append(order, jb)
	results[toolJetbake].releases = len(jb.plan.Releases)
	for _, name := range cfg.tools[1:] {
		bk, err := newBake(ctx, cfg, bx, filepath.Join(dir, name), sz, path, name == toolBakeRTS)
		if err != nil {
			return err
		}
		order = append(order, bk)
	}
	if round == 0 {
		fmt.Fprintf(out, "    %s: %d releases, %d router builds\n", pathTitles[path], len(jb.plan.Releases), routerBuilds(jb.plan))
	}
	for _, i := range roundOrder(len(order), round) {
		c := order[i]
		if err := buildTool(ctx, cfg, env, c, round, results[c.name], out); err != nil {
			return err
		}
	}
	if round == 0 {
		for _, bk := range order[1:] {
			if len(results[bk.name].failures) > 0 {
				fmt.Fprintf(out, "    not compared with %s: it failed a build of this round\n", bk.name)
				continue
			}
			summary, err := compareImages(ctx, jb, bk)
			if err != nil {
				return fmt.Errorf("jetbake's and %s's images differ: %w", bk.name, err)
			}
			fmt.Fprintf(out, "    %s: same work as %s: %s\n", pathTitles[path], bk.name, summary)
		}
	}
	return nil
}

// buildTool prunes the daemon's cache and clears the tool's own (see
// coldStart), builds c cold, then warm cfg.warm times. A failed jetbake build stops the bench; a failed build of a peer
// is recorded and the bench goes on, so that a peer that cannot build a
// matrix shows as such: a failed cold build leaves the round out of the
// ratios, a failed warm build the round's warm ratio.
func buildTool(ctx context.Context, cfg config, env *e2e.Env, c *contender, round int, t *timings, out io.Writer) error {
	if err := coldStart(ctx, env.Daemon.Client, c); err != nil {
		return err
	}
	// failed stops the bench on jetbake's failure (or an interrupt); a
	// peer's failure is recorded by record and shown, and the bench goes on.
	failed := func(what string, err error, record func(string)) error {
		if c.name == toolJetbake || ctx.Err() != nil {
			return fmt.Errorf("round %d, %s %s: %w", round+1, what, c.name, err)
		}
		record(fmt.Sprintf("round %d, %s: %v", round+1, what, err))
		fmt.Fprintf(out, " FAILED (%s)\n", firstLine(err))
		return nil
	}
	fmt.Fprintf(out, "    round %d %-5s %-8s cold", round+1, c.path, c.name)
	res, err := c.build(ctx)
	if err != nil {
		return failed("cold", err, t.failCold)
	}
	t.addCold(res)
	fmt.Fprintf(out, " %6.2fs  warm", res.wall.Seconds())
	var warm []time.Duration
	var warmTimings *progress.Timings
	defer func() { t.warm = append(t.warm, warm) }()
	for i := range cfg.warm {
		res, err := c.build(ctx)
		if err != nil {
			warm = nil // the round's warm builds are left out of the ratios
			return failed(fmt.Sprintf("warm #%d", i+1), err, t.fail)
		}
		warm = append(warm, res.wall)
		t.addRSS(res.maxRSS)
		t.checkDigests(res.digests)
		warmTimings = res.timings
		fmt.Fprintf(out, " %.2fs", res.wall.Seconds())
	}
	fmt.Fprintf(out, "  (peak RSS %s)\n", mib(t.maxRSS))
	if cfg.timings && res.timings != nil && warmTimings != nil {
		fmt.Fprintf(out, "      %s's phases, cold build:\n", c.name)
		_ = res.timings.WriteTable(indent(out, "      "))
		fmt.Fprintf(out, "      %s's phases, last warm build:\n", c.name)
		_ = warmTimings.WriteTable(indent(out, "      "))
	}
	return nil
}

// firstLine is the first line of err's message.
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// roundOrder is the order of n tools in a round: round r starts with tool
// r mod n and goes on up the list, then, from round n on, down it, so that
// in the first n rounds each tool goes first once, and over 2n rounds
// each tool follows each other tool. A cold build pays for what the build
// before it left to the disk (bake with rewrite-timestamp writes every
// layer again).
func roundOrder(n, round int) []int {
	first, step := round%n, 1
	if (round/n)%2 == 1 {
		step = n - 1 // one down, modulo n
	}
	out := make([]int, n)
	for i := range n {
		out[i] = (first + i*step) % n
	}
	return out
}

func routerBuilds(p *plan.Plan) int {
	n := 0
	for _, r := range p.Releases {
		n += len(r.Targets)
	}
	return n
}
