package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/matrix"
)

// The entrypoint's golden probe output (the smoke run), the same with the
// cuda-kernel and serve checks (level serve, what "supported" needs), and
// their digest.
const (
	probeGolden  = "../../entrypoint/testdata/probe/orin-nano-jp6-pass.json"
	probeServing = "../evidence/testdata/orin-nano-jp6-serve.json"
	probeDigest  = "sha256:c2efadaaded60d602d1449d0432fe96f50982be593ee63a57a6d330dc8181799"
	newerDigest  = "sha256:3bfcb1f42ae944118cfffba59c059f10ac8b96060bd8a41af56b6f94ce3936d0"
)

// runEv runs jetbake with the evidence and support commands registered, as
// root.go will.
func runEv(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut, WithVersion("1.2.3-test"),
		WithCommands(newEvidenceCommand, newSupportCommand))
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// supportedMatrix is the shipped matrix with jetpack6.2 claiming "supported".
func supportedMatrix(t *testing.T) string {
	t.Helper()
	return matrixCopy(t, func(doc map[string]any) { releaseOf(doc, 2)["tier"] = "supported" })
}

// probeFile writes the serving evidence, dated an hour ago and changed by
// edit, to a file and returns its path.
func probeFile(t *testing.T, edit func(ev *evidence.Evidence)) string {
	t.Helper()
	return evidenceFile(t, probeServing, edit)
}

// evidenceFile writes the evidence of golden, dated an hour ago and
// changed by edit, to a file and returns its path.
func evidenceFile(t *testing.T, golden string, edit func(ev *evidence.Evidence)) string {
	t.Helper()
	data, err := os.ReadFile(golden)
	require.NoError(t, err)
	ev, err := evidence.Parse(data)
	require.NoError(t, err)
	ev.GeneratedAt = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	if edit != nil {
		edit(ev)
	}
	out, err := ev.Marshal()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "evidence.json")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	return path
}

// buildMetadata writes a build report with jetpack6.2 built as digest.
func buildMetadata(t *testing.T, digest string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "build.json")
	r := &imagebuild.Report{Revision: "677e5d8f2a41c0b9e6d3f1a2b4c5d6e7f8091a2b", Releases: []imagebuild.ReleaseReport{
		{Name: "jetpack6.2", Outcome: imagebuild.Succeeded, Digest: digest},
	}}
	require.NoError(t, r.WriteFile(path))
	return path
}

func TestEvidenceAddAndSupport(t *testing.T) {
	path := supportedMatrix(t)
	md := buildMetadata(t, probeDigest)
	file := probeFile(t, nil)

	r := runEv(t, "evidence", "add", file, "--matrix", path, "--metadata-file", md, "--registry=false")
	require.Equal(t, 0, r.code, r.stderr)
	stored := filepath.Join(filepath.Dir(path), "evidence", "jetpack6.2",
		"c2efadaaded6-jetson-orin-nano-super-"+time.Now().Add(-time.Hour).UTC().Format(time.DateOnly)+".json")
	require.Equal(t, file+": stored as "+stored+"\n", r.stdout)
	require.FileExists(t, stored)

	r = runEv(t, "support", "--matrix", path, "--metadata-file", md, "--registry=false")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "jetpack6.2  supported       JetPack 6.2 (L4T 36.4.3): Jetson AGX Orin, Jetson Orin NX, Jetson Orin Nano, Jetson Orin Nano Super\n"+
		"    Jetson Orin Nano Super, ")
	require.Contains(t, r.stdout, "sha256:c2efadaaded6, rev 677e5d8f2a41, level serve (counts)\n")
	require.Contains(t, r.stdout, "jetpack7.0  candidate       JetPack 7.0 (L4T 38.2.0): Jetson AGX Thor\n    why not supported: TEI's CUDA 13 support is unproven (TEI v1.8.0 to v1.9.3 pin cudarc 0.13.5, which has no CUDA 13 feature, cuda-13000 first being in cudarc 0.17.1, so its router compiles against CUDA 12.2 bindings): below supported until a router built for CUDA 13 has run on a Jetson Thor\n    no evidence\n")

	r = runEv(t, "support", "--matrix", path, "--registry=false", "--format", "markdown")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "| jetpack7.0 | 7.0 (38.2.0) | candidate | Jetson AGX Thor | no evidence |\n")

	r = runEv(t, "support", "--matrix", path, "--registry=false", "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var table evidence.SupportTable
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &table))
	require.Len(t, table.Releases[2].Evidence, 1)

	r = runEv(t, "support", "--matrix", path, "--format", "yaml")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, `--format "yaml" is not known: use text, markdown, json`)
}

