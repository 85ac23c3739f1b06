package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// Check is one run of a built image on a fake host, and what it must print.
type Check struct {
	// Release names the image by its matrix release.
	Release string
	// Host names the fake host.
	Host string
	// Args are passed to the container after the entrypoint.
	Args []string
	// WantArch is the router binary that must run ("sm_87"), or "".
	WantArch string
	// WantFailure is a phrase the failure on stderr must contain, or "".
	WantFailure string
	// WantExit is the exit status a failure must have, or 0 for any.
	WantExit int
	// WantOutput are phrases a successful run's stdout must contain too.
	WantOutput []string
	// Model mounts a small local model at ModelPath, for a run that
	// serves it (the probe's --serve, or the router's --model-id).
	Model bool
	// Probe runs jetbake-probe as the entrypoint (docker run --entrypoint).
	Probe bool
	// WantServe wants the probe's serving check passed in the evidence it
	// prints: Probe is set and Args are ServeArgs.
	WantServe bool
	// WantApp wants an app's command run: exit 0 and WantOutput on stdout.
	WantApp bool
}

// ModelPath is where a Check's model is mounted in the container.
const ModelPath = "/model"

// FlashRefusalOnThor is TEI's sentence when flash attention's gate does
// not list Thor's compute capability.
const FlashRefusalOnThor = "GPU with CUDA capability 110 is not supported"

// Outcome is what a Check saw.
type Outcome struct {
	Check
	// Result is the container's output and exit code.
	Result runimage.Result
	// Err is set when the container could not be run at all.
	Err error
}

// OK reports whether the run did what the check wants.
func (o Outcome) OK() bool {
	if o.Err != nil {
		return false
	}
	if o.WantServe {
		// The probe's own exit status also counts the image digest, which
		// only a run of a pulled image by digest has.
		return o.served() != nil
	}
	if o.WantApp {
		return o.Result.ExitCode == 0 && containsAll(o.Result.Stdout, o.WantOutput)
	}
	if o.WantArch != "" {
		if o.Result.ExitCode != 0 || !strings.Contains(o.Result.Stdout, "router built for "+o.WantArch+" ") {
			return false
		}
		// The router's own compute-cap gate accepted the GPU it runs on.
		if !strings.Contains(o.Result.Stdout, "compute cap: runtime ") {
			return false
		}
		for _, a := range append(slices.Clone(o.Args), o.WantOutput...) {
			if !strings.Contains(o.Result.Stdout, a) {
				return false
			}
		}
		return true
	}
	if o.WantExit != 0 && o.Result.ExitCode != o.WantExit {
		return false
	}
	return o.Result.ExitCode != 0 && strings.Contains(o.Result.Stderr, o.WantFailure)
}

// Summary is the outcome as one short phrase: the binary that ran or the
// failure sentence.
func (o Outcome) Summary() string {
	if o.Err != nil {
		return "error: " + o.Err.Error()
	}
	if c := o.served(); c != nil {
		return "serve: " + c.Detail
	}
	if o.WantApp && o.Result.ExitCode == 0 {
		return strings.Join(strings.Split(strings.TrimSpace(o.Result.Stdout), "\n"), "; ")
	}
	if o.Result.ExitCode == 0 {
		return strings.SplitN(strings.TrimSpace(o.Result.Stdout), "\n", 2)[0]
	}
	if o.Result.ExitCode == ExitSIGILL && strings.TrimSpace(o.Result.Stderr) == "" {
		return fmt.Sprintf("exit %d: killed by SIGILL (illegal instruction)", o.Result.ExitCode)
	}
	text := strings.TrimSpace(o.Result.Stderr)
	// A router's failure comes after its log lines: from the error on.
	if i := strings.Index(text, o.WantFailure); o.WantFailure != "" && i >= 0 {
		if j := strings.LastIndex(text[:i], "Error: "); j >= 0 {
			text = text[j:]
		}
	}
	return fmt.Sprintf("exit %d: %s", o.Result.ExitCode, text)
}

