package tei

import (
	"fmt"
	"strings"
)

// BuildArgs are the options of `cargo build` the stand-in understands.
type BuildArgs struct {
	// Release is --release (target/release); else the dev profile (target/debug).
	Release bool
	// Bin is --bin NAME.
	Bin string
	// Features are the -F/--features values, split.
	Features FeatureRequest
	// TargetDir is --target-dir.
	TargetDir string
	// Target is --target TRIPLE.
	Target string
}

// UsageError is a command line cargo refuses before doing anything (clap's errors, exit status 1).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ParseBuildArgs reads the arguments after `cargo build`. Options the
// stand-in ignores (they change nothing it models) are accepted; others
// are refused as clap refuses them.
func ParseBuildArgs(args []string) (BuildArgs, error) {
	var b BuildArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", &UsageError{Msg: fmt.Sprintf("error: a value is required for '%s <%s>' but none was supplied", name, strings.ToUpper(strings.TrimLeft(name, "-")))}
			}
			i++
			return args[i], nil
		}
		switch {
		case a == "--release" || a == "-r":
			b.Release = true
		case a == "--no-default-features":
			b.Features.NoDefault = true
		case a == "--all-features":
			b.Features.All = true
		case a == "--locked" || a == "--frozen" || a == "--offline" || a == "-q" || a == "--quiet" || a == "-v" || a == "--verbose":
		case name == "--bin":
			v, err := takeValue()
			if err != nil {
				return b, err
			}
			b.Bin = v
		case name == "-F" || name == "--features":
			v, err := takeValue()
			if err != nil {
				return b, err
			}
			b.Features.Features = append(b.Features.Features, SplitFeatures(v)...)
		case strings.HasPrefix(a, "-F") && len(a) > 2:
			b.Features.Features = append(b.Features.Features, SplitFeatures(a[2:])...)
		case name == "--target":
			v, err := takeValue()
			if err != nil {
				return b, err
			}
			b.Target = v
		case name == "--target-dir":
			v, err := takeValue()
			if err != nil {
				return b, err
			}
			b.TargetDir = v
		case name == "-j" || name == "--jobs" || name == "-p" || name == "--package":
			if _, err := takeValue(); err != nil {
				return b, err
			}
		default:
			return b, &UsageError{Msg: fmt.Sprintf("error: unexpected argument '%s' found\n\nUsage: cargo build [OPTIONS]\n\nFor more information, try '--help'.", a)}
		}
	}
	return b, nil
}
