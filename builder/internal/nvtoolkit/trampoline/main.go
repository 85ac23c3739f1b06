// Command trampoline is the "ldconfig" that the fake hosts give NVIDIA's
// update-ldcache hook (see workarounds.go in package nvtoolkit). The hook
// copies the host's ldconfig into memory, pivots into the container's root
// and runs it there; on this x86 machine that ldconfig is x86's, which
// rewrites an arm64 container's /etc/ld.so.cache with no entries. This
// program is static and built for the machine, so it runs from memory, and
// it runs the container's own /sbin/ldconfig with the hook's arguments: an
// aarch64 program by path, which the kernel hands to QEMU (binfmt_misc).
package main

import (
	"fmt"
	"os"
	"syscall"
)

// containerLdconfig is where the arm64 images keep ldconfig (Debian's and
// Ubuntu's libc-bin).
const containerLdconfig = "/sbin/ldconfig"

func main() {
	argv := append([]string{containerLdconfig}, os.Args[1:]...)
	err := syscall.Exec(containerLdconfig, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "ldconfig trampoline: cannot run the container's %s: %v\n", containerLdconfig, err)
	os.Exit(127)
}
