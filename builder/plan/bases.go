package plan

import (
	"github.com/jetbake/jetbake/computecap"
)

// Values of Base.Flavour and Base.CUDA.
const (
	// UnknownUntilRead is a base's flavour or CUDA that the table of
	// Jetson facts does not know: the build reads it from the image.
	UnknownUntilRead = "unknown until read"
	// NoCUDA is the CUDA of a base whose images hold none (l4t-base).
	NoCUDA = "none"
)

// Sources of what Base says.
const (
	// FromTable: the base's repository is in the table of Jetson facts,
	// and its tag names the CUDA.
	FromTable = "table"
	// FromBuild: the table does not know the base; the build reads it.
	FromBuild = "read at build"
)

// Base is a base image of a release with what the table of Jetson facts
// tells of it from its reference; the build reads the image itself and
// checks it against the release (see the build's metadata file).
type Base struct {
	// Role is "build" or "runtime".
	Role string `json:"role"`
	// Ref is the reference as written in the matrix.
	Ref string `json:"ref"`
	// Flavour is the CUDA build of the base, "tegra" or "sbsa", or
	// UnknownUntilRead.
	Flavour string `json:"flavour"`
	// CUDA is the CUDA version its tag names, such as "12.6", NoCUDA, or
	// UnknownUntilRead.
	CUDA string `json:"cuda"`
	// From says where the flavour and CUDA come from: FromTable or FromBuild.
	From string `json:"from"`
	// PyTorch and Python are an app base's versions from the table's row,
	// "unknown" where the row does not say (framework containers only).
	PyTorch string `json:"pytorch,omitempty"`
	Python  string `json:"python,omitempty"`
}

// appBase describes an app release's framework container from table t.
func appBase(t *computecap.Table, ref string) Base {
	b := Base{Role: "app", Ref: ref, Flavour: UnknownUntilRead, CUDA: UnknownUntilRead, From: FromBuild}
	row, ok := t.FrameworkContainerOf(ref)
	if !ok {
		return b
	}
	b.Flavour, b.From = string(row.Flavour), FromTable
	if row.CUDA != "" {
		b.CUDA = row.CUDA
	}
	b.PyTorch, b.Python = computecap.Unknown(row.PyTorch), computecap.Unknown(row.Python)
	return b
}

// bases describes a release's build and runtime bases from table t.
func bases(t *computecap.Table, build, runtime string) []Base {
	return []Base{baseOf(t, "build", build), baseOf(t, "runtime", runtime)}
}

// baseOf describes one base from table t.
func baseOf(t *computecap.Table, role, ref string) Base {
	b := Base{Role: role, Ref: ref, Flavour: UnknownUntilRead, CUDA: UnknownUntilRead, From: FromBuild}
	facts, ok := t.BaseFactsOf(ref)
	if !ok {
		return b
	}
	b.Flavour, b.From = string(facts.Flavour), FromTable
	switch {
	case facts.NoCUDA:
		b.CUDA = NoCUDA
	case !facts.CUDA.IsZero():
		b.CUDA = facts.CUDA.String()
	}
	return b
}
