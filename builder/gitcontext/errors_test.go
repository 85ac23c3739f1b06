package gitcontext

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The texts are BuildKit v0.34.2's errors as they came back from its
// gateway, fetching with git 2.39 from git daemon and git http-backend on
// 127.0.0.1 (the end-to-end test TestGitContext sees them again).
func TestDescribe(t *testing.T) {
	const (
		c1 = "a9bbc3f78802bf57d53e5cfaa1a60788d326633e"
		c2 = "3c1c0dbad695150b7f02775a7f8964f74a0df4ab"
	)
	for _, tc := range []struct {
		name, context, err string
		credentials        []string
		lockFile           string
		want               string // the whole sentence, or "" for an error left as it is
	}{
		{
			name:    "unknown host over http",
			context: "http://git.jetbake.invalid/router.git#v1.8.0",
			err: "failed to solve: failed to load cache key: failed to fetch remote http://git.jetbake.invalid/router.git: git stderr:\n" +
				"fatal: unable to access 'http://git.jetbake.invalid/router.git/': Could not resolve host: git.jetbake.invalid\n: exit status 128",
			want: `router.context "http://git.jetbake.invalid/router.git#v1.8.0": the host git.jetbake.invalid is not known (no DNS name resolves to it): ` +
				"correct the host in the URL, or check the DNS and network of the BuildKit daemon",
		},
		{
			name:    "unknown host over git://",
			context: "git://git.jetbake.invalid/router.git#v1.8.0",
			err: "failed to fetch remote git://git.jetbake.invalid/router.git: git stderr:\n" +
				"fatal: unable to look up git.jetbake.invalid (port 9418) (Name or service not known)\n: exit status 128",
			want: `router.context "git://git.jetbake.invalid/router.git#v1.8.0": the host git.jetbake.invalid is not known (no DNS name resolves to it): ` +
				"correct the host in the URL, or check the DNS and network of the BuildKit daemon",
		},
		{
			name:    "nothing listens",
			context: "http://127.0.0.1:1/router.git#v1.8.0",
			err: "failed to fetch remote http://127.0.0.1:1/router.git: git stderr:\n" +
				"fatal: unable to access 'http://127.0.0.1:1/router.git/': Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server\n: exit status 128",
			want: `router.context "http://127.0.0.1:1/router.git#v1.8.0": nothing answers at 127.0.0.1:1: ` +
				"check the host and port in the URL, and that the git server is up and reachable from the BuildKit daemon",
		},
		{
			name:    "no such repository over http",
			context: "http://127.0.0.1:45473/nope.git#v1.8.0",
			err: "failed to solve: failed to load cache key: failed to fetch remote http://127.0.0.1:45473/nope.git: git stderr:\n" +
				"fatal: repository 'http://127.0.0.1:45473/nope.git/' not found\n: exit status 128",
			want: `router.context "http://127.0.0.1:45473/nope.git#v1.8.0": 127.0.0.1:45473 has no repository /nope.git (or does not serve it): ` +
				"correct the repository's path in the URL",
		},
		{
			name:    "no such repository over git://",
			context: "git://127.0.0.1:45735/nope.git#v1.8.0",
			err: "failed to fetch remote git://127.0.0.1:45735/nope.git: git stderr:\n" +
				"fatal: remote error: access denied or repository not exported: /nope.git\n: exit status 128",
			want: `router.context "git://127.0.0.1:45735/nope.git#v1.8.0": 127.0.0.1:45735 has no repository /nope.git (or does not serve it): ` +
				"correct the repository's path in the URL",
		},
		{
			name:    "unknown tag",
			context: "http://127.0.0.1:45473/router.git#v9.9.9",
			err:     `failed to solve: failed to load cache key: repository does not contain ref v9.9.9, output: ""`,
			want: `router.context "http://127.0.0.1:45473/router.git#v9.9.9": the repository http://127.0.0.1:45473/router.git has no tag or branch v9.9.9: ` +
				"correct the ref after '#' (or ref=): git ls-remote --tags http://127.0.0.1:45473/router.git lists the tags",
		},
		{
			name:    "a short commit",
			context: "http://127.0.0.1:45473/router.git#3c1c0db",
			err:     `repository does not contain ref 3c1c0db, output: ""`,
			want: `router.context "http://127.0.0.1:45473/router.git#3c1c0db": the repository http://127.0.0.1:45473/router.git has no tag or branch 3c1c0db: ` +
				"a commit must be given in full (40 hex digits); or name a tag: git ls-remote --tags http://127.0.0.1:45473/router.git lists them",
		},
		{
			name:    "unknown commit",
			context: "http://127.0.0.1:45473/router.git#0123456789abcdef0123456789abcdef01234567",
			err: "failed to solve: failed to checkout remote http://127.0.0.1:45473/router.git: git stderr:\n" +
				"fatal: reference is not a tree: 0123456789abcdef0123456789abcdef01234567\n: exit status 128",
			want: `router.context "http://127.0.0.1:45473/router.git#0123456789abcdef0123456789abcdef01234567": ` +
				"the repository http://127.0.0.1:45473/router.git has no commit 0123456789abcdef0123456789abcdef01234567: " +
				"correct the commit, given in full; or pin a tag and its commit: ?ref=TAG&checksum=COMMIT",
		},
		{
			name:    "no folder",
			context: "http://127.0.0.1:45473/router.git#v1.8.0:nope",
			err:     `failed to solve: invalid subdir nope: failed to lstat "nope": statat nope: no such file or directory`,
			want: `router.context "http://127.0.0.1:45473/router.git#v1.8.0:nope": the repository http://127.0.0.1:45473/router.git has no folder nope at v1.8.0: ` +
				"correct the folder after ':' (or subdir=): it is relative to the repository's root",
		},
		{
			name:    "credentials needed, none given",
			context: "http://127.0.0.1:45473/private/router.git#main",
			err: "failed to fetch remote http://127.0.0.1:45473/private/router.git: git stderr:\n" +
				"fatal: could not read Username for 'http://127.0.0.1:45473': terminal prompts disabled\n: exit status 128",
			want: `router.context "http://127.0.0.1:45473/private/router.git#main": 127.0.0.1:45473 asks for credentials (the repository is private, or does not exist) and none were given: ` +
				"give a token that may read it: --secret id=GIT_AUTH_TOKEN.127.0.0.1:45473,env=VAR, or set JETBAKE_GIT_AUTH_TOKEN",
		},
		{
			name:        "credentials refused",
			context:     "http://127.0.0.1:45473/private/router.git#main",
			credentials: []string{"GIT_AUTH_TOKEN.127.0.0.1:45473"},
			err: "failed to solve: failed to load cache key: failed to fetch remote http://127.0.0.1:45473/private/router.git: git stderr:\n" +
				"fatal: could not read Username for 'http://127.0.0.1:45473': terminal prompts disabled\n: exit status 128",
			want: `router.context "http://127.0.0.1:45473/private/router.git#main": 127.0.0.1:45473 refused the credentials given (GIT_AUTH_TOKEN.127.0.0.1:45473): ` +
				"check that the token is valid and may read the repository, and that the URL names the right repository",
		},
		{
			name:    "an scp-like remote without a key",
			context: "git@github.com:acme/router.git#v1.0.0",
			err:     "failed to fetch remote git@github.com:acme/router.git: git stderr:\ngit@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.\n: exit status 128",
			want: `router.context "git@github.com:acme/router.git#v1.0.0": the server refused the SSH key (or no key was forwarded): ` +
				"forward a key that may read the repository: --ssh default (the ssh-agent of SSH_AUTH_SOCK)",
		},
		{
			name:     "an annotated tag moved from its locked commit",
			context:  "http://127.0.0.1:45473/router.git#v1.8.0",
			lockFile: "matrix.lock.json",
			err:      "failed to solve: failed to load cache key: expected checksum to match " + c2 + ", got  or " + c1,
			want: `router.context "http://127.0.0.1:45473/router.git#v1.8.0": the tag v1.8.0 moved: matrix.lock.json pins commit ` + c2 +
				", the repository now has " + c1 + ": check what changed, then run 'jetbake lock' to pin the new commit",
		},
		{
			name:    "a lightweight tag moved from the context's checksum",
			context: "http://127.0.0.1:45473/router.git?ref=light&checksum=" + c1,
			err:     "expected checksum to match " + c1 + ", got " + c2,
			want: `router.context "http://127.0.0.1:45473/router.git?ref=light&checksum=` + c1 + `": the tag or branch light moved: the context's checksum pins commit ` + c1 +
				", the repository now has " + c2 + ": check what changed, then set checksum=" + c2 + " in router.context",
		},
		{
			name:    "a build step's failure that mentions a host is left as it is",
			context: "http://127.0.0.1:45473/router.git#v1.8.0",
			err:     `process "/bin/sh -c curl https://sh.rustup.rs" did not complete successfully: exit code: 6: curl: (6) Could not resolve host: sh.rustup.rs`,
		},
		{
			name:    "another repository's failure is left as it is",
			context: "http://127.0.0.1:45473/router.git#v1.8.0",
			err: "failed to fetch remote https://github.com/acme/other.git: git stderr:\n" +
				"fatal: repository 'https://github.com/acme/other.git/' not found\n: exit status 128",
		},
		{
			name:    "another ref's failure is left as it is",
			context: "http://127.0.0.1:45473/router.git#v1.8.0",
			err:     `repository does not contain ref v2, output: ""`,
		},
		{
			name:    "a git failure jetbake does not know is left as it is",
			context: "http://127.0.0.1:45473/router.git#v1.8.0",
			err:     "failed to fetch remote http://127.0.0.1:45473/router.git: git stderr:\nfatal: something new\n: exit status 128",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := Parse(tc.context)
			require.True(t, ok)
			d := Describer{Context: c, Credentials: tc.credentials, LockFile: tc.lockFile}
			if tc.lockFile != "" {
				d.LockedRef = "refs/tags/" + c.Ref.Ref
			}
			raw := errors.New(tc.err)
			got := d.Describe(raw)
			if tc.want == "" {
				require.Same(t, raw, got)
				return
			}
			require.EqualError(t, got, tc.want)
			require.ErrorIs(t, got, raw, "the raw error stays underneath")
			require.NotContains(t, got.Error(), "git stderr")
			require.NotContains(t, got.Error(), "\n")
		})
	}
}

