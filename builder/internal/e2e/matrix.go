package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/cli"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// TEISource is the source tree shaped like text-embeddings-inference's that
// the tests and the demo build instead of a TEI clone, relative to the checkout.
const TEISource = "testdata/tei-source"

// AllowStandin grants a demo matrix read access to the TEI-shaped source and
// the shipped Dockerfile-jetson of the checkout at repoRoot, and to the
// folders or files in extra, as a user grants a matrix a folder outside its
// repository: the demo matrices are written into temporary folders, so the
// router they name lies outside theirs. It is the package API's
// `--allow fs.read=PATH`; AllowStandinFlags is the flag itself.
func AllowStandin(repoRoot string, extra ...string) matrix.Option {
	return matrix.WithAllowRead(standinPaths(repoRoot, extra)...)
}

// AllowStandinFlags is `--allow fs.read=...` for the jetbake commands that
// read a demo matrix, granting what AllowStandin grants.
func AllowStandinFlags(repoRoot string, extra ...string) []string {
	var flags []string
	for _, p := range standinPaths(repoRoot, extra) {
		flags = append(flags, "--"+cli.AllowFlag, "fs.read="+p)
	}
	return flags
}

// standinPaths are the paths a demo matrix reads outside its folder.
func standinPaths(repoRoot string, extra []string) []string {
	return append([]string{filepath.Join(repoRoot, TEISource), filepath.Join(repoRoot, ShippedDockerfile)}, extra...)
}

// ShippedDockerfile is the router Dockerfile jetbake ships, relative to the checkout.
const ShippedDockerfile = "dockerfiles/Dockerfile-jetson"

