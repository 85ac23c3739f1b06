package pyindex_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/internal/pyindex"
)

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return data
}

// TestIndexServesWheels reads the index as pip does: the project list, a
// project's links with their sha256, the wheel; and the SBSA wheel's
// library holds no code for sm_87, as jetbake's audit reads it.
func TestIndexServesWheels(t *testing.T) {
	k := bedKit(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	x, err := pyindex.Start(ctx, k)
	require.NoError(t, err)
	defer x.Close()
	require.Equal(t, []string{"bitsandbytes", "einops", "obliteratus", "torch", "torchvision", "torchy-helper", "tqdm"}, x.Packages)
	require.Contains(t, string(get(t, x.URL)), `<a href="torchy-helper/">torchy-helper</a>`)
	resp, err := http.Get(x.URL + "nothing/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	page := string(get(t, x.URL+"Bitsandbytes/"))
	m := regexp.MustCompile(`href="\.\./\.\./files/([^"#]+)#sha256=([0-9a-f]+)"`).FindStringSubmatch(page)
	require.NotNil(t, m, page)
	require.Equal(t, "bitsandbytes-0.47.0-py3-none-manylinux_2_24_aarch64.whl", m[1])
	whl := get(t, strings.TrimSuffix(x.URL, "simple/")+"files/"+m[1])
	sum := sha256.Sum256(whl)
	require.Equal(t, m[2], hex.EncodeToString(sum[:]))

	zr, err := zip.NewReader(bytes.NewReader(whl), int64(len(whl)))
	require.NoError(t, err)
	f, err := zr.Open(pyindex.BitsandbytesLib)
	require.NoError(t, err)
	lib, err := io.ReadAll(f)
	require.NoError(t, err)
	entries, err := fatbin.ReadELF(bytes.NewReader(lib), fatbin.Limits{})
	require.NoError(t, err)
	var codes []string
	for _, e := range entries {
		codes = append(codes, e.String())
	}
	require.Equal(t, []string{"sm_75 cubin", "sm_80 cubin", "sm_90 cubin", "compute_90 PTX"}, codes)
}
