package evidence

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
)

// TierSupported is the tier that needs evidence.
const TierSupported = "supported"

// Option changes what Support and CheckStrict use.
type Option func(*options)

// options are the settings of Support and CheckStrict.
type options struct {
	resolver Resolver
	store    *Store
	now      time.Time
	maxAge   time.Duration
	// metadataFix words how a command is given a build's report (see
	// WithMetadataFix).
	metadataFix string
}

// WithMetadataFix words, for a command, how it is given the report of a
// build (the digests each release was built as), such as "pass
// --metadata-file with the report of the latest 'jetbake build'": the fix
// CheckStrict gives, with pushing the release, for a release whose current
// digest is unknown. The default names MetadataResolver.
func WithMetadataFix(fix string) Option { return func(o *options) { o.metadataFix = fix } }

// WithResolver sets how the current digest of a release is found; see
// Chain, MetadataResolver and RegistryResolver. Without it, CheckStrict
// reports every supported release as unknown, and Support shows no
// current digest.
func WithResolver(r Resolver) Option { return func(o *options) { o.resolver = r } }

// WithStore reads evidence from s instead of StoreFor(m).
func WithStore(s Store) Option { return func(o *options) { o.store = &s } }

// WithNow sets the time evidence ages are measured at (default time.Now()).
func WithNow(t time.Time) Option { return func(o *options) { o.now = t } }

// WithMaxAge sets the age limit (default DefaultMaxAge, 30 days).
func WithMaxAge(d time.Duration) Option { return func(o *options) { o.maxAge = d } }

// newOptions applies opts over the defaults for m.
func newOptions(m *matrix.Matrix, opts []Option) options {
	o := options{now: time.Now(), maxAge: DefaultMaxAge,
		metadataFix: "read the report of the latest 'jetbake build' with a MetadataResolver"}
	for _, opt := range opts {
		opt(&o)
	}
	if o.store == nil {
		s := StoreFor(m)
		o.store = &s
	}
	return o
}

// backing is what the store and the resolver say about one release.
type backing struct {
	// current is the release's current image; zero when currentErr is set.
	current    Built
	currentErr error
	// entries are the stored evidence, newest first, and verdicts each
	// one's Verify result against current (nil: it counts).
	entries  []Entry
	verdicts []error
}

// backed reports whether some stored evidence counts.
func (b *backing) backed() bool {
	for _, v := range b.verdicts {
		if v == nil {
			return true
		}
	}
	return false
}

// backingOf reads the store for rel and, with a resolver, verifies each
// entry against the release's current image.
func backingOf(ctx context.Context, o *options, m *matrix.Matrix, rel *matrix.Release) (*backing, error) {
	entries, err := o.store.Release(rel.Name)
	if err != nil {
		return nil, err
	}
	b := &backing{entries: entries}
	if o.resolver == nil {
		b.currentErr = notFound("no build metadata or registry to ask")
		return b, nil
	}
	if b.current, b.currentErr = o.resolver.Current(ctx, rel.Name); b.currentErr != nil {
		return b, nil
	}
	for _, e := range entries {
		v := checkKind(e.Evidence, m)
		if v == nil {
			v = Verify(e.Evidence, rel, b.current, o.now, o.maxAge)
		}
		b.verdicts = append(b.verdicts, v)
	}
	return b, nil
}

