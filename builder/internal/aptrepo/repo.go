package aptrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Repo is one repository to write under a server's root.
type Repo struct {
	// Path is its folder under the root, e.g. "jammy/ubuntu"; its URL is
	// the server's URL and Path.
	Path string
	// Suites are the suites of an archive layout ("jammy",
	// "jammy-updates", "jammy-security"): the first holds the packages in
	// Components' first component, the others are present and empty. No
	// suites makes a flat repository (`deb URL/ /`).
	Suites []string
	// Components of an archive layout, e.g. "main", "universe".
	Components []string
	// Arch is the architecture the archive layout's indexes are for
	// (binary-ARCH); packages of Architecture all are listed in it, as
	// Debian's and Ubuntu's archives list them.
	Arch string
	// Debs are the .deb files it serves.
	Debs []string
	// Signer signs its Release files into InRelease; nil leaves it
	// unsigned (Release only), which apt refuses.
	Signer *Key
}

// Write writes r's pool (links to its .deb files), its indexes (apt-ftparchive
// packages) and its signed Release files (apt-ftparchive release) under root.
func Write(ctx context.Context, root string, r Repo) error {
	dir := filepath.Join(root, filepath.FromSlash(r.Path))
	if err := os.MkdirAll(filepath.Join(dir, "pool"), 0o755); err != nil {
		return fmt.Errorf("aptrepo: %w", err)
	}
	for _, deb := range r.Debs {
		abs, err := filepath.Abs(deb)
		if err != nil {
			return fmt.Errorf("aptrepo: %w", err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, "pool", filepath.Base(deb))); err != nil {
			return fmt.Errorf("aptrepo: %s: %w", r.Path, err)
		}
	}
	if len(r.Suites) == 0 {
		packages, err := ftparchive(ctx, dir, nil, "packages", "pool")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "Packages"), packages, 0o644); err != nil {
			return fmt.Errorf("aptrepo: %w", err)
		}
		return release(ctx, dir, r, "")
	}
	if len(r.Components) == 0 || r.Arch == "" {
		return fmt.Errorf("aptrepo: %s: an archive layout needs components and an architecture", r.Path)
	}
	packages, err := ftparchive(ctx, dir, nil, "packages", "pool")
	if err != nil {
		return err
	}
	for i, suite := range r.Suites {
		for j, comp := range r.Components {
			bin := filepath.Join(dir, "dists", suite, comp, "binary-"+r.Arch)
			if err := os.MkdirAll(bin, 0o755); err != nil {
				return fmt.Errorf("aptrepo: %w", err)
			}
			var data []byte
			if i == 0 && j == 0 {
				data = packages
			}
			if err := os.WriteFile(filepath.Join(bin, "Packages"), data, 0o644); err != nil {
				return fmt.Errorf("aptrepo: %w", err)
			}
		}
		if err := release(ctx, filepath.Join(dir, "dists", suite), r, suite); err != nil {
			return err
		}
	}
	return nil
}

// release writes dir's Release file (for suite, "" in a flat repository)
// and, with a signer, InRelease.
func release(ctx context.Context, dir string, r Repo, suite string) error {
	opts := []string{"-o", "APT::FTPArchive::Release::Origin=jetbake test bed", "-o", "APT::FTPArchive::Release::Label=" + r.Path}
	if suite != "" {
		opts = append(opts, "-o", "APT::FTPArchive::Release::Suite="+suite, "-o", "APT::FTPArchive::Release::Codename="+suite,
			"-o", "APT::FTPArchive::Release::Architectures="+r.Arch,
			"-o", "APT::FTPArchive::Release::Components="+strings.Join(r.Components, " "))
	}
	data, err := ftparchive(ctx, dir, opts, "release", ".")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Release"), data, 0o644); err != nil {
		return fmt.Errorf("aptrepo: %w", err)
	}
	if r.Signer == nil {
		return nil
	}
	signed, err := r.Signer.ClearSign(data)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "InRelease"), signed, 0o644)
}

// ftparchive runs apt-ftparchive in dir and returns what it writes.
func ftparchive(ctx context.Context, dir string, opts []string, args ...string) ([]byte, error) {
	if _, err := exec.LookPath("apt-ftparchive"); err != nil {
		return nil, errors.New("aptrepo: apt-ftparchive is missing: run 'make deps' as root (it installs Debian's apt-utils)")
	}
	cmd := exec.CommandContext(ctx, "apt-ftparchive", append(opts, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("aptrepo: apt-ftparchive %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
