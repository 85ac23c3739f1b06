package lock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
)

const (
	jetpackBase = "nvcr.io/nvidia/l4t-jetpack:r36.4.0"
	l4tCUDABase = "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"
	cudaDevel   = "nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04"
	cudaRuntime = "nvcr.io/nvidia/cuda:13.2.0-runtime-ubuntu24.04"
)

// testPlan has two releases sharing their bases and one with its own.
func testPlan() *plan.Plan {
	return &plan.Plan{Releases: []plan.Release{
		{Name: "jetpack6.1", BuildBase: jetpackBase, RuntimeBase: l4tCUDABase},
		{Name: "jetpack6.2", BuildBase: jetpackBase, RuntimeBase: l4tCUDABase},
		{Name: "jetpack7.2", BuildBase: cudaDevel, RuntimeBase: cudaRuntime},
	}}
}

// pushRandom pushes a small image with a random file to host under ref's
// repository and tag, and returns its digest. Like the real bases, it holds
// a CUDA tree: Tegra CUDA 12.6 for the l4t images, SBSA CUDA 13.2 for the
// others.
func pushRandom(t *testing.T, host, ref string) string {
	t.Helper()
	if strings.Contains(ref, "/l4t-") {
		return pushBase(t, host, ref, computecap.FlavourTegra, "12.6.11")
	}
	return pushBase(t, host, ref, computecap.FlavourSBSA, "13.2.0")
}

// pushBase pushes an image holding CUDA cuda of flavour f and a random
// file to host under ref's repository and tag, and returns its digest.
func pushBase(t *testing.T, host, ref string, f computecap.Flavour, cuda string) string {
	t.Helper()
	return testregistry.Push(t, host, ref, testregistry.CUDAImage(t, f.TargetDir(), cuda))
}

// mirrorTo resolves nvcr.io references to host, as `--mirror nvcr.io=HOST` does.
func mirrorTo(host string) Resolver {
	m := refs.Mirrors{"nvcr.io": host}
	return func(ref string) (string, error) { return m.Rewrite(ref, "") }
}

// pushAll pushes a random image for every base of testPlan.
func pushAll(t *testing.T, host string) map[string]string {
	t.Helper()
	digests := map[string]string{}
	for _, ref := range []string{jetpackBase, l4tCUDABase, cudaDevel, cudaRuntime} {
		digests[ref] = pushRandom(t, host, ref)
	}
	return digests
}

func TestBases(t *testing.T) {
	require.Equal(t, []string{cudaDevel, cudaRuntime, l4tCUDABase, jetpackBase}, Bases(testPlan()))
	require.Empty(t, Bases(&plan.Plan{}))
	app := &plan.Plan{App: &plan.App{Name: "obliteratus"}, Releases: []plan.Release{
		{Name: "jetpack6.2", Base: "nvcr.io/nvidia/pytorch:25.06-py3-igpu"}, {Name: "jetpack7.0", Base: "nvcr.io/nvidia/pytorch:25.08-py3"}}}
	require.Equal(t, []string{"nvcr.io/nvidia/pytorch:25.06-py3-igpu", "nvcr.io/nvidia/pytorch:25.08-py3"}, Bases(app), "an app's framework containers, no empty refs")
}

func TestResolve(t *testing.T) {
	host := testregistry.New(t)
	want := pushAll(t, host)
	f, err := Resolve(t.Context(), testPlan(), mirrorTo(host))
	require.NoError(t, err)
	require.Equal(t, 1, f.SchemaVersion)
	require.Equal(t, want, f.Bases)
	require.Len(t, f.Contents, len(want))
	for ref, d := range want {
		require.Equal(t, d, f.Contents[ref].Digest, ref)
	}
	require.Equal(t, "Tegra CUDA 12.6.11", f.Contents[l4tCUDABase].Describe())
	require.Equal(t, "SBSA CUDA 13.2.0", f.Contents[cudaRuntime].Describe())
}

func TestResolveErrors(t *testing.T) {
	host := testregistry.New(t)
	pushRandom(t, host, jetpackBase)
	p := &plan.Plan{Releases: []plan.Release{{Name: "jetpack6.2", BuildBase: jetpackBase, RuntimeBase: l4tCUDABase}}}

	t.Run("missing tag", func(t *testing.T) {
		_, err := Resolve(t.Context(), p, mirrorTo(host))
		require.Error(t, err)
		require.Contains(t, err.Error(), "resolve base "+l4tCUDABase)
		require.Contains(t, err.Error(), host+"/nvidia/l4t-cuda:12.6.11-runtime")
	})
	t.Run("resolver fails", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := Resolve(t.Context(), p, func(string) (string, error) { return "", boom })
		require.ErrorIs(t, err, boom)
	})
	t.Run("resolver returns a bad reference", func(t *testing.T) {
		_, err := Resolve(t.Context(), p, func(string) (string, error) { return "Not A Ref", nil })
		require.Error(t, err)
		require.Contains(t, err.Error(), "base "+l4tCUDABase)
		require.Contains(t, err.Error(), "Not A Ref")
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := Resolve(ctx, p, mirrorTo(host))
		require.Error(t, err)
	})
}

