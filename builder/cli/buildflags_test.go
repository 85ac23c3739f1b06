package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/buildkit/session/secrets/secretsprovider"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

func TestParseCaches(t *testing.T) {
	got, err := parseCaches("--cache-to", []string{
		"type=s3,bucket=b,region=eu-west-1,mode=max",
		"ghcr.io/acme/cache:main,ghcr.io/acme/cache:pr",
		"type=gha,scope=main",
		"TYPE=local,DEST=out",
		"type=inline",
		"",
	})
	require.NoError(t, err)
	require.Equal(t, []plan.Cache{
		{Type: "s3", Attrs: map[string]string{"bucket": "b", "region": "eu-west-1", "mode": "max"}},
		{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/acme/cache:main"}},
		{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/acme/cache:pr"}},
		{Type: "gha", Attrs: map[string]string{"scope": "main"}},
		{Type: "local", Attrs: map[string]string{"dest": "out"}},
		{Type: "inline", Attrs: map[string]string{}},
	}, got)

	for _, tt := range []struct{ flag, value, want string }{
		{"--cache-from", "type=inline", `--cache-from "type=inline": type "inline" is not a BuildKit cache for --cache-from: use registry, local, gha, s3, azblob`},
		{"--cache-to", "type=redis,url=x", `type "redis" is not a BuildKit cache for --cache-to`},
		{"--cache-to", "mode=max", `--cache-to "mode=max": no type: write type=registry,ref=REF`},
		{"--cache-to", "type=registry,mode=max", "type=registry needs ref=REF"},
		{"--cache-from", "type=local,dest=x", "type=local needs src=DIR"},
		{"--cache-to", "type=local,src=x", "type=local needs dest=DIR"},
		{"--cache-to", "type=s3,bucket", `--cache-to "type=s3,bucket": invalid value bucket: write type=TYPE,KEY=VALUE`}, // BuildKit's reason
		{"--cache-to", `type=s3,"bucket=b`, `parse error on line 1, column 10: extraneous or missing " in quoted-field: write type=TYPE,KEY=VALUE`},
		{"--cache-from", "ref=ghcr.io/acme/cache", "no type: write type=registry,ref=REF"}, // buildctl would take the whole value as a ref
	} {
		_, err := parseCaches(tt.flag, []string{tt.value})
		require.Equal(t, ExitUsage, ExitCode(err), tt.value)
		require.ErrorContains(t, err, tt.want)
	}
}

func FuzzParseCache(f *testing.F) {
	for _, seed := range []string{"type=s3,bucket=b,region=r", "ref", "a,b", "type=gha", `"x`, "type=local,dest=", "="} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, flag := range []string{"--cache-from", "--cache-to"} {
			caches, err := parseCache(flag, v)
			if err != nil {
				require.Empty(t, caches)
				continue
			}
			for _, c := range caches {
				require.Contains(t, cacheTypes(flag), c.Type)
				for k, val := range c.Attrs {
					require.NotEqual(t, notGiven, val, k)
				}
			}
		}
	})
}

func TestParseSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(file, []byte("s3cr3t"), 0o600))
	t.Setenv("JETBAKE_TEST_TOKEN", "from-env")
	for _, ok := range [][]string{
		{"id=tok,src=" + file},
		{"id=tok,source=" + file, "id=env,env=JETBAKE_TEST_TOKEN"},
		{"type=env,id=e,src=JETBAKE_TEST_TOKEN"}, // buildx's type=env takes the variable's name as src
		{"id=JETBAKE_TEST_TOKEN"},                // the variable named as the id, as BuildKit's NewStore
	} {
		a, err := parseSecrets(ok)
		require.NoError(t, err, ok)
		require.NotNil(t, a)
	}
	a, err := parseSecrets(nil)
	require.NoError(t, err)
	require.Nil(t, a, "no secrets, no provider")

	for _, tt := range []struct{ value, want string }{
		// BuildKit's reason (buildctl's ParseSecret and NewStore), jetbake's fix.
		{"src=" + file, "secret missing ID: write id=ID,src=FILE or id=ID,env=VAR (the Dockerfile mounts it with RUN --mount=type=secret,id=ID)"},
		{"id=x,src=" + filepath.Join(dir, "missing"), "no such file or directory: give the path of the file that holds the secret"},
		{"id=x,file=y", `unexpected key 'file' in 'file=y': write id=ID,src=FILE`},
		{"id=x,type=ssh", `unsupported secret type "ssh": write id=ID,src=FILE`},
		{"id", `invalid field 'id' must be a key=value pair: write id=ID,src=FILE`},
		{`id="x`, `failed to parse csv secret: parse error on line 1, column 4`},
		{"id=jetbake-no-such-secret", "failed to stat jetbake-no-such-secret: stat jetbake-no-such-secret: no such file or directory: give the path of the file"},
		// Where BuildKit would go on, jetbake stops.
		{"id=x,env=JETBAKE_TEST_UNSET_VARIABLE", "the environment variable JETBAKE_TEST_UNSET_VARIABLE is not set: export it, or give src=FILE"}, // BuildKit: an empty secret
		{"type=env,id=x,src=JETBAKE_TEST_UNSET_VARIABLE", "the environment variable JETBAKE_TEST_UNSET_VARIABLE is not set"},
		{"id=x,src=" + dir, "is not a readable file"}, // BuildKit: fails when the build reads it
	} {
		_, err := parseSecrets([]string{tt.value})
		require.Equal(t, ExitUsage, ExitCode(err), tt.value)
		require.ErrorContains(t, err, "--secret "+strconv.Quote(tt.value), "the error names the flag and the value")
		require.ErrorContains(t, err, tt.want)
	}
	// BuildKit's store keeps the last of two sources of one id; jetbake refuses.
	_, err = parseSecrets([]string{"id=tok,src=" + file, "id=tok,env=JETBAKE_TEST_TOKEN"})
	require.ErrorContains(t, err, `id "tok" is given twice`)

	// A source as BuildKit reads it: the last of src and source, type=env's src, an id alone.
	for v, want := range map[string]secretsprovider.Source{
		"id=a,src=x,source=" + file:               {ID: "a", FilePath: file},
		"type=env,id=a,src=JETBAKE_TEST_TOKEN":    {ID: "a", Env: "JETBAKE_TEST_TOKEN"},
		"ID=JETBAKE_TEST_TOKEN":                   {ID: "JETBAKE_TEST_TOKEN", Env: "JETBAKE_TEST_TOKEN"},
		"id=a,env=JETBAKE_TEST_TOKEN,src=" + file: {ID: "a", Env: "JETBAKE_TEST_TOKEN", FilePath: file}, // env is read first, as BuildKit's store
	} {
		got, err := parseSecret(v)
		require.NoError(t, err, v)
		require.Equal(t, want, got, v)
	}
}

func TestParseSSH(t *testing.T) {
	dir := t.TempDir()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(key, "")
	require.NoError(t, err)
	keyFile := filepath.Join(dir, "id_ed25519")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600))
	locked, err := ssh.MarshalPrivateKeyWithPassphrase(key, "", []byte("pass"))
	require.NoError(t, err)
	lockedFile := filepath.Join(dir, "locked")
	require.NoError(t, os.WriteFile(lockedFile, pem.EncodeToMemory(locked), 0o600))
	sock := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer ln.Close()

	a, err := parseSSH([]string{"default=" + sock, "deploy=" + keyFile})
	require.NoError(t, err)
	require.NotNil(t, a)
	t.Setenv("SSH_AUTH_SOCK", sock)
	_, err = parseSSH([]string{"default"})
	require.NoError(t, err, "default is the agent of SSH_AUTH_SOCK")
	a, err = parseSSH(nil)
	require.NoError(t, err)
	require.Nil(t, a)

	t.Setenv("SSH_AUTH_SOCK", "")
	for _, tt := range []struct{ value, want string }{
		{"default", "make sure SSH_AUTH_SOCK is set"},
		{"deploy=" + filepath.Join(dir, "missing"), "no such file"},
		{"deploy=" + lockedFile, "for a key with a passphrase, ssh-add it to an agent"},
		{"=" + keyFile, "no id"},
	} {
		_, err := parseSSH([]string{tt.value})
		require.Equal(t, ExitUsage, ExitCode(err), tt.value)
		require.ErrorContains(t, err, `--ssh "`+tt.value+`"`)
		require.ErrorContains(t, err, tt.want)
	}
	_, err = parseSSH([]string{"deploy=" + keyFile, "deploy=" + keyFile})
	require.ErrorContains(t, err, `id "deploy" is given twice`)
}

