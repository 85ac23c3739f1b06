package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/builder/internal/nvtoolkit"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/computecap"
)

// How an NVCheck starts its container.
const (
	// RuntimeCSV is `docker run --runtime nvidia`: NVIDIA's runtime in
	// csv mode, the mode it takes on every Jetson.
	RuntimeCSV = "nvidia (csv)"
	// RuntimeCDI is `docker run --runtime nvidia` with the runtime in cdi
	// mode, from the spec `nvidia-ctk cdi generate --mode csv` wrote.
	RuntimeCDI = "nvidia (cdi)"
	// RuntimeNone is `docker run` without --runtime nvidia: Docker's runc.
	RuntimeNone = "runc (docker)"
)

// NVCheck is a `docker run` of a built image on a fake host of an NVBed,
// and what it must show.
type NVCheck struct {
	// Check names the release and host, the arguments after the image, and
	// the binary that must run or the failure the entrypoint must print
	// (WantOutput: more phrases of its stdout, or of the failure).
	Check
	// Runtime is RuntimeCSV (when empty), RuntimeCDI or RuntimeNone.
	Runtime string
	// HideSoC leaves out the host's /sys/devices/soc0 view: the entrypoint
	// cannot take its fast path and asks the driver.
	HideSoC bool
	// Env are more -e entries, such as NVIDIA_DISABLE_REQUIRE=false.
	Env []string
	// Volumes are more -v entries, such as MODEL_DIR:/model:ro.
	Volumes []string
	// Entrypoint, when set, replaces the image's (--entrypoint), such as
	// ProbeEntrypoint.
	Entrypoint string
	// WantRefusal is the line of NVIDIA's runtime when it must refuse the
	// container before it starts (docker exits 125).
	WantRefusal string
	// WantPath makes the run an --explain one: the entrypoint must take
	// this path ("fast" or "full"), name the host's libcuda, L4T release and
	// device nodes, and choose WantArch's binary.
	WantPath string
}

// RuntimeName names how the check starts its container, such as "nvidia (csv)".
func (c NVCheck) RuntimeName() string {
	if c.Runtime == "" {
		return RuntimeCSV
	}
	return c.Runtime
}

// mode is the runtime's mode for the check.
func (c NVCheck) mode() nvtoolkit.Mode {
	if c.Runtime == RuntimeCDI {
		return nvtoolkit.ModeCDI
	}
	return nvtoolkit.ModeCSV
}

// NVOutcome is what an NVCheck saw.
type NVOutcome struct {
	NVCheck
	// On is the fake host it ran on.
	On *nvtoolkit.Host
	// Result is docker's output and exit code.
	Result runimage.Result
	// Err is set when the run could not be made.
	Err error
	// Seen is what the entrypoint saw, for --explain runs.
	Seen *Seen
}

// Seen is what the entrypoint's --explain reports of the host it ran on.
type Seen struct {
	// Path is "fast" or "full"; DetectedBy the source of the GPU.
	Path, DetectedBy string
	// Libcuda is the driver library the driver source named ("" for none).
	Libcuda string
	// L4T is the release /etc/nv_tegra_release gave.
	L4T string
	// Devices are the GPU device nodes it found.
	Devices string
	// GPU is the compute capability found, Choice the binary chosen.
	GPU, Choice string
}

