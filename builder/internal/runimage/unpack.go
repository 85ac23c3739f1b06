// Package runimage runs a built image with runc, the way the NVIDIA container
// runtime would start it on a Jetson: the host's facts (/etc/nv_tegra_release,
// the device tree and soc0 in /sys) mounted in, the host's driver library
// at its path with its links and a fresh ld cache (the runtime's CSV mode
// and update-ldcache hook), the host's /proc/cpuinfo; or nothing for a
// container started without `--runtime nvidia`. The end-to-end tests and
// `make demo` use it.
package runimage

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Unpack writes img's flattened file system into rootfs.
func Unpack(img v1.Image, rootfs string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			// Extract ends the tar stream before it reports a layer's error:
			// read on to get it.
			if _, err := io.Copy(io.Discard, rc); err != nil {
				return fmt.Errorf("unpack image: %w", err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpack image: %w", err)
		}
		if err := writeEntry(rootfs, hdr, tr); err != nil {
			return fmt.Errorf("unpack %s: %w", hdr.Name, err)
		}
	}
}

func writeEntry(rootfs string, hdr *tar.Header, r io.Reader) error {
	target, err := safeJoin(rootfs, hdr.Name)
	if err != nil || target == filepath.Clean(rootfs) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(hdr.Mode) & os.ModePerm
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := os.MkdirAll(target, mode|0o700); err != nil {
			return err
		}
		return os.Chmod(target, mode)
	case tar.TypeReg:
		f, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Chmod(target, mode)
	case tar.TypeSymlink:
		os.Remove(target)
		return os.Symlink(hdr.Linkname, target)
	case tar.TypeLink:
		source, err := safeJoin(rootfs, hdr.Linkname)
		if err != nil {
			return err
		}
		os.Remove(target)
		return os.Link(source, target)
	default:
		return nil // devices and fifos are not needed to run a router
	}
}

// safeJoin returns rootfs/name, refusing names that leave rootfs through ".."
// and names whose parent folders inside rootfs are symbolic links: following
// one would read or write outside the root file system.
func safeJoin(rootfs, name string) (string, error) {
	root := filepath.Clean(rootfs)
	rel := strings.TrimPrefix(filepath.Clean("/"+name), "/")
	if strings.HasPrefix(filepath.Clean(name), "..") {
		return "", fmt.Errorf("path %q leaves the root file system", name)
	}
	if rel == "" {
		return root, nil
	}
	parts := strings.Split(rel, "/")
	current := root
	for _, part := range parts[:len(parts)-1] {
		current = filepath.Join(current, part)
		info, err := os.Lstat(current)
		if err != nil {
			break // not created yet: nothing to follow
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("path %q goes through the symbolic link %s", name, strings.TrimPrefix(current, root))
		}
	}
	return filepath.Join(root, rel), nil
}
