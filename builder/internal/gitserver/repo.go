package gitserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Repo is a bare repository under a server's root, and a work tree of its
// own to make commits from.
type Repo struct {
	// Path is the repository's path under the root, e.g. "router.git".
	Path string
	// Dir is the bare repository.
	Dir  string
	work string
	// when is the author and committer date of the next commit: one second
	// later per commit, so that the same steps give the same commits.
	when time.Time
}

// epoch is the date of every repository's first commit.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Create makes an empty bare repository at path under the server's root,
// with main as its default branch.
func (s *Server) Create(ctx context.Context, path string) (*Repo, error) {
	r := &Repo{Path: path, Dir: filepath.Join(s.Root, path), when: epoch}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "gitserver-work-")
	if err != nil {
		return nil, err
	}
	r.work = work
	if out, err := exec.CommandContext(ctx, "git", "init", "-q", "--bare", "--initial-branch=main", r.Dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git init %s: %w: %s", r.Dir, err, out)
	}
	return r, nil
}

// Close removes the repository's work tree; the repository stays.
func (r *Repo) Close() error { return os.RemoveAll(r.work) }

// Commit commits on branch: the files of branch's commit, those at dir
// ("" for the root) replaced by the files of the folder src (none when
// src is ""), and files written (name → content, from the root). A new
// branch starts at the commit made last. It returns the commit; no change
// makes an empty commit.
func (r *Repo) Commit(ctx context.Context, branch, message, dir, src string, files map[string]string) (string, error) {
	ref := "refs/heads/" + branch
	if _, err := r.git(ctx, "rev-parse", "--verify", "-q", ref); err == nil {
		if _, err := r.git(ctx, "read-tree", "-u", "--reset", ref); err != nil {
			return "", err
		}
	} else if head, err := r.RevParse(ctx, "HEAD"); err == nil {
		if err := r.Branch(ctx, branch, head); err != nil {
			return "", err
		}
	}
	if src != "" {
		target := filepath.Join(r.work, dir)
		if err := os.RemoveAll(target); err != nil {
			return "", err
		}
		if err := os.CopyFS(target, os.DirFS(src)); err != nil {
			return "", fmt.Errorf("copy %s into the repository: %w", src, err)
		}
	}
	for name, content := range files {
		p := filepath.Join(r.work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	if _, err := r.git(ctx, "symbolic-ref", "HEAD", ref); err != nil {
		return "", err
	}
	if _, err := r.git(ctx, "add", "-A", "."); err != nil {
		return "", err
	}
	if _, err := r.git(ctx, "commit", "-q", "--allow-empty", "-m", message); err != nil {
		return "", err
	}
	r.when = r.when.Add(time.Second)
	return r.RevParse(ctx, "HEAD")
}

// Tag points tag at commit, annotated (as release tags usually are) or
// lightweight; an existing tag is moved.
func (r *Repo) Tag(ctx context.Context, tag, commit string, annotated bool) error {
	args := []string{"tag", "-f"}
	if annotated {
		args = append(args, "-a", "-m", "release "+tag)
	}
	_, err := r.git(ctx, append(args, tag, commit)...)
	return err
}

// Branch points branch at commit, creating or moving it.
func (r *Repo) Branch(ctx context.Context, branch, commit string) error {
	_, err := r.git(ctx, "update-ref", "refs/heads/"+branch, commit)
	return err
}

// RevParse is the object name of rev (git rev-parse).
func (r *Repo) RevParse(ctx context.Context, rev string) (string, error) {
	out, err := r.git(ctx, "rev-parse", rev)
	return strings.TrimSpace(out), err
}

// git runs git on the bare repository with the work tree, as a fixed author
// at the repository's next date, with no user or system configuration.
func (r *Repo) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + r.Dir, "--work-tree=" + r.work}, args...)...)
	cmd.Dir = r.work
	date := r.when.Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+os.DevNull,
		"GIT_AUTHOR_NAME=jetbake test", "GIT_AUTHOR_EMAIL=test@jetbake.invalid", "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME=jetbake test", "GIT_COMMITTER_EMAIL=test@jetbake.invalid", "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Tagged makes a repository at path with a README: one commit on main with
// the annotated tag tag, then one on branch (main too) after it. It
// returns the repository and both commits.
func (s *Server) Tagged(ctx context.Context, path, tag, branch string) (r *Repo, tagged, after string, err error) {
	if r, err = s.Create(ctx, path); err != nil {
		return nil, "", "", err
	}
	if tagged, err = r.Commit(ctx, "main", "first", "", "", map[string]string{"README": "one\n"}); err != nil {
		return nil, "", "", err
	}
	if err = r.Tag(ctx, tag, tagged, true); err != nil {
		return nil, "", "", err
	}
	if after, err = r.Commit(ctx, branch, "second", "", "", map[string]string{"README": "two\n"}); err != nil {
		return nil, "", "", err
	}
	return r, tagged, after, nil
}