// served is the probe's passed serving check in the run's evidence, or nil.
func (o Outcome) served() *evidencespec.Check {
	if !o.WantServe {
		return nil
	}
	ev, err := evidence.Parse([]byte(o.Result.Stdout))
	if err != nil {
		return nil
	}
	for _, c := range ev.Result.Checks {
		if c.Name == evidencespec.CheckServe && c.Status == evidencespec.Passed {
			return &c
		}
	}
	return nil
}

// RefusalOnOrin is TEI's sentence when a router built for Orin lacks the (87, 87) arm.
const RefusalOnOrin = "Runtime compute cap 87 is not compatible with compile time compute cap 87"

// AuditRefusalOfWrongSM is the start of the build-time audit's sentence
// for a router-87 compiled for sm_80 (withWrongComputeCap).
const AuditRefusalOfWrongSM = "audit: /usr/local/bin/router-87 holds compute_80 PTX and sm_80 cubin in one of its CUDA fat binaries and no cubin for Jetson Orin, SM 8.7"

// NoLibcuda is the dynamic loader's sentence when the driver is not in the container.
const NoLibcuda = "error while loading shared libraries: libcuda.so.1: cannot open shared object file"

// ExitSIGILL is the status runc and Docker report for a process killed by
// SIGILL (128 + 4).
const ExitSIGILL = 132

// DefaultChecks are the runs the issues ask for: the right binary per GPU,
// accepted by its own compute-cap gate through the host's driver, the host
// rule on every release line (R35, R36.3, R36.4.x, R38.2, R38.4, R39.2),
// the `--runtime nvidia` sentence, the loader's sentence on a Jetson whose
// runtime did not mount the driver, the entrypoint's sentence on one whose
// container has the driver but no device node, arguments passed through and the
// image's default arguments and port when none are given.
func DefaultChecks() []Check {
	return []Check{
		{Release: "jetpack6.2", Host: "orin-jp6", Args: []string{"--port", "8080"}, WantArch: "sm_87"},
		{Release: "jetpack6.2", Host: "orin-jp6", WantArch: "sm_87",
			WantOutput: []string{"args: --json-output", "listening on port 80", "runtime 87 accepted by compile time 87"}},
		{Release: "jetpack7.2", Host: "orin-jp7.2", Args: []string{"--model-id", "BAAI/bge-small"}, WantArch: "sm_87"},
		{Release: "jetpack7.2", Host: "thor-jp7.2", Args: []string{"--model-id", "BAAI/bge-small"}, WantArch: "sm_110",
			WantOutput: []string{"runtime 110 accepted by compile time 110"}},
		{Release: "jetpack6.2", Host: "thor-jp7.0", WantFailure: "JetPack 7"},
		{Release: "jetpack6.2", Host: "none", WantFailure: "--runtime nvidia"},
		{Release: "jetpack6.2", Host: "orin-jp6.2.1", WantArch: "sm_87"},
		{Release: "jetpack6.2", Host: "orin-jp6.0",
			WantFailure: "needs L4T R36.4 or a later R36 release, but the host has L4T R36.3.0 (JetPack 6.0)"},
		{Release: "jetpack6.2", Host: "orin-jp5.1.2", WantFailure: "but the host has L4T R35.4.1 (JetPack 5.1.2)"},
		{Release: "jetpack7.2", Host: "thor-jp7.0",
			WantFailure: "needs a driver for CUDA 13.2 or a later 13.x, but the host has a driver for CUDA 13.0 on L4T R38.2.0 (JetPack 7.0)"},
		{Release: "jetpack7.2", Host: "thor-jp7.1",
			WantFailure: "but the host has a driver for CUDA 13.0 on L4T R38.4.0 (JetPack 7.1)"},
		{Release: "jetpack6.2", Host: "orin-jp6-no-driver", WantFailure: NoLibcuda, WantExit: 127},
		{Release: "jetpack6.2", Host: NoNodesHost, WantFailure: NoNodesOnOrin, WantExit: 1},
	}
}

