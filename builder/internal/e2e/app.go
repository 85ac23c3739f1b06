package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/cli"
	"github.com/jetbake/jetbake/builder/internal/pyindex"
	"github.com/jetbake/jetbake/builder/internal/standin"
)

// The app of TestApp and `make demo`: OBLITERATUS from the local package
// index, in a user's repository of its own.
const (
	// AppRepository is the app's repository under the registry's host.
	AppRepository = "acme/obliteratus"
	// AppVersion is the app's version in its tags (0.1.0-jetpack6.2).
	AppVersion = "0.1.0"
	// AppShadow is the variant whose pip installs a dependency that pulls
	// PyPI's torch into the venv, shadowing the vendor torch.
	AppShadow = "shadow"
	// AppShadowStep replaces init's pip step in that variant.
	AppShadowStep = "RUN python -m pip install obliteratus torchy-helper"
	// AppBroken is the variant whose install leaves the app's command
	// broken: its smoke run (init's --help) fails.
	AppBroken = "broken"
	// AppBrokenStep follows init's pip step in that variant.
	AppBrokenStep = "RUN rm /opt/venv/lib/python3.11/site-packages/obliteratus/cli.py"
	// AppBitsandbytes is the variant that installs bitsandbytes' SBSA wheel.
	AppBitsandbytes = "bnb"
	// AppBitsandbytesStep follows init's pip step in that variant.
	AppBitsandbytesStep = "RUN python -m pip install --no-deps bitsandbytes"
	// AppTqdmStep is a user's own step after init's pip step: a newer
	// tqdm than the one NGC pins, in the venv. tqdm cannot break torch:
	// the build warns and goes on.
	AppTqdmStep = "RUN python -m pip install --no-deps tqdm==" + pyindex.Tqdm
)

// appPyproject is the user's project: OBLITERATUS from the package index,
// with an in-tree build backend (PEP 517 backend-path) so that pip builds
// it with nothing from the index but the app: an offline build's
// pyproject.toml, as the test bed has no setuptools to serve.
const appPyproject = `[build-system]
requires = []
build-backend = "backend"
backend-path = ["_build"]

[project]
name = "obliteratus-jetson"
version = "0.1.0"
dependencies = ["obliteratus==0.1.0"]
`

// appBackend is that backend: a wheel of the project's metadata alone.
const appBackend = `import base64, hashlib, os, zipfile

NAME, VERSION = "obliteratus_jetson", "0.1.0"
FILES = {
    NAME + "-" + VERSION + ".dist-info/METADATA": "Metadata-Version: 2.1\nName: obliteratus-jetson\nVersion: 0.1.0\nRequires-Dist: obliteratus==0.1.0\n",
    NAME + "-" + VERSION + ".dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = NAME + "-" + VERSION + "-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        for path, body in FILES.items():
            data = body.encode()
            whl.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
        rec = NAME + "-" + VERSION + ".dist-info/RECORD"
        record.append(rec + ",,")
        whl.writestr(rec, "\n".join(record) + "\n")
    return name
`

// StartAppBed pushes the stand-in PyTorch bases of init's app matrix (its
// JetPack 6.2 and 7.0 lines) to the registry and starts the package index;
// Close the index when done.
func StartAppBed(ctx context.Context, kit standin.Kit, registry string) (*pyindex.Index, error) {
	for _, jp := range []string{"6.2", "7.0"} {
		if _, err := standin.PyTorchBase(ctx, kit, registry, jp); err != nil {
			return nil, fmt.Errorf("stand-in PyTorch base of JetPack %s: %w", jp, err)
		}
	}
	return pyindex.Start(ctx, kit)
}

// WriteAppRepo writes a user's repository of its own into dir: what
// `jetbake init --app pytorch` writes, the matrix edited as a user would
// (the app's name and command, the registry's repository, the package
// index as a build arg), and the project, committed.
func WriteAppRepo(ctx context.Context, dir, indexURL, repository string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "matrix.json")
	var out, errOut bytes.Buffer
	if code := cli.Run(ctx, []string{"init", "-f", path, "--app", "pytorch", "--repository", repository,
		"--source", "https://github.com/acme/obliteratus-jetson"}, &out, &errOut); code != 0 {
		return fmt.Errorf("jetbake init --app pytorch: exit %d: %s", code, strings.TrimSpace(errOut.String()))
	}
	if err := EditMatrix(path, func(m map[string]any) {
		app := m["app"].(map[string]any)
		app["name"], app["command"] = "obliteratus", []string{"/opt/venv/bin/obliteratus"}
		app["build_args"] = map[string]string{"PIP_INDEX_URL": indexURL}
	}); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "_build"), 0o755); err != nil {
		return err
	}
	for name, body := range map[string]string{"pyproject.toml": appPyproject, "_build/backend.py": appBackend} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "app"}} {
		if out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", args[0], err, out)
		}
	}
	return nil
}

// EditMatrix changes the matrix file at path.
func EditMatrix(path string, edit func(map[string]any)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	edit(m)
	if data, err = json.MarshalIndent(m, "", "  "); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// AppVariant writes a variant of the repository's matrix (matrix-NAME.json)
// that builds Dockerfile.NAME, init's Dockerfile with step after it (or in
// place of its pip step, with replace), into the repository suffixed
// -NAME: its own tags, none of which may exist after a refusal. It returns
// the variant matrix's path.
func AppVariant(repo, name, step string, replace bool) (string, error) {
	data, err := os.ReadFile(filepath.Join(repo, "Dockerfile"))
	if err != nil {
		return "", err
	}
	text := string(data)
	if replace {
		i := strings.Index(text, "RUN set -eu;")
		if i < 0 {
			return "", errors.New("init's Dockerfile has no pip step (RUN set -eu;)")
		}
		text = text[:i]
	}
	if err := os.WriteFile(filepath.Join(repo, "Dockerfile."+name), []byte(text+step+"\n"), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(repo, "matrix-"+name+".json")
	if data, err = os.ReadFile(filepath.Join(repo, "matrix.json")); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", err
	}
	return path, EditMatrix(path, func(m map[string]any) {
		m["app"].(map[string]any)["dockerfile"] = "Dockerfile." + name
		img := m["image"].(map[string]any)
		img["repository"] = img["repository"].(string) + "-" + name
	})
}
