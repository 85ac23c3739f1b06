package imageaudit_test

import (
	"context"
	debugelf "debug/elf"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imageaudit"
)

// The scan records the DT_NEEDED entries of the ELF files in a Python
// site folder (what a wheel's extension modules link), and of no other.
func TestScanNeededInSiteFolders(t *testing.T) {
	data, err := os.ReadFile("/bin/ls") // a dynamically linked ELF file of this machine
	require.NoError(t, err)
	f, err := debugelf.Open("/bin/ls")
	require.NoError(t, err)
	want, err := f.ImportedLibraries()
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NotEmpty(t, want)

	ext := "usr/local/lib/python3.12/dist-packages/mmcv/_ext.cpython-312-aarch64-linux-gnu.so"
	img := image(t, nil, layer(t, file{ext, data}, file{"usr/bin/ls", data},
		file{"opt/venv/lib/python3.12/site-packages/tqdm/__init__.py", []byte("# not ELF, and long enough to be looked at by the scan\n")}))
	scan, err := imageaudit.ScanImage(context.Background(), img)
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"/" + ext: want}, scan.Needed)
}
