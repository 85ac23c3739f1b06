package imagebuild

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/util/progress/progressui"
)

// progress merges the status of every release's session into one BuildKit
// display, each vertex named with its release, the way buildx shows a bake.
type progress struct {
	merged  chan *client.SolveStatus
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	out     io.Writer
	enabled bool
	timings *timingRecorder // sees every status before the names get their release
}

func newProgress(ctx context.Context, mode string, out io.Writer, timings *timingRecorder) (*progress, error) {
	if out == nil || mode == "" {
		mode = string(progressui.QuietMode)
	}
	p := &progress{merged: make(chan *client.SolveStatus), done: make(chan struct{}), out: out, timings: timings}
	// jetbake's own lines would break a rawjson stream and garble a tty
	// display; the summary after the build says the same.
	p.enabled = mode == string(progressui.PlainMode)
	display, err := progressui.NewDisplay(out, progressui.DisplayMode(mode))
	if err != nil {
		return nil, fmt.Errorf("--progress %s: %w", mode, err)
	}
	go func() {
		defer close(p.done)
		// A detached context: the display must drain the channel even after a cancel.
		_, _ = display.UpdateFrom(context.WithoutCancel(ctx), p.merged)
	}()
	return p, nil
}

// channel returns a status channel for one release's session. BuildKit
// closes it when the session ends.
func (p *progress) channel(release string) chan *client.SolveStatus {
	ch := make(chan *client.SolveStatus)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for st := range ch {
			if p.timings != nil {
				p.timings.observe(release, st)
			}
			prefix := "[" + release + "] "
			for _, v := range st.Vertexes {
				if !strings.HasPrefix(v.Name, prefix) {
					v.Name = prefix + v.Name
				}
			}
			p.merged <- st
		}
	}()
	return ch
}

// logf prints a line of jetbake's own between the display's, in the same stream.
func (p *progress) logf(format string, args ...any) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, format+"\n", args...)
}

// close waits for every session's channel and stops the display.
func (p *progress) close() {
	p.wg.Wait()
	close(p.merged)
	<-p.done
}
