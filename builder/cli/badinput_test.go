package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// knownSMs is what every refusal of an unknown SM lists.
const knownSMs = "it knows Jetson 5.3 (Nano/TX1), 6.2 (TX2), 7.2 (Xavier), 8.7 (Orin), 11.0 (Thor, also 10.1); " +
	"desktop and server GPUs 5.0, 5.2, 6.0, 6.1, 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 12.0, 12.1"

// An SM that the table of Jetson facts does not know is bad input in
// every command that takes one, refused before any image is read.
func TestUnknownSMIsBadInput(t *testing.T) {
	r := run(t, "audit", "ghcr.io/acme/app:1", "--gpu", "99.9")
	require.Equal(t, ExitUsage, r.code)
	require.Equal(t, `--gpu "99.9": jetbake knows no GPU with SM 99.9; `+knownSMs+
		": give one of these (a desktop or server GPU by its own SM, such as --gpu 8.6), or install a newer jetbake, which may know SM 99.9\n", r.stderr)
	require.Empty(t, r.stdout)

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "./image.tar", "--gpu", "8.7", "--gpu", "9.9"}, `--gpu "9.9": jetbake knows no GPU with SM 9.9; ` + knownSMs},
		{[]string{"compat", "9.9"}, `RUNTIME "9.9": jetbake knows no GPU with SM 9.9; ` + knownSMs + ": give one of these (a desktop or server GPU by its own SM, such as 'jetbake compat 8.6 8.0')"},
		{[]string{"compat", "9.9", "8.7"}, `RUNTIME "9.9": jetbake knows no GPU with SM 9.9`},
		{[]string{"compat", "8.7", "8.7", "sm_99"}, `COMPILED "sm_99": jetbake knows no GPU with SM 9.9`},
		{[]string{"compat", "12.5", "12.0"}, `RUNTIME "12.5": jetbake knows no GPU with SM 12.5`},
	} {
		r := run(t, tt.args...)
		requireOneSentence(t, r, strings.Join(tt.args, " "))
		require.Contains(t, r.stderr, tt.want)
		require.Contains(t, r.stderr, "or install a newer jetbake")
	}

	r = run(t, "compat", "9.9", "--format", "json")
	require.Equal(t, ExitUsage, r.code)
	var got jsonError
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	require.Equal(t, ExitUsage, got.ExitCode)
	require.Contains(t, got.Error, "jetbake knows no GPU with SM 9.9")

	// Every SM of the table is taken.
	for _, sm := range []string{"7.2", "8.7", "10.1", "11.0", "8.6", "12.1"} {
		r := run(t, "compat", sm, sm)
		require.Equal(t, ExitOK, r.code, "%s: %s", sm, r.stderr)
	}
}

// validate's sentence for an SM no CUDA of the table builds tells a user of
// the binary what to do, and names no source file of jetbake.
func TestValidateUnknownSMFix(t *testing.T) {
	path := matrixCopy(t, func(doc map[string]any) { releaseOf(doc, 2)["targets"] = []any{"8.7", "9.9"} })
	r := run(t, "validate", "-f", path)
	require.Equal(t, ExitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, `"9.9": CUDA 12.6 cannot build sm_99: jetbake knows no CUDA release that builds sm_99; the SMs it knows: Jetson 5.3 (Nano/TX1)`)
	require.Contains(t, r.stderr, "; a newer jetbake may know sm_99; fix: remove it from this release")
	require.NotContains(t, r.stderr, "facts.go")
	require.NotContains(t, r.stderr, "toolchainRows")
}

// build and check take --release as plan does: repeated, or a comma list.
func TestReleaseCommaList(t *testing.T) {
	path := matrixCopy(t, nil)
	for _, cmd := range []string{"build", "check"} {
		r := run(t, cmd, "-f", path, "--addr", "tcp://127.0.0.1:1", "--release", "jetpack6.2,jetpack9")
		require.Equal(t, ExitUsage, r.code, r.stderr)
		require.Equal(t, `--release: unknown release "jetpack9": the matrix has jetpack5.1, jetpack6.1, jetpack6.2, jetpack7.0, jetpack7.2`+"\n", r.stderr, cmd)
		r = run(t, cmd, "-f", path, "--addr", "tcp://127.0.0.1:1", "--release", "jetpack6.2,jetpack6.2")
		require.Equal(t, ExitUsage, r.code, r.stderr)
		require.Contains(t, r.stderr, `--release "jetpack6.2" is given twice`, cmd)
	}
	r := run(t, "plan", "-f", path, "--release", "jetpack6.2,jetpack7.2", "--format", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, `"name": "jetpack7.2"`)
	require.NotContains(t, r.stdout, `"name": "jetpack7.0"`)
}

