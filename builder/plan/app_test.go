package plan

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
)

// appMatrixFile is an app's matrix: JetPack 6.2 on Orin, JetPack 7.0 on Thor.
const appMatrixFile = "../matrix/testdata/app-matrix.json"

// appMatrix returns its bytes.
func appMatrix(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(appMatrixFile)
	require.NoError(t, err)
	return data
}

// One app per release: its base, targets, tags and the build args of its stage.
func TestPlanApp(t *testing.T) {
	m, err := matrix.Parse(appMatrix(t))
	require.NoError(t, err)
	p, err := New(m)
	require.NoError(t, err)
	require.Equal(t, matrix.KindApp, p.Kind())
	require.NotNil(t, p.App)
	require.Equal(t, "obliteratus", p.App.Name)
	require.Equal(t, []string{"/opt/venv/bin/obliteratus"}, p.App.Command)
	require.Equal(t, mustAbs(t, "Dockerfile"), p.App.Dockerfile)
	require.Len(t, p.Releases, 2)

	r := p.Releases[0]
	require.Equal(t, "nvcr.io/nvidia/pytorch:25.06-py3-igpu", r.Base)
	require.Empty(t, r.BuildBase)
	require.Equal(t, []Base{{Role: "app", Ref: r.Base, Flavour: "tegra", CUDA: "12.9", From: FromTable, PyTorch: "2.8.0a0", Python: "3.12"}}, r.Bases)
	require.Equal(t, []Target{{SM: "8.7", Arch: "sm_87", ComputeCap: "87", Binary: "obliteratus", Path: "/opt/venv/bin/obliteratus"}}, r.Targets)
	require.Equal(t, []string{"ghcr.io/acme/obliteratus:0.1.0-jetpack6.2"}, r.Tags)
	require.Equal(t, map[string]string{"BASE": r.Base, "JETPACK": "6.2", "L4T": "36.4.3", "CUDA": "12.9",
		"CUDA_ARCH_LIST": "8.7", "PIP_INDEX_URL": "http://127.0.0.1:8080/simple"}, r.AppBuildArgs)
	require.Equal(t, "app", r.Labels[matrix.KeyKind])
	require.Equal(t, "obliteratus", r.Annotations[matrix.KeyTitle])
	require.Equal(t, r.Base, r.Annotations[matrix.KeyBaseName])

	thor := p.Releases[1]
	require.Equal(t, "thor", thor.AppBuildArgs["EXTRA"])
	require.Equal(t, []Base{{Role: "app", Ref: thor.Base, Flavour: "sbsa", CUDA: "13.0", From: FromTable,
		PyTorch: "2.8.0a0", Python: "3.12"}}, thor.Bases)

	// The JSON names the app, not an empty router.
	data, err := json.Marshal(p)
	require.NoError(t, err)
	require.NotContains(t, string(data), `"router"`)
	require.NotContains(t, string(data), `"build_base"`)

	// --build-arg reaches the app stage; jetbake's own are refused.
	require.NoError(t, r.SetBuildArg("HF_HUB_OFFLINE", "1"))
	require.Equal(t, "1", r.AppBuildArgs["HF_HUB_OFFLINE"])
	require.ErrorContains(t, r.SetBuildArg("CUDA_ARCH_LIST", "8.7"), "jetbake sets it from the release")
}

// Version and Context are the app's in an app's plan, the router's else.
func TestPlanVersionAndContext(t *testing.T) {
	m, err := matrix.Parse(appMatrix(t))
	require.NoError(t, err)
	p, err := New(m)
	require.NoError(t, err)
	require.Equal(t, "0.1.0", p.Version())
	require.Equal(t, mustAbs(t, "."), p.Context())
	routers, err := New(shippedMatrix(t))
	require.NoError(t, err)
	require.Equal(t, "1.9.3", routers.Version())
	require.Equal(t, routers.Router.Context, routers.Context())
}

// A container whose row leaves its versions empty is shown as unknown,
// never guessed; one the table does not know is read at build.
func TestAppBaseUnknown(t *testing.T) {
	tab := computecap.DefaultTable()
	require.Equal(t, Base{Role: "app", Ref: "nvcr.io/nvidia/pytorch:25.09-py3", Flavour: "sbsa", CUDA: UnknownUntilRead, From: FromTable,
		PyTorch: "unknown", Python: "unknown"}, appBase(tab, "nvcr.io/nvidia/pytorch:25.09-py3"))
	require.Equal(t, Base{Role: "app", Ref: "ghcr.io/acme/torch:1", Flavour: UnknownUntilRead, CUDA: UnknownUntilRead, From: FromBuild},
		appBase(tab, "ghcr.io/acme/torch:1"))
}