// CheckStrict reports, as matrix field errors on releases[i].tier, each
// release that claims "supported" without stored evidence that passes
// Verify for its current image at the age limit, which for "supported"
// means evidence of SupportedLevel: passing cuda-kernel and serve checks
// (for an app's matrix LevelApp: cuda-kernel and app checks), not only the
// smoke run, of an image of the matrix's kind. The current image is what
// the resolver's Current says: with Chain{metadata, registry}, the digest
// in the latest build's metadata, else what the release's first tag
// resolves to. Releases of other tiers are not checked, and need no
// resolver.
func CheckStrict(ctx context.Context, m *matrix.Matrix, opts ...Option) []matrix.FieldError {
	o := newOptions(m, opts)
	var errs []matrix.FieldError
	for i := range m.Releases {
		rel := &m.Releases[i]
		if rel.Tier != TierSupported {
			continue
		}
		fe := matrix.FieldError{Path: "releases[" + strconv.Itoa(i) + "].tier", Value: strconv.Quote(rel.Tier)}
		b, err := backingOf(ctx, &o, m, rel)
		switch {
		case err != nil:
			fe.Message = "release " + rel.Name + " claims supported, but its evidence cannot be read: " + err.Error()
			fe.Fix = "remove or repair the file; 'jetbake evidence add' writes only valid evidence"
		case b.currentErr != nil:
			fe.Message = "release " + rel.Name + " claims supported, but the digest of its current image is unknown: " + b.currentErr.Error()
			fe.Fix = o.metadataFix + ", or push the release and its tags"
		case !b.backed():
			fe.Message = "release " + rel.Name + " claims supported without passing evidence for its current image " +
				b.current.Digest + " (" + b.current.Source + ") no older than " + FormatAge(o.maxAge) + ": " + whyNot(b)
			fe.Fix = strictProbeFix(m)
		case !b.provenOn(m, rel):
			u, _ := unprovenFor(m, rel)
			fe.Message = "release " + rel.Name + " claims supported, but " + u.Why + ", and none of its passing evidence ran the SM " +
				u.ProvenOn.String() + " binary"
			fe.Fix = "run '" + ProbeCommand + "' in the image on a Jetson Thor and add that evidence; or set the tier to \"candidate\""
		default:
			continue
		}
		if note := m.FactsNote(rel); note != "" {
			fe.Message += "; the release " + note + ", which only evidence from a real Jetson backs"
		}
		errs = append(errs, fe)
	}
	return errs
}

// strictProbeFix is the fix of a supported release without passing
// evidence: the probe run that collects evidence of its supported level.
func strictProbeFix(m *matrix.Matrix) string {
	if m.Kind() == matrix.KindApp {
		return "run '" + AppProbeCommand + "' in that image on a Jetson with --runtime nvidia (the app check runs by itself in an " +
			"app image), then 'jetbake evidence add evidence.json' (supported needs its cuda-kernel and app checks); or set the tier to \"candidate\""
	}
	return "run '" + ProbeCommand + "' in that image on a Jetson, with a small embedding model's folder mounted at /model, then " +
		"'jetbake evidence add evidence.json' (supported needs its cuda-kernel and serve checks); or set the tier to \"candidate\""
}

// whyNot says why no stored evidence counts: none, or each entry's
// reason (the newest three).
func whyNot(b *backing) string {
	if len(b.entries) == 0 {
		return "there is no evidence for the release"
	}
	var parts []string
	for i, v := range b.verdicts {
		if i == 3 {
			parts = append(parts, strconv.Itoa(len(b.verdicts)-3)+" more")
			break
		}
		msg := v.Error()
		var re *RefusedError
		if errors.As(v, &re) {
			msg = string(re.Reason) + ": " + re.Message
		}
		parts = append(parts, filepath.Base(b.entries[i].Path)+" ("+msg+")")
	}
	return strings.Join(parts, "; ")
}

// unprovenFor returns computecap's unproven-CUDA row of rel's CUDA, if any.
// The rows are the router's (TEI's cudarc): an app's release, which
// compiles nothing and runs its framework container's CUDA, has none.
func unprovenFor(m *matrix.Matrix, rel *matrix.Release) (computecap.Unproven, bool) {
	if m.Kind() == matrix.KindApp {
		return computecap.Unproven{}, false
	}
	cuda, err := rel.CUDAVersion()
	if err != nil {
		return computecap.Unproven{}, false
	}
	return computecap.UnprovenFor(cuda)
}

// provenOn reports whether rel's CUDA line needs no particular GPU, or some
// passing evidence ran the binary for the GPU that proves it (Thor for CUDA 13).
func (b *backing) provenOn(m *matrix.Matrix, rel *matrix.Release) bool {
	u, ok := unprovenFor(m, rel)
	if !ok {
		return true
	}
	for i, v := range b.verdicts {
		bin := b.entries[i].Evidence.Result.Binary
		if v != nil || bin == nil {
			continue
		}
		if c, err := computecap.Parse(bin.SM); err == nil && c.Canonical() == u.ProvenOn.Canonical() {
			return true
		}
	}
	return false
}
