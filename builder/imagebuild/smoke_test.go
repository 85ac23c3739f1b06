package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmokeResultNamesTheMissingLibrary(t *testing.T) {
	p := testPlan()
	j := &releaseJob{plan: p, release: p.Releases[0]}
	require.NoError(t, j.smokeResult("router-87", "0", "text-embeddings-router 1.8.0"))
	err := j.smokeResult("router-87", "127",
		"/usr/local/bin/router-87: error while loading shared libraries: libssl.so.3: cannot open shared object file: No such file or directory\n")
	require.ErrorContains(t, err, "router-87 --version (exit 127) fails on the runtime base: it needs libssl.so.3, which the runtime base "+p.Releases[0].RuntimeBase+" lacks")
	err = j.smokeResult("router-87", "1", "starting\nError: something else\n")
	require.ErrorContains(t, err, "router-87 --version (exit 1) fails on the runtime base: Error: something else")
}

// The smoke run's result file decides the verdict: every binary must have
// run and exited 0, no folder jetbake's layers create may be a link in the
// base, and the base must have a CA bundle.
func TestJudgeSmoke(t *testing.T) {
	p := testPlan()
	j := &releaseJob{plan: p, release: p.Releases[1]} // router-87 and router-110
	logs := func(name string) string {
		return "/usr/local/bin/" + name + ": error while loading shared libraries: libssl.so.3: cannot open shared object file\n"
	}
	tests := []struct {
		name, result, want string
	}{
		{name: "all good", result: "rc router-87 0\nrc router-110 0\nca\n"},
		{name: "no exit status", result: "rc router-87 0\nca\n", want: "smoke run of router-110 on the runtime base left no exit status"},
		{name: "a binary fails", result: "rc router-87 0\nrc router-110 127\nca\n", want: "router-110 --version (exit 127) fails on the runtime base: it needs libssl.so.3"},
		{name: "no CA bundle", result: "rc router-87 0\nrc router-110 0\n", want: "has no CA bundle at " + CABundlePath},
		{name: "a linked folder", result: "rc router-87 0\nrc router-110 0\nca\nlink /usr/local/bin\n",
			want: "has /usr/local/bin as a symbolic link: jetbake's layers put a real folder there"},
		{name: "nothing", result: "", want: "left no exit status"},
	}
	for _, tt := range tests {
		err := j.judgeSmoke(tt.result, logs)
		if tt.want == "" {
			require.NoError(t, err, tt.name)
			continue
		}
		require.ErrorContains(t, err, tt.want, tt.name)
	}
}

// The script checks every folder the layers create, parents included.
func TestSmokeScript(t *testing.T) {
	p := testPlan()
	j := &releaseJob{plan: p, release: p.Releases[1]}
	require.Equal(t, []string{"/etc", "/etc/jetbake", "/usr", "/usr/local", "/usr/local/bin"}, j.layerDirs())
	script := j.smokeScript()
	require.Contains(t, script, `'/usr/local/bin/router-110' "$@" >/jetbake-smoke/router-110.log 2>&1; echo "rc router-110 $?" >>/jetbake-smoke/result`)
	require.Contains(t, script, `[ -L '/usr/local/bin' ] && echo 'link /usr/local/bin' >>/jetbake-smoke/result`)
	require.Contains(t, script, "[ -s "+CABundlePath+" ] && echo ca >>/jetbake-smoke/result")
}
