package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CopyCheckout copies the files of the checkout at root that git tracks or
// would track (tracked and untracked, not ignored) to dst, with their
// modes: the checkout as a commit of it would hold it, without bin/, dist/
// or anything else a build left. Files deleted but not yet committed are
// left out.
func CopyCheckout(root, dst string) error {
	ls, err := exec.Command("git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z").Output()
	if err != nil {
		return fmt.Errorf("listing the checkout's files with git: %w", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(ls), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted, not yet committed
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file: the checkout holds none", rel)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, rel), data, info.Mode().Perm()|0o200); err != nil {
			return err
		}
	}
	return nil
}