func TestCheck(t *testing.T) {
	host := testregistry.New(t)
	p := testPlan()
	pushAll(t, host)
	f, err := Resolve(t.Context(), p, mirrorTo(host))
	require.NoError(t, err)

	require.NoError(t, f.Check(t.Context(), p, mirrorTo(host)))

	old := f.Bases[l4tCUDABase]
	moved := pushRandom(t, host, l4tCUDABase)
	require.NotEqual(t, old, moved)
	err = f.Check(t.Context(), p, mirrorTo(host))
	require.Error(t, err)
	require.Contains(t, err.Error(), l4tCUDABase+" moved from "+old+" to "+moved)
	require.Contains(t, err.Error(), "jetbake lock")
	require.NotContains(t, err.Error(), jetpackBase)

	delete(f.Bases, cudaDevel)
	err = f.Check(t.Context(), p, mirrorTo(host))
	require.Error(t, err)
	require.Contains(t, err.Error(), cudaDevel+" is not in the lock file")
	require.Contains(t, err.Error(), l4tCUDABase+" moved")
}

// TestCheckAllReportsUnusedPins keeps a pin for a base no release uses any
// more: `jetbake lock --check` (CheckAll) reports it, a build of a subset of
// releases (Check) does not.
func TestCheckAllReportsUnusedPins(t *testing.T) {
	host := testregistry.New(t)
	p := testPlan()
	pushAll(t, host)
	f, err := Resolve(t.Context(), p, mirrorTo(host))
	require.NoError(t, err)
	require.NoError(t, f.CheckAll(t.Context(), p, mirrorTo(host)))
	const gone = "nvcr.io/nvidia/l4t-jetpack:r35.4.1"
	f.Bases[gone] = "sha256:" + strings.Repeat("a", 64)
	require.Equal(t, []string{gone}, f.Unused(p))
	require.NoError(t, f.Check(t.Context(), p, mirrorTo(host)))
	err = f.CheckAll(t.Context(), p, mirrorTo(host))
	require.ErrorContains(t, err, "the lock file is stale: "+gone+" is pinned but no release uses it; run 'jetbake lock'")
}

func TestCheckResolveFails(t *testing.T) {
	host := testregistry.New(t)
	f := &File{SchemaVersion: 1, Bases: map[string]string{jetpackBase: "sha256:x"}}
	p := &plan.Plan{Releases: []plan.Release{{Name: "r", BuildBase: jetpackBase, RuntimeBase: jetpackBase}}}
	err := f.Check(t.Context(), p, mirrorTo(host))
	require.Error(t, err)
	require.Contains(t, err.Error(), "resolve base "+jetpackBase)
}

func TestMissing(t *testing.T) {
	f := &File{SchemaVersion: 1, Bases: map[string]string{
		jetpackBase:               "sha256:a",
		l4tCUDABase:               "",
		"nvcr.io/nvidia/unused:1": "sha256:b",
	}}
	require.Equal(t, []string{cudaDevel, cudaRuntime, l4tCUDABase}, f.Missing(testPlan()))

	full := &File{SchemaVersion: 1, Bases: map[string]string{
		jetpackBase: "sha256:a", l4tCUDABase: "sha256:b", cudaDevel: "sha256:c", cudaRuntime: "sha256:d",
	}}
	require.Empty(t, full.Missing(testPlan()))
}

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DefaultFile)
	digestA := "sha256:" + strings.Repeat("a", 64)
	digestB := "sha256:" + strings.Repeat("b", 64)
	f := &File{SchemaVersion: 1, Bases: map[string]string{jetpackBase: digestA, cudaDevel: digestB}}
	require.NoError(t, f.Write(path))

	got, err := Read(path)
	require.NoError(t, err)
	require.Equal(t, f, got)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(data), "}\n"), "ends with a newline")
	require.Contains(t, string(data), `"schema_version": 1`)

	// Overwriting replaces the file and leaves no temporary file behind.
	digestC := "sha256:" + strings.Repeat("c", 64)
	f.Bases[jetpackBase] = digestC
	require.NoError(t, f.Write(path))
	got, err = Read(path)
	require.NoError(t, err)
	require.Equal(t, digestC, got.Bases[jetpackBase])
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, DefaultFile, entries[0].Name())
}

