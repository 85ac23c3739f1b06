package pyindex_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/pyindex"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/computecap"
)

// bedKit is the stand-in kit of this checkout's bin/ (`make deps`).
func bedKit(t *testing.T) standin.Kit {
	t.Helper()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	k, err := standin.BedKit(root)
	require.NoError(t, err)
	_, err = os.Stat("/proc/sys/fs/binfmt_misc/qemu-aarch64")
	require.NoError(t, err, "the qemu-aarch64 binfmt handler: run 'make deps' as root")
	require.Equal(t, 0, os.Geteuid(), "runc needs root")
	return k
}

// pipScript runs the three installs of the contract in one container: the
// venv sees the vendor torch; --no-deps keeps it; the constraint file
// refuses PyPI's torch; a plain install shadows the vendor torch.
const pipScript = `set -u
export PYTHONPYCACHEPREFIX=/tmp/pyc PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_INDEX_URL="$1"
V=/tmp/venv/bin/python
SITE=/tmp/venv/lib/python3.11/site-packages
python3 -m venv --without-pip --system-site-packages /tmp/venv || exit 1
echo "== nodeps"
$V -m pip install --no-deps obliteratus || exit 1
$V -c 'import torch; print("TORCH", torch.__version__, torch.version.cuda, torch.__file__)'
/tmp/venv/bin/obliteratus --gate
$V -m pip install --no-deps bitsandbytes || exit 1
ls $SITE/bitsandbytes
echo "== constraint"
PIP_CONSTRAINT=/etc/pip/constraint.txt $V -m pip install obliteratus torchy-helper
echo "RC=$?"
ls $SITE | grep -i '^torch-' || echo "no torch in the venv"
echo "== plain"
$V -m pip install obliteratus torchy-helper || exit 1
ls $SITE | grep -i '^torch-'
$V -c 'import torch; print("TORCH", torch.__version__, torch.version.cuda, torch.__file__, torch.cuda.is_available())'
`

// TestPipKeepsOrShadowsVendorTorch installs from the index with Debian's
// real pip on the JetPack 6.2 stand-in PyTorch base, on an Orin.
func TestPipKeepsOrShadowsVendorTorch(t *testing.T) {
	k := bedKit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	line, err := standin.PyTorchLineFor("6.2")
	require.NoError(t, err)
	c, err := k.UnpackPyTorch(ctx, "6.2", t.TempDir())
	require.NoError(t, err)
	orin, err := k.JetsonHost(ctx, "Orin", computecap.Capability{Major: 8, Minor: 7}, computecap.CUDAVersion{Major: 12, Minor: 6})
	require.NoError(t, err)
	x, err := pyindex.Start(ctx, k)
	require.NoError(t, err)
	defer x.Close()
	runner, err := runimage.NewRunner(t.TempDir())
	require.NoError(t, err)
	start := time.Now()
	res, err := runner.Run(ctx, c.Rootfs, c.Config, orin, []string{"/bin/sh", "-c", pipScript, "sh", x.URL})
	require.NoError(t, err)
	t.Logf("pip contract in %s\nstdout:\n%s\nstderr:\n%s", time.Since(start).Round(time.Second), res.Stdout, res.Stderr)
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	nodeps, rest, _ := strings.Cut(res.Stdout, "== constraint")
	constraint, plain, _ := strings.Cut(rest, "== plain")

	vendor := "TORCH " + line.Torch + " 12.9 /usr/local/lib/python3.11/dist-packages/torch/__init__.py"
	require.Contains(t, nodeps, vendor, "--no-deps keeps the vendor torch")
	require.Contains(t, nodeps, "device: Orin")
	require.Contains(t, nodeps, "op: 24.0 finite True")
	require.Contains(t, nodeps, "Successfully installed bitsandbytes-0.47.0", "pip takes the SBSA wheel's manylinux_2_24_aarch64 tag")
	require.Contains(t, nodeps, "libbitsandbytes_cuda126.so")

	require.Contains(t, constraint, "RC=1")
	require.Contains(t, constraint, "no torch in the venv")
	// pip 23.0.1's words.
	require.Contains(t, res.Stderr, "ERROR: Cannot install obliteratus==0.1.0 and torchy-helper==1.0.0 because these package versions have conflicting dependencies.")
	require.Contains(t, constraint, "torchy-helper 1.0.0 depends on torch=="+pyindex.PyPITorch)
	require.Contains(t, constraint, "The user requested (constraint) torch=="+line.Torch)

	require.Contains(t, plain, "torch-"+pyindex.PyPITorch+".dist-info", "a second torch dist-info in the venv")
	require.Contains(t, plain, "TORCH "+pyindex.PyPITorch+" None /tmp/venv/lib/python3.11/site-packages/torch/__init__.py False",
		"PyPI's CPU torch shadows the vendor one")
}
