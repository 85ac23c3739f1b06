package standin

import "context"

// rustcObjectSource stands for rustc's object code of the router: what the
// stand-in cargo hands the target's linker beside candle-flash-attn's
// archive (tei.MainObjectPath), so that the real linker judges their
// architectures together. It calls the crate's entry point, run_mha, as
// candle-flash-attn's Rust code does (its extern "C" declaration), so that
// the linker takes the kernels' objects out of libflashattention.a; a
// router without candle-flash-attn leaves the reference undefined, which a
// shared object may.
const rustcObjectSource = `extern int run_mha(void *, const unsigned int *, const float *, float *, float *, int, int, void *);
int jetbake_standin_router_main(void) { return run_mha(0, 0, 0, 0, 0, 0, 0, 0); }
`

// BuildRustcObject compiles the stand-in of rustc's object code for the
// router: an aarch64 position-independent relocatable object, built with
// Debian's aarch64 cross compiler into cacheDir.
func BuildRustcObject(ctx context.Context, cacheDir string) (string, error) {
	return buildC(ctx, cacheDir, ARM64, "router-main.o", []byte(rustcObjectSource), []string{"-c", "-fPIC", "-O2"})
}
