package matrix

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// shippedPath is the matrix the repository ships.
const shippedPath = "../../matrix.json"

// shipped returns the shipped matrix's bytes.
func shipped(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(shippedPath)
	require.NoError(t, err)
	return data
}

// shippedTree returns the shipped matrix decoded into generic JSON values.
func shippedTree(t testing.TB) map[string]any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(shipped(t), &doc))
	return doc
}

// release returns the generic object of release i.
func release(doc map[string]any, i int) map[string]any {
	return doc["releases"].([]any)[i].(map[string]any)
}

// section returns a top-level object such as "router".
func section(doc map[string]any, name string) map[string]any {
	return doc[name].(map[string]any)
}

func TestParseShippedMatrix(t *testing.T) {
	m, err := Parse(shipped(t))
	require.NoError(t, err)
	require.Equal(t, []string{"jetpack5.1", "jetpack6.1", "jetpack6.2", "jetpack7.0", "jetpack7.2"}, m.ReleaseNames())
	require.Equal(t, "5 releases, 7 SM targets, 11 tags, on stage runtime-base", m.Summary())
	for _, r := range m.Releases {
		require.NotEqual(t, "supported", r.Tier, "%s: no release is supported before hardware evidence exists", r.Name)
	}
	r, ok := m.Release("jetpack7.2")
	require.True(t, ok)
	require.Equal(t, []computecap.Capability{computecap.MustParse("8.7"), computecap.MustParse("11.0")}, r.Targets)
	tags, err := m.Tags(2)
	require.NoError(t, err)
	require.Equal(t, []string{"1.9.3-jetpack6.2", "jetpack6.2"}, tags)
}

// ruleCase is one broken matrix and the error it must give.
type ruleCase struct {
	name    string
	edit    func(doc map[string]any)
	raw     func(data string) string
	path    string
	message string
	value   string
}