func TestEvidenceAddRefuses(t *testing.T) {
	path := supportedMatrix(t)
	md := buildMetadata(t, probeDigest)
	wrongL4T := probeFile(t, func(ev *evidence.Evidence) { ev.Host.L4T, ev.Host.JetPack = "35.4.1", "5.1" })
	old := probeFile(t, func(ev *evidence.Evidence) {
		ev.GeneratedAt = time.Now().Add(-40 * 24 * time.Hour).UTC().Format(time.RFC3339)
	})
	good := probeFile(t, nil)

	r := runEv(t, "evidence", "add", wrongL4T, old, good, "--matrix", path, "--metadata-file", md, "--registry=false")
	require.Equal(t, ExitFailure, r.code)
	require.Contains(t, r.stderr, wrongL4T+": evidence refused (wrong-l4t): the host runs L4T \"35.4.1\" but release jetpack6.2 is for L4T 36.4.3")
	require.Contains(t, r.stderr, old+": evidence refused (too-old): ")
	require.Equal(t, 2, strings.Count(r.stderr, "\n"), "one line per file not stored, and no summary (issue 51 item 9): %s", r.stderr)
	require.NotContains(t, r.stderr, "not stored")
	require.Contains(t, r.stdout, good+": stored as ")

	r = runEv(t, "evidence", "add", good, "--matrix", path, "--metadata-file", buildMetadata(t, newerDigest), "--registry=false")
	require.Equal(t, ExitFailure, r.code)
	require.Contains(t, r.stderr, "evidence refused (unknown-digest): "+probeDigest+" is not an image jetbake built for a release")
	require.Contains(t, r.stderr, "; fix: probe an image that 'jetbake build' produced, and pass its --metadata-file or let jetbake reach the registry", "the fix names the flag")

	r = runEv(t, "evidence", "add", good, "--matrix", path, "--max-evidence-age", "soon", "--registry=false")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, `--max-evidence-age: age "soon": want a whole number of days`)
}

// TestEvidenceAddFromRegistry looks the digest up in an in-memory registry,
// where the image's index carries io.jetbake.release.
func TestEvidenceAddFromRegistry(t *testing.T) {
	repo := testregistry.New(t) + "/jetbake/tei"
	digest := pushAnnotated(t, repo+":1.9.3-jetpack6.2", map[string]string{matrix.KeyRelease: "jetpack6.2"})
	path := supportedMatrix(t)
	file := probeFile(t, func(ev *evidence.Evidence) { ev.Image.Digest = digest })

	r := runEv(t, "evidence", "add", file, "--matrix", path, "--repository", repo)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, ": stored as ")

	// validate --strict: the current digest is what the first tag resolves to.
	strict := strictRun(t, path, "--strict", "--repository", repo)
	require.Empty(t, strict)
	pushAnnotated(t, repo+":1.9.3-jetpack6.2", map[string]string{matrix.KeyRelease: "jetpack6.2", "rebuilt": "yes"})
	strict = strictRun(t, path, "--strict", "--repository", repo)
	require.Len(t, strict, 1)
	require.Equal(t, "releases[2].tier", strict[0].Path)
	require.Contains(t, strict[0].Message, "(not-current: the evidence is for "+digest)
}

