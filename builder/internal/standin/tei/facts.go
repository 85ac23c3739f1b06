package tei

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Facts is what a build of the router knew at compile time, which TEI's
// router has compiled in: its version and commit, the SM and the
// compute-cap table of the CUDA backend, the cargo features, the cudarc
// linking mode, and the CPU the code was tuned for.
type Facts struct {
	// Package and Version are the router's package name and version
	// (workspace.package.version), as --version prints them.
	Package string `json:"package"`
	Version string `json:"version"`
	// Bin is the binary target built (--bin).
	Bin string `json:"bin"`
	// GitSHA is the commit /info reports (vergen, else the GIT_SHA
	// variable of the build); empty when neither was there.
	GitSHA string `json:"git_sha,omitempty"`
	// Command is the cargo command line, as given.
	Command []string `json:"command"`
	// Toolchain is the Rust toolchain that built it, e.g. "1.92.0".
	Toolchain string `json:"toolchain"`
	// Features are the router's enabled features, sorted, implied ones included.
	Features []string `json:"features"`
	// Requested are the features given on the command line, in order.
	Requested []string `json:"requested"`
	// Linking is cudarc's linking mode: LinkStatic, LinkDynamic, or "" for a
	// router without the CUDA backend.
	Linking string `json:"linking,omitempty"`
	// CUDA reports that the candle CUDA backend, with TEI's compute-cap
	// gate, is compiled in.
	CUDA bool `json:"cuda"`
	// ComputeCap is CUDA_COMPUTE_CAP as the candle backend's build script
	// read it, e.g. 87; 0 without the CUDA backend.
	ComputeCap int `json:"compute_cap,omitempty"`
	// Table is compute_cap_matching of backends/candle/src/compute_cap.rs as compiled.
	Table Table `json:"table,omitempty"`
	// Rustflags are the flags rustc got, and RustflagsFrom where they came
	// from (CARGO_ENCODED_RUSTFLAGS, RUSTFLAGS, a config file, or "").
	Rustflags     []string `json:"rustflags"`
	RustflagsFrom string   `json:"rustflags_from,omitempty"`
	// TargetCPU is -C target-cpu ("generic" when not given) and
	// CPUFeatures the CPU features, as Linux names them in /proc/cpuinfo,
	// that the code may use: the processor's when it is "native".
	TargetCPU   string   `json:"target_cpu"`
	CPUFeatures []string `json:"cpu_features"`
}

// factsMagic ends every router the stand-in cargo wrote: the Facts as JSON,
// their length as 8 little-endian bytes, then these 8 bytes. An ELF file
// may carry data after its last section; the loader maps only segments.
var factsMagic = []byte("JBTEI\x00\x01\n")

// ErrNoFacts is returned for a file that the stand-in cargo did not write:
// a router template, or another program.
var ErrNoFacts = errors.New("no build facts: this router was not written by the stand-in cargo")

// AppendFacts writes the router template's bytes, then f, to w.
func AppendFacts(w io.Writer, template []byte, f Facts) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(len(data)))
	for _, part := range [][]byte{template, data, size[:], factsMagic} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// ReadFacts reads the Facts at the end of the file at path.
func ReadFacts(path string) (Facts, error) {
	f, err := os.Open(path)
	if err != nil {
		return Facts{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Facts{}, err
	}
	return readFacts(f, st.Size())
}

// ParseFacts reads the Facts at the end of data.
func ParseFacts(data []byte) (Facts, error) {
	return readFacts(bytes.NewReader(data), int64(len(data)))
}

// maxFacts bounds the JSON read back: the Facts are a few kilobytes.
const maxFacts = 1 << 20

func readFacts(r io.ReaderAt, size int64) (Facts, error) {
	tail := int64(len(factsMagic) + 8)
	if size < tail {
		return Facts{}, ErrNoFacts
	}
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil {
		return Facts{}, err
	}
	if !bytes.Equal(buf[8:], factsMagic) {
		return Facts{}, ErrNoFacts
	}
	n := int64(binary.LittleEndian.Uint64(buf[:8]))
	if n <= 0 || n > maxFacts || n > size-tail {
		return Facts{}, fmt.Errorf("build facts: length %d does not fit the file", n)
	}
	data := make([]byte, n)
	if _, err := r.ReadAt(data, size-tail-n); err != nil {
		return Facts{}, err
	}
	var f Facts
	if err := json.Unmarshal(data, &f); err != nil {
		return Facts{}, fmt.Errorf("build facts: %w", err)
	}
	return f, nil
}
