// Package doctor checks whether a host can run jetbake images with NVIDIA's
// container runtime: the Jetson and its L4T release, the driver's CUDA
// version, the NVIDIA container toolkit, the nvidia runtime in the
// configuration of each container engine the host has (Docker, containerd,
// k3s) and the CDI spec. Each problem comes with the command that fixes it.
package doctor

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/jetbake/jetbake/builder/hostfit"
)

// Status is the outcome of one check.
type Status string

// Check outcomes. Only StatusFail makes the host unable to run the images.
const (
	StatusOK   Status = "ok"
	StatusWarn Status = "warn"
	StatusFail Status = "fail"
)

// Check is one row of the report.
type Check struct {
	// Name is the row's title, such as "container toolkit".
	Name string `json:"name"`
	// Status is ok, warn or fail.
	Status Status `json:"status"`
	// Detail is what was found, in a few words.
	Detail string `json:"detail"`
	// Fix is the command (or step) that fixes a warn or fail; "" when ok.
	Fix string `json:"fix,omitempty"`
}

// Report is every check and the verdict.
type Report struct {
	// Sysroot is the root the host was read from.
	Sysroot string `json:"sysroot"`
	// OK is true when the host can run jetbake images: no check failed.
	OK bool `json:"ok"`
	// Host is the host's facts.
	Host hostfit.Host `json:"host"`
	// Checks are the rows, in order.
	Checks []Check `json:"checks"`
	// NVIDIARuntime is the path of nvidia-container-runtime on the host
	// (what k3s and containerd run for the nvidia RuntimeClass); "" when
	// it is not installed.
	NVIDIARuntime string `json:"nvidia_runtime,omitempty"`
	// NVIDIARuntimeCheck names the row the nvidia-runtime node label
	// follows (true when that row is ok): the engine Kubernetes runs pods
	// with on this host (k3s, containerd, else Docker).
	NVIDIARuntimeCheck string `json:"nvidia_runtime_check,omitempty"`
}

// Option changes what Run looks at.
type Option func(*options)

type options struct {
	sysroot      string
	facts        hostfit.Reader
	version      VersionFunc
	notJetsonFix string
}

// VersionFunc asks a command for its version output, such as
// `nvidia-ctk --version`; ok is false when the command is missing or fails.
type VersionFunc func(ctx context.Context, name string, args ...string) (out string, ok bool)

// WithSysroot reads the host under root instead of "/" (the default): a
// board's root file system mounted elsewhere, or a test's fake host. With a
// sysroot other than "/" no command is run.
func WithSysroot(root string) Option { return func(o *options) { o.sysroot = root } }

// WithNotJetsonFix sets the fix of the rows that find no Jetson, in the
// words of the command that runs the checks, such as "run jetbake doctor on
// the Jetson itself, or pass --sysroot DIR with the board's root file
// system"; the default names WithSysroot.
func WithNotJetsonFix(fix string) Option { return func(o *options) { o.notJetsonFix = fix } }

// WithHostFacts sets how the host's facts are read; the default is
// hostfit.SysrootReader.
func WithHostFacts(r hostfit.Reader) Option { return func(o *options) { o.facts = r } }

// WithVersionFunc sets how tool versions are asked when the sysroot is "/";
// the default runs the command.
func WithVersionFunc(f VersionFunc) Option { return func(o *options) { o.version = f } }

// runVersion runs name with args and returns its output.
func runVersion(ctx context.Context, name string, args ...string) (string, bool) {
	if _, err := exec.LookPath(name); err != nil {
		return "", false
	}
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err == nil
}

// Run checks the host and returns the report. An error means the host could
// not be read at all (a sysroot that is not a folder is a
// *hostfit.SysrootError); problems of the host are failed checks.
func Run(ctx context.Context, opts ...Option) (*Report, error) {
	o := options{sysroot: "/", facts: hostfit.SysrootReader{}, version: runVersion, notJetsonFix: notJetsonFix}
	for _, opt := range opts {
		opt(&o)
	}
	if o.sysroot != "/" {
		o.version = nil
	}
	if err := hostfit.CheckSysroot(o.sysroot); err != nil {
		return nil, err
	}
	facts, err := o.facts.Read(ctx, o.sysroot)
	if err != nil {
		return nil, fmt.Errorf("read the host under %s: %w", o.sysroot, err)
	}
	r := &Report{Sysroot: o.sysroot, Host: facts, NVIDIARuntime: findRuntime(o.sysroot)}
	r.Checks = append(r.Checks, hostChecks(facts, o.notJetsonFix)...)
	tk := readToolkit(ctx, o.sysroot, o.version)
	r.Checks = append(r.Checks, toolkitCheck(tk, facts))
	r.Checks = append(r.Checks, engineChecks(o.sysroot, tk, r)...)
	r.OK = true
	for _, c := range r.Checks {
		if c.Status == StatusFail {
			r.OK = false
		}
	}
	return r, nil
}

// engineChecks are the rows of the container engines the host has (Docker's
// where it has none of them, the path the README gives), then the CDI
// spec's; they set which row the nvidia-runtime label follows.
func engineChecks(root string, tk toolkit, r *Report) []Check {
	eng := findEngines(root)
	cdi := readCDI(root)
	var out []Check
	if eng.docker || (!eng.containerd && !eng.k3s) {
		rt := readDockerConfig(root)
		out = append(out, runtimeCheck(root, rt, cdi), defaultRuntimeCheck(rt))
	}
	if eng.containerd {
		out = append(out, containerdCheck(root))
	}
	if eng.k3s {
		out = append(out, k3sCheck(root))
	}
	r.NVIDIARuntimeCheck = eng.labelRow()
	return append(out, cdiCheck(cdi, tk))
}
