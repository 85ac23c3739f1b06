package imagebuild

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
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
// for an x86_64 object given by path (nvcc's host object written by the
// host's gcc when NVCC_CCBIN is lost). EM 62 is EM_X86_64.
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
	// Err is the build's error, with the step's output.
	Err error
}

// Error names the release, the base, the file and the fix in one
// sentence, then the build's own error.
func (e *CrossLinkError) Error() string {
	var fix string
	switch {
	case e.Library != "":
		fix = fmt.Sprintf("install the target's package of lib%s in that image (the :arm64 one, e.g. libssl-dev:arm64 for OpenSSL, not libssl-dev)", e.Library)
	case strings.HasSuffix(e.File, ".o"):
		fix = "compile the host objects with the aarch64 cross gcc (NVCC_CCBIN=aarch64-linux-gnu-gcc, as Dockerfile-jetson's toolchain-cross stage sets it)"
	default:
		fix = "install the target's (:arm64) package of that file in the image"
	}
	return fmt.Sprintf("release %s: the cross build base %s gave the aarch64 linker a file of the build machine's architecture, %s: %s, "+
		"or build the release under QEMU (build_path \"qemu\"); %v", e.Release, e.Base, e.File, fix, e.Err)
}

func (e *CrossLinkError) Unwrap() error { return e.Err }

// describeCrossLink turns err, a failed build whose step printed out, into
// a CrossLinkError when the release took the cross path and the linker
// refused a file of the wrong architecture; else it returns err.
func (j *releaseJob) describeCrossLink(err error, out string) error {
	if j.buildPath().Path != emulation.PathCross {
		return err
	}
	return crossLinkError(j.release.Name, j.release.CrossBuildBase, err, out)
}

// crossLinkError is describeCrossLink's error for a release on the cross path.
func crossLinkError(release, base string, err error, out string) error {
	e := &CrossLinkError{Release: release, Base: base, Err: err}
	if m := ldSkipped.FindStringSubmatch(out); m != nil {
		e.File, e.Library = m[1], m[2]
	} else if m := ldWrongFormat.FindStringSubmatch(out); m != nil {
		e.File = path.Clean(m[1])
	} else {
		return err
	}
	return e
}
