package progress

import (
	"slices"
	"time"

	"github.com/moby/buildkit/client"
)

// StatusTimings reads the phases of a build that jetbake did not run from
// the BuildKit status updates it sent (`buildx bake --progress rawjson`
// prints them), with the arithmetic of jetbake's own Timings: the build ran
// from start to end, and classify names each vertex's phase (nil:
// ClassifyVertex, jetbake's rules). So two tools' builds of the same work
// are split into phases the same way.
func StatusTimings(start, end time.Time, updates []*client.SolveStatus, classify func(name string) Phase) *Timings {
	r := NewRecorder()
	r.start = start
	if classify != nil {
		r.classify = classify
	}
	for _, st := range updates {
		r.observe("", st)
	}
	return r.resultAt(end)
}

// Phase returns the timing of phase p, and false when the build had no step of it.
func (t *Timings) Phase(p Phase) (PhaseTiming, bool) {
	for _, pt := range t.Phases {
		if pt.Name == p {
			return pt, true
		}
	}
	return PhaseTiming{Name: p}, false
}

// Phases lists every phase, in the order of the Phase constants.
func Phases() []Phase { return slices.Clone(phases) }
