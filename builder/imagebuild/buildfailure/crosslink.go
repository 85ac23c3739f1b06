// Package buildfailure reads a failed router build's output for the
// failures jetbake can say in one sentence: the aarch64 linker of the cross
// path meeting a file of the build machine's architecture (CrossLinkError)
// and the CUDA compiler asked for an SM it cannot target
// (CompilerRefusalError). Any other failure keeps its own words.
package buildfailure

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// The words of GNU ld (binutils 2.40, as Debian's and Ubuntu's
// aarch64-linux-gnu-ld print them) when the aarch64 link of the cross path
// meets a file of the build machine's architecture:
//
//	ld: skipping incompatible /usr/lib/x86_64-linux-gnu/libssl.so when searching for -lssl
//	ld: cannot find -lssl: No such file or directory
//
// for a library found through -L (openssl-sys's pkg-config answer when the
// cross base has libssl-dev and not libssl-dev:arm64), and
//
//	ld: .../flash_api-1f2e.o: Relocations in generic ELF (EM: 62)
//	ld: .../flash_api-1f2e.o: error adding symbols: file in wrong format
//
// for an x86_64 object given by path. The kernels' host objects that nvcc
// wrote with the build machine's gcc (when NVCC_CCBIN and
// NVCC_PREPEND_FLAGS are lost) reach the linker in the archive their
// build script made, which ld skips as incompatible:
//
//	ld: skipping incompatible /src/target/.../build/candle-flash-attn-2b7d0e/out/libflashattention.a when searching for -lflashattention
//
// EM 62 is EM_X86_64.
var (
	ldSkipped     = regexp.MustCompile(`skipping incompatible (\S+) when searching for -l(\S+)`)
	ldWrongFormat = regexp.MustCompile(`(\S+): error adding symbols: file in wrong format`)
)

// CrossLinkError is a release whose router the cross path could not link
// because the cross build base gave the aarch64 linker a file of the build
// machine's architecture.
type CrossLinkError struct {
	// Release is the release's name and Base its cross build base.
	Release, Base string
	// File is the file the linker refused; Library its -l name when the
	// linker found it searching for one.
	File, Library string
	// Built says File is the build's own output (a host object, or an
	// archive of them under cargo's target folder), not the base's.
	Built bool
	// Err is the build's error, with the step's output.
	Err error
}

// Error names the release, the base, the file and the fix in one
// sentence, then the build's own error.
func (e *CrossLinkError) Error() string {
	var fix string
	switch {
	case e.Built:
		fix = "compile the host objects with the aarch64 cross gcc (NVCC_CCBIN=aarch64-linux-gnu-gcc and NVCC_PREPEND_FLAGS=\"-ccbin aarch64-linux-gnu-gcc\", " +
			"as Dockerfile-jetson's toolchain-cross stage sets them)"
	case e.Library != "":
		fix = fmt.Sprintf("install the target's package of lib%s in that image (the :arm64 one, e.g. libssl-dev:arm64 for OpenSSL, not libssl-dev)", e.Library)
	default:
		fix = "install the target's (:arm64) package of that file in the image"
	}
	return fmt.Sprintf("release %s: the cross build base %s gave the aarch64 linker a file of the build machine's architecture, %s: %s, "+
		"or build the release under QEMU (build_path \"qemu\"); %v", e.Release, e.Base, e.File, fix, e.Err)
}

func (e *CrossLinkError) Unwrap() error { return e.Err }

// CrossLink turns err, a failed build of a release on the cross path (in
// the cross build base base) whose step printed out, into a CrossLinkError
// when the linker refused a file of the wrong architecture; else it
// returns err.
func CrossLink(release, base string, err error, out string) error {
	e := &CrossLinkError{Release: release, Base: base, Err: err}
	if m := ldSkipped.FindStringSubmatch(out); m != nil {
		e.File, e.Library = m[1], m[2]
	} else if m := ldWrongFormat.FindStringSubmatch(out); m != nil {
		e.File = path.Clean(m[1])
	} else {
		return err
	}
	e.File = path.Clean(e.File)
	e.Built = strings.HasSuffix(e.File, ".o") || strings.Contains(e.File, "/target/") && strings.Contains(e.File, "/build/")
	return e
}
