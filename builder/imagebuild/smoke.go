package imagebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// smokeDir is where the build-time smoke run writes what each router printed.
const smokeDir = "/jetbake-smoke"

// missingLib finds the library in the dynamic loader's sentence
// "error while loading shared libraries: libssl.so.3: cannot open ...".
var missingLib = regexp.MustCompile(`error while loading shared libraries: ([^:\s]+):`)

// smokeDefinition is the router's smoke run (router.smoke, e.g.
// --version) with every router binary on the runtime base, under QEMU on
// the building machine, plus a check that the base has a CA bundle. So a
// runtime base that lacks a library the router links (libssl) or the CA
// bundle it needs to download models fails the build, naming what is
// missing, instead of failing on the Jetson. Each binary is mounted
// read-only at its path in the image, from the router build's output:
// the same bytes, path, libraries and environment as in the assembled
// image, without waiting for the image's layers to be staged. The
// binaries run directly, not through the entrypoint, which needs a Jetson
// to choose one. It is nil when the router has no smoke command.
func (j *releaseJob) smokeDefinition(ctx context.Context, base llb.State, routers []llb.State, baseConfig []byte) (*llb.Definition, error) {
	if len(j.plan.Router.Smoke) == 0 {
		return nil, nil
	}
	var config ocispecs.Image
	if err := json.Unmarshal(baseConfig, &config); err != nil {
		return nil, fmt.Errorf("runtime base %s: config is not valid JSON: %w", j.release.RuntimeBase, err)
	}
	script := j.smokeScript()
	opts := []llb.RunOption{
		llb.Args(append([]string{"/bin/sh", "-c", script, "jetbake-smoke"}, j.plan.Router.Smoke...)),
		llb.WithCustomNamef("smoke: %s %s on the runtime base", j.plan.Router.Name, strings.Join(j.plan.Router.Smoke, " ")),
	}
	for _, kv := range config.Config.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			opts = append(opts, llb.AddEnv(k, v))
		}
	}
	// In a fixed order: the run's definition, and so its cache key, must
	// be the same on every build.
	for _, k := range slices.Sorted(maps.Keys(j.plan.Router.Env)) {
		opts = append(opts, llb.AddEnv(k, j.plan.Router.Env[k]))
	}
	for i, t := range j.release.Targets {
		// A mount follows a link at the source path, as the copy into the
		// image does (see runtimeState).
		opts = append(opts, llb.AddMount(t.Path, routers[i], llb.SourcePath(j.plan.Router.Output), llb.Readonly))
	}
	out := base.Run(opts...).AddMount(smokeDir, llb.Scratch())
	def, err := out.Marshal(ctx, llb.Platform(arm64Platform()))
	if err != nil {
		return nil, fmt.Errorf("marshal the smoke run: %w", err)
	}
	return def, nil
}

// smokeScript runs every binary with the smoke arguments ("$@") and
// writes one line per finding to smokeDir/result: "rc NAME CODE" per
// binary, "ca" when the base has a CA bundle, and "link DIR" for each folder
// jetbake's layers create that is a symbolic link in the base (the layers
// would put a real folder over it, hiding what it points to). Each binary's
// output goes to NAME.log.
func (j *releaseJob) smokeScript() string {
	var script strings.Builder
	result := smokeDir + "/" + smokeResultFile
	for _, t := range j.release.Targets {
		name := path.Base(t.Path)
		fmt.Fprintf(&script, "%s \"$@\" >%s/%s.log 2>&1; echo \"rc %s $?\" >>%s\n",
			shellQuote(t.Path), smokeDir, name, name, result)
	}
	fmt.Fprintf(&script, "[ -s %s ] && echo ca >>%s\n", CABundlePath, result)
	for _, dir := range j.layerDirs() {
		fmt.Fprintf(&script, "[ -L %s ] && echo %s >>%s\n", shellQuote(dir), shellQuote("link "+dir), result)
	}
	script.WriteString("exit 0\n")
	return script.String()
}

