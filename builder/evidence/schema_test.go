package evidence

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseGolden(t *testing.T) {
	ev := golden(t, nil)
	require.Equal(t, "jetpack6.2", ev.Image.Release)
	require.Equal(t, goldenDigest, ev.Image.Digest)
	require.Equal(t, goldenRevision, ev.Revision)
	require.Equal(t, Host{Architecture: "arm64", L4T: "36.4.3", JetPack: "6.2", DeviceClass: "Jetson Orin Nano Super",
		SoC: "tegra234", ComputeCapability: "8.7", CUDADriver: "12.6"}, ev.Host)
	require.True(t, ev.Result.Pass)
	require.Len(t, ev.Result.Checks, 11)
	require.Equal(t, goldenTime(), ev.At())
	// Writing it again gives the probe's bytes: the two schemas agree.
	data, err := ev.Marshal()
	require.NoError(t, err)
	require.Equal(t, string(goldenBytes(t)), string(data))
}

func TestParseRejects(t *testing.T) {
	good := string(goldenBytes(t))
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown field", `"revision":`, `"hostname": "lab-7", "revision":`, `evidence:12:15: hostname: unknown field; fix: did you mean "host"?`},
		{"newer schema", `"schema_version": 1`, `"schema_version": 2`, `evidence:2:21: schema_version: "2": this jetbake reads schema 1: use the probe of a matching jetbake; fix: give the file the probe wrote, unedited`},
		{"bad time", `"2026-11-20T09:30:00Z"`, `"yesterday"`, `evidence:3:19: generated_at: "yesterday": is not an RFC 3339 time`},
		{"path in a detail", `"read and valid"`, `"read /home/alice/image.json"`, `evidence:32:19: result.checks[0].detail: "read /home/alice/image.json": is not one of the phrases the probe writes for image-description`},
		{"user in a tag", `"ghcr.io/jetbake/`, `"alice:pw@ghcr.io/jetbake/`, `: image.tags[0]: "alice:pw@ghcr.io/jetbake/`},
		{"raw model as device class", `"Jetson Orin Nano Super"`, `"NVIDIA Jetson Orin Nano SN/1234"`, `: host.device_class: "NVIDIA Jetson Orin Nano SN/1234"`},
		{"climbing tag", `"ghcr.io/jetbake/`, `"ghcr.io/../jetbake/`, `: image.tags[0]: "ghcr.io/../jetbake/`},
		{"short digest", goldenDigest, "sha256:c2ef", `: image.digest: "sha256:c2ef": is not a digest`},
		{"raw L4T line", `"l4t": "36.4.3"`, `"l4t": "# R36 (release), REVISION: 4.3"`, `: host.l4t: "# R36 (release), REVISION: 4.3": is not an L4T release`},
		{"pass that disagrees", `"status": "passed",
        "detail": "the chosen binary exited 0"`, `"status": "skipped",
        "detail": "the chosen binary exited 0"`, `: result.pass: "true": disagrees with the checks`},
		{"unknown status", `"status": "passed",
        "detail": "read and valid"`, `"status": "ok",
        "detail": "read and valid"`, `: result.checks[0].status: "ok": is not passed, failed or skipped`},
		{"two objects", "", "{}", "evidence:93:1: $: not valid JSON at line 93, column 1: invalid character '{' after top-level value"},
		{"not JSON", `"schema_version": 1,`, `"schema_version": 1`, "evidence:3:3: $: not valid JSON at line 3, column 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := good + tt.to
			if tt.from != "" {
				data = strings.Replace(good, tt.from, tt.to, 1)
			}
			require.NotEqual(t, good, data, "the case changes nothing")
			_, err := Parse([]byte(data))
			require.ErrorContains(t, err, tt.want)
		})
	}
	_, err := Parse(bytes.Repeat([]byte(" "), MaxSize+1))
	require.ErrorContains(t, err, "more than the 65536 the probe writes")
}

func FuzzParse(f *testing.F) {
	f.Add(goldenBytes(f))
	f.Add([]byte(`{"schema_version":1,"generated_at":"2026-01-01T00:00:00Z","image":{"tags":[]},"host":{"architecture":"arm64"},"result":{"pass":false,"checks":[{"name":"x","status":"failed","detail":""}]}}`))
	f.Add([]byte(`{"schema_version":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := Parse(data)
		if err != nil {
			return
		}
		if ev.At().IsZero() || ev.SchemaVersion != SchemaVersion || len(ev.Result.Checks) == 0 {
			t.Fatalf("parsed %q into %+v", data, ev)
		}
		out, err := ev.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("evidence does not read back: %v\n%s", err, out)
		}
		if again.Result.Pass != ev.Result.Pass || again.Image.Digest != ev.Image.Digest || !again.At().Equal(ev.At()) {
			t.Fatalf("evidence changed on the way back: %+v vs %+v", ev, again)
		}
		for _, tag := range ev.Image.Tags {
			if strings.ContainsAny(tag, "@ \"'$`\\") || strings.Contains(tag, "..") {
				t.Fatalf("tag %q passed the schema", tag)
			}
		}
		for _, c := range ev.Result.Checks {
			if strings.ContainsAny(c.Detail, "/@\\\"$`") {
				t.Fatalf("detail %q passed the schema", c.Detail)
			}
		}
	})
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]string{"30d": "720h0m0s", "720h": "720h0m0s", " 1d ": "24h0m0s", "90m": "1h30m0s"} {
		d, err := ParseAge(in)
		require.NoError(t, err, in)
		require.Equal(t, want, d.String())
	}
	for _, in := range []string{"", "0d", "-1d", "thirty days", "1.5d", "-5h"} {
		_, err := ParseAge(in)
		require.Error(t, err, in)
	}
	require.Equal(t, "30d", FormatAge(DefaultMaxAge))
}