// Help texts name the real flags, and each --repository says what it
// means on its command.
func TestHelpNamesRealFlags(t *testing.T) {
	for path, c := range everyCommand(t) {
		require.NotContains(t, c.Example, "--matrix", "%s: an example uses the hidden older name of -f", path)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"plan"}, "plan the images in this repository instead of the matrix's image.repository: the tags and annotations name it (plan pushes nothing; 'jetbake build --push' pushes to image.repository)"},
		{[]string{"validate"}, "with --registry, read the digests of the matrix's tags from this repository instead of the matrix's image.repository (it reads, never pushes)"},
		{[]string{"support"}, "read the digests of the matrix's tags from this repository"},
		{[]string{"evidence", "add"}, "read the digests of the matrix's tags from this repository"},
		{[]string{"init"}, "the image repository to write as the matrix's image.repository, where 'jetbake build --push' pushes"},
	} {
		r := run(t, append(tt.args, "--help")...)
		require.Equal(t, ExitOK, r.code)
		require.Contains(t, strings.Join(strings.Fields(r.stdout), " "), tt.want, tt.args)
	}
}

// A matrix that does not validate is bad input (2) for the commands that
// plan from it, and validate's finding (1); with --format json the error
// carries the structured list validate gives.
func TestInvalidMatrixIsBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	object := filepath.Join(dir, "object.json")
	require.NoError(t, os.WriteFile(object, []byte("{}\n"), 0o644))

	for _, path := range []string{empty, object} {
		for _, args := range [][]string{{"plan"}, {"lock"}, {"build"}, {"check"}, {"compat", "8.7"}, {"support", "--registry=false"}} {
			r := run(t, append(args, "-f", path)...)
			require.Equal(t, ExitUsage, r.code, "%v %s: %s", args, path, r.stderr)
			require.Contains(t, r.stderr, path+":1:1: ")
		}
		r := run(t, "validate", "-f", path)
		require.Equal(t, ExitFailure, r.code, "validate finds it: %s", r.stderr)

		r = run(t, "validate", "-f", path, "--format", "json")
		require.Equal(t, ExitFailure, r.code)
		var report validateReport
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
		require.NotEmpty(t, report.Errors)

		r = run(t, "plan", "-f", path, "--format", "json")
		require.Equal(t, ExitUsage, r.code)
		var got jsonError
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
		require.Equal(t, ExitUsage, got.ExitCode)
		require.Equal(t, report.Errors, got.Errors, "plan lists what validate lists")
		require.Equal(t, strings.TrimSpace(r.stderr), got.Error)
	}
}

// fleet's metadata file that lists no built digest is bad input, as an
// empty one is, with a sentence that names the file and the fix.
func TestFleetMetadataIsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, data, want string }{
		{"empty.json", "", "empty.json:1:1: $: not valid JSON"},
		{"none.json", "{}", "metadata file %s lists no built release with a digest: give the file of a 'jetbake build --push --metadata-file FILE' that built a release"},
		{"failed.json", `{"releases": [{"name": "jetpack6.2", "outcome": "failed"}]}`, "metadata file %s lists no built release with a digest"},
	} {
		path := filepath.Join(dir, tt.name)
		require.NoError(t, os.WriteFile(path, []byte(tt.data), 0o644))
		r := run(t, "fleet", "--metadata-file", path, "-f", "../../matrix.json")
		requireOneSentence(t, r, tt.name)
		require.Contains(t, r.stderr, strings.ReplaceAll(tt.want, "%s", path))
		require.Empty(t, r.stdout)
	}
}