func TestDescribeMasksCredentials(t *testing.T) {
	c, ok := Parse("https://user:s3cret@git.jetbake.invalid/router.git#v1")
	require.True(t, ok)
	require.True(t, c.HasPassword())
	err := Describer{Context: c}.Describe(errors.New("failed to fetch remote https://xxxxx:xxxxx@git.jetbake.invalid/router.git: git stderr:\n" +
		"fatal: unable to access 'https://git.jetbake.invalid/router.git/': Could not resolve host: git.jetbake.invalid\n: exit status 128"))
	require.NotContains(t, err.Error(), "s3cret")
	require.True(t, strings.HasPrefix(err.Error(), `router.context "https://xxxxx:xxxxx@git.jetbake.invalid/router.git#v1": the host git.jetbake.invalid`), err.Error())
}

func FuzzDescribe(f *testing.F) {
	f.Add("http://127.0.0.1:1/router.git#v1", "failed to fetch remote http://127.0.0.1:1/router.git: git stderr:\nfatal: unable to access 'x': Could not resolve host: a\nb\n")
	f.Add("https://github.com/a/b.git?ref=v1&checksum=abc1", "expected checksum to match abc1, got  or 0123")
	f.Add("git://h/r.git#v1:sub", "invalid subdir sub: failed to lstat \"sub\": statat sub: no such file or directory")
	f.Fuzz(func(t *testing.T, context, msg string) {
		c, ok := Parse(context)
		if !ok {
			return
		}
		err := Describer{Context: c}.Describe(errors.New(msg))
		var described *Error
		if errors.As(err, &described) && strings.ContainsAny(described.Error(), "\n\r") {
			t.Fatalf("the sentence spans lines: %q", described.Error())
		}
	})
}
