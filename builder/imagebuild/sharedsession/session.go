// Package sharedsession runs one BuildKit session per node that every
// release's build on it uses, serving the releases' local folders and the
// session's attachables once.
package sharedsession

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/filesync"
	"github.com/moby/buildkit/session/grpchijack"
	"github.com/tonistiigi/fsutil"
	fstypes "github.com/tonistiigi/fsutil/types"
)

// Session is one BuildKit session that every release's build on a
// node uses (buildx bake likewise serves a local folder that several
// targets use from one shared session): the releases' local sources (the
// router's context, its Dockerfile, the entrypoint) are the same folders,
// so BuildKit sends each once per build rather than once per release, and
// a release's build starts without a session handshake of its own.
type Session struct {
	// S is the BuildKit session, for SolveOpt.SharedSession.
	S    *session.Session
	done chan error
	// ended is closed when the session has ended (the daemon restarted,
	// the connection dropped): later builds on the node use their own.
	ended chan struct{}
}

// Alive reports whether the session still runs.
func (ss *Session) Alive() bool {
	select {
	case <-ss.ended:
		return false
	default:
		return true
	}
}

// Start starts a session on c that serves mounts and attach.
// key names the local folders, as buildx names a build context by its
// path: BuildKit keeps the folders' last copy under it and sends only what
// changed since.
func Start(ctx context.Context, c *client.Client, key string, mounts map[string]fsutil.FS, attach []session.Attachable) (*Session, error) {
	s, err := session.NewSession(context.WithoutCancel(ctx), key)
	if err != nil {
		return nil, fmt.Errorf("start a BuildKit session: %w", err)
	}
	dirs := filesync.StaticDirSource{}
	for name, fs := range mounts {
		// As BuildKit's client sends a local mount: files owned by root.
		filtered, err := fsutil.NewFilterFS(fs, &fsutil.FilterOpt{Map: func(_ string, st *fstypes.Stat) fsutil.MapResult {
			st.Uid, st.Gid = 0, 0
			return fsutil.MapResultKeep
		}})
		if err != nil {
			return nil, err
		}
		dirs[name] = filtered
	}
	s.Allow(filesync.NewFSSyncProvider(dirs))
	for _, a := range attach {
		s.Allow(a)
	}
	ss := &Session{S: s, done: make(chan error, 1), ended: make(chan struct{})}
	go func() {
		ss.done <- s.Run(context.WithoutCancel(ctx), grpchijack.Dialer(c.ControlClient()))
		close(ss.ended)
	}()
	return ss, nil
}

// Close ends the session and waits for it.
func (ss *Session) Close() {
	_ = ss.S.Close()
	<-ss.done
}

// Sessions are the shared sessions by node name.
type Sessions map[string]*Session

// Close ends every session.
func (s Sessions) Close() {
	for _, ss := range s {
		ss.Close()
	}
}

// Key names a release's local folders (its context, Dockerfile and
// entrypoint folders, "" for none) by their absolute paths: releases with
// the same folders share a session under it.
func Key(dirs ...string) string {
	h := sha256.New()
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil || dir == "" {
			abs = dir
		}
		fmt.Fprintf(h, "%s\x00", abs)
	}
	return "jetbake-" + hex.EncodeToString(h.Sum(nil))[:16]
}
