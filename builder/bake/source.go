package bake

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Source is what the images record of the source they are built from.
type Source struct {
	// Dir is the matrix's folder, absolute: the router's relative context
	// and Dockerfile start there, and git is asked there.
	Dir string
	// Revision is the revision given, else git's HEAD in Dir; "" without
	// git. It goes in org.opencontainers.image.revision.
	Revision string
	// Epoch is the SOURCE_DATE_EPOCH of every file and config: the one
	// given, else the environment's, else the commit's time; 0 without git.
	Epoch int64
	// Dirty is set when Revision was read from git and the work tree has
	// uncommitted changes, which Revision does not describe.
	Dirty bool
}

// EpochError is a source date epoch that is not a whole number of seconds
// since 1970.
type EpochError struct {
	// Value is the epoch as given.
	Value string
}

// Error names the value and what it should be.
func (e *EpochError) Error() string {
	return fmt.Sprintf("source date epoch %q: want seconds since 1970 as a whole number", e.Value)
}

// BadInput marks the error as bad input.
func (e *EpochError) BadInput() bool { return true }

// ReadSource reads the Source of the matrix at matrixPath once for a build:
// revision and epoch when given, then the SOURCE_DATE_EPOCH variable, then
// git in the matrix's folder. A bad epoch is an *EpochError.
func ReadSource(ctx context.Context, matrixPath, revision, epoch string) (Source, error) {
	dir, err := filepath.Abs(filepath.Dir(matrixPath))
	if err != nil {
		return Source{}, fmt.Errorf("the folder of matrix file %s: %w", matrixPath, err)
	}
	s := Source{Dir: dir, Revision: revision}
	if epoch == "" {
		epoch = os.Getenv("SOURCE_DATE_EPOCH")
	}
	if s.Revision == "" {
		s.Revision = git(ctx, dir, "rev-parse", "HEAD")
		s.Dirty = git(ctx, dir, "status", "--porcelain", "--untracked-files=no") != ""
	}
	if epoch == "" {
		epoch = git(ctx, dir, "log", "-1", "--format=%ct")
	}
	if epoch == "" {
		return s, nil
	}
	if s.Epoch, err = strconv.ParseInt(epoch, 10, 64); err != nil || s.Epoch < 0 {
		return Source{}, &EpochError{Value: epoch}
	}
	return s, nil
}

// git runs git in dir and returns its output trimmed, "" when it fails:
// a matrix outside git has no revision.
func git(ctx context.Context, dir string, args ...string) string {
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
