package standin

import "context"

// rustcObjectSource stands for rustc's object code of the router: what the
// stand-in cargo hands the target's linker beside candle-flash-attn's host
// objects (tei.MainObjectPath), so that the real linker judges their
// architectures together.
const rustcObjectSource = "int jetbake_standin_router_main(void) { return 0; }\n"

// BuildRustcObject compiles the stand-in of rustc's object code for the
// router: an aarch64 position-independent relocatable object, built with
// Debian's aarch64 cross compiler into cacheDir.
func BuildRustcObject(ctx context.Context, cacheDir string) (string, error) {
	return buildC(ctx, cacheDir, ARM64, "router-main.o", []byte(rustcObjectSource), []string{"-c", "-fPIC", "-O2"})
}
