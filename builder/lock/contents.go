package lock

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
)

// readers is how many bases are read at once.
const readers = 4

// fetchRef is the reference ref is fetched as (its mirror applied), parsed.
func fetchRef(ref string, resolve Resolver) (string, name.Reference, error) {
	fetched := ref
	if resolve != nil {
		var err error
		if fetched, err = resolve(ref); err != nil {
			return "", nil, err
		}
	}
	// go-containerregistry reaches loopback and private registries over
	// plain HTTP by itself (name.Registry.Scheme).
	parsed, err := name.ParseReference(fetched)
	if err != nil {
		return "", nil, fmt.Errorf("base %s: %w", ref, err)
	}
	return fetched, parsed, nil
}

// readAll reads every base of p, a few at a time, by matrix reference.
func readAll(ctx context.Context, p *plan.Plan, resolve Resolver, opts []remote.Option) (map[string]baseinfo.Info, error) {
	reader := baseinfo.New(baseinfo.WithRemoteOptions(opts...))
	var mu sync.Mutex
	out := map[string]baseinfo.Info{}
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(readers)
	for _, ref := range targetBases(p) {
		fetched, _, err := fetchRef(ref, resolve)
		if err != nil {
			return nil, err
		}
		eg.Go(func() error {
			info, err := reader.Read(ctx, fetched)
			if err != nil {
				what := "resolve base " + ref + " (as " + fetched + ")"
				if rerr := refs.DescribeIfRegistry(what, err); rerr != err {
					return rerr
				}
				return fmt.Errorf("%s: %w", what, err)
			}
			mu.Lock()
			out[ref] = info
			mu.Unlock()
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// checkContents checks what each base holds against every release that
// uses it, naming each release whose base does not fit.
func checkContents(p *plan.Plan, contents map[string]baseinfo.Info) error {
	var errs []error
	for _, r := range p.Releases {
		for _, n := range imagebuild.BaseNeeds(r) {
			if err := contents[n.Ref].Check(n); err != nil {
				errs = append(errs, fmt.Errorf("release %s: %w", r.Name, err))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w\nnothing was written: fix the matrix or the bases, then run 'jetbake lock' again", errors.Join(errs...))
	}
	return nil
}

// contentsChange reads ref at its new digest and, when what it holds is
// not what f records, says so: ", and what it holds changed from Tegra
// CUDA 12.6.11 to SBSA CUDA 12.6.11". It says nothing when f records
// nothing for ref (a lock file from before jetbake read bases).
func (f *File) contentsChange(ctx context.Context, ref, digest string, resolve Resolver, opts []remote.Option) string {
	was, ok := f.Contents[ref]
	if !ok {
		return ""
	}
	_, parsed, err := fetchRef(ref, resolve)
	if err != nil {
		return ""
	}
	now, err := baseinfo.New(baseinfo.WithRemoteOptions(opts...)).Read(ctx, parsed.Context().Name()+"@"+digest)
	switch {
	case err != nil:
		return fmt.Sprintf(" (what it holds now could not be read: %v)", refs.DescribeIfRegistry("read "+ref, err))
	case !now.Same(was):
		return fmt.Sprintf(", and what it holds changed from %s to %s", was.Describe(), now.Describe())
	}
	return ""
}

// MissingContents lists the bases of p (not the cross build bases, whose
// contents are not read) for which f records no contents:
// lock files written before jetbake read bases. The next 'jetbake lock'
// records them.
func (f *File) MissingContents(p *plan.Plan) []string {
	var out []string
	for _, ref := range targetBases(p) {
		if _, ok := f.Contents[ref]; !ok {
			out = append(out, ref)
		}
	}
	return out
}

// checkContentsField checks the contents a lock file records, naming the
// field, its place in the file and the fix.
func checkContentsField(doc *matrix.Document, f *File) error {
	for _, ref := range slices.Sorted(maps.Keys(f.Contents)) {
		info, at := f.Contents[ref], matrix.MemberPath("contents", ref)
		if _, err := v1.NewHash(info.Digest); err != nil {
			return doc.Problem(at+".digest", computecap.QuoteShort(info.Digest), "is not a digest such as sha256:<64 hex digits>", "")
		}
		switch info.Flavour {
		case "", computecap.FlavourTegra, computecap.FlavourSBSA:
		default:
			return doc.Problem(at+".flavour", computecap.QuoteShort(string(info.Flavour)), `is not "tegra" or "sbsa"`, "")
		}
		if _, ok := info.CUDAVersion(); info.CUDA != "" && !ok {
			return doc.Problem(at+".cuda", computecap.QuoteShort(info.CUDA), "is not a CUDA version such as 12.6.11", "")
		}
	}
	return nil
}

// Known returns what f records of the bases it pins, by matrix reference:
// each entry holds what the image at its pinned digest held when it was
// read, so a build from that digest need not read it again.
func (f *File) Known() map[string]baseinfo.Info {
	out := map[string]baseinfo.Info{}
	for ref, info := range f.Contents {
		if info.Digest != "" && info.Digest == f.Bases[ref] {
			out[ref] = info
		}
	}
	return out
}
