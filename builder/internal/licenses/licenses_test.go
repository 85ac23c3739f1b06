package licenses

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/licensecheck"
	"github.com/stretchr/testify/require"
)

const root = "../../.."

// binaries are the packages of what jetbake ships: the CLI, and the
// entrypoint and CUDA probe that go into every image.
func binaries() []string {
	return []string{"./builder/cmd/jetbake", "./entrypoint", "./entrypoint/cudaprobe"}
}

// releaseBuilds are the configurations `make release` builds: linux/amd64
// and linux/arm64, with the entrypoints embedded. The overlay stands in
// for the folder of entrypoint binaries that `make release` fills, so that
// the embed pattern resolves without building them.
func releaseBuilds(t *testing.T) []Build {
	t.Helper()
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	overlay := filepath.Join(t.TempDir(), "overlay.json")
	embedded := filepath.Join(abs, "builder", "entrypoints", "embedded", "linux-arm64", "jetbake-entrypoint")
	require.NoError(t, os.WriteFile(overlay, []byte(`{"Replace":{`+quote(embedded)+`:`+quote(empty)+`}}`), 0o644))
	var builds []Build
	for _, arch := range []string{"amd64", "arm64"} {
		builds = append(builds, Build{
			Env:   []string{"GOOS=linux", "GOARCH=" + arch, "CGO_ENABLED=0"},
			Flags: []string{"-tags=jetbake_embed", "-overlay=" + overlay},
		})
	}
	return builds
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// Every module linked into jetbake's release binaries has a license that
// an Apache-2.0 program may link, read from the module cache.
func TestShippedBinaries(t *testing.T) {
	r, err := Scan(t.Context(), root, binaries(), releaseBuilds(t)...)
	require.NoError(t, err)
	var table strings.Builder
	require.NoError(t, r.WriteTable(&table))
	t.Log("\n" + table.String())
	require.NoError(t, r.Err())

	// The scan reached the modules it must: BuildKit, go-containerregistry,
	// the standard library, and one weak-copyleft module (category B).
	for path, id := range map[string]string{
		"github.com/moby/buildkit":               "Apache-2.0",
		"github.com/google/go-containerregistry": "Apache-2.0",
		StdModule:                                "BSD-3-Clause",
		"github.com/hashicorp/go-cleanhttp":      "MPL-2.0",
	} {
		m := r.Find(path)
		require.NotNil(t, m, "the scan lists %s", path)
		require.NotEmpty(t, m.Files, path)
		require.Contains(t, m.Files[0].IDs, id, path)
		require.Equal(t, Compatible, m.Files[0].Verdict, path)
	}
	std := r.Find(StdModule)
	require.Contains(t, names(std.Files), "src/crypto/internal/boring/LICENSE")
	for _, f := range std.Files {
		if f.Name == "src/crypto/internal/boring/LICENSE" {
			require.Equal(t, NotLinked, f.Verdict, "BoringSSL is linked only with GOEXPERIMENT=boringcrypto")
		}
	}
	// Test-only modules are not linked.
	require.Nil(t, r.Find("github.com/stretchr/testify"))
	require.Nil(t, r.Find("github.com/rhysd/actionlint"))
}

// jetbake's own LICENSE is the Apache License 2.0, the whole text.
func TestProjectLicense(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	require.NoError(t, err)
	cov := licensecheck.Scan(data)
	require.Len(t, cov.Match, 1)
	require.Equal(t, "Apache-2.0", cov.Match[0].ID)
	require.InDelta(t, 100, cov.Percent, 0.01)
}

// The fixture module links a copyleft module, a proprietary one, one with
// no license file and a permissive one: each of the first three is named
// with what is wrong and the fix, the permissive one passes, its
// documentation license is listed and not judged, and a copied package
// inside it is judged by its own license file.
func TestPlantedLicenses(t *testing.T) {
	r, err := Scan(t.Context(), "testdata/app", []string{"."},
		Build{Env: []string{"GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local"}})
	require.NoError(t, err)
	err = r.Err()
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "module example.com/copyleft: LICENSE: not compatible with Apache-2.0: GPL-3.0-or-later "+
		"(ASF category X: copyleft that would cover jetbake's binaries): replace the dependency")
	require.Contains(t, msg, "module example.com/proprietary: LICENSE: not identified: 0% of its text is a known license (none)")
	require.Contains(t, msg, "add its SPDX identifier to builder/internal/licenses/policy.go")
	require.Contains(t, msg, "module example.com/nolicense: no license file from package example.com/nolicense up to the module's root: code without a license may not be used")
	require.NotContains(t, msg, "example.com/permissive")
	require.Len(t, strings.Split(msg, "\n"), 3)

	p := r.Find("example.com/permissive")
	require.NotNil(t, p)
	require.Empty(t, p.Problem)
	require.Equal(t, []string{"LICENSE", "LICENSE.docs", "vendored/LICENSE"}, names(p.Files))
	require.Equal(t, []string{"MIT"}, p.Files[0].IDs)
	require.Equal(t, NotLinked, p.Files[1].Verdict)
	require.Equal(t, []string{"BSD-3-Clause"}, p.Files[2].IDs)

	std := r.Find(StdModule)
	require.NotNil(t, std, "the standard library is listed too")
	require.Empty(t, std.Problem)
}

func names(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

// The verdict on one file's licenses, as a table.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		ids     []string
		percent float64
		want    Verdict
		reason  string
	}{
		{[]string{"Apache-2.0"}, 100, Compatible, "category A"},
		{[]string{"MIT"}, 97.7, Compatible, "category A"},
		{[]string{"MPL-2.0"}, 100, Compatible, "category B"},
		{[]string{"Apache-2.0", "BSD-3-Clause"}, 100, Compatible, "category A"},
		{[]string{"MIT"}, 60, Unidentified, "60% of its text is a known license (MIT), 80% needed"},
		{nil, 0, Unidentified, "(none)"},
		{[]string{"MIT", "AGPL-3.0"}, 100, Incompatible, "AGPL-3.0 (ASF category X: network copyleft"},
		{[]string{"LGPL-2.1"}, 100, Incompatible, "LGPL-2.1 (ASF category X: copyleft"},
		{[]string{"CommonsClause"}, 40, Incompatible, "restricts use"},
		{[]string{"Beerware"}, 100, Incompatible, "Beerware (not on the list"},
	} {
		got, reason := judgeIDs(tc.ids, tc.percent)
		require.Equal(t, tc.want, got, "%v", tc.ids)
		require.Contains(t, reason, tc.reason, "%v", tc.ids)
	}
}

// Every identifier of the policy is one that licensecheck reports: a typo
// there would leave a license unjudged.
func TestPolicyIDs(t *testing.T) {
	known := map[string]bool{}
	for _, l := range licensecheck.BuiltinLicenses() {
		known[l.ID] = true
	}
	for id := range policy() {
		require.True(t, known[id], "licensecheck has no license %s", id)
	}
}