// WriteDemoMatrix writes, at out, the real matrix.json building the
// TEI-shaped source (TEISource) in place of TEI's git repository, with the
// shipped Dockerfile-jetson unchanged, and the images going to registry:
// the demo and the tests build exactly the shipped releases, bases, router
// stages and tags, on the QEMU path: the shipped cross_build_base entries
// (jetbake's recipe) are left out, as --build-path qemu would leave them
// unused, and WriteRecipeMatrix and WriteCrossMatrix give the cross path. GIT_SHA is the commit the shipped context is pinned to,
// as jetbake passes it for that context. Each entry of mutate can change
// the matrix further (the tests add a release).
func WriteDemoMatrix(repoRoot, registry, out string, mutate ...func(m map[string]any)) error {
	data, err := os.ReadFile(filepath.Join(repoRoot, "matrix.json"))
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("matrix.json: %w", err)
	}
	router, ok := m["router"].(map[string]any)
	image, ok2 := m["image"].(map[string]any)
	if !ok || !ok2 {
		return fmt.Errorf("matrix.json: router or image is not an object")
	}
	shippedContext, _ := router["context"].(string)
	router["context"] = filepath.Join(repoRoot, TEISource)
	router["dockerfile"] = filepath.Join(repoRoot, ShippedDockerfile)
	if sha := matrix.GitCommit(shippedContext); sha != "" {
		args, _ := router["build_args"].(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		args["GIT_SHA"] = sha
		router["build_args"] = args
	}
	image["repository"] = registry + "/jetbake/text-embeddings-router"
	delete(m, "$schema")
	withoutCrossBases(m)
	for _, f := range mutate {
		f(m)
	}
	data, err = json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

// LoadPlan loads and plans a matrix file, with the matrix options given
// (AllowStandin for a demo matrix).
func LoadPlan(path string, opts ...matrix.Option) (*plan.Plan, error) {
	m, err := matrix.Load(path, opts...)
	if err != nil {
		return nil, err
	}
	return plan.New(m)
}

// A DockerfileEdit changes Dockerfile-jetson the way a user might, to show
// what the shipped one avoids: each replaces one exact piece of its text.
type DockerfileEdit struct {
	// Name names the variant's file.
	Name string
	// Old is replaced by New; Old must be in the shipped Dockerfile.
	Old, New string
}

// The edits the tests and the demo build.
var (
	// withoutComputeCap leaves out jetson-compute-cap.sh, as upstream's
	// Dockerfile would: on an Orin the router refuses with TEI's sentence.
	withoutComputeCap = DockerfileEdit{Name: "no-compute-cap",
		Old: "RUN test -n \"${CUDA_COMPUTE_CAP}\" && sh /usr/local/bin/jetson-compute-cap.sh /src \"${CUDA_COMPUTE_CAP}\"\n"}
	// withCargoConfig copies TEI's .cargo folder, as `COPY . .` would:
	// target-cpu=native is back in effect.
	withCargoConfig = DockerfileEdit{Name: "cargo-config", Old: "COPY router router\n", New: "COPY router router\nCOPY .cargo .cargo\n"}
	// withoutLinkingFeature drops the linking feature from cargo's command
	// line (the shipped Dockerfile before TEI issue 709 was known).
	withoutLinkingFeature = DockerfileEdit{Name: "no-linking", Old: ` -F "${CUDA_LINKING}"`}
	// withoutFlashGate runs jetson-compute-cap.sh and then puts TEI's
	// flash_attn.rs back as it was: the compute-cap arm alone, as jetbake
	// did before it opened flash attention's gate. On a Thor the router
	// starts, then fails at its first forward (the health check).
	withoutFlashGate = DockerfileEdit{Name: "no-flash-gate",
		Old: "RUN test -n \"${CUDA_COMPUTE_CAP}\" && sh /usr/local/bin/jetson-compute-cap.sh /src \"${CUDA_COMPUTE_CAP}\"\n",
		New: "RUN test -n \"${CUDA_COMPUTE_CAP}\" && cp backends/candle/src/flash_attn.rs /tmp/flash_attn.rs && " +
			"sh /usr/local/bin/jetson-compute-cap.sh /src \"${CUDA_COMPUTE_CAP}\" && cp /tmp/flash_attn.rs backends/candle/src/flash_attn.rs\n"}
	// withWrongComputeCap compiles the router for sm_80 whatever target
	// jetbake asks for, as a Dockerfile copied from a desktop (A100) build
	// would: its flash-attention kernels are an sm_80 cubin and
	// compute_80 PTX, and the build-time audit refuses it for Orin's 8.7.
	withWrongComputeCap = DockerfileEdit{Name: "wrong-compute-cap",
		Old: "    cargo build --release --bin text-embeddings-router \\\n",
		New: "    CUDA_COMPUTE_CAP=80 cargo build --release --bin text-embeddings-router \\\n"}
	// withThorSM compiles the router for Thor's sm_110 whatever target
	// jetbake asks for: on a JetPack 6 build base, whose CUDA cannot
	// target it, the compiler refuses the build.
	withThorSM = DockerfileEdit{Name: "thor-sm",
		Old: "    cargo build --release --bin text-embeddings-router \\\n",
		New: "    CUDA_COMPUTE_CAP=110 cargo build --release --bin text-embeddings-router \\\n"}
	// withoutRuntimeSSL drops OpenSSL from the runtime stage's packages.
	withoutRuntimeSSL = DockerfileEdit{Name: "no-runtime-ssl", Old: `ca-certificates "$ssl" $cuda`, New: `ca-certificates $cuda`}
)

// WriteDockerfile writes the shipped Dockerfile-jetson with edit applied
// into dir and returns the matrix change that builds it.
func WriteDockerfile(repoRoot, dir string, edit DockerfileEdit) (func(map[string]any), error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ShippedDockerfile))
	if err != nil {
		return nil, err
	}
	if strings.Count(string(data), edit.Old) != 1 {
		return nil, fmt.Errorf("Dockerfile-jetson edit %s: %q is not in the shipped Dockerfile exactly once", edit.Name, edit.Old)
	}
	path := filepath.Join(dir, "Dockerfile-jetson."+edit.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), edit.Old, edit.New, 1)), 0o644); err != nil {
		return nil, err
	}
	return func(m map[string]any) { m["router"].(map[string]any)["dockerfile"] = path }, nil
}

