package progress

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/containerd/console"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/util/progress/progressui"
	digest "github.com/opencontainers/go-digest"
)

// Display merges the status of every release's session into one BuildKit
// display, each vertex named with its release, the way buildx shows a bake.
type Display struct {
	merged  chan *client.SolveStatus
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	out     io.Writer
	mode    progressui.DisplayMode
	timings *Recorder // sees every status before the names get their release
	// Warned is told of every warning a session reports: the Dockerfile
	// frontend's check warnings when it builds the router stage itself.
	Warned func(release string, w *client.VertexWarning)
	// tails holds the last lines each step printed, by vertex (steps are
	// shared between releases), and failed each release's last failed step.
	tails  map[digest.Digest][]string
	failed map[string]failedStep
	// seenLogs drops the copies of a shared step's output that several
	// releases' sessions report.
	seenLogs map[string]bool
}

// failedStep is a step that failed and the lines it printed last.
type failedStep struct {
	name   string
	vertex digest.Digest
}

// tailLines is how many lines of a step's output a failure quotes.
const tailLines = 25

// New starts a display of mode on out; timings, if not nil, sees every status.
func New(ctx context.Context, mode string, out io.Writer, timings *Recorder) (*Display, error) {
	display, shown, err := newDisplay(mode, out)
	if err != nil {
		return nil, err
	}
	p := &Display{merged: make(chan *client.SolveStatus), done: make(chan struct{}), out: out, mode: shown, timings: timings,
		tails: map[digest.Digest][]string{}, failed: map[string]failedStep{}, seenLogs: map[string]bool{}}
	go func() {
		defer close(p.done)
		// A detached context: the display must drain the channel even after a cancel.
		_, _ = display.UpdateFrom(context.WithoutCancel(ctx), p.merged)
	}()
	return p, nil
}

// Error is a progress mode whose display cannot start, such
// as tty on an output that is not a terminal.
type Error struct {
	// Mode is the mode.
	Mode string
	// Err is why BuildKit's display did not start.
	Err error
}

// Error names the mode and the display's error.
func (e *Error) Error() string { return fmt.Sprintf("progress %s: %v", e.Mode, e.Err) }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// newDisplay is BuildKit's display of mode on out, and the mode it shows:
// quiet without an output, tty or plain for auto. A display that cannot
// start, such as tty on an output that is not a terminal, is a
// *Error.
func newDisplay(mode string, out io.Writer) (progressui.Display, progressui.DisplayMode, error) {
	if out == nil || mode == "" {
		mode = string(progressui.QuietMode)
	}
	shown := displayMode(mode, out)
	display, err := progressui.NewDisplay(out, shown)
	if err != nil {
		return progressui.Display{}, "", &Error{Mode: mode, Err: err}
	}
	return display, shown, nil
}

// Check fails as New would: a display is made, and
// dropped before it shows anything.
func Check(mode string, out io.Writer) error {
	_, _, err := newDisplay(mode, out)
	return err
}

// Channel returns a status channel for one release's session. BuildKit
// closes it when the session ends.
func (p *Display) Channel(release string) chan *client.SolveStatus {
	ch := make(chan *client.SolveStatus)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for st := range ch {
			if p.timings != nil {
				p.timings.observe(release, st)
			}
			if p.Warned != nil {
				for _, w := range st.Warnings {
					p.Warned(release, w)
				}
			}
			p.keepTails(release, st)
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

// keepTails keeps the last lines of each step's output and notes the
// release's failed steps, whose output a failure quotes (BuildKit's error
// says only that a process did not complete).
func (p *Display) keepTails(release string, st *client.SolveStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range st.Logs {
		key := fmt.Sprintf("%s %d %d %d", l.Vertex, l.Timestamp.UnixNano(), l.Stream, len(l.Data))
		if p.seenLogs[key] {
			continue
		}
		p.seenLogs[key] = true
		lines := append(p.tails[l.Vertex], strings.Split(strings.TrimRight(string(l.Data), "\n"), "\n")...)
		if len(lines) > tailLines {
			lines = lines[len(lines)-tailLines:]
		}
		p.tails[l.Vertex] = lines
	}
	for _, v := range st.Vertexes {
		if v.Error != "" && !strings.Contains(v.Error, "context canceled") {
			p.failed[release] = failedStep{name: v.Name, vertex: v.Digest}
		}
	}
}

// FailureOutput is the last output of the release's failed step, each line
// indented, or "".
func (p *Display) FailureOutput(release string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.failed[release]
	if !ok || len(p.tails[f.vertex]) == 0 {
		return ""
	}
	return "    " + strings.Join(p.tails[f.vertex], "\n    ")
}

// displayMode resolves auto as BuildKit's display does: tty on a console,
// plain otherwise (a CI log).
func displayMode(mode string, out io.Writer) progressui.DisplayMode {
	if mode != string(progressui.AutoMode) && mode != "" {
		return progressui.DisplayMode(mode)
	}
	if f, ok := out.(console.File); ok {
		if _, err := console.ConsoleFromFile(f); err == nil {
			return progressui.TtyMode
		}
	}
	return progressui.PlainMode
}

// Logf shows a line of jetbake's own (a retry, a failure) in every mode
// but quiet: printed between the plain display's lines, and as a finished
// step of its own in the tty display and the rawjson stream, which text
// printed beside them would garble or break.
func (p *Display) Logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	switch p.mode {
	case progressui.QuietMode, "": // "": no display at all
	case progressui.PlainMode:
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprintln(p.out, line)
	default:
		now := time.Now()
		p.merged <- &client.SolveStatus{Vertexes: []*client.Vertex{{
			Digest: digest.FromString(fmt.Sprintf("jetbake-log %d %s", now.UnixNano(), line)),
			Name:   line, Started: &now, Completed: &now,
		}}}
	}
}

// Warnf shows a warning of jetbake's own as Logf does, and in quiet mode
// too, where no display runs for it to garble.
func (p *Display) Warnf(format string, args ...any) {
	if p.mode == progressui.QuietMode && p.out != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprintf(p.out, format+"\n", args...)
		return
	}
	p.Logf(format, args...)
}

// Close waits for every session's channel and stops the display.
func (p *Display) Close() {
	p.wg.Wait()
	close(p.merged)
	<-p.done
}
