package tei

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// BuildFacts is what a build of the router knew at compile time, which TEI's
// router has compiled in: its version and commit, the SM and the
// compute-cap table of the CUDA backend, the cargo features, the cudarc
// linking mode, and the CPU the code was tuned for.
type BuildFacts struct {
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
	// FlashAttn reports that candle-flash-attn (the candle backend's
	// flash-attn feature) is compiled in, and FlashGate the runtime caps
	// its backends/candle/src/flash_attn.rs runs flash-attention v2 for.
	FlashAttn bool      `json:"flash_attn,omitempty"`
	FlashGate FlashGate `json:"flash_gate,omitempty"`
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

// factsMagic ends every router the stand-in cargo wrote: its Facts are a
// trailer (see AppendTrailer).
var factsMagic = []byte("JBTEI\x00\x01\n")

// ErrNoFacts is returned for a file that the stand-in cargo did not write:
// a router template, or another program.
var ErrNoFacts = errors.New("no build facts: this router was not written by the stand-in cargo")

// AppendFacts writes the router template's bytes, then f, to w.
func AppendFacts(w io.Writer, template []byte, f BuildFacts) error {
	return AppendTrailer(w, template, factsMagic, f)
}

// ReadFacts reads the Facts at the end of the file at path.
func ReadFacts(path string) (BuildFacts, error) {
	f, err := os.Open(path)
	if err != nil {
		return BuildFacts{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return BuildFacts{}, err
	}
	return readFacts(f, st.Size())
}

// ParseFacts reads the Facts at the end of data.
func ParseFacts(data []byte) (BuildFacts, error) {
	return readFacts(bytes.NewReader(data), int64(len(data)))
}

func readFacts(r io.ReaderAt, size int64) (BuildFacts, error) {
	var f BuildFacts
	found, err := readTrailer(r, size, factsMagic, &f)
	switch {
	case !found && err == nil:
		return BuildFacts{}, ErrNoFacts
	case err != nil:
		return BuildFacts{}, fmt.Errorf("build facts: %w", err)
	}
	return f, nil
}
