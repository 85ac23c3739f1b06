// Package labellerimage makes the image of jetbake's labelling DaemonSet
// (fleet.Labeller): the static jetbake binary for linux/amd64 and
// linux/arm64 in one OCI index, FROM scratch, with the binary as its
// entrypoint, built with BuildKit and pushed to a registry. The binaries
// are checked first: each a static ELF executable of its platform's
// machine, since a scratch image has no loader and no libraries.
package labellerimage

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Binary is the jetbake binary the image holds for one platform.
type Binary struct {
	// Arch is the platform's architecture (amd64, arm64); the OS is linux.
	Arch string `json:"arch"`
	// Path is the file.
	Path string `json:"path"`
	// SHA256 is the file's digest, set by Check.
	SHA256 string `json:"sha256,omitempty"`
}

// Platform is the binary's platform, linux/ARCH.
func (b Binary) Platform() string { return "linux/" + b.Arch }

// Arches are the architectures the image holds, in its index's order.
func Arches() []string { return []string{"amd64", "arm64"} }

// FileName is the name `make release` gives the binary of arch in dist/.
func FileName(arch string) string { return "jetbake-linux-" + arch }

// machine is the ELF machine of arch.
func machine(arch string) elf.Machine {
	switch arch {
	case "amd64":
		return elf.EM_X86_64
	case "arm64":
		return elf.EM_AARCH64
	}
	return elf.EM_NONE
}

// machineName names an ELF machine as a user knows it.
func machineName(m elf.Machine, c elf.Class) string {
	switch {
	case m == elf.EM_X86_64 && c == elf.ELFCLASS64:
		return "x86-64 (amd64)"
	case m == elf.EM_AARCH64 && c == elf.ELFCLASS64:
		return "aarch64 (arm64)"
	case m == elf.EM_386:
		return "x86 (386)"
	case m == elf.EM_ARM:
		return "32-bit arm"
	}
	return fmt.Sprintf("%s (%s)", m, c)
}

// MissingError is a binary the image needs that is not there.
type MissingError struct {
	// Path is the file looked for; Arch its architecture.
	Path, Arch string
}

// Error names the file.
func (e *MissingError) Error() string {
	return fmt.Sprintf("%s does not exist: the labeller image needs jetbake for linux/%s", e.Path, e.Arch)
}

// BadInput marks the error as bad input.
func (e *MissingError) BadInput() bool { return true }

// BinaryError is a binary the image cannot hold, with the reason.
type BinaryError struct {
	// Path is the file; Arch the architecture it is for.
	Path, Arch string
	// Problem says what is wrong with it.
	Problem string
}

// Error names the file and what is wrong.
func (e *BinaryError) Error() string {
	return fmt.Sprintf("%s cannot be the labeller image's jetbake for linux/%s: %s", e.Path, e.Arch, e.Problem)
}

// BadInput marks the error as bad input.
func (e *BinaryError) BadInput() bool { return true }

// Find returns the binaries of every architecture (Arches): self, the
// running jetbake, for the architecture it runs on when self is not "" and
// this is linux, and the file FileName(arch) in dir for the others. A file
// that is not there is a *MissingError. The binaries are not checked yet.
func Find(dir, self string) ([]Binary, error) {
	var bins []Binary
	for _, arch := range Arches() {
		if self != "" && runtime.GOOS == "linux" && arch == runtime.GOARCH {
			bins = append(bins, Binary{Arch: arch, Path: self})
			continue
		}
		p := filepath.Join(dir, FileName(arch))
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return nil, &MissingError{Path: p, Arch: arch}
		}
		bins = append(bins, Binary{Arch: arch, Path: p})
	}
	return bins, nil
}

// Check checks that every binary is a static ELF executable of its
// architecture's machine, and records its SHA-256. A binary that is not is
// a *BinaryError; one that cannot be read is returned as it is.
func Check(bins []Binary) ([]Binary, error) {
	out := make([]Binary, len(bins))
	for i, b := range bins {
		if err := checkELF(b); err != nil {
			return nil, err
		}
		sum, err := fileSHA256(b.Path)
		if err != nil {
			return nil, err
		}
		b.SHA256 = sum
		out[i] = b
	}
	return out, nil
}

// checkELF refuses a file that is not a static executable of b.Arch.
func checkELF(b Binary) error {
	want := machine(b.Arch)
	if want == elf.EM_NONE {
		return &BinaryError{Path: b.Path, Arch: b.Arch, Problem: "jetbake's labeller image is made for amd64 and arm64 only"}
	}
	bad := func(format string, args ...any) error {
		return &BinaryError{Path: b.Path, Arch: b.Arch, Problem: fmt.Sprintf(format, args...)}
	}
	f, err := elf.Open(b.Path)
	var fe *elf.FormatError
	if errors.As(err, &fe) {
		return bad("it is not an ELF executable (%v); give the linux/%s binary 'make release' writes", fe, b.Arch)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Machine != want || f.Class != elf.ELFCLASS64 {
		return bad("it is a binary for %s, not %s: give the linux/%s binary 'make release' writes (%s)", machineName(f.Machine, f.Class), machineName(want, elf.ELFCLASS64), b.Arch, FileName(b.Arch))
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return bad("it is an ELF file of type %s, not an executable", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(io.LimitReader(p.Open(), 256))
			return bad("it is linked dynamically (its loader is %s) and the image, FROM scratch, has no loader and no libraries: build it with CGO_ENABLED=0, as 'make release' does", strings.TrimRight(string(interp), "\x00"))
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		return bad("it needs the libraries %v, which the image, FROM scratch, does not have: build it with CGO_ENABLED=0, as 'make release' does", libs)
	}
	return nil
}

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
