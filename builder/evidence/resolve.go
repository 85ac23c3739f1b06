package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// ErrNotFound is wrapped by a Resolver that does not know a digest or a
// release; other errors mean it could not tell (a registry out of reach).
var ErrNotFound = errors.New("not known")

// notFoundError is a resolver's "not known" answer; it wraps ErrNotFound.
type notFoundError struct{ msg string }

// Error returns the message.
func (e *notFoundError) Error() string { return e.msg }

// Unwrap returns ErrNotFound.
func (e *notFoundError) Unwrap() error { return ErrNotFound }

// notFound builds a *notFoundError.
func notFound(format string, args ...any) error {
	return &notFoundError{msg: fmt.Sprintf(format, args...)}
}

// Built is an image jetbake built for a release.
type Built struct {
	// Release is the matrix release it was built for.
	Release string `json:"release"`
	// Digest is the image's digest.
	Digest string `json:"digest"`
	// Revision is the source revision it was built from, when known.
	Revision string `json:"revision,omitempty"`
	// Source says how jetbake knows: "build.json" or "registry REPO".
	Source string `json:"source"`
	// Audit is the build-time audit's result per SM target, from the
	// build metadata (releases[].audit) or the io.jetbake.audit
	// annotation; nil for an image built before the audit.
	Audit []Audit `json:"audit,omitempty"`
}

// Resolver tells which release jetbake built an image for, and which image
// is current for a release.
type Resolver interface {
	// Lookup finds the image with the digest; an error wrapping
	// ErrNotFound when jetbake did not build it for any release.
	Lookup(ctx context.Context, digest string) (Built, error)
	// Current finds the image the release's latest build produced; an
	// error wrapping ErrNotFound when the resolver does not know.
	Current(ctx context.Context, release string) (Built, error)
}

// MetadataResolver answers from the report `jetbake build --metadata-file`
// wrote: releases that were built (succeeded, or built but not tagged)
// with a digest.
type MetadataResolver struct {
	// File names the report in messages.
	File string
	// Report is the build report.
	Report *imagebuild.Report
}

// ReadMetadata reads the build report at path.
func ReadMetadata(path string) (*MetadataResolver, error) {
	data, err := inputfile.Read(path, "build metadata file", inputfile.WithMissingHint("write it with 'jetbake build --metadata-file'"))
	if err != nil {
		return nil, err
	}
	var r imagebuild.Report
	if _, err := matrix.DecodeFile(path, data, &r, "give the file 'jetbake build --metadata-file' wrote", matrix.IgnoreUnknownFields()); err != nil {
		return nil, err
	}
	return &MetadataResolver{File: path, Report: &r}, nil
}

// built turns a release of the report into a Built.
func (m *MetadataResolver) built(rel *imagebuild.ReleaseReport) Built {
	rev := m.Report.Revision
	if v := rel.Annotations[matrix.KeyRevision]; v != "" {
		rev = v
	}
	return Built{Release: rel.Name, Digest: rel.Digest, Revision: rev, Source: m.File, Audit: auditOfReport(rel)}
}

// usable reports whether a release of the report produced an image.
func usable(rel *imagebuild.ReleaseReport) bool {
	return rel.Digest != "" && (rel.Outcome == imagebuild.Succeeded || rel.Outcome == imagebuild.Untagged)
}

// Lookup finds the release built with the digest.
func (m *MetadataResolver) Lookup(_ context.Context, digest string) (Built, error) {
	for i := range m.Report.Releases {
		if rel := &m.Report.Releases[i]; usable(rel) && rel.Digest == digest {
			return m.built(rel), nil
		}
	}
	return Built{}, notFound("%s lists no image %s", m.File, digest)
}

// Current finds the release's digest in the report.
func (m *MetadataResolver) Current(_ context.Context, release string) (Built, error) {
	for i := range m.Report.Releases {
		if rel := &m.Report.Releases[i]; rel.Name == release && usable(rel) {
			return m.built(rel), nil
		}
	}
	return Built{}, notFound("%s has no built image of %s", m.File, release)
}

// RegistryResolver answers from the registry: the image at
// <repository>@<digest> and the release's first tag, whose index (or
// manifest) annotations jetbake set at build time.
type RegistryResolver struct {
	// Plan gives the repository and each release's tags.
	Plan *plan.Plan
	// Options are passed to every registry call (authentication).
	Options []remote.Option
}

