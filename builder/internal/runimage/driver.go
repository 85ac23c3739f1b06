package runimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// HostLib is one of the host's driver libraries as NVIDIA's container
// runtime puts it in a container in CSV mode: the file of a "lib" entry
// mounted at the same path, the "sym" links made beside it, then the
// update-ldcache hook, which lists the library's folder in
// /etc/ld.so.conf.d and runs the container's ldconfig, so that the dynamic
// loader finds it by soname.
type HostLib struct {
	// Source is the file on this machine.
	Source string
	// Path is where it goes in the container, e.g.
	// /usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1.1.
	Path string
	// Links are names in the same folder that link to it, e.g. libcuda.so.1.
	Links []string
}

// withDriver returns a root file system for a container on host: rootfs
// itself when the host mounts no libraries, else an overlay of it under dir
// with the libraries, their links and a fresh ld cache. The returned
// function removes the overlay.
func withDriver(ctx context.Context, rootfs, dir string, host Host) (string, func(), error) {
	if len(host.Libs) == 0 {
		return rootfs, func() {}, nil
	}
	upper, work, merged := filepath.Join(dir, "upper"), filepath.Join(dir, "work"), filepath.Join(dir, "rootfs")
	for _, d := range []string{upper, work, merged} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", nil, err
		}
	}
	opts := "lowerdir=" + rootfs + ",upperdir=" + upper + ",workdir=" + work
	if err := syscall.Mount("overlay", merged, "overlay", 0, opts); err != nil {
		return "", nil, fmt.Errorf("overlay for the host's driver libraries: %w", err)
	}
	done := func() { _ = syscall.Unmount(merged, syscall.MNT_DETACH) }
	if err := placeLibs(merged, host.Libs); err != nil {
		done()
		return "", nil, err
	}
	if err := updateLdcache(ctx, merged, host.Libs); err != nil {
		done()
		return "", nil, err
	}
	return merged, done, nil
}

// placeLibs copies each library to its path under root and makes its links.
func placeLibs(root string, libs []HostLib) error {
	for _, l := range libs {
		data, err := os.ReadFile(l.Source)
		if err != nil {
			return fmt.Errorf("host driver library: %w", err)
		}
		dst := filepath.Join(root, l.Path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
		for _, link := range l.Links {
			p := filepath.Join(filepath.Dir(dst), link)
			_ = os.Remove(p)
			if err := os.Symlink(filepath.Base(l.Path), p); err != nil {
				return err
			}
		}
	}
	return nil
}

// updateLdcache does what nvidia-container-toolkit's update-ldcache hook
// does (cmd/nvidia-cdi-hook/update-ldcache, internal/ldconfig): it writes
// the libraries' folders to /etc/ld.so.conf.d/00-nvcr-<hash>.conf and runs
// the container's own /sbin/ldconfig over the root (aarch64, through QEMU).
func updateLdcache(ctx context.Context, root string, libs []HostLib) error {
	var dirs []string
	for _, l := range libs {
		if d := filepath.Dir(l.Path); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	sum := sha256.Sum256([]byte(strings.Join(dirs, "\n")))
	conf := filepath.Join(root, "etc", "ld.so.conf.d", "00-nvcr-"+hex.EncodeToString(sum[:])[:8]+".conf")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(conf, []byte(strings.Join(dirs, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	ldconfig := filepath.Join(root, "sbin", "ldconfig")
	if _, err := os.Stat(ldconfig); errors.Is(err, os.ErrNotExist) {
		return errors.New("update-ldcache: the image has no /sbin/ldconfig, which NVIDIA's runtime runs to make the driver findable")
	}
	if out, err := exec.CommandContext(ctx, ldconfig, "-r", root).CombinedOutput(); err != nil {
		return fmt.Errorf("update-ldcache: ldconfig -r %s: %w: %s", root, err, out)
	}
	return nil
}