// strictRun runs the check addStrictFlags wires into validate, with args.
func strictRun(t *testing.T, matrixPath string, args ...string) []matrix.FieldError {
	t.Helper()
	cmd := &cobra.Command{Use: "validate"}
	check := addStrictFlags(cmd)
	require.NoError(t, cmd.ParseFlags(args))
	m, err := matrix.Load(matrixPath)
	require.NoError(t, err)
	errs, err := check(t.Context(), m)
	require.NoError(t, err)
	return errs
}

// TestSupportedNeedsServing: for a supported release, evidence add and
// validate --strict refuse evidence of the smoke run alone (no cuda-kernel,
// no serve check), and support shows its level; a candidate takes it.
func TestSupportedNeedsServing(t *testing.T) {
	path := supportedMatrix(t)
	md := buildMetadata(t, probeDigest)
	smoke := evidenceFile(t, probeGolden, nil)
	r := runEv(t, "evidence", "add", smoke, "--matrix", path, "--metadata-file", md, "--registry=false")
	require.Equal(t, ExitFailure, r.code)
	require.Contains(t, r.stderr, smoke+": evidence refused (below-supported): release jetpack6.2 claims tier supported, which needs evidence of level serve "+
		"(passing cuda-kernel and serve checks), but this evidence reached level smoke (no passing cuda-kernel check, no passing serve check); "+
		"fix: run 'jetbake-probe --smoke --kernel --serve /model --out evidence.json' inside the image on a Jetson")
	require.NoDirExists(t, filepath.Join(filepath.Dir(path), "evidence"))

	// Stored while the release was a candidate, it does not back supported.
	candidate := matrixCopy(t, nil)
	r = runEv(t, "evidence", "add", smoke, "--matrix", candidate, "--metadata-file", md, "--registry=false")
	require.Equal(t, 0, r.code, r.stderr)
	r = runEv(t, "support", "--matrix", candidate, "--metadata-file", md, "--registry=false")
	require.Contains(t, r.stdout, "rev 677e5d8f2a41, level smoke (counts)\n")
	require.NoError(t, os.Rename(filepath.Join(filepath.Dir(candidate), "evidence"), filepath.Join(filepath.Dir(path), "evidence")))
	errs := strictRun(t, path, "--strict", "--registry=false", "--metadata-file", md)
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Message, "(below-supported: release jetpack6.2 claims tier supported, which needs evidence of level serve")
	r = runEv(t, "support", "--matrix", path, "--metadata-file", md, "--registry=false")
	require.Contains(t, r.stdout, "jetpack6.2  supported (not backed by evidence)")
	require.Contains(t, r.stdout, "rev 677e5d8f2a41, level smoke (does not count)\n")

	r = runEv(t, "evidence", "report", probeServing)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "| Level | serve: a CUDA kernel ran and the router served embeddings: enough for supported |\n")
	require.Contains(t, r.stdout, "| CUDA kernel | 4096 values exact on SM 8.7")
}

func TestStrictFlags(t *testing.T) {
	path := supportedMatrix(t)
	require.Empty(t, strictRun(t, path), "without --strict nothing is checked")
	errs := strictRun(t, path, "--strict", "--registry=false", "--metadata-file", buildMetadata(t, probeDigest))
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Error(), `releases[2].tier: "supported": release jetpack6.2 claims supported without passing evidence for its current image `+
		probeDigest+" (")
	require.Contains(t, errs[0].Error(), "no older than 30d: there is no evidence for the release; fix: run 'jetbake-probe --smoke --kernel --serve /model")
	errs = strictRun(t, path, "--strict", "--registry=false")
	require.Len(t, errs, 1)
	require.Equal(t, "pass --metadata-file with the report of the latest 'jetbake build', or push the release and its tags", errs[0].Fix, "the fix names the flag")

	cmd := &cobra.Command{Use: "validate"}
	check := addStrictFlags(cmd)
	require.NoError(t, cmd.ParseFlags([]string{"--strict", "--max-evidence-age", "-3d"}))
	m, err := matrix.Load(path)
	require.NoError(t, err)
	_, err = check(t.Context(), m)
	require.Equal(t, ExitUsage, ExitCode(err))
}

