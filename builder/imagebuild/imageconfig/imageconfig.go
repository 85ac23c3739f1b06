// Package imageconfig is what jetbake writes about an image: the OCI
// config of the runtime image or the app's (entrypoint, NVIDIA's variables,
// the program's arguments, environment and ports, labels, history), the
// annotations known at build time, and /etc/jetbake/image.json, the
// description the entrypoint chooses a binary by.
package imageconfig

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// Annotation and label keys that jetbake adds at build time to those the plan holds.
const (
	keyRevision   = ocispecs.AnnotationRevision
	keyCreated    = ocispecs.AnnotationCreated
	keyBaseName   = ocispecs.AnnotationBaseImageName
	keyBaseDigest = ocispecs.AnnotationBaseImageDigest
)

// Metadata returns the release's annotations (and labels) with the
// values only known at build time: revision, creation time and base digest.
func Metadata(rel plan.Release, revision string, epoch time.Time, runtimeBase, baseDigest string) map[string]string {
	out := maps.Clone(rel.Annotations)
	if out == nil {
		out = map[string]string{}
	}
	if revision != "" {
		out[keyRevision] = revision
	}
	out[keyCreated] = epoch.UTC().Format(time.RFC3339)
	out[keyBaseName] = runtimeBase
	if baseDigest != "" {
		out[keyBaseDigest] = baseDigest
	}
	return out
}

// Router derives the runtime image's config from the runtime base's:
// the entrypoint, NVIDIA's CUDA variables, the router's environment, default
// arguments and ports, and the labels are set, the rest kept. The router's
// defaults are the image's CMD, after the entrypoint: `docker run IMAGE
// ARGS...` replaces them, and the entrypoint hands either to the router
// unchanged.
func Router(baseConfig []byte, entrypoint string, router plan.Router, rel plan.Release, labels map[string]string, epoch time.Time) ([]byte, error) {
	var img ocispecs.Image
	if err := json.Unmarshal(baseConfig, &img); err != nil {
		return nil, fmt.Errorf("runtime base %s: config is not valid JSON: %w", rel.RuntimeBase, err)
	}
	run := Program{Entrypoint: entrypoint, Cmd: router.Cmd, Env: router.Env, Ports: router.Ports}
	return With(img, run, rel, labels, epoch, fmt.Sprintf("jetbake: router for %s, %s", SMList(rel), imagespec.Path))
}

// Program is what the image runs: the entrypoint, and after it the
// default arguments, environment and ports, the router's or the app's.
type Program struct {
	Entrypoint string
	Cmd        []string
	Env        map[string]string
	Ports      []string
}

// With sets in img what Router sets, the history of jetbake's
// second layer saying what it holds.
func With(img ocispecs.Image, router Program, rel plan.Release, labels map[string]string, epoch time.Time, second string) ([]byte, error) {
	img.Architecture, img.OS, img.Variant = "arm64", "linux", ""
	created := epoch.UTC()
	img.Created = &created
	img.Config.Entrypoint = []string{router.Entrypoint}
	img.Config.Cmd = slices.Clone(router.Cmd)
	env := append(nvidiaEnv(rel),
		"NVIDIA_VISIBLE_DEVICES", "all",
		"NVIDIA_DRIVER_CAPABILITIES", "compute,utility",
	)
	for _, k := range slices.Sorted(maps.Keys(router.Env)) {
		env = append(env, k, router.Env[k])
	}
	img.Config.Env = setEnv(img.Config.Env, env...)
	if len(router.Ports) > 0 {
		img.Config.ExposedPorts = map[string]struct{}{}
		for _, port := range router.Ports {
			if !strings.Contains(port, "/") {
				port += "/tcp"
			}
			img.Config.ExposedPorts[port] = struct{}{}
		}
	}
	if img.Config.Labels == nil {
		img.Config.Labels = map[string]string{}
	}
	maps.Copy(img.Config.Labels, labels)
	img.History = append(img.History, ocispecs.History{
		Created:   &created,
		CreatedBy: "jetbake: entrypoint, CUDA probe, evidence probe",
		Comment:   "jetbake",
	}, ocispecs.History{
		Created:   &created,
		CreatedBy: second,
		Comment:   "jetbake",
	})
	return json.Marshal(img)
}

