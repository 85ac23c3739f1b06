package nvreal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Code is one entry of cuobjdump's listing: an "ELF file" (a cubin) or a
// "PTX file", with the SM its name gives.
type Code struct {
	// Kind is "cubin" or "PTX", as package fatbin names them.
	Kind string
	// SM is the name cuobjdump gives: "sm_87" (for PTX too: cuobjdump names
	// compute_87 PTX "name.1.sm_87.ptx").
	SM string
}

// String is "sm_87 cubin" or "sm_87 PTX".
func (c Code) String() string { return c.SM + " " + c.Kind }

// Listing is what `cuobjdump --list-elf --list-ptx` lists, in its order:
// the order of the entries in the file.
type Listing []Code

// String is the listing on one line: "sm_72 cubin, sm_72 PTX".
func (l Listing) String() string {
	var parts []string
	for _, c := range l {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, ", ")
}

// listLine is one line of the listing: "ELF file    1: libcufft.so.10.9.0.1.sm_35.cubin"
// or "PTX file    1: libcufft.so.10.9.0.1.sm_89.ptx". The name is the file's
// without its last extension, the entry's number within its kind, its SM
// and kind; the file's own name may hold any character, so only the tail
// is matched.
var listLine = regexp.MustCompile(`^(ELF|PTX) file +([0-9]+): .*\.([0-9]+)\.(sm_[0-9]+[a-z]?)\.(cubin|ptx)$`)

// ParseListing reads the output of `cuobjdump --list-elf --list-ptx`. A
// line it does not know is an error (a listing whose shape changed must not
// read as fewer entries), and so is an entry out of its kind's sequence.
// It is written here because cuobjdump's listing is a closed tool's text
// that no library reads; the fuzz target holds it to never panic.
func ParseListing(out []byte) (Listing, error) {
	var l Listing
	next := map[string]int{"ELF": 1, "PTX": 1}
	for n, line := range strings.Split(string(out), "\n") {
		line = strings.TrimRight(line, "\r ")
		if line == "" {
			continue
		}
		m := listLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("cuobjdump's listing, line %d: %q is neither an ELF file nor a PTX file", n+1, line)
		}
		idx, err := strconv.Atoi(m[2])
		if err != nil || idx != next[m[1]] || m[3] != m[2] {
			return nil, fmt.Errorf("cuobjdump's listing, line %d: %q is not %s file %d", n+1, line, m[1], next[m[1]])
		}
		next[m[1]]++
		kind := "cubin"
		if m[1] == "PTX" {
			kind = "PTX"
		}
		l = append(l, Code{Kind: kind, SM: m[4]})
	}
	return l, nil
}

// noDeviceCode is what cuobjdump says, exiting 255, of a file without a
// fat binary (libcudart, a host-only program): an empty listing.
const noDeviceCode = "does not contain device code"

// List runs `cuobjdump --list-elf --list-ptx` on file (an ELF file or a
// fat binary) and parses its listing; with all, `--all-fatbin` lists the
// relocatable fat binaries (__nv_relfatbin) too, which cuobjdump otherwise
// leaves out when the file has executable ones (.nv_fatbin). A file
// without device code is an empty listing (nil).
func (p Parts) List(ctx context.Context, file string, all bool) (Listing, error) {
	args := []string{"--list-elf", "--list-ptx"}
	if all {
		args = append(args, "--all-fatbin")
	}
	cmd := exec.CommandContext(ctx, p.Cuobjdump(), append(args, file)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return ParseListing(stdout.Bytes())
	case errors.As(err, &exit) && exit.ExitCode() == 255 && strings.Contains(stderr.String(), noDeviceCode) && stdout.Len() == 0:
		return nil, nil
	}
	return nil, fmt.Errorf("cuobjdump %s %s: %w: %s", strings.Join(args, " "), file, err, strings.TrimSpace(stderr.String()))
}