func TestParseSBOM(t *testing.T) {
	mirrors := refs.Mirrors{}
	require.NoError(t, mirrors.ParseMirror("docker.io=127.0.0.1:5000"))
	for in, want := range map[string]string{
		"":                                 "",
		"false":                            "",
		"disabled=true":                    "",
		"true":                             "generator=127.0.0.1:5000/docker/buildkit-syft-scanner:stable-1",
		"generator=ghcr.io/acme/scanner:1": "generator=ghcr.io/acme/scanner:1",
		"generator=docker/scout-sbom-indexer:1,SCAN_EXTRA=1": "generator=127.0.0.1:5000/docker/scout-sbom-indexer:1,SCAN_EXTRA=1",
	} {
		got, err := parseSBOM(in, mirrors)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	got, err := parseSBOM("true", refs.Mirrors{})
	require.NoError(t, err)
	require.Equal(t, "generator=index.docker.io/docker/buildkit-syft-scanner:stable-1", got, "BuildKit's default scanner")
	for in, want := range map[string]string{
		"generator=Bad Ref": `generator "Bad Ref" is not an image reference`,
		"maybe":             `"maybe" is not KEY=VALUE`,
	} {
		_, err := parseSBOM(in, mirrors)
		require.Equal(t, ExitUsage, ExitCode(err))
		require.ErrorContains(t, err, `--sbom "`+in+`"`)
		require.ErrorContains(t, err, want)
	}
}

func TestParseProgress(t *testing.T) {
	got, err := parseProgress("none")
	require.NoError(t, err)
	require.Equal(t, "quiet", got, "none is quiet, as buildx takes it")
	got, err = parseProgress("rawjson")
	require.NoError(t, err)
	require.Equal(t, "rawjson", got)
	_, err = parseProgress("fancy")
	require.ErrorContains(t, err, "use auto, tty, plain, rawjson, quiet or none")
}

func TestParseList(t *testing.T) {
	for in, want := range map[string]format{
		"releases": formatText, "targets": formatText, "type=releases,format=json": formatJSON, "type=targets": formatText,
	} {
		got, err := parseList(in, formatText)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	got, err := parseList("releases", formatJSON)
	require.NoError(t, err)
	require.Equal(t, formatJSON, got, "--format json")
	for in, want := range map[string]string{
		"variables":                  "jetbake lists releases",
		"type=releases,format=yaml":  `format "yaml" is not known`,
		"type=releases,color=always": `unknown key "color"`,
	} {
		_, err := parseList(in, formatText)
		require.ErrorContains(t, err, want, in)
		require.True(t, strings.HasPrefix(err.Error(), "--list "), err.Error())
	}
}

// FuzzParseSecret: what buildctl's ParseSecret accepts and jetbake's checks
// pass is a source with an id and one place to read it from.
func FuzzParseSecret(f *testing.F) {
	f.Add("id=a,src=go.mod")
	f.Add("type=env,id=a,src=HOME")
	f.Add("id=HOME,source=x,src=go.mod")
	f.Add(`"id=a",env=HOME`)
	f.Fuzz(func(t *testing.T, v string) {
		s, err := parseSecret(v)
		if err != nil {
			require.Equal(t, ExitUsage, ExitCode(err))
			return
		}
		require.NotEmpty(t, s.ID)
		require.True(t, s.Env != "" || s.FilePath != "", "%+v", s)
	})
}