func ruleCases() []ruleCase {
	return []ruleCase{
		{name: "unknown root field", edit: func(d map[string]any) { d["colour"] = "blue" },
			path: "colour", message: "unknown field", value: `"blue"`},
		{name: "unknown release field with suggestion", edit: func(d map[string]any) { release(d, 1)["Targets"] = []any{"8.7"} },
			path: "releases[1].Targets", message: "unknown field"},
		{name: "wrong type", edit: func(d map[string]any) { release(d, 0)["targets"] = []any{8.7} },
			path: "releases[0].targets[0]", message: "must be a string, not a number", value: "8.7"},
		{name: "wrong object type", edit: func(d map[string]any) { d["router"] = "tei" },
			path: "router", message: "must be an object, not a string"},
		{name: "missing required field", edit: func(d map[string]any) { delete(section(d, "router"), "output") },
			path: "router.output", message: "missing required field"},
		{name: "missing release field", edit: func(d map[string]any) { delete(release(d, 4), "tier") },
			path: "releases[4].tier", message: "missing required field"},
		{name: "no releases", edit: func(d map[string]any) { d["releases"] = []any{} },
			path: "releases", message: "must not be empty"},
		{name: "duplicate release names", edit: func(d map[string]any) { release(d, 2)["name"] = "jetpack6.1" },
			path: "releases[2].name", message: "repeats the name of releases[1]", value: `"jetpack6.1"`},
		{name: "duplicate tags across releases", edit: func(d map[string]any) { section(d, "image")["tags"] = []any{"{version}"} },
			path: "image.tags[0]", message: `expands to "1.9.3" for releases[1] (jetpack6.1), a tag releases[0] (jetpack5.1) already has`},
		{name: "release tag repeats another release's", edit: func(d map[string]any) { release(d, 2)["tags"] = []any{"jetpack6.1"} },
			path: "releases[2].tags[0]", message: `expands to "jetpack6.1" for releases[2] (jetpack6.2), a tag releases[1] (jetpack6.1) already has`},
		{name: "unknown placeholder", edit: func(d map[string]any) { section(d, "image")["tags"] = []any{"{version}-{arch}"} },
			path: "image.tags[0]", message: "unknown placeholder {arch}"},
		{name: "unclosed placeholder", edit: func(d map[string]any) { release(d, 2)["tags"] = []any{"jp{jetpack"} },
			path: "releases[2].tags[0]", message: "without a closing '}'"},
		{name: "invalid tag after expansion", edit: func(d map[string]any) { section(d, "router")["version"] = "1.9.3+cu126" },
			path: "image.tags[0]", message: `expands to "1.9.3+cu126-jetpack5.1.2" for releases[0] (jetpack5.1), which is not a valid OCI tag`},
		{name: "CUDA cannot build the SM", edit: func(d map[string]any) { release(d, 3)["cuda"] = "12.6" },
			path: "releases[3].targets[0]", message: "sm_110 needs CUDA >= 13.0", value: `"11.0"`},
		{name: "SM dropped by CUDA 13", edit: func(d map[string]any) { release(d, 4)["targets"] = []any{"7.2", "8.7", "11.0"} },
			path: "releases[4].targets[0]", message: "is not a target from CUDA 13.0 on"},
		{name: "L4T of another JetPack series", edit: func(d map[string]any) { release(d, 1)["l4t"] = "35.4.1" },
			path: "releases[1].l4t", message: "JetPack 6.1 ships L4T 36.x, not 35.x", value: `"35.4.1"`},
		{name: "L4T of another JetPack release", edit: func(d map[string]any) { release(d, 2)["l4t"] = "36.4.0" },
			path: "releases[2].l4t", message: "L4T 36.4.0 is JetPack 6.1, not 6.2"},
		{name: "L4T without patch", edit: func(d map[string]any) { release(d, 1)["l4t"] = "36.4" },
			path: "releases[1].l4t", message: "does not have the expected form"},
		{name: "health route not from the root", edit: func(d map[string]any) { section(d, "router")["health"] = "health" },
			path: "router.health", message: "does not have the expected form"},
		{name: "unknown JetPack", edit: func(d map[string]any) { release(d, 1)["jetpack"] = "6.3" },
			path: "releases[1].jetpack", message: "unknown JetPack version"},
		{name: "target no module of the JetPack has", edit: func(d map[string]any) { release(d, 3)["targets"] = []any{"8.7"} },
			path: "releases[3].targets[0]", message: "no JetPack 7.0 module has SM 8.7: JetPack 7.0 runs on Jetson Thor (SM 11.0) only"},
		{name: "Thor on JetPack 6", edit: func(d map[string]any) { release(d, 2)["targets"] = []any{"8.7", "11.0"} },
			path: "releases[2].targets[1]", message: "no JetPack 6.2 module has SM 11.0"},
		{name: "empty target list", edit: func(d map[string]any) { release(d, 1)["targets"] = []any{} },
			path: "releases[1].targets", message: "must not be empty"},
		{name: "duplicate targets", edit: func(d map[string]any) { release(d, 1)["targets"] = []any{"8.7", "8.7"} },
			path: "releases[1].targets[1]", message: "repeats releases[1].targets[0]"},
		{name: "Thor under both names", edit: func(d map[string]any) { release(d, 3)["targets"] = []any{"11.0", "10.1"} },
			path: "releases[3].targets[1]", message: "is the same GPU as releases[3].targets[0]"},
		{name: "target not in MAJOR.MINOR form", edit: func(d map[string]any) { release(d, 1)["targets"] = []any{"sm_87"} },
			path: "releases[1].targets[0]", message: "is not a compute capability in MAJOR.MINOR form", value: `"sm_87"`},
		{name: "unknown tier", edit: func(d map[string]any) { release(d, 0)["tier"] = "stable" },
			path: "releases[0].tier", message: "unknown tier", value: `"stable"`},
		{name: "unpinned git context", edit: func(d map[string]any) {
			section(d, "router")["context"] = "https://github.com/huggingface/text-embeddings-inference.git"
		}, path: "router.context", message: "git context is not pinned"},
		{name: "git context on a branch", edit: func(d map[string]any) {
			section(d, "router")["context"] = "https://github.com/huggingface/text-embeddings-inference.git#main"
		}, path: "router.context", message: `pinned to the branch "main"`},
		{name: "git context with a token", edit: func(d map[string]any) {
			section(d, "router")["context"] = "https://x-access-token:ghp_s3cret@github.com/acme/router.git#v1.0.0"
		}, path: "router.context", message: "holds a password or token in its URL", value: `"https://xxxxx:xxxxx@github.com/acme/router.git#v1.0.0"`},
		{name: "checksum that is no commit", edit: func(d map[string]any) {
			section(d, "router")["context"] = "https://github.com/acme/router.git?ref=v1&checksum=v1"
		}, path: "router.context", message: `checksum "v1" is not a commit`},
		{name: "relative output", edit: func(d map[string]any) { section(d, "router")["output"] = "target/release/router" },
			path: "router.output", message: "is not an absolute path"},
		{name: "unpinned base image", edit: func(d map[string]any) { release(d, 1)["build_base"] = "nvcr.io/nvidia/l4t-jetpack" },
			path: "releases[1].build_base", message: "is not a pinned image reference"},
		{name: "repository with a tag", edit: func(d map[string]any) { section(d, "image")["repository"] = "ghcr.io/jetbake/tei:latest" },
			path: "image.repository", message: "is not a valid image repository"},
		{name: "reserved label", edit: func(d map[string]any) { section(d, "image")["labels"] = map[string]any{"io.jetbake.tier": "gold"} },
			path: "image.labels.io.jetbake.tier", message: "is set by jetbake"},
		{name: "reserved build arg", edit: func(d map[string]any) { release(d, 1)["build_args"] = map[string]any{"CUDA_COMPUTE_CAP": "87"} },
			path: "releases[1].build_args.CUDA_COMPUTE_CAP", message: "is set by jetbake for every SM target"},
		{name: "Xavier with flash-attention v2 features", edit: func(d map[string]any) { delete(section(d, "router"), "target_build_args") },
			path: "releases[0].targets[0]", message: "cannot be compiled with cargo feature candle-cuda: its flash-attention v2 kernels need sm_80 or newer",
			value: `"7.2"`},
		{name: "release features over the router's", edit: func(d map[string]any) {
			release(d, 0)["build_args"] = map[string]any{"CARGO_FEATURES": "candle-cuda-turing"}
		}, path: "releases[0].targets[0]", message: "cannot be compiled with cargo feature candle-cuda-turing"},
		{name: "target build args for another SM", edit: func(d map[string]any) {
			release(d, 1)["target_build_args"] = map[string]any{"7.2": map[string]any{"CARGO_FEATURES": "candle-cuda-volta"}}
		}, path: "releases[1].target_build_args.7.2", message: "is not one of the release's targets"},
		{name: "target build args key not an SM", edit: func(d map[string]any) {
			section(d, "router")["target_build_args"] = map[string]any{"sm_72": map[string]any{}}
		}, path: "router.target_build_args.sm_72", message: "is not a compute capability"},
		{name: "reserved target build arg", edit: func(d map[string]any) {
			section(d, "router")["target_build_args"] = map[string]any{"7.2": map[string]any{"CUDA_COMPUTE_CAP": "72", "CARGO_FEATURES": "candle-cuda-volta"}}
		}, path: "router.target_build_args.7.2.CUDA_COMPUTE_CAP", message: "is set by jetbake"},
		{name: "port not a port", edit: func(d map[string]any) { section(d, "router")["ports"] = []any{"http"} },
			path: "router.ports[0]", message: "is not a port"},
		{name: "env key not a name", edit: func(d map[string]any) { section(d, "router")["env"] = map[string]any{"A-B": "1"} },
			path: "router.env.A-B", message: "is not a valid key"},
		{name: "label value not a string", edit: func(d map[string]any) { section(d, "image")["annotations"] = map[string]any{"a.b": 1} },
			path: "image.annotations.a.b", message: "must be a string, not a number"},
		{name: "duplicate JSON key", raw: func(s string) string {
			return strings.Replace(s, `"router": {`, `"router": {"name": "other",`, 1)
		}, path: "router.name", message: "duplicate field"},
		{name: "syntax error", raw: func(s string) string { return strings.Replace(s, `"tier": "legacy",`, `"tier": "legacy"`, 1) },
			path: "$", message: "not valid JSON at line"},
		{name: "truncated file", raw: func(s string) string { return s[:len(s)/2] },
			path: "$", message: "unexpected end of the file"},
		{name: "nested too deep", raw: func(string) string {
			return `{"releases": ` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`
		}, path: "$", message: "nesting deeper than 32 levels"},
		{name: "not an object", raw: func(string) string { return `[1, 2]` },
			path: "$", message: "must be an object, not an array"},
		{name: "trailing data", raw: func(s string) string { return s + "{}" },
			path: "$", message: "after top-level value"},
	}
}

func TestParseRules(t *testing.T) {
	for _, tc := range ruleCases() {
		t.Run(tc.name, func(t *testing.T) {
			data := string(shipped(t))
			if tc.edit != nil {
				doc := shippedTree(t)
				tc.edit(doc)
				b, err := json.Marshal(doc)
				require.NoError(t, err)
				data = string(b)
			}
			if tc.raw != nil {
				data = tc.raw(data)
			}
			m, err := Parse([]byte(data))
			require.Nil(t, m)
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			found := find(verr.Errors, tc.path, tc.message)
			require.NotNil(t, found, "want %s: %s in:\n%v", tc.path, tc.message, err)
			require.NotEmpty(t, found.Fix, "every error says how to fix it: %v", found)
			if tc.value != "" {
				require.Equal(t, tc.value, found.Value)
			}
			require.Contains(t, err.Error(), tc.path+": ")
		})
	}
}

// find returns the error at path whose message contains message.
func find(errs []FieldError, path, message string) *FieldError {
	for i := range errs {
		if errs[i].Path == path && strings.Contains(errs[i].Message, message) {
			return &errs[i]
		}
	}
	return nil
}

func TestParseReportsEveryErrorOnce(t *testing.T) {
	doc := shippedTree(t)
	release(doc, 0)["tier"] = "stable"
	release(doc, 1)["targets"] = []any{8.7}
	release(doc, 3)["targets"] = []any{"8.7"}
	section(doc, "router")["output"] = "router"
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	_, err = Parse(data)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	paths := make([]string, len(verr.Errors))
	for i, e := range verr.Errors {
		paths[i] = e.Path
	}
	// The shape errors come first in document order, then the rules; the
	// number-typed target is not reported again by the rules.
	require.Equal(t, []string{"releases[0].tier", "releases[1].targets[0]", "router.output", "releases[3].targets[0]"}, paths)
	require.Len(t, strings.Split(err.Error(), "\n"), 4)
}

func TestFieldErrorLine(t *testing.T) {
	e := FieldError{Path: "releases[2].targets[1]", Value: `"11.0"`, Message: "no JetPack 6.2 module has SM 11.0", Fix: `use "8.7"`}
	require.Equal(t, `releases[2].targets[1]: "11.0": no JetPack 6.2 module has SM 11.0; fix: use "8.7"`, e.Error())
	missing := FieldError{Path: "router.output", Message: "missing required field"}
	require.Equal(t, "router.output: missing required field", missing.Error())
	v := &ValidationError{File: "m.json", Errors: []FieldError{e, missing}}
	require.Equal(t, "m.json: "+e.Error()+"\nm.json: "+missing.Error(), v.Error())
}

func TestUnknownFieldSuggestion(t *testing.T) {
	doc := shippedTree(t)
	release(doc, 1)["build-args"] = map[string]any{}
	section(doc, "image")["reposit"] = "x"
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	_, err = Parse(data)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, `did you mean "repository"?`, find(verr.Errors, "image.reposit", "unknown field").Fix)
	require.Equal(t, `did you mean "build_args"?`, find(verr.Errors, "releases[1].build-args", "unknown field").Fix)
}

// writeMatrix writes a matrix with the given router context and Dockerfile
// into a fresh folder and returns the file's path.
func writeMatrix(t *testing.T, context, dockerfile string) string {
	t.Helper()
	doc := shippedTree(t)
	section(doc, "router")["context"] = context
	section(doc, "router")["dockerfile"] = dockerfile
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "matrix.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

func TestLoadResolvesLocalPaths(t *testing.T) {
	path := writeMatrix(t, "./src", "docker/Dockerfile")
	dir := filepath.Dir(path)
	_, err := Load(path)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, path, verr.File)
	require.NotNil(t, find(verr.Errors, "router.context", "local context folder "+filepath.Join(dir, "src")+" does not exist"))
	require.NotNil(t, find(verr.Errors, "router.dockerfile", "Dockerfile "+filepath.Join(dir, "docker/Dockerfile")+" does not exist"))

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "docker"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docker/Dockerfile"), []byte("FROM scratch\n"), 0o644))
	_, err = Load(path)
	require.ErrorAs(t, err, &verr)
	require.NotNil(t, find(verr.Errors, "router.target", `is not a stage of `+filepath.Join(dir, "docker/Dockerfile")))
	require.NotNil(t, find(verr.Errors, "router.runtime_target", `is not a stage of `))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docker/Dockerfile"), []byte("FROM scratch AS router\nFROM ${RUNTIME_BASE} AS runtime-base\n"), 0o644))
	m, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, dir, m.Dir)
	require.Equal(t, filepath.Join(dir, "src"), m.LocalPath(m.Router.Context))
}

// A matrix file that does not exist is no ValidationError, and names the
// fix: by default without a command's flag, else in the command's words.
func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.json")
	_, err := Load(path)
	require.ErrorIs(t, err, os.ErrNotExist)
	var verr *ValidationError
	require.False(t, errors.As(err, &verr))
	require.EqualError(t, err, "matrix file "+path+" does not exist: run 'jetbake init' to write one, or name another file")
	_, err = Load(path, WithMissingHint("name it with -f"))
	require.EqualError(t, err, "matrix file "+path+" does not exist: name it with -f")
}

func TestExpandTag(t *testing.T) {
	values := map[string]string{"version": "1.9.3", "jetpack": "6.2", "jetpack_major": "6"}
	cases := []struct{ template, want, err string }{
		{"{version}-jetpack{jetpack}", "1.9.3-jetpack6.2", ""},
		{"jetpack{jetpack_major}", "jetpack6", ""},
		{"latest", "latest", ""},
		{"{nope}", "", "unknown placeholder {nope}"},
		{"a}b", "", "'}' without a '{'"},
		{"{a{b}", "", "'{' without a closing '}'"},
		{"{version", "", "'{' without a closing '}'"},
	}
	for _, tc := range cases {
		got, err := ExpandTag(tc.template, values)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.template)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

func TestJetPackTargets(t *testing.T) {
	cases := []struct {
		jetpack string
		want    []string
		ok      bool
	}{
		{"5.1", []string{"7.2", "8.7"}, true},
		{"5.1.3", []string{"7.2", "8.7"}, true},
		{"5.0.2", []string{"7.2", "8.7"}, true},
		{"6.0", []string{"8.7"}, true},
		{"6.2.1", []string{"8.7"}, true},
		{"7.0", []string{"11.0"}, true},
		{"7.1", []string{"11.0"}, true},
		{"7.2", []string{"8.7", "11.0"}, true},
		{"6.3", nil, false},
		{"7", nil, false},
	}
	for _, tc := range cases {
		caps, ok := JetPackTargets(tc.jetpack)
		require.Equal(t, tc.ok, ok, tc.jetpack)
		var got []string
		for _, c := range caps {
			got = append(got, c.String())
		}
		require.Equal(t, tc.want, got, tc.jetpack)
	}
}

func TestGitContext(t *testing.T) {
	// The forms BuildKit's Dockerfile frontend reads as git (dfgitutil).
	tests := []struct {
		context, ref string
		git          bool
	}{
		{"https://github.com/huggingface/text-embeddings-inference.git#v1.9.3", "v1.9.3", true},
		{"https://github.com/huggingface/text-embeddings-inference.git?ref=v1.9.3", "v1.9.3", true},
		{"https://github.com/x/y.git#v1.9.3:sub/dir", "v1.9.3", true},
		{"https://github.com/x/y.git?ref=v1&subdir=sub", "v1", true},
		{"https://github.com/x/y.git?checksum=0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567", true},
		{"git@github.com:huggingface/text-embeddings-inference.git#v1.9.3", "v1.9.3", true},
		{"ssh://git@github.com/x/y.git#v2", "v2", true},
		{"git://example.com/x/y.git#v3", "v3", true},
		{"github.com/huggingface/text-embeddings-inference#v1.9.3", "v1.9.3", true},
		{"https://x/y.git", "", true},
		{"http://git.example.com/x/y", "", false}, // no .git: BuildKit reads a remote file
		{"./text-embeddings-inference", "", false},
		{"../router", "", false},
		{"/abs/router", "", false},
		{"router.git", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.context, func(t *testing.T) {
			require.Equal(t, tt.git, IsGitContext(tt.context))
			require.Equal(t, tt.ref, GitRef(tt.context))
		})
	}
}

func TestQueryPinnedContextIsAccepted(t *testing.T) {
	for _, ctx := range []string{
		"https://github.com/huggingface/text-embeddings-inference.git?ref=v1.9.3",
		// A branch with its commit is pinned: BuildKit fails the build once the branch moves.
		"https://github.com/huggingface/text-embeddings-inference.git?ref=main&checksum=0123456789abcdef0123456789abcdef01234567",
		"http://127.0.0.1:8080/embedder.git#v1.8.0:services/router",
		"git://127.0.0.1:9418/router.git#release-1.8",
	} {
		doc := shippedTree(t)
		section(doc, "router")["context"] = ctx
		data, err := json.Marshal(doc)
		require.NoError(t, err)
		_, err = Parse(data)
		require.NoError(t, err, ctx)
	}
}

func TestReserved(t *testing.T) {
	require.True(t, Reserved("io.jetbake.anything"))
	require.True(t, Reserved(KeyNVIDIACUDA))
	require.True(t, Reserved(KeyBaseDigest))
	require.False(t, Reserved("org.opencontainers.image.licenses"))
}

// The Xavier target's fix names the feature that compiles for it.
func TestFeaturesFixNamesVolta(t *testing.T) {
	doc := shippedTree(t)
	delete(section(doc, "router"), "target_build_args")
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	_, err = Parse(b)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	found := find(verr.Errors, "releases[0].targets[0]", "candle-cuda")
	require.NotNil(t, found)
	require.Contains(t, found.Fix, `"target_build_args": {"7.2": {"CARGO_FEATURES": "candle-cuda-volta"}}`)
}

func TestTargetBuildArgsLayers(t *testing.T) {
	m, err := Parse(shipped(t))
	require.NoError(t, err)
	r, _ := m.Release("jetpack5.1")
	require.Equal(t, map[string]string{"CARGO_FEATURES": "candle-cuda-volta", "CUDA_LINKING": "static-linking"}, m.TargetBuildArgs(r, computecap.MustParse("7.2")))
	require.Equal(t, map[string]string{"CARGO_FEATURES": "candle-cuda", "CUDA_LINKING": "static-linking"}, m.TargetBuildArgs(r, computecap.MustParse("8.7")))
	r.BuildArgs = map[string]string{"CARGO_FEATURES": "x", "A": "1"}
	r.TargetBuildArgs = map[string]map[string]string{"8.7": {"A": "2"}}
	require.Equal(t, map[string]string{"CARGO_FEATURES": "x", "A": "2", "CUDA_LINKING": "static-linking"}, m.TargetBuildArgs(r, computecap.MustParse("8.7")))
	require.Equal(t, map[string]string{"PORT": "80", "HUGGINGFACE_HUB_CACHE": "/data"}, m.Router.Env)
	require.Equal(t, []string{"--json-output"}, m.Router.Cmd)
	require.Equal(t, []string{"80/tcp"}, m.Router.Ports)
}
