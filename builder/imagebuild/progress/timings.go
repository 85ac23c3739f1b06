package progress

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/moby/buildkit/client"
)

// Phase is one part of a build that Timings measures.
type Phase string

// The phases of a build, in the order they first happen.
const (
	// PhaseResolve is resolving base image references to digests and configs
	// (jetbake's own resolves and the Dockerfile frontend's "load metadata").
	PhaseResolve Phase = "resolve bases"
	// PhaseFrontend is the Dockerfile frontend turning the router's
	// Dockerfile into LLB: jetbake's calls into it, as jetbake times them,
	// and the frontend's own steps (loading the Dockerfile and .dockerignore).
	PhaseFrontend Phase = "frontend solves"
	// PhasePull is fetching and unpacking the build and runtime bases.
	PhasePull Phase = "pull bases"
	// PhaseRouter is the router stage's steps, once per SM target.
	PhaseRouter Phase = "router builds"
	// PhaseAssembly is jetbake's own LLB: image.json, the router binaries and
	// the entrypoint staged and copied onto the runtime base.
	PhaseAssembly Phase = "assembly"
	// PhaseSmoke is the smoke run: the driver stub taken from the build
	// base, and every router binary run on the runtime image (under QEMU on
	// a machine that is not arm64).
	PhaseSmoke Phase = "smoke run"
	// PhaseExport is the exporter writing layers, config and manifests.
	PhaseExport Phase = "export"
	// PhasePush is the exporter pushing blobs and manifests.
	PhasePush Phase = "push"
	// PhaseTag is putting the matrix's tags on the pushed digests.
	PhaseTag Phase = "tagging"
)

// phases lists every Phase in report order.
var phases = []Phase{PhaseResolve, PhaseFrontend, PhasePull, PhaseRouter, PhaseAssembly, PhaseSmoke, PhaseExport, PhasePush, PhaseTag}

// Timings says where a build's wall time went, from BuildKit's own vertex
// and status timestamps and from jetbake's clock around its own calls.
// Releases build at once, so phases overlap: WallSeconds counts each moment
// once per phase, BusySeconds adds up every step.
type Timings struct {
	// TotalSeconds is the wall time from the first session's start to the last tag.
	TotalSeconds float64 `json:"total_seconds"`
	// Phases are the phases that had steps, in the order of the Phase constants.
	Phases []PhaseTiming `json:"phases"`
	// OutsideSeconds is the wall time in which no step of any phase ran:
	// session setup, gateway round trips, jetbake's own work, waiting.
	OutsideSeconds float64 `json:"outside_steps_seconds"`
	// Releases say, per release, where its routers compiled and how many of
	// their steps BuildKit found in its cache.
	Releases []ReleaseTiming `json:"releases,omitempty"`
}

// PhaseTiming is one phase's share of a build.
type PhaseTiming struct {
	// Name is the phase.
	Name Phase `json:"name"`
	// WallSeconds is the time during which at least one step of the phase ran.
	WallSeconds float64 `json:"wall_seconds"`
	// BusySeconds is the sum of the phase's step durations.
	BusySeconds float64 `json:"busy_seconds"`
	// Steps is the number of steps (BuildKit vertices, statuses or jetbake calls).
	Steps int `json:"steps"`
	// Cached is how many of those steps BuildKit found in its cache.
	Cached int `json:"cached,omitempty"`
}

// span is one step of a phase; release and vertex say whose, when BuildKit
// reported it.
type span struct {
	phase           Phase
	start, end      time.Time
	cached          bool
	release, vertex string
}

// Recorder collects the steps of every release's session.
type Recorder struct {
	mu    sync.Mutex
	start time.Time
	// steps are keyed by release, vertex digest and start time (or status
	// ID), so that a step's later updates replace its earlier ones while a
	// vertex that runs twice (the exporter: export, then push) counts twice.
	steps map[string]span
	own   []span // jetbake's own calls
	// platforms are the releases' build platforms, as NoteRelease heard them.
	platforms map[string]buildPlatform
	// classify names a vertex's phase: ClassifyVertex, or the rules of
	// another tool's vertex names (StatusTimings).
	classify func(name string) Phase
}