// NoNodesOnOrin is the middle of the entrypoint's sentence on NoNodesHost:
// the device nodes its fast path checks, and the fix.
const NoNodesOnOrin = "but not the device nodes its GPU driver (nvgpu) needs, /dev/nvhost-ctrl-gpu (or /dev/nvgpu/igpu0/ctrl) " +
	"and /dev/nvmap, without which CUDA reaches no GPU: start the container with --runtime nvidia"

// ReleaseChecks run every other release of the shipped matrix on a host it
// is for, each through its router's gate, Xavier's built with its own cargo
// features, and the refusals between them.
func ReleaseChecks() []Check {
	return []Check{
		{Release: "jetpack6.1", Host: "orin-jp6", WantArch: "sm_87"},
		{Release: "jetpack7.0", Host: "thor-jp7.0", WantArch: "sm_110"},
		{Release: "jetpack7.0", Host: "thor-jp7.1", WantArch: "sm_110"},
		{Release: "jetpack7.0", Host: "thor-jp7.2", WantArch: "sm_110"},
		{Release: "jetpack7.0", Host: "orin-jp7.2", WantFailure: "no text-embeddings-router binary"},
		{Release: "jetpack5.1", Host: "orin-jp6", WantFailure: "JetPack"},
		{Release: "jetpack5.1", Host: "orin-jp5.1.2", WantArch: "sm_87", WantOutput: []string{"features: candle,candle-cuda,http,static-linking\n"}},
		{Release: "jetpack5.1", Host: "xavier-jp5.1.2", WantArch: "sm_72", WantOutput: []string{"features: candle,candle-cuda-volta,http,static-linking\n"}},
	}
}

// ServeChecks serve a model on Thor through the probe: the shipped
// jetpack7.0 image, whose flash attention gate lists Thor, and the same
// release built with TEI's flash_attn.rs as it is, which fails at its
// health check with TEI's sentence.
func ServeChecks() []Check {
	return []Check{
		{Release: "jetpack7.0", Host: "thor-jp7.0", Probe: true, Args: ServeArgs("2m"), Model: true, WantServe: true},
		{Release: NoFlashGateRelease, Host: "thor-jp7.0", Probe: true, Args: ServeArgs("2m"), Model: true, WantFailure: FlashRefusalOnThor, WantExit: 1},
	}
}

// DemoChecks are DefaultChecks and ReleaseChecks, then the images built
// from a changed Dockerfile-jetson: without jetson-compute-cap.sh (TEI's
// refusal on an Orin), with TEI's .cargo (SIGILL on an Orin), and the
// serving checks on Thor.
func DemoChecks() []Check {
	return append(append(append(DefaultChecks(), ReleaseChecks()...),
		Check{Release: NoComputeCapRelease, Host: "orin-jp6", WantFailure: RefusalOnOrin},
		Check{Release: NativeCPURelease, Host: "orin-jp6", WantExit: ExitSIGILL},
	), ServeChecks()...)
}