// NewRegistryResolver plans the matrix (with repo instead of its
// repository when repo is not empty) for a RegistryResolver.
func NewRegistryResolver(m *matrix.Matrix, repo string, opts ...remote.Option) (*RegistryResolver, error) {
	var popts []plan.Option
	if repo != "" {
		popts = append(popts, plan.WithRepository(repo))
	}
	p, err := plan.New(m, popts...)
	if err != nil {
		return nil, err
	}
	return &RegistryResolver{Plan: p, Options: opts}, nil
}

// Lookup reads the annotations of <repository>@digest.
func (r *RegistryResolver) Lookup(ctx context.Context, digest string) (Built, error) {
	ref := r.Plan.Repository + "@" + digest
	ann, got, err := r.annotations(ctx, ref)
	if err != nil {
		return Built{}, err
	}
	release := ann[matrix.KeyRelease]
	if release == "" {
		return Built{}, notFound("%s has no %s annotation, so jetbake did not build it", ref, matrix.KeyRelease)
	}
	return Built{Release: release, Digest: got, Revision: ann[matrix.KeyRevision], Source: "registry " + r.Plan.Repository,
		Audit: auditOfAnnotation(ann[matrix.KeyAudit])}, nil
}

// Current resolves the release's first tag.
func (r *RegistryResolver) Current(ctx context.Context, release string) (Built, error) {
	var tags []string
	for _, rel := range r.Plan.Releases {
		if rel.Name == release {
			tags = rel.Tags
		}
	}
	if len(tags) == 0 {
		return Built{}, notFound("release %s has no tag to look up", release)
	}
	ann, got, err := r.annotations(ctx, tags[0])
	if err != nil {
		return Built{}, err
	}
	if ann[matrix.KeyRelease] != release {
		return Built{}, notFound("%s points at an image of release %q, not %s", tags[0], ann[matrix.KeyRelease], release)
	}
	return Built{Release: release, Digest: got, Revision: ann[matrix.KeyRevision], Source: "registry " + tags[0],
		Audit: auditOfAnnotation(ann[matrix.KeyAudit])}, nil
}

// annotations fetches ref's index or manifest and returns its annotations
// and digest. A missing image wraps ErrNotFound.
func (r *RegistryResolver) annotations(ctx context.Context, ref string) (map[string]string, string, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return nil, "", fmt.Errorf("image reference %q: %w", ref, err)
	}
	desc, err := remote.Get(parsed, append([]remote.Option{remote.WithContext(ctx)}, r.Options...)...)
	if err != nil {
		if isNotFound(err) {
			return nil, "", notFound("%s is not in the registry", ref)
		}
		return nil, "", refs.DescribeRegistryError("look up "+ref, err)
	}
	var doc struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := json.Unmarshal(desc.Manifest, &doc); err != nil {
		return nil, "", fmt.Errorf("%s: manifest is not JSON: %w", ref, err)
	}
	return doc.Annotations, desc.Digest.String(), nil
}

// isNotFound reports whether a registry error says the image is missing.
func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}

// Chain asks its resolvers in order. Lookup and Current return the first
// answer; when none answers, an error naming every resolver's reason, which
// wraps ErrNotFound only when every resolver said not found.
type Chain []Resolver

// Lookup asks each resolver in turn.
func (c Chain) Lookup(ctx context.Context, digest string) (Built, error) {
	return c.ask(func(r Resolver) (Built, error) { return r.Lookup(ctx, digest) })
}

// Current asks each resolver in turn.
func (c Chain) Current(ctx context.Context, release string) (Built, error) {
	return c.ask(func(r Resolver) (Built, error) { return r.Current(ctx, release) })
}

// ask returns the first answer, or the reasons of all.
func (c Chain) ask(q func(Resolver) (Built, error)) (Built, error) {
	if len(c) == 0 {
		return Built{}, notFound("no build metadata or registry to ask")
	}
	var reasons []string
	var errs []error
	allNotFound := true
	for _, r := range c {
		b, err := q(r)
		if err == nil {
			return b, nil
		}
		reasons = append(reasons, err.Error())
		if !errors.Is(err, ErrNotFound) {
			allNotFound, errs = false, append(errs, err)
		}
	}
	msg := strings.Join(reasons, "; ")
	if allNotFound {
		return Built{}, notFound("%s", msg)
	}
	return Built{}, &reasonsError{msg: msg, errs: errs}
}

// reasonsError is every resolver's reason in one line; it keeps the errors
// that are not ErrNotFound for errors.As (a registry's *refs.RegistryError).
type reasonsError struct {
	msg  string
	errs []error
}

func (e *reasonsError) Error() string   { return e.msg }
func (e *reasonsError) Unwrap() []error { return e.errs }