// nvidiaEnv is what the image says to NVIDIA's container runtime about the
// CUDA it needs: NVIDIA_REQUIRE_CUDA=cuda>=X, as NVIDIA's images say, and
// NVIDIA_DISABLE_REQUIRE=true, so that the runtime leaves the decision to the
// entrypoint's host rule, whose sentence names the image to use. The runtime
// (nvidia-container-toolkit v1.20, internal/modifier/csv.go,
// checkRequirements) loads the host's libcuda in its own process before the
// container exists, compares cuDriverGetVersion with the requirement and
// stops with "requirements not met: unsatisfied condition: cuda>=12.6
// (cuda=11.4)", naming no image. Without NVIDIA_REQUIRE_CUDA it would derive
// cuda>=CUDA_VERSION from the base's CUDA_VERSION (internal/config/image,
// IsLegacy), so the check is turned off rather than left out. Both CUDA
// flavours need that, for different reasons:
//   - Tegra (JetPack 6 and earlier): what decides is the host's L4T release
//     (an R36.4 image on R36.3 fails; on R35 it needs the JetPack 5 image);
//     the driver's CUDA version is a proxy that names neither.
//   - SBSA (JetPack 7): the check ignores forward-compatibility libraries
//     (compat_orin), which only the enable-cuda-compat hook enables after it,
//     so it refuses a host that the image runs on through them; and it
//     accepts a driver of a later CUDA major, which the host rule refuses.
func nvidiaEnv(rel plan.Release) []string {
	return []string{"NVIDIA_REQUIRE_CUDA", "cuda>=" + rel.CUDA, "NVIDIA_DISABLE_REQUIRE", "true"}
}

// setEnv sets KEY=VALUE pairs in env, replacing earlier values of the same key.
func setEnv(env []string, kv ...string) []string {
	out := slices.Clone(env)
	for i := 0; i+1 < len(kv); i += 2 {
		key, val := kv[i], kv[i+1]
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, key+"=") })
		out = append(out, key+"="+val)
	}
	return out
}

// SMList lists the release's SM targets as their architectures, "sm_87, sm_110".
func SMList(rel plan.Release) string {
	sms := make([]string, len(rel.Targets))
	for i, t := range rel.Targets {
		sms[i] = t.Arch
	}
	return strings.Join(sms, ", ")
}

// Description is the /etc/jetbake/image.json of rel: what the entrypoint
// needs to choose a binary, and every release of the plan (the family) so
// that a failure can name the image that would work.
func Description(p *plan.Plan, rel plan.Release, revision string) ([]byte, error) {
	img := imagespec.Description{
		SchemaVersion: imagespec.SchemaVersion,
		Router:        p.Router.Name,
		Version:       p.Router.Version,
		Release:       rel.Name,
		JetPack:       rel.JetPack,
		L4T:           rel.L4T,
		CUDA:          rel.CUDA,
		Revision:      revision,
		Tags:          rel.Tags,
		Smoke:         p.Router.Smoke,
		Facts:         rel.DeclaredFacts,
	}
	if p.App != nil {
		img.SchemaVersion, img.Kind, img.Check = imagespec.SchemaVersionApp, imagespec.KindApp, p.App.Framework
		img.Router, img.Version, img.Command, img.Smoke = p.App.Name, p.App.Version, slices.Clone(p.App.Command), p.App.Smoke
	}
	for _, t := range rel.Targets {
		img.Targets = append(img.Targets, imagespec.Target{SM: t.SM, Path: t.Path})
	}
	for _, r := range p.Releases {
		sib := imagespec.Sibling{Release: r.Name, JetPack: r.JetPack, L4T: r.L4T, Tags: r.Tags, Tier: r.Tier}
		for _, t := range r.Targets {
			sib.Targets = append(sib.Targets, t.SM)
		}
		img.Family = append(img.Family, sib)
	}
	if err := img.Validate(); err != nil {
		return nil, fmt.Errorf("release %s: image description: %w", rel.Name, err)
	}
	return json.MarshalIndent(img, "", "  ")
}