func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	err := (&File{SchemaVersion: 1}).Write(filepath.Join(dir, "missing", DefaultFile))
	require.Error(t, err)
	require.Contains(t, err.Error(), "write ")

	// A folder in the way: the rename fails and the temporary file is removed.
	target := filepath.Join(dir, DefaultFile)
	require.NoError(t, os.MkdirAll(filepath.Join(target, "child"), 0o755))
	require.Error(t, (&File{SchemaVersion: 1}).Write(target))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
}

// TestRead gives Read the lock files a careless edit leaves: each problem
// names the file, the line and column, the field, the value and the fix,
// as the matrix's do, and none is Go's raw JSON error.
func TestRead(t *testing.T) {
	const fix = "; fix: run 'jetbake lock' to write it anew"
	tests := []struct {
		name    string
		content string
		wantErr string
	}{
		{name: "cut short", content: "{", wantErr: ":1:2: $: not valid JSON at line 1, column 2: unexpected end of the file; fix: correct the JSON at that place, or run 'jetbake lock' to write it anew"},
		{name: "empty", content: "", wantErr: ":1:1: $: not valid JSON at line 1, column 1: unexpected end of the file; fix: correct the JSON at that place, or run 'jetbake lock' to write it anew"},
		{name: "wrong type", content: `{"schema_version": "1"}`, wantErr: `:1:20: schema_version: "1": must be a whole number, not a string` + fix},
		{name: "matrix given as the lock", content: "{\n  \"releases\": []\n}", wantErr: `:2:15: releases: unknown field; fix: remove it; known fields here: bases, contents, git_contexts, schema_version`},
		{name: "array of bases", content: `{"schema_version": 1, "bases": ["a"]}`, wantErr: ":1:32: bases: must be an object, not an array" + fix},
		{name: "NUL", content: "\x00", wantErr: `:1:1: $: not valid JSON at line 1, column 1: invalid character '\x00' at start of value; fix: correct the JSON at that place, or run 'jetbake lock' to write it anew`},
		{name: "unknown version", content: `{"schema_version": 2, "bases": {}}`, wantErr: ":1:20: schema_version: 2: is not a lock file schema this jetbake reads (1)" + fix},
		{name: "no version", content: `{"bases": {}}`, wantErr: ":1:1: schema_version: is missing: jetbake writes it in every lock file" + fix},
		{name: "bad digest", content: `{"schema_version": 1, "bases": {"nvcr.io/nvidia/x:1": "sha256:abc"}}`,
			wantErr: `:1:55: bases["nvcr.io/nvidia/x:1"]: "sha256:abc": is not a digest such as sha256:<64 hex digits>` + fix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), DefaultFile)
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o644))
			_, err := Read(path)
			require.EqualError(t, err, path+tt.wantErr)
			var fe *matrix.FileError
			require.ErrorAs(t, err, &fe, "a lock file that does not read is bad input: exit 2")
		})
	}
	_, err := Read(filepath.Join(t.TempDir(), DefaultFile))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// The digest Resolve records is the one the registry serves for the tag,
// index or image alike.
func TestResolveIndex(t *testing.T) {
	host := testregistry.New(t)
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: testregistry.CUDAImage(t, computecap.FlavourSBSA.TargetDir(), "13.2.0"),
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}})
	dst, err := name.ParseReference(host+"/nvidia/cuda:13.2.0-devel-ubuntu24.04", name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(dst, idx))
	want, err := idx.Digest()
	require.NoError(t, err)
	p := &plan.Plan{Releases: []plan.Release{{Name: "jetpack7.2", BuildBase: cudaDevel, RuntimeBase: cudaDevel}}}
	f, err := Resolve(t.Context(), p, mirrorTo(host))
	require.NoError(t, err)
	require.Equal(t, map[string]string{cudaDevel: want.String()}, f.Bases)
	require.Equal(t, want.String(), f.Contents[cudaDevel].Digest)
}

// Without a resolver, the references are fetched as written; a registry on
// 127.0.0.1 is reached over plain HTTP.
func TestResolveWithoutResolver(t *testing.T) {
	host := testregistry.New(t)
	ref := host + "/jetbake/base:1"
	want := pushRandom(t, host, ref)
	p := &plan.Plan{Releases: []plan.Release{{Name: "r", BuildBase: ref, RuntimeBase: ref}}}
	f, err := Resolve(t.Context(), p, nil)
	require.NoError(t, err)
	require.Equal(t, map[string]string{ref: want}, f.Bases)
}

func TestWriteIsReadableByOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), DefaultFile)
	require.NoError(t, (&File{SchemaVersion: 1, Bases: map[string]string{}}).Write(path))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), info.Mode().Perm())
}

