package smoke

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/buildkit/client/llb"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// appLog is the file the app's smoke run leaves its output in.
const appLog = "app.log"

// App is an app's build-time smoke run: the app's command with its smoke
// arguments (app.smoke, e.g. --help) on the app's stage, under QEMU on the
// building machine, with the base's CUDA driver stub standing in for the
// Jetson's driver when the base has one (NVIDIA's PyTorch containers carry
// the CUDA toolkit, stubs included), as a router binary's run does.
type App struct {
	// Name is the app's name; Command what the entrypoint execs (an
	// absolute path first); Args its smoke arguments; Env its environment.
	Name    string
	Command []string
	Args    []string
	Env     map[string]string
}

// Script writes "stub PATH" when the base had a driver stub, then runs
// the command with the arguments the run passes ("$@"), its output in
// app.log, and writes "rc app CODE".
func (a App) Script() string {
	var script strings.Builder
	result := smokeDir + "/" + ResultFile
	fmt.Fprintf(&script, "[ -s %s/libcuda.so.1 ] && echo \"stub $(cat %s/from)\" >>%s\n", smokeDriver, smokeDriver, result)
	fmt.Fprintf(&script, "export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}%s\n", smokeDriver)
	quoted := make([]string, len(a.Command))
	for i, c := range a.Command {
		quoted[i] = shellQuote(c)
	}
	fmt.Fprintf(&script, "%s \"$@\" </dev/null >%s/%s 2>&1; echo \"rc app $?\" >>%s\n", strings.Join(quoted, " "), smokeDir, appLog, result)
	script.WriteString("exit 0\n")
	return script.String()
}

// Definition runs the app's command with the smoke arguments on image
// (the app's stage, config its image config: its ENV, WORKDIR and USER
// apply), with stub (Stub of the app's base) mounted for the driver. The
// driver's folder comes after the image's own library path, so that a
// driver the image itself carries wins over the stub.
func (a App) Definition(ctx context.Context, image llb.State, name string, config []byte, stub llb.State) (*llb.Definition, error) {
	var cfg ocispecs.Image
	if err := json.Unmarshal(config, &cfg); err != nil {
		return nil, fmt.Errorf("%s: config is not valid JSON: %w", name, err)
	}
	opts := []llb.RunOption{
		llb.Args(append([]string{"/bin/sh", "-c", a.Script(), "jetbake-smoke"}, a.Args...)),
		llb.WithCustomNamef("%s%s %s on %s", progress.SmokePrefix, a.Name, strings.Join(a.Args, " "), name),
	}
	for _, kv := range cfg.Config.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			opts = append(opts, llb.AddEnv(k, v))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.Env)) {
		opts = append(opts, llb.AddEnv(k, a.Env[k]))
	}
	if cfg.Config.WorkingDir != "" {
		opts = append(opts, llb.Dir(cfg.Config.WorkingDir))
	}
	if cfg.Config.User != "" {
		opts = append(opts, llb.User(cfg.Config.User))
	}
	opts = append(opts, llb.AddMount(smokeDriver, stub, llb.Readonly))
	out := image.Run(opts...).AddMount(smokeDir, llb.Scratch())
	def, err := out.Marshal(ctx, llb.Platform(arm64))
	if err != nil {
		return nil, fmt.Errorf("marshal the app's smoke run: %w", err)
	}
	return def, nil
}

// Judge turns the app's smoke run's result into the build's verdict:
// nil when the command exited 0, else one sentence with the command, its
// exit status, the last line it printed and the fix. image names the
// stage; read reads a file the run wrote.
func (a App) Judge(image, result string, read func(name string) string) error {
	f := parseSmoke(result)
	rc, ok := f.rcs["app"]
	if !ok {
		return fmt.Errorf("the smoke run of %s on %s left no exit status: does the image have /bin/sh?", a.Name, image)
	}
	if rc == "0" {
		return nil
	}
	cmd := strings.Join(append(slices.Clone(a.Command), a.Args...), " ")
	if code, err := strconv.Atoi(rc); err == nil {
		cmd += " (exit " + strconv.Itoa(code) + ")"
	}
	log := read(appLog)
	if m := missingLib.FindStringSubmatch(log); m != nil {
		return fmt.Errorf("the app's smoke run, %s, fails on %s: it needs %s, which the image lacks; install what provides %s in the app's stage, or use a base that has it",
			cmd, image, m[1], m[1])
	}
	return fmt.Errorf("the app's smoke run, %s, fails on %s: %s; fix the app, or set app.smoke in the matrix to arguments it passes without a GPU (such as [\"--help\"])",
		cmd, image, lastLine(log))
}