// layerDirs are the folders jetbake's layers create, with their parents.
func (j *releaseJob) layerDirs() []string {
	seen := map[string]bool{}
	var dirs []string
	paths := []string{EntrypointPath, CUDAProbePath, imagespec.Path}
	for _, t := range j.release.Targets {
		paths = append(paths, t.Path)
	}
	for _, p := range paths {
		for dir := path.Dir(p); dir != "/" && dir != "." && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	slices.Sort(dirs)
	return dirs
}

// smokeResultFile is the smoke run's findings, one per line.
const smokeResultFile = "result"

// smokeCheck solves the smoke run def and judges what each binary did.
func (j *releaseJob) smokeCheck(ctx context.Context, c gateway.Client, def *llb.Definition, imports []gateway.CacheOptionsEntry) error {
	// Evaluate: the routers' compile errors surface here, as themselves.
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true, CacheImports: imports})
	if err != nil {
		return err
	}
	ref, err := res.SingleRef()
	if err != nil {
		return err
	}
	read := func(name string) string {
		data, err := ref.ReadFile(ctx, gateway.ReadRequest{Filename: name})
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(data))
	}
	return j.judgeSmoke(read(smokeResultFile), func(name string) string { return read(name + ".log") })
}

// judgeSmoke turns the smoke run's result file into the build's verdict;
// logOf reads a binary's output, which is only read when it failed.
func (j *releaseJob) judgeSmoke(result string, logOf func(name string) string) error {
	rcs, ca := map[string]string{}, false
	var links []string
	for _, line := range strings.Split(result, "\n") {
		switch f := strings.Fields(line); {
		case len(f) == 3 && f[0] == "rc":
			rcs[f[1]] = f[2]
		case len(f) == 1 && f[0] == "ca":
			ca = true
		case len(f) == 2 && f[0] == "link":
			links = append(links, f[1])
		}
	}
	for _, t := range j.release.Targets {
		name := path.Base(t.Path)
		rc, ok := rcs[name]
		if !ok {
			return fmt.Errorf("smoke run of %s on the runtime base left no exit status: does the runtime base %s have /bin/sh?", name, j.release.RuntimeBase)
		}
		if rc == "0" {
			continue
		}
		if err := j.smokeResult(name, rc, logOf(name)); err != nil {
			return err
		}
	}
	if len(links) > 0 {
		return fmt.Errorf("the runtime base %s has %s as a symbolic link: jetbake's layers put a real folder there, which would hide what the link points to in the image; use a base where %s is a folder",
			j.release.RuntimeBase, strings.Join(links, ", "), strings.Join(links, ", "))
	}
	if !ca {
		return fmt.Errorf("the runtime base %s has no CA bundle at %s: the router could not download models over HTTPS; install ca-certificates in the runtime base, or use a base that has it",
			j.release.RuntimeBase, CABundlePath)
	}
	return nil
}

// smokeResult turns one binary's exit status and output into an error
// that names a missing library when the loader named one.
func (j *releaseJob) smokeResult(name, rc, log string) error {
	if rc == "0" {
		return nil
	}
	cmd := name + " " + strings.Join(j.plan.Router.Smoke, " ")
	if code, err := strconv.Atoi(rc); err == nil {
		cmd += " (exit " + strconv.Itoa(code) + ")"
	}
	if m := missingLib.FindStringSubmatch(log); m != nil {
		return fmt.Errorf("%s fails on the runtime base: it needs %s, which the runtime base %s lacks; install the package that provides %s in the runtime base (TEI's images install libssl and ca-certificates), or use a base that has it",
			cmd, m[1], j.release.RuntimeBase, m[1])
	}
	last := log
	if i := strings.LastIndex(strings.TrimSpace(log), "\n"); i >= 0 {
		last = strings.TrimSpace(log[i+1:])
	}
	return fmt.Errorf("%s fails on the runtime base: %s", cmd, last)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CABundlePath is where Debian and Ubuntu (and so NVIDIA's l4t and CUDA
// images) keep the CA bundle the router needs to download models
// (ca-certificates' /etc/ssl/certs/ca-certificates.crt).
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
