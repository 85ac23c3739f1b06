package smoke

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppJudge(t *testing.T) {
	app := App{Name: "obliteratus", Command: []string{"/opt/venv/bin/obliteratus"}, Args: []string{"--help"}}
	logs := map[string]string{}
	read := func(name string) string { return logs[name] }
	require.NoError(t, app.Judge("stage app", "stub /usr/local/cuda/lib64/stubs/libcuda.so\nrc app 0", read))

	logs[appLog] = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'obliteratus.cli'"
	err := app.Judge("stage app of Dockerfile on nvcr.io/nvidia/pytorch:25.06-py3-igpu", "rc app 1", read)
	require.EqualError(t, err, "the app's smoke run, /opt/venv/bin/obliteratus --help (exit 1), fails on stage app of Dockerfile on nvcr.io/nvidia/pytorch:25.06-py3-igpu: "+
		"ModuleNotFoundError: No module named 'obliteratus.cli'; fix the app, or set app.smoke in the matrix to arguments it passes without a GPU (such as [\"--help\"])")

	logs[appLog] = "python: error while loading shared libraries: libpython3.12.so.1.0: cannot open shared object file"
	err = app.Judge("stage app", "rc app 127", read)
	require.ErrorContains(t, err, "it needs libpython3.12.so.1.0, which the image lacks")

	require.ErrorContains(t, app.Judge("stage app", "", read), "left no exit status")
}

// TestAppScript runs the script with sh, its folders moved into a
// temporary one: the command gets the smoke arguments, and its exit status
// and output are where Judge reads them.
func TestAppScript(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"out", "driver"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for _, tc := range []struct {
		command []string
		rc      string
	}{
		{[]string{"/bin/sh", "-c", `echo "args: $*"; [ "$1" = --help ]`, "app"}, "0"},
		{[]string{"/bin/sh", "-c", `echo "it's broken" >&2; exit 3`, "app"}, "3"},
	} {
		app := App{Name: "app", Command: tc.command, Args: []string{"--help"}}
		script := strings.NewReplacer(smokeDir, filepath.Join(dir, "out"), smokeDriver, filepath.Join(dir, "driver")).Replace(app.Script())
		_ = os.Remove(filepath.Join(dir, "out", ResultFile))
		out, err := exec.Command("/bin/sh", append([]string{"-c", script, "jetbake-smoke"}, app.Args...)...).CombinedOutput()
		require.NoError(t, err, string(out))
		result, err := os.ReadFile(filepath.Join(dir, "out", ResultFile))
		require.NoError(t, err)
		require.Equal(t, "rc app "+tc.rc+"\n", string(result))
		log, err := os.ReadFile(filepath.Join(dir, "out", appLog))
		require.NoError(t, err)
		err = app.Judge("stage app", string(result), func(name string) string { l, _ := os.ReadFile(filepath.Join(dir, "out", name)); return string(l) })
		if tc.rc == "0" {
			require.Equal(t, "args: --help\n", string(log))
			require.NoError(t, err)
		} else {
			require.ErrorContains(t, err, "(exit 3), fails on stage app: it's broken;")
		}
	}
}