// containsAll reports whether s contains every phrase.
func containsAll(s string, phrases []string) bool {
	for _, p := range phrases {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// AppReleasePrefix keys an app's releases among a router's in Images' and
// the checks' maps (both name theirs jetpack6.2).
const AppReleasePrefix = "app-"

// AppChecks run the app's images (keyed AppReleasePrefix + release) with
// its gate (--gate): CUDA available, the Jetson's device name and a finite
// small operation, on an Orin and a Thor; and the 6.2 image on a Thor,
// which the entrypoint refuses with the tag that would run there.
func AppChecks(repository string) []Check {
	gate := []string{"--gate"}
	return []Check{
		{Release: AppReleasePrefix + "jetpack6.2", Host: "orin-jp6", Args: gate, WantApp: true,
			WantOutput: []string{"cuda available: True", "device: Orin", "op: 24.0 finite True"}},
		{Release: AppReleasePrefix + "jetpack7.0", Host: "thor-jp7.0", Args: gate, WantApp: true,
			WantOutput: []string{"cuda available: True", "device: NVIDIA Thor", "op: 24.0 finite True"}},
		{Release: AppReleasePrefix + "jetpack6.2", Host: "thor-jp7.0", Args: gate,
			WantFailure: repository + ":" + AppVersion + "-jetpack7.0"},
	}
}

// Images pulls and unpacks each release's image (by its first tag) under dir.
func Images(ctx context.Context, dir string, tags map[string]string) (map[string]Unpacked, error) {
	out := map[string]Unpacked{}
	for release, tag := range tags {
		ref, err := name.ParseReference(tag, name.Insecure)
		if err != nil {
			return nil, err
		}
		img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
		if err != nil {
			return nil, fmt.Errorf("pull %s: %w", tag, err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		rootfs := filepath.Join(dir, release)
		if err := os.RemoveAll(rootfs); err != nil {
			return nil, err
		}
		if err := runimage.Unpack(img, rootfs); err != nil {
			return nil, fmt.Errorf("%s: %w", tag, err)
		}
		out[release] = Unpacked{Rootfs: rootfs, Config: cfg}
	}
	return out, nil
}

// Unpacked is an image's root file system on disk and its config.
type Unpacked struct {
	// Rootfs is the unpacked file system.
	Rootfs string
	// Config is the image config.
	Config *v1.ConfigFile
}

// ProbeEntrypoint is the probe in every image jetbake builds, which a run
// makes its entrypoint as `docker run --entrypoint` does.
const ProbeEntrypoint = imagebuild.ProbePath

// Probe is the image run with jetbake-probe as its entrypoint, as
// `docker run --entrypoint /usr/local/bin/jetbake-probe IMAGE` runs it.
func (u Unpacked) Probe() Unpacked {
	cfg := *u.Config
	cfg.Config.Entrypoint = []string{ProbeEntrypoint}
	cfg.Config.Cmd = nil
	return Unpacked{Rootfs: u.Rootfs, Config: &cfg}
}

// RunChecks runs every check and returns the outcomes in order.
func RunChecks(ctx context.Context, runner *runimage.Runner, images map[string]Unpacked, hostsByName map[string]runimage.Host, checks []Check) []Outcome {
	model := ""
	defer func() {
		if model != "" {
			os.RemoveAll(model)
		}
	}()
	return runEach(images, hostsByName, checks, func(img Unpacked, host runimage.Host, c Check) (runimage.Result, error) {
		if c.Model {
			if model == "" {
				dir, err := os.MkdirTemp("", "jetbake-model-")
				if err != nil {
					return runimage.Result{}, err
				}
				model = dir
				if err := WriteModel(dir); err != nil {
					return runimage.Result{}, err
				}
			}
			host.Volumes = append(slices.Clone(host.Volumes), runimage.Volume{Source: model, Destination: ModelPath})
		}
		if c.Probe {
			img = img.Probe()
		}
		return runner.Run(ctx, img.Rootfs, img.Config, host, c.Args)
	})
}

// runEach runs every check whose release and host exist with run, and
// returns the outcomes in order; a missing one is an outcome's error.
func runEach[I any](images map[string]I, hostsByName map[string]runimage.Host, checks []Check,
	run func(img I, host runimage.Host, c Check) (runimage.Result, error)) []Outcome {
	out := make([]Outcome, 0, len(checks))
	for _, c := range checks {
		img, ok := images[c.Release]
		host, hostOK := hostsByName[c.Host]
		o := Outcome{Check: c}
		switch {
		case !ok:
			o.Err = fmt.Errorf("no image for release %s", c.Release)
		case !hostOK:
			o.Err = fmt.Errorf("no fake host %s", c.Host)
		default:
			o.Result, o.Err = run(img, host, c)
		}
		out = append(out, o)
	}
	return out
}
