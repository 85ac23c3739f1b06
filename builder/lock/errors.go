package lock

import "fmt"

// The errors of this file are lock files a build cannot use. Their text
// names the input as this package does (PinsOptions); a command that took
// it from a flag reads their fields and names its flag instead.

// NoLockFileError is PinsOptions.Check without a lock file to check: none
// was named and there is none beside the matrix.
type NoLockFileError struct {
	// Path is where the lock file was looked for.
	Path string
}

// Error names the path and the fix.
func (e *NoLockFileError) Error() string {
	return fmt.Sprintf("no lock file at %s to check the pins of; run 'jetbake lock' first", e.Path)
}

// OutsideError is the default lock file beside the matrix when it is a
// link that leads out of the matrix's repository (see DefaultPath): input
// the command cannot use.
type OutsideError struct {
	// Path is the lock file beside the matrix.
	Path string
	// Leads says where it leads, as matrix.LeavesRepository words it.
	Leads string
}

// Error names the file, where it leads and the fix.
func (e *OutsideError) Error() string {
	return fmt.Sprintf("lock file %s %s: replace the link with the file, or name another lock file", e.Path, e.Leads)
}

// BadInput marks the error as input the command cannot use.
func (e *OutsideError) BadInput() bool { return true }
