package buildfailure

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cross link's refusals, in the words Debian's aarch64-linux-gnu-ld
// printed for them in the stand-in cross build base
// (standin.TestStandinCrossBaseHostSSL, TestStandinCrossBuildFails),
// become one sentence naming the release, the base, the file and the fix.
func TestCrossLinkError(t *testing.T) {
	const ld = "/usr/lib/gcc-cross/aarch64-linux-gnu/12/../../../../aarch64-linux-gnu/bin/ld"
	base := "registry.example/ci/cross:cuda12.6"
	step := errors.New("process did not complete successfully: exit code: 101")
	for name, tc := range map[string]struct {
		out  string
		want []string
	}{
		"an x86_64 OpenSSL found through -L": {
			out: ld + ": skipping incompatible /usr/lib/x86_64-linux-gnu/libssl.so when searching for -lssl\n" +
				ld + ": cannot find -lssl: No such file or directory\ncollect2: error: ld returned 1 exit status\n",
			want: []string{"release jetpack6.2: the cross build base " + base + " gave the aarch64 linker a file of the build machine's architecture, /usr/lib/x86_64-linux-gnu/libssl.so: ",
				"install the target's package of libssl in that image (the :arm64 one, e.g. libssl-dev:arm64 for OpenSSL, not libssl-dev)", `build_path "qemu"`}},
		"an x86_64 host object from nvcc": {
			out: ld + ": /src/target/aarch64-unknown-linux-gnu/release/build/candle-flash-attn-2b7d0e/out/flash_api-1f.o: Relocations in generic ELF (EM: 62)\n" +
				ld + ": /src/target/aarch64-unknown-linux-gnu/release/build/candle-flash-attn-2b7d0e/out/flash_api-1f.o: error adding symbols: file in wrong format\n",
			want: []string{"flash_api-1f.o: compile the host objects with the aarch64 cross gcc (NVCC_CCBIN=aarch64-linux-gnu-gcc"}},
		"the kernels' archive of x86_64 host objects": {
			out: ld + ": skipping incompatible /src/target/aarch64-unknown-linux-gnu/release/build/candle-flash-attn-2b7d0e/out/libflashattention.a when searching for -lflashattention\n" +
				ld + ": cannot find -lflashattention: No such file or directory\n",
			want: []string{"a file of the build machine's architecture, /src/target/aarch64-unknown-linux-gnu/release/build/candle-flash-attn-2b7d0e/out/libflashattention.a: " +
				"compile the host objects with the aarch64 cross gcc (NVCC_CCBIN=aarch64-linux-gnu-gcc and NVCC_PREPEND_FLAGS=\"-ccbin aarch64-linux-gnu-gcc\""}},
	} {
		t.Run(name, func(t *testing.T) {
			err := CrossLink("jetpack6.2", base, step, tc.out)
			var ce *CrossLinkError
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, step)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
	other := errors.New("cargo failed")
	require.Equal(t, other, CrossLink("jetpack6.2", base, other, "error: could not compile `x`"), "other failures keep their words")
}