// NewRecorder starts a recorder; the build starts now.
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now(), steps: map[string]span{}, platforms: map[string]buildPlatform{}, classify: ClassifyVertex}
}

// observe records the vertices and statuses of one status update of release.
// It must see the vertex names as BuildKit sent them.
func (r *Recorder) observe(release string, st *client.SolveStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range st.Vertexes {
		if v.Started == nil {
			continue
		}
		s := span{phase: r.classify(v.Name), start: *v.Started, cached: v.Cached, release: release, vertex: v.Digest.String()}
		if v.Completed != nil {
			s.end = *v.Completed
		}
		r.put(release+"\x00"+v.Digest.String()+"\x00"+v.Started.String(), s)
	}
	for _, vs := range st.Statuses {
		if vs.Started == nil || !strings.HasPrefix(vs.ID, "pushing") {
			continue
		}
		s := span{phase: PhasePush, start: *vs.Started, release: release}
		if vs.Completed != nil {
			s.end = *vs.Completed
		}
		r.put(release+"\x00"+vs.Vertex.String()+"\x00"+vs.ID, s)
	}
}

// put records s under key unless a finished step is already there: a
// vertex that several builds share (the builds of a shared session, a
// release's smoke run) reaches each build's status stream, and a stream
// may report it running after another reported it done.
func (r *Recorder) put(key string, s span) {
	if old, ok := r.steps[key]; ok && !old.end.IsZero() && s.end.IsZero() {
		return
	}
	r.steps[key] = s
}

// Record adds a step that jetbake timed itself.
func (r *Recorder) Record(phase Phase, start time.Time) {
	if r == nil {
		return
	}
	end := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.own = append(r.own, span{phase: phase, start: start, end: end})
}

// RecordCached adds a step of phase that jetbake found done already (a
// remembered verdict): it counts as a step BuildKit found in its cache.
func (r *Recorder) RecordCached(phase Phase, start time.Time) {
	if r == nil {
		return
	}
	end := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.own = append(r.own, span{phase: phase, start: start, end: end, cached: true})
}

// The prefixes that name the vertices of the phases that jetbake names itself:
// the runtime base (PhasePull) and the smoke run's steps (PhaseSmoke).
const (
	RuntimeBasePrefix = "runtime base "
	SmokePrefix       = "smoke: "
)

// stepPattern matches a Dockerfile step's vertex name, "[router 2/3] RUN ...".
// The stage name is left out when the Dockerfile's target is its only stage.
var stepPattern = regexp.MustCompile(`^\[([^\]]+ )?[0-9]+/[0-9]+\] `)

// phaseRules map vertex names to phases, first match wins; anything else is
// jetbake's own LLB (assembly).
var phaseRules = []struct {
	match func(name string) bool
	phase Phase
}{
	{func(n string) bool { return strings.HasPrefix(n, "resolve ") }, PhaseResolve},
	{func(n string) bool { return strings.Contains(n, "load metadata for ") }, PhaseResolve},
	{func(n string) bool { return strings.HasPrefix(n, "[internal] load build definition") }, PhaseFrontend},
	{func(n string) bool { return strings.HasPrefix(n, "[internal] load .dockerignore") }, PhaseFrontend},
	{func(n string) bool { return strings.HasPrefix(n, "[internal] load build context") }, PhaseFrontend},
	{func(n string) bool { return strings.HasPrefix(n, RuntimeBasePrefix) }, PhasePull},
	// An image that jetbake's own LLB takes without naming the step (the
	// smoke run's driver stub starts from the build base) is a pull too.
	{func(n string) bool { return strings.HasPrefix(n, "docker-image://") }, PhasePull},
	// The session's folders sent to the daemon (jetbake's binaries) and the
	// jetbake named context (dockerconvert.JetbakeContextState), as bake's
	// "[context NAME] load from client" and "[internal] load build context".
	{func(n string) bool { return strings.HasPrefix(n, "local://") }, PhaseFrontend},
	{func(n string) bool { return strings.HasPrefix(n, "jetbake context: ") }, PhaseFrontend},
	{func(n string) bool { return stepPattern.MatchString(n) && strings.Contains(n, "] FROM ") }, PhasePull},
	{func(n string) bool { return stepPattern.MatchString(n) }, PhaseRouter},
	{func(n string) bool { return strings.HasPrefix(n, "exporting") }, PhaseExport},
	{func(n string) bool { return strings.HasPrefix(n, SmokePrefix) }, PhaseSmoke},
}