func TestEvidenceReport(t *testing.T) {
	r := runEv(t, "evidence", "report", probeGolden)
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, "## Hardware evidence: jetpack6.2 on Jetson Orin Nano Super: pass\n"), r.stdout)
	r = runEv(t, "evidence", "report", probeGolden, "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	want, err := os.ReadFile(probeGolden)
	require.NoError(t, err)
	require.Equal(t, string(want), r.stdout)

	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema_version": 1, "hostname": "x"}`), 0o644))
	r = runEv(t, "evidence", "report", bad)
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, bad+`:1:35: hostname: unknown field; fix: did you mean "host"?`)
}

// TestEvidenceKeepsItsPromise hands `evidence add` probe output that
// carries what evidence promises never to: a host name or an address in a
// check's detail, a tag of a foreign registry. Each is refused, naming the
// field, and nothing is stored: not even an evidence/ folder.
func TestEvidenceKeepsItsPromise(t *testing.T) {
	path := supportedMatrix(t)
	md := buildMetadata(t, probeDigest)
	detail := func(d string) func(ev *evidence.Evidence) {
		return func(ev *evidence.Evidence) { ev.Result.Checks[11].Detail = d }
	}
	tests := []struct {
		name string
		edit func(ev *evidence.Evidence)
		code int
		want string
	}{
		{"host name in a detail", detail("ran on jetson-01.lab.example.com"), ExitUsage,
			`:87:19: result.checks[11].detail: "ran on jetson-01.lab.example.com": is not one of the phrases the probe writes for smoke`},
		{"address in a detail", detail("driver at 10.20.30.40 port 22"), ExitUsage,
			`:87:19: result.checks[11].detail: "driver at 10.20.30.40 port 22": is not one of the phrases the probe writes for smoke`},
		{"foreign registry in a tag", func(ev *evidence.Evidence) {
			ev.Image.Tags = append(ev.Image.Tags, "registry.evil.example.com/alice/text-embeddings-router:1.8.2-jetpack6.2")
		}, ExitFailure, `: evidence refused (foreign-tag): image.tags[1] "registry.evil.example.com/alice/text-embeddings-router:1.8.2-jetpack6.2" names the repository`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := probeFile(t, tt.edit) // written as edited, not parsed again
			r := runEv(t, "evidence", "add", file, "--matrix", path, "--metadata-file", md, "--registry=false")
			require.Equal(t, tt.code, r.code, r.stderr)
			require.Contains(t, r.stderr, file+tt.want)
			require.Equal(t, 1, strings.Count(r.stderr, file+":"), "the file is named once: %s", r.stderr)
			require.NoDirExists(t, filepath.Join(filepath.Dir(path), "evidence"))
		})
	}

	// A file that cannot be read is bad input for add as for report.
	missing := filepath.Join(t.TempDir(), "none.json")
	for _, args := range [][]string{{"evidence", "add", missing, "--matrix", path, "--registry=false"}, {"evidence", "report", missing}} {
		r := runEv(t, args...)
		require.Equal(t, ExitUsage, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, "evidence file "+missing+" does not exist")
	}
}

// pushAnnotated pushes a one-image index with annotations to ref and
// returns its digest.
func pushAnnotated(t *testing.T, ref string, annotations map[string]string) string {
	t.Helper()
	img, err := random.Image(64, 1)
	require.NoError(t, err)
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{Add: img})
	idx = mutate.Annotations(idx, annotations).(v1.ImageIndex)
	parsed, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(parsed, idx))
	d, err := idx.Digest()
	require.NoError(t, err)
	return d.String()
}
