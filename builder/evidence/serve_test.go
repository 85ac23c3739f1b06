package evidence

import (
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServingFile keeps testdata/orin-nano-jp6-serve.json what the probe
// writes with --kernel and --serve on the golden's host: the golden with
// the two checks in the probe's order and their runs.
func TestServingFile(t *testing.T) {
	want, err := golden(t, serving).Marshal()
	require.NoError(t, err)
	got, err := os.ReadFile(servingFile)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

func TestParseServe(t *testing.T) {
	ev := supported(t, nil)
	require.Equal(t, serveRun(), ev.Result.Serve)
	hub := supported(t, func(ev *Evidence) { ev.Result.Serve.ModelID = "sentence-transformers/all-MiniLM-L6-v2" })
	require.Equal(t, "sentence-transformers/all-MiniLM-L6-v2", hub.Result.Serve.ModelID)
}

// TestParseServeRejects: a hand-edited serve run cannot carry a path or
// text into the store, nor claim a pass without its run.
func TestParseServeRejects(t *testing.T) {
	tests := []struct {
		name string
		edit func(ev *Evidence)
		want string
	}{
		{"a model folder's path as the id", func(ev *Evidence) { ev.Result.Serve.ModelID = "/home/alice/models/bge" },
			`result.serve.model_id: "/home/alice/models/bge": is not a Hub model id`},
		{"a deeper path as the id", func(ev *Evidence) { ev.Result.Serve.ModelID = "models/alice/bge" }, `result.serve.model_id: "models/alice/bge"`},
		{"a dtype TEI does not write", func(ev *Evidence) { ev.Result.Serve.DType = "int8 on jetson-01" }, `result.serve.dtype: "int8 on jetson-01"`},
		{"an unknown step", func(ev *Evidence) {
			setCheck(ev, "serve", Failed, "the router could not be started")
			ev.Result.Serve.Step = "/tmp/x"
		}, `result.serve.step: "/tmp/x": is not a step of the serving check`},
		{"negative dimensions", func(ev *Evidence) { ev.Result.Serve.Dimensions = -1 }, `result.serve.dimensions: "-1"`},
		{"a time past an hour", func(ev *Evidence) { ev.Result.Serve.P95Millis = 4e6 }, `result.serve.p95_ms: "4e+06"`},
		{"a passed check without its run", func(ev *Evidence) { ev.Result.Serve = nil }, "result.serve: does not show the passing run its serve check claims"},
		{"a passed check with a failed step", func(ev *Evidence) { ev.Result.Serve.Step = "finite" }, "result.serve: does not show the passing run"},
		{"a passed kernel check without its run", func(ev *Evidence) { ev.Result.Kernel = nil }, "result.kernel: does not show the passing run its cuda-kernel check claims"},
		{"a serve detail with a path", func(ev *Evidence) {
			ev.Result.Checks[len(ev.Result.Checks)-1].Detail = "served /home/alice/models/bge"
		}, "is not one of the phrases the probe writes for serve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := supported(t, nil)
			tt.edit(ev)
			data, err := ev.Marshal()
			require.NoError(t, err)
			_, err = Parse(data)
			require.ErrorContains(t, err, tt.want)
		})
	}
	require.Error(t, validateServe(&Serve{LoadMillis: math.NaN()}))
}
