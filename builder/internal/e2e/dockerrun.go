package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/jetbake/jetbake/builder/internal/runimage"
)

// DockerRunArgs are the `docker run` arguments of one run: the arm64
// platform; the host's view bind-mounted read-only where the NVIDIA runtime
// shows a Jetson's facts to a container (its sys/ over /sys, with
// devices/soc0, and etc/nv_tegra_release over /etc/nv_tegra_release), so that
// the entrypoint reads them as on a Jetson (JETBAKE_SYSROOT would move the
// image's own files too); the host's GPU device nodes with --device, as
// the runtime adds them; the host's driver library at its path and as its
// links, and its /proc/cpuinfo; a host without Root gets nothing, as without
// `--runtime nvidia`; the host's Env and each entry of env as -e; the image;
// then args exactly as an operator types them after the image name.
//
// Docker without NVIDIA's runtime has no update-ldcache hook: LD_LIBRARY_PATH
// names the driver's folder instead, which also replaces the image's own
// (these runs use static-linking images, which need no other folder).
func DockerRunArgs(image string, host runimage.Host, env, args []string) []string {
	out := []string{"run", "--rm", "--platform", "linux/arm64"}
	if host.Root != "" {
		out = append(out, "-v", filepath.Join(host.Root, "sys")+":/sys:ro")
		if release := filepath.Join(host.Root, "etc", "nv_tegra_release"); fileExists(release) {
			out = append(out, "-v", release+":/etc/nv_tegra_release:ro")
		}
	}
	for _, d := range host.Devices {
		out = append(out, "--device", filepath.Join(host.Root, d)+":"+d)
	}
	var dirs []string
	for _, l := range host.Libs {
		out = append(out, "-v", l.Source+":"+l.Path+":ro")
		for _, link := range l.Links {
			out = append(out, "-v", l.Source+":"+filepath.Join(filepath.Dir(l.Path), link)+":ro")
		}
		if d := filepath.Dir(l.Path); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) > 0 {
		out = append(out, "-e", "LD_LIBRARY_PATH="+strings.Join(dirs, ":"))
	}
	if host.CPUInfo != "" {
		out = append(out, "-v", host.CPUInfo+":/proc/cpuinfo:ro")
	}
	for _, e := range append(slices.Clone(host.Env), env...) {
		out = append(out, "-e", e)
	}
	out = append(out, image)
	return append(out, args...)
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// RunDockerChecks runs every check with `docker run` on engine d. images maps
// a release to the image reference loaded in the engine; env is added to
// every run (see DockerRunArgs).
func RunDockerChecks(ctx context.Context, d *Dockerd, images map[string]string, hostsByName map[string]runimage.Host, checks []Check, env ...string) []Outcome {
	return runEach(images, hostsByName, checks, func(image string, host runimage.Host, c Check) (runimage.Result, error) {
		return d.Docker(ctx, DockerRunArgs(image, host, env, c.Args)...)
	})
}

// DockerLoad loads a docker-tarball into the engine and returns the image
// references it named ("Loaded image: REF").
func DockerLoad(ctx context.Context, d *Dockerd, tarball string) ([]string, error) {
	res, err := d.Docker(ctx, "load", "--input", tarball)
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("docker load %s: exit %d: %s", tarball, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	var loaded []string
	for _, line := range strings.Split(res.Stdout, "\n") {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(line), "Loaded image: "); ok {
			loaded = append(loaded, ref)
		}
	}
	if len(loaded) == 0 {
		return nil, fmt.Errorf("docker load %s named no image: %s", tarball, strings.TrimSpace(res.Stdout))
	}
	return loaded, nil
}

// DockerInspect is the part of `docker image inspect` the tests read.
type DockerInspect struct {
	// ID is the image's config digest.
	ID string `json:"Id"`
	// RepoTags are the names the image has in the engine.
	RepoTags []string `json:"RepoTags"`
	// Architecture and Os are the image's platform.
	Architecture string `json:"Architecture"`
	Os           string `json:"Os"`
	// Config is the image config as Docker reads it.
	Config v1.Config `json:"Config"`
}

// DockerImageInspect returns what Docker reads from an image's config.
func DockerImageInspect(ctx context.Context, d *Dockerd, image string) (DockerInspect, error) {
	res, err := d.Docker(ctx, "image", "inspect", image)
	if err != nil {
		return DockerInspect{}, err
	}
	if res.ExitCode != 0 {
		return DockerInspect{}, fmt.Errorf("docker image inspect %s: exit %d: %s", image, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	var out []DockerInspect
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		return DockerInspect{}, fmt.Errorf("docker image inspect %s: %w", image, err)
	}
	if len(out) != 1 {
		return DockerInspect{}, fmt.Errorf("docker image inspect %s: %d images", image, len(out))
	}
	return out[0], nil
}