// NoComputeCapRelease is the only release of the matrix OnlyNoComputeCap writes.
const NoComputeCapRelease = "jetpack6.2-no-compute-cap"

// NativeCPURelease is the only release of the matrix OnlyNativeCPU writes.
const NativeCPURelease = "jetpack6.2-native-cpu"

// WrongComputeCapRelease is the only release of the matrix
// OnlyWrongComputeCap writes.
const WrongComputeCapRelease = "jetpack6.2-wrong-sm"

// NoFlashGateRelease is the only release of the matrix OnlyNoFlashGate writes.
const NoFlashGateRelease = "jetpack7.0-no-flash-gate"

// onlyVariant keeps one release: a copy of jetpack6.2 named name, tagged
// "{version}-{release}" so that its tags are its own.
func onlyVariant(name string) func(m map[string]any) { return onlyVariantOf("jetpack6.2", name) }

// onlyVariantOf is onlyVariant with a copy of the release from.
func onlyVariantOf(from, name string) func(m map[string]any) {
	return func(m map[string]any) {
		for _, r := range m["releases"].([]any) {
			if r.(map[string]any)["name"] != from {
				continue
			}
			c := map[string]any{}
			for k, v := range r.(map[string]any) {
				c[k] = v
			}
			c["name"] = name
			c["tags"] = []any{}
			m["releases"] = []any{c}
			break
		}
		m["image"].(map[string]any)["tags"] = []any{"{version}-{release}"}
	}
}

// OnlyNoComputeCap keeps one release, NoComputeCapRelease, built from
// Dockerfile-jetson without jetson-compute-cap.sh (written into dir), as
// upstream's Dockerfile would: on an Orin it must refuse to start with
// TEI's sentence.
func OnlyNoComputeCap(repoRoot, dir string) (func(map[string]any), error) {
	return onlyEdited(repoRoot, dir, NoComputeCapRelease, withoutComputeCap)
}

// OnlyWrongComputeCap keeps one release, WrongComputeCapRelease, built
// from Dockerfile-jetson compiling the router for sm_80 (written into
// dir): the build-time audit must refuse it before any tag.
func OnlyWrongComputeCap(repoRoot, dir string) (func(map[string]any), error) {
	return onlyEdited(repoRoot, dir, WrongComputeCapRelease, withWrongComputeCap)
}

// OnlyNativeCPU keeps one release, NativeCPURelease, built from
// Dockerfile-jetson with TEI's .cargo folder copied: tuned for the
// building CPU (QEMU's, with SVE), it must die by SIGILL on an Orin.
func OnlyNativeCPU(repoRoot, dir string) (func(map[string]any), error) {
	return onlyEdited(repoRoot, dir, NativeCPURelease, withCargoConfig)
}

// OnlyNoFlashGate keeps one release, NoFlashGateRelease, a copy of
// jetpack7.0 (Thor) built from Dockerfile-jetson with flash_attn.rs left
// as TEI has it: on a Thor the router starts and then fails at its health
// check with TEI's "GPU with CUDA capability 110 is not supported".
func OnlyNoFlashGate(repoRoot, dir string) (func(map[string]any), error) {
	df, err := WriteDockerfile(repoRoot, dir, withoutFlashGate)
	if err != nil {
		return nil, err
	}
	only := onlyVariantOf("jetpack7.0", NoFlashGateRelease)
	return func(m map[string]any) { df(m); only(m) }, nil
}

func onlyEdited(repoRoot, dir, release string, edit DockerfileEdit) (func(map[string]any), error) {
	df, err := WriteDockerfile(repoRoot, dir, edit)
	if err != nil {
		return nil, err
	}
	only := onlyVariant(release)
	return func(m map[string]any) { df(m); only(m) }, nil
}

// withoutCrossBases removes every release's cross_build_base.
func withoutCrossBases(m map[string]any) {
	releases, _ := m["releases"].([]any)
	for _, r := range releases {
		if rel, ok := r.(map[string]any); ok {
			delete(rel, "cross_build_base")
		}
	}
}
