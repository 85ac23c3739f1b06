package imagespec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	const fix = "; fix: rebuild the image with 'jetbake build', which writes this file"
	tests := []struct {
		name, in, wantErr string
	}{
		{name: "minimal", in: `{"schema_version":1,"router":"r","targets":[{"sm":"8.7","path":"/usr/local/bin/router-87"}]}`},
		{name: "not JSON", in: `{`, wantErr: "1:2: $: is not valid JSON: the file ends early" + fix},
		{name: "old schema", in: `{"router":"r"}`, wantErr: "schema_version: 0: this entrypoint reads schema 1 to 2" + fix + " with a matching jetbake"},
		{name: "no router", in: `{"schema_version":1}`, wantErr: "router: is empty" + fix},
		{name: "no targets", in: `{"schema_version":1,"router":"r","targets":[]}`, wantErr: "1:44: targets: is empty: the image holds no router binary" + fix},
		{name: "target without path", in: `{"schema_version":1,"router":"r","targets":[{"sm":"8.7"}]}`, wantErr: "1:45: targets[0]: needs both sm and path" + fix},
		{name: "target outside the folder", in: `{"schema_version":1,"router":"r","targets":[{"sm":"8.7","path":"/usr/local/bin/../../x"}]}`,
			wantErr: `1:64: targets[0].path: "/usr/local/bin/../../x": is not a clean path of a file in /usr/local/bin: ` +
				"the entrypoint runs only the image's own router binaries" + fix},
		{name: "app", in: `{"schema_version":2,"kind":"app","router":"r","command":["/opt/venv/bin/app","serve"],"check":"pytorch","targets":[{"sm":"8.7","path":"/opt/venv/bin/app"}]}`},
		{name: "app of schema 1", in: `{"schema_version":1,"kind":"app","router":"r","command":["/opt/venv/bin/app"],"targets":[{"sm":"8.7","path":"/opt/venv/bin/app"}]}`,
			wantErr: `1:28: kind: "app": needs schema_version 2` + fix},
		{name: "app without command", in: `{"schema_version":2,"kind":"app","router":"r","targets":[{"sm":"8.7","path":"/opt/venv/bin/app"}]}`,
			wantErr: "command: does not start with a clean absolute path: the entrypoint execs exactly that file" + fix},
		{name: "app with a relative command", in: `{"schema_version":2,"kind":"app","router":"r","command":["app"],"targets":[{"sm":"8.7","path":"app"}]}`,
			wantErr: "1:57: command: does not start with a clean absolute path"},
		{name: "app target of another path", in: `{"schema_version":2,"kind":"app","router":"r","command":["/opt/venv/bin/app"],"targets":[{"sm":"8.7","path":"/bin/sh"}]}`,
			wantErr: `1:90: targets[0]: "/bin/sh": needs an sm and the command's path "/opt/venv/bin/app"` + fix},
		{name: "unknown kind", in: `{"schema_version":2,"kind":"service","router":"r","targets":[{"sm":"8.7","path":"/usr/local/bin/r"}]}`,
			wantErr: `1:28: kind: "service": is not a kind this entrypoint knows`},
		{name: "nested field on its own line", in: "{\n  \"schema_version\": 1,\n  \"router\": \"r\",\n  \"targets\": [\n    {\"sm\": \"8.7\", \"path\": \"/usr/local/bin/router-87\"},\n    {\"sm\": \"8.7\", \"path\": \"router-87\"}\n  ]\n}",
			wantErr: `6:27: targets[1].path: "router-87": is not a clean path of a file in /usr/local/bin`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Parse([]byte(tt.in))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.True(t, strings.HasPrefix(err.Error(), tt.wantErr), err.Error())
				require.Nil(t, img)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "r", img.Router)
		})
	}
}

func TestInBinaryDir(t *testing.T) {
	for p, want := range map[string]bool{
		"/usr/local/bin/router-87":                  true,
		"/usr/local/bin/../../../outside/escape.sh": false,
		"/usr/local/bin/./router-87":                false,
		"/usr/local/bin//router-87":                 false,
		"/usr/local/bin/sub/router-87":              false,
		"/usr/local/bin":                            false,
		"/usr/local/bin/":                           false,
		"usr/local/bin/router-87":                   false,
		"/bin/sh":                                   false,
		"/usr/local/bin/router-87/":                 false,
		"/usr/local/bin/..":                         false,
		"/usr/local/binx/router-87":                 false,
	} {
		require.Equal(t, want, InBinaryDir(p), p)
	}
}

func TestErrorCutsLongValues(t *testing.T) {
	long := "/usr/local/bin/" + strings.Repeat("x", 100000)
	_, err := Parse([]byte(`{"schema_version":1,"router":"r","targets":[{"sm":"8.7","path":"` + long + `/"}]}`))
	require.ErrorContains(t, err, `... (100016 bytes): is not a clean path`)
	require.Less(t, len(err.Error()), 400)
}

func TestArgv(t *testing.T) {
	router := &Description{Router: "r"}
	require.Equal(t, []string{"/usr/local/bin/router-87", "--json-output"}, router.Argv("/usr/local/bin/router-87", []string{"--json-output"}))
	app := &Description{Kind: KindApp, Command: []string{"/opt/venv/bin/python3", "-m", "app"}}
	argv := app.Argv("/opt/venv/bin/python3", []string{"--help"})
	require.Equal(t, []string{"/opt/venv/bin/python3", "-m", "app", "--help"}, argv)
	argv[0] = "changed"
	require.Equal(t, "/opt/venv/bin/python3", app.Command[0], "Argv must not share the command's array")
}