// explanation is the part of the entrypoint's --explain the checks read.
type explanation struct {
	Path       string `json:"path"`
	DetectedBy string `json:"detected_by"`
	ComputeCap string `json:"compute_cap"`
	HostL4T    string `json:"host_l4t"`
	Choice     string `json:"choice"`
	Failure    string `json:"failure"`
	Sources    []struct {
		Name   string `json:"name"`
		Found  bool   `json:"found"`
		Value  string `json:"value"`
		Detail string `json:"detail"`
	} `json:"sources"`
	HostFiles []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"host_files"`
}

// seen reads an --explain run's output.
func seen(stdout string) (*Seen, error) {
	var e explanation
	if err := json.Unmarshal([]byte(stdout), &e); err != nil {
		return nil, fmt.Errorf("--explain printed no JSON: %w: %.200s", err, stdout)
	}
	s := &Seen{Path: e.Path, DetectedBy: e.DetectedBy, L4T: e.HostL4T, GPU: e.ComputeCap, Choice: e.Choice}
	for _, src := range e.Sources {
		if lib, _, ok := strings.Cut(src.Detail, ": "); ok && src.Name == "cuda-driver" && src.Found {
			s.Libcuda = lib
		}
	}
	for _, f := range e.HostFiles {
		if f.Name == "GPU device nodes" {
			s.Devices = f.Value
		}
	}
	return s, nil
}

// OK reports whether the run did what the check wants.
func (o NVOutcome) OK() bool {
	switch {
	case o.Err != nil:
		return false
	case o.WantRefusal != "":
		return o.Result.ExitCode == 125 && strings.Contains(o.Result.Stderr, o.WantRefusal)
	case o.WantPath != "":
		return o.Result.ExitCode == 0 && o.Seen != nil && o.seenOK()
	case o.WantFailure != "":
		for _, w := range o.WantOutput {
			if !strings.Contains(o.Result.Stderr, w) {
				return false
			}
		}
	}
	return Outcome{Check: o.Check, Result: o.Result}.OK()
}

// seenOK checks an --explain run against the host.
func (o NVOutcome) seenOK() bool {
	s, h := o.Seen, o.On
	if s.Path != o.WantPath || s.Libcuda != h.Libcuda || s.L4T != h.L4T || s.GPU != h.GPU.String() ||
		s.Choice != "/usr/local/bin/router-"+strings.TrimPrefix(o.WantArch, "sm_") {
		return false
	}
	if want := map[string]string{"fast": "soc_id", "full": "cuda-driver"}[o.WantPath]; s.DetectedBy != want {
		return false
	}
	if s.Devices == "" {
		return false
	}
	for _, d := range strings.Split(s.Devices, ", ") {
		if !slices.ContainsFunc(h.Devices, func(hd string) bool { return hd == d || strings.HasPrefix(hd, d+"/") }) {
			return false
		}
	}
	return true
}

// Summary is the outcome in one short phrase, after the check's
// environment when it sets one.
func (o NVOutcome) Summary() string {
	if len(o.Env) > 0 {
		return "with " + strings.Join(o.Env, " ") + ": " + o.summary()
	}
	return o.summary()
}

func (o NVOutcome) summary() string {
	if o.Seen != nil {
		s := o.Seen
		return fmt.Sprintf("%s path (%s): libcuda %s, L4T %s, nodes %s: %s", s.Path, s.DetectedBy, orNone(s.Libcuda),
			orNone(s.L4T), orNone(s.Devices), orNone(s.Choice))
	}
	if o.Result.ExitCode == 125 {
		if _, line, ok := strings.Cut(o.Result.Stderr, "requirements not met: "); ok {
			line, _, _ = strings.Cut(line, ": unknown")
			return "exit 125 (NVIDIA's runtime): requirements not met: " + strings.TrimSpace(line)
		}
	}
	return Outcome{Check: o.Check, Result: o.Result, Err: o.Err}.Summary()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// NVRunArgs are the `docker run` arguments of c for image on h: the arm64
// platform, --runtime nvidia with NVIDIA_VISIBLE_DEVICES=all (unless the
// check runs without the runtime), the host's soc0 view over /sys/devices
// (unless HideSoC), c's environment, volumes and entrypoint, the image, then c.Args as typed after
// it. The stand-in router asks the host's stand-in driver for the GPU, as
// TEI asks the real one.
func NVRunArgs(image string, h *nvtoolkit.Host, fake FakeHost, c NVCheck) []string {
	out := []string{"run", "--rm", "--platform", "linux/arm64"}
	if c.Runtime != RuntimeNone {
		out = append(out, "--runtime", "nvidia", "-e", "NVIDIA_VISIBLE_DEVICES=all")
	}
	if !c.HideSoC {
		out = append(out, "-v", h.SysDevices+":/sys/devices:ro")
	}
	for _, e := range c.Env {
		out = append(out, "-e", e)
	}
	for _, v := range c.Volumes {
		out = append(out, "-v", v)
	}
	if c.Entrypoint != "" {
		out = append(out, "--entrypoint", c.Entrypoint)
	}
	return append(append(out, image), c.Args...)
}

// RunNVChecks runs each check on engine d, whose "nvidia" runtime is b's,
// one after the other; images maps a release to its image in the engine.
func RunNVChecks(ctx context.Context, d *Dockerd, b *NVBed, images map[string]string, checks []NVCheck) []NVOutcome {
	out := make([]NVOutcome, 0, len(checks))
	for _, c := range checks {
		o := NVOutcome{NVCheck: c, On: b.Hosts[c.Host]}
		image, ok := images[c.Release]
		switch {
		case !ok:
			o.Err = fmt.Errorf("no image for release %s", c.Release)
		case o.On == nil:
			o.Err = fmt.Errorf("no fake host %s on the bed", c.Host)
		default:
			o.Err = b.Use(o.On, c.mode())
		}
		if o.Err == nil {
			o.Result, o.Err = d.Docker(ctx, NVRunArgs(image, o.On, b.Fakes[c.Host], c)...)
		}
		if o.Err == nil && c.WantPath != "" && o.Result.ExitCode == 0 {
			o.Seen, o.Err = seen(o.Result.Stdout)
		}
		out = append(out, o)
	}
	return out
}

// typedArgs are arguments an operator types after the image name,
// including flags that Docker would take for its own before it.
var typedArgs = []string{"--model-id", "BAAI/bge-small-en-v1.5", "--port", "8080", "-e", "X=1", "--json-output"}

// NVChecks are the runs through NVIDIA's runtime: on every host line its own
// image with typed arguments, its --explain with soc_id visible (the fast
// path) and hidden (the driver path), and the JetPack 7.2 image with the
// runtime's requirement check turned back on; then each refusal sentence,
// the runtime's own refusal, a run without the runtime, a broken driver and
// one run in cdi mode. tags maps a release to its image's first tag, which
// the refusals name.
func NVChecks(b *NVBed, tags map[string]string) []NVCheck {
	var out []NVCheck
	for _, l := range HostLines() {
		fake := b.Fakes[l.Host]
		sm := strconv.Itoa(fake.GPU.Major*10 + fake.GPU.Minor)
		arch := "sm_" + sm
		out = append(out,
			NVCheck{Check: Check{Release: l.Release, Host: l.Host, Args: typedArgs, WantArch: arch,
				WantOutput: []string{"args: " + strings.Join(typedArgs, " "), "runtime " + sm + " accepted by compile time " + sm}}},
			NVCheck{Check: Check{Release: l.Release, Host: l.Host, Args: []string{"--explain"}, WantArch: arch}, WantPath: "fast"},
			NVCheck{Check: Check{Release: l.Release, Host: l.Host, Args: []string{"--explain"}, WantArch: arch}, WantPath: "full", HideSoC: true},
			requireCheck("jetpack7.2", l.Host, fake, "13.2", arch))
	}
	return append(out,
		NVCheck{Check: Check{Release: "jetpack6.2", Host: "orin-jp5.1.2",
			WantFailure: "needs L4T R36.4 or a later R36 release, but the host has L4T R35.4.1 (JetPack 5.1.2)",
			WantOutput:  []string{"use " + tags["jetpack5.1"] + " instead"}}},
		requireCheck("jetpack6.2", "orin-jp5.1.2", b.Fakes["orin-jp5.1.2"], "12.6", ""),
		NVCheck{Check: Check{Release: "jetpack6.2", Host: "thor-jp7.1", WantFailure: "but the host has L4T R38.4.0 (JetPack 7.1)",
			WantOutput: []string{"use " + tags["jetpack7.0"] + " instead"}}},
		NVCheck{Check: Check{Release: "jetpack7.2", Host: "thor-jp7.0",
			WantFailure: "needs a driver for CUDA 13.2 or a later 13.x, but the host has a driver for CUDA 13.0 on L4T R38.2.0 (JetPack 7.0)",
			WantOutput:  []string{"use " + tags["jetpack7.0"] + " instead"}}},
		NVCheck{Check: Check{Release: "jetpack7.0", Host: "orin-jp7.2", WantFailure: "this image has no text-embeddings-router binary for the GPU found, Jetson Orin",
			WantOutput: []string{"Use " + tags["jetpack7.2"] + ", which has one."}}},
		NVCheck{Check: Check{Release: "jetpack6.2", Host: "orin-jp6",
			WantFailure: "but the container has no access to its GPU: it was probably started without --runtime nvidia"}, Runtime: RuntimeNone},
		NVCheck{Check: Check{Release: "jetpack6.2", Host: BrokenDriverHost,
			WantFailure: "the NVIDIA runtime is there (/etc/nv_tegra_release, GPU device nodes",
			WantOutput:  []string{"but its CUDA driver /usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1 cannot be used"}}, HideSoC: true},
		NVCheck{Check: Check{Release: "jetpack6.2", Host: "orin-jp6", Args: typedArgs, WantArch: "sm_87",
			WantOutput: []string{"args: " + strings.Join(typedArgs, " ")}}, Runtime: RuntimeCDI},
		NVCheck{Check: Check{Release: "jetpack6.2", Host: "orin-jp6", Args: []string{"--explain"}, WantArch: "sm_87"},
			WantPath: "full", HideSoC: true, Runtime: RuntimeCDI},
	)
}

// requireCheck runs release on host with NVIDIA's requirement check turned
// back on (NVIDIA_DISABLE_REQUIRE=false, as an image without jetbake's
// setting has it): the runtime refuses a host whose driver's CUDA is older
// than the image's cuda (it ignores forward-compatibility libraries) with
// its own line, before the container exists; other hosts run, with arch's
// binary when arch is set.
func requireCheck(release, host string, fake FakeHost, cuda, arch string) NVCheck {
	c := NVCheck{Check: Check{Release: release, Host: host}, Env: []string{"NVIDIA_DISABLE_REQUIRE=false"}}
	need, err := computecap.ParseCUDAVersion(cuda)
	if err == nil && fake.DriverCUDA.Less(need) {
		c.WantRefusal = "requirements not met: unsatisfied condition: cuda>=" + cuda + " (cuda=" + fake.DriverCUDA.String() + ")"
		return c
	}
	c.WantArch = arch
	return c
}