// TestDefaultPathStaysInTheRepository makes matrix.lock.json a link to a
// file outside the matrix's folder: the default lock file is refused.
func TestDefaultPathStaysInTheRepository(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	matrixPath := filepath.Join(dir, "matrix.json")
	got, err := DefaultPath(matrixPath)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, DefaultFile), got)
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.json"), []byte("{}"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, DefaultFile)))
	_, err = DefaultPath(matrixPath)
	require.EqualError(t, err, "lock file "+filepath.Join(dir, DefaultFile)+" leads to "+filepath.Join(outside, "secret.json")+
		", outside the matrix's repository "+dir+": replace the link with the file, or name another lock file")
	var leads *OutsideError
	require.ErrorAs(t, err, &leads)
	require.True(t, leads.BadInput())
	_, err = Pins(t.Context(), &plan.Plan{}, PinsOptions{MatrixPath: matrixPath})
	require.ErrorContains(t, err, "outside the matrix's repository")
}

// TestCheckWithoutLockFile asks for a check with no lock file beside the
// matrix: a *NoLockFileError naming where it was looked for, not a build
// from the tags.
func TestCheckWithoutLockFile(t *testing.T) {
	dir := t.TempDir()
	_, err := Pinned(t.Context(), &plan.Plan{}, PinsOptions{MatrixPath: filepath.Join(dir, "matrix.json"), Check: true})
	var missing *NoLockFileError
	require.ErrorAs(t, err, &missing)
	require.Equal(t, filepath.Join(dir, DefaultFile), missing.Path)
	require.EqualError(t, err, "no lock file at "+missing.Path+" to check the pins of; run 'jetbake lock' first")
	lf, err := Pinned(t.Context(), &plan.Plan{}, PinsOptions{MatrixPath: filepath.Join(dir, "matrix.json")})
	require.NoError(t, err, "without Check a missing lock file builds from the tags")
	require.Nil(t, lf)
}

// A release's cross build base is pinned as the other bases are, after a
// check that it has a linux/amd64 image, and read for no CUDA contents;
// a moved one is reported, and a lock that lacks it does not pin the plan.
func TestCrossBuildBase(t *testing.T) {
	const crossBase = "nvcr.io/example/tei-cross:cuda12.6"
	host := testregistry.New(t)
	want := pushAll(t, host)
	amd64 := func(t *testing.T, arch string) v1.Image {
		img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: arch, RootFS: v1.RootFS{Type: "layers"}})
		require.NoError(t, err)
		return img
	}
	p := testPlan()
	p.Releases[1].CrossBuildBase = crossBase
	p.Releases[2].CrossBuildBase = crossBase
	require.Equal(t, []string{crossBase}, CrossBases(p))
	require.Contains(t, Bases(p), crossBase)

	want[crossBase] = testregistry.Push(t, host, crossBase, amd64(t, "amd64"))
	f, err := Resolve(t.Context(), p, mirrorTo(host))
	require.NoError(t, err)
	require.Equal(t, want, f.Bases, "the cross build base pinned beside the others")
	require.NotContains(t, f.Contents, crossBase, "no CUDA contents read of it")
	require.Empty(t, f.MissingContents(p))
	require.Empty(t, f.Missing(p))
	require.NoError(t, f.CheckAll(t.Context(), p, mirrorTo(host)))

	old := *f
	old.Bases = map[string]string{}
	for ref, d := range f.Bases {
		if ref != crossBase {
			old.Bases[ref] = d
		}
	}
	require.Equal(t, []string{crossBase}, old.Missing(p), "a lock written before cross bases were locked")

	// The tag moves: lock --check says so.
	moved := testregistry.Push(t, host, crossBase, mutate.Annotations(amd64(t, "amd64"), map[string]string{"moved": "yes"}).(v1.Image))
	require.NotEqual(t, want[crossBase], moved)
	err = f.CheckAll(t.Context(), p, mirrorTo(host))
	require.ErrorContains(t, err, crossBase+" moved from "+want[crossBase]+" to "+moved)

	// An arm64 image is no cross build base.
	testregistry.Push(t, host, crossBase, amd64(t, "arm64"))
	_, err = Resolve(t.Context(), p, mirrorTo(host))
	require.ErrorContains(t, err, "cross build base "+crossBase+" has no linux/amd64 image (it has: [linux/arm64])")

	// An index that lists linux/amd64 is one.
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: amd64(t, "arm64"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: amd64(t, "amd64"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})
	ref, err := name.ParseReference(strings.Replace(crossBase, "nvcr.io", host, 1))
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(ref, idx))
	d, err := idx.Digest()
	require.NoError(t, err)
	f, err = Resolve(t.Context(), p, mirrorTo(host))
	require.NoError(t, err)
	require.Equal(t, d.String(), f.Bases[crossBase], "the index's digest: BuildKit picks the node's platform from it")
}