// ClassifyVertex names the phase of a vertex of jetbake's builds by its name.
func ClassifyVertex(name string) Phase {
	for _, r := range phaseRules {
		if r.match(name) {
			return r.phase
		}
	}
	return PhaseAssembly
}

// Result sums the steps up to now. Unfinished steps end now. The export
// vertex's time excludes its push statuses, which count as push.
func (r *Recorder) Result() *Timings { return r.resultAt(time.Now()) }

// resultAt is result with the build ending at end.
func (r *Recorder) resultAt(end time.Time) *Timings {
	r.mu.Lock()
	defer r.mu.Unlock()
	byPhase := map[Phase][]span{}
	var all []span
	for _, s := range append(slices.Collect(maps.Values(r.steps)), r.own...) {
		if s.end.IsZero() || s.end.Before(s.start) {
			s.end = end
		}
		byPhase[s.phase] = append(byPhase[s.phase], s)
		all = append(all, s)
	}
	t := &Timings{TotalSeconds: seconds(end.Sub(r.start))}
	for _, p := range phases {
		steps := byPhase[p]
		if len(steps) == 0 {
			continue
		}
		pt := PhaseTiming{Name: p, Steps: len(steps)}
		for _, s := range steps {
			if s.cached {
				pt.Cached++
			}
		}
		if p == PhaseExport {
			steps = subtract(steps, byPhase[PhasePush])
		}
		var busy time.Duration
		for _, s := range steps {
			busy += s.end.Sub(s.start)
		}
		pt.WallSeconds, pt.BusySeconds = seconds(union(steps)), seconds(busy)
		t.Phases = append(t.Phases, pt)
	}
	t.OutsideSeconds = seconds(max(0, end.Sub(r.start)-union(all)))
	t.Releases = r.releaseTimings()
	return t
}

// union is the time covered by at least one of spans.
func union(spans []span) time.Duration {
	s := slices.Clone(spans)
	slices.SortFunc(s, func(a, b span) int { return a.start.Compare(b.start) })
	var total time.Duration
	var curStart, curEnd time.Time
	for i, x := range s {
		if i == 0 || x.start.After(curEnd) {
			total += curEnd.Sub(curStart)
			curStart, curEnd = x.start, x.end
			continue
		}
		if x.end.After(curEnd) {
			curEnd = x.end
		}
	}
	return total + curEnd.Sub(curStart)
}

// subtract cuts the parts covered by holes out of spans, keeping each span's
// phase and cache state.
func subtract(spans, holes []span) []span {
	var out []span
	for _, s := range spans {
		parts := []span{s}
		for _, h := range holes {
			var next []span
			for _, p := range parts {
				if !h.start.Before(p.end) || !h.end.After(p.start) {
					next = append(next, p)
					continue
				}
				if h.start.After(p.start) {
					next = append(next, span{phase: p.phase, start: p.start, end: h.start, cached: p.cached})
				}
				if h.end.Before(p.end) {
					next = append(next, span{phase: p.phase, start: h.end, end: p.end, cached: p.cached})
				}
			}
			parts = next
		}
		out = append(out, parts...)
	}
	return out
}

func seconds(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }

// WriteTable prints the phases as a table: wall and busy seconds, steps and
// cached steps, then the time outside every step and the total.
func (t *Timings) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\twall s\tbusy s\tsteps\tcached\t")
	for _, p := range t.Phases {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%d\t%d\t\n", p.Name, p.WallSeconds, p.BusySeconds, p.Steps, p.Cached)
	}
	fmt.Fprintf(tw, "outside any step\t%.3f\t\t\t\t\n", t.OutsideSeconds)
	fmt.Fprintf(tw, "total\t%.3f\t\t\t\t\n", t.TotalSeconds)
	if err := tw.Flush(); err != nil {
		return err
	}
	return t.writeReleases(w)
}
