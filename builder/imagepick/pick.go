// Package imagepick chooses, from the tags of a repository, the jetbake image that
// runs on a host: it reads each image's io.jetbake.* annotations (or config
// labels) through the registry without pulling layers, applies the host
// rule, and ranks what fits.
package imagepick

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/refs"
)

// Candidate is one image of the repository (every tag of one digest) and the
// verdict of the host rule on it.
type Candidate struct {
	// Reference is the image fully qualified: REPOSITORY:TAG@DIGEST.
	Reference string `json:"reference"`
	// Tag is the most specific of Tags (the longest), used in Reference.
	Tag string `json:"tag"`
	// Tags are every tag of the repository that points at Digest.
	Tags []string `json:"tags"`
	// Digest is the digest the tags point at (the index, for multi-platform images).
	Digest string `json:"digest"`
	// Meta is what the image says of itself; empty for images that are not jetbake's.
	Meta Meta `json:"meta"`
	// Verdict is the host rule's answer, or why the image could not be judged.
	Verdict hostfit.Verdict `json:"verdict"`
	// Chosen marks the best candidate.
	Chosen bool `json:"chosen,omitempty"`
	// ExactJetPack is set when the image is for the host's exact JetPack release.
	ExactJetPack bool `json:"exact_jetpack,omitempty"`
	// AuditCovers is set when the image's build-time audit
	// (io.jetbake.audit) says the router picked for the host's GPU holds
	// code that runs on it.
	AuditCovers bool `json:"audit_covers,omitempty"`
}

// Result is the outcome of Pick.
type Result struct {
	// Repository is the repository as asked.
	Repository string `json:"repository"`
	// Host is the host's facts.
	Host hostfit.Host `json:"host"`
	// Best is the chosen image; nil when nothing fits.
	Best *Candidate `json:"best,omitempty"`
	// Candidates are every image, the taken ones first in preference order.
	Candidates []Candidate `json:"candidates"`
	// Sentence explains, when nothing fits, what the host would need.
	Sentence string `json:"sentence,omitempty"`
	// SkippedTags counts the listed tags that are not valid tags, left out.
	SkippedTags int `json:"skipped_tags,omitempty"`
}

// NoFitError is returned, with the Result, when no image runs on the host.
type NoFitError struct {
	// Sentence is the one sentence naming what the host would need.
	Sentence string
}

// Error returns the sentence.
func (e *NoFitError) Error() string { return e.Sentence }

// Option changes how Pick reads the host and the registry.
type Option func(*options)

type options struct {
	sysroot   string
	facts     hostfit.Reader
	rule      hostfit.Rule
	mirrors   refs.Mirrors
	keychain  authn.Keychain
	transport http.RoundTripper
	platform  v1.Platform
	progress  func(string)
	notJetson string
}

// WithNotJetsonFix words the fix of a host that is not a Jetson for a
// command; default "run it on the Jetson itself, or give WithSysroot the
// board's root file system".
func WithNotJetsonFix(fix string) Option { return func(o *options) { o.notJetson = fix } }

// WithSysroot reads the host under root instead of "/" (the default).
func WithSysroot(root string) Option { return func(o *options) { o.sysroot = root } }

// WithHostFacts sets how the host's facts are read; default hostfit.SysrootReader.
func WithHostFacts(r hostfit.Reader) Option { return func(o *options) { o.facts = r } }

// WithRule sets the host rule; default hostfit.Compatible.
func WithRule(r hostfit.Rule) Option { return func(o *options) { o.rule = r } }

// WithMirrors reads the repository through a mirror (REGISTRY -> HOST:PORT);
// the references printed keep the repository as asked. Default: none.
func WithMirrors(m refs.Mirrors) Option { return func(o *options) { o.mirrors = m } }

// WithKeychain sets where credentials come from; default
// authn.DefaultKeychain (the Docker config and its credential helpers).
func WithKeychain(k authn.Keychain) Option { return func(o *options) { o.keychain = k } }

// WithTransport sets the HTTP transport; default remote.DefaultTransport.
func WithTransport(t http.RoundTripper) Option { return func(o *options) { o.transport = t } }

// WithProgress receives a line per image read; default none.
func WithProgress(f func(string)) Option { return func(o *options) { o.progress = f } }

// Pick reads the host, lists the repository's tags, judges every image and
// returns the result. When nothing fits it returns the result and a
// *NoFitError; a host that is not a Jetson (no Tegra SoC or no L4T release)
// is one, found before the registry is asked anything. A repository that is not one (*RepositoryError) or a sysroot
// that is not a folder (*hostfit.SysrootError) is refused before anything is
// read; other errors mean the host or the registry could not be read (a
// registry's answer is a *refs.RegistryError).
func Pick(ctx context.Context, repository string, opts ...Option) (*Result, error) {
	o := options{sysroot: "/", facts: hostfit.SysrootReader{}, rule: hostfit.Compatible, keychain: authn.DefaultKeychain,
		platform: v1.Platform{OS: "linux", Architecture: "arm64"}, progress: func(string) {}}
	for _, opt := range opts {
		opt(&o)
	}
	repo, err := readRepo(repository, o.mirrors)
	if err != nil {
		return nil, err
	}
	if err := hostfit.CheckSysroot(o.sysroot); err != nil {
		return nil, err
	}
	facts, err := o.facts.Read(ctx, o.sysroot)
	if err != nil {
		return nil, fmt.Errorf("read the host under %s: %w", o.sysroot, err)
	}
	// No image runs on a host that is not a Jetson: say so before the
	// registry is asked anything (it may not even be reachable from here).
	if !facts.Jetson() {
		res := &Result{Repository: repository, Host: facts, Candidates: []Candidate{},
			Sentence: notJetsonSentence(repository, o.sysroot, facts, o.notJetson)}
		return res, &NoFitError{Sentence: res.Sentence}
	}
	images, skipped, err := listImages(ctx, repository, repo, &o)
	if err != nil {
		return nil, err
	}
	res := &Result{Repository: repository, Host: facts, Candidates: judge(repository, facts, images, o.rule), SkippedTags: skipped}
	if len(res.Candidates) > 0 && res.Candidates[0].Verdict.OK {
		res.Candidates[0].Chosen = true
		best := res.Candidates[0]
		res.Best = &best
		return res, nil
	}
	res.Sentence = noFitSentence(repository, facts, res.Candidates)
	return res, &NoFitError{Sentence: res.Sentence}
}
