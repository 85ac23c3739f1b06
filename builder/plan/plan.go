package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
)

// BinaryDir is the folder of the router binaries in every image.
const BinaryDir = "/usr/local/bin"

// BinaryName is the file name of the router binary built for c: "router-87".
func BinaryName(c computecap.Capability) string {
	return "router-" + c.Digits()
}

// Option changes what New puts in a plan.
type Option func(*config)

// config holds the options of New.
type config struct {
	releases   []string
	repository string
}

// WithReleases limits the plan to the named releases; they keep the matrix
// order. A name the matrix does not have makes New fail with an
// *UnknownReleaseError. Without this option every release is planned.
func WithReleases(names ...string) Option {
	return func(c *config) { c.releases = append(c.releases, names...) }
}

// WithRepository publishes to repo instead of the matrix's image.repository,
// e.g. a local registry "127.0.0.1:5000/jetbake/tei" for tests.
func WithRepository(repo string) Option {
	return func(c *config) { c.repository = repo }
}

// UnknownReleaseError reports release names the matrix does not have.
type UnknownReleaseError struct {
	// Names are the unknown names, in the order given.
	Names []string
	// Valid are the matrix's release names.
	Valid []string
}

// Error names the unknown releases and lists the valid ones.
func (e *UnknownReleaseError) Error() string {
	return fmt.Sprintf("unknown release %s: the matrix has %s",
		strings.Join(quoteAll(e.Names), ", "), strings.Join(e.Valid, ", "))
}

// New resolves a checked matrix into a plan. It fails on an unknown release
// name or an invalid repository override, and on a matrix that Load or
// Parse would not have accepted.
func New(m *matrix.Matrix, opts ...Option) (*Plan, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	repo := m.Image.Repository
	if cfg.repository != "" {
		if !matrix.ValidRepository(cfg.repository) {
			return nil, fmt.Errorf("repository %q is not a valid image repository: write it like \"ghcr.io/OWNER/NAME\", lowercase and without a tag", cfg.repository)
		}
		repo = cfg.repository
	}
	selected, err := selectReleases(m, cfg.releases)
	if err != nil {
		return nil, err
	}
	p := &Plan{Repository: repo, Releases: make([]Release, 0, len(selected))}
	if m.App != nil {
		p.App = appOf(m)
	} else {
		p.Router = routerOf(m)
	}
	for _, i := range selected {
		r, err := release(m, i, repo)
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		p.Releases = append(p.Releases, r)
	}
	return p, nil
}

// selectReleases returns the matrix indexes of the named releases in matrix
// order, or every index when names is empty.
func selectReleases(m *matrix.Matrix, names []string) ([]int, error) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var unknown []string
	for _, n := range names {
		if _, ok := m.Release(n); !ok && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, &UnknownReleaseError{Names: unknown, Valid: m.ReleaseNames()}
	}
	var idx []int
	for i, r := range m.Releases {
		if len(names) == 0 || want[r.Name] {
			idx = append(idx, i)
		}
	}
	return idx, nil
}

// routerOf resolves the router's local paths.
func routerOf(m *matrix.Matrix) Router {
	ctx := m.Router.Context
	if !matrix.IsGitContext(ctx) {
		ctx = m.LocalPath(ctx)
	}
	return Router{
		Name:          m.Router.Name,
		Version:       m.Router.Version,
		Context:       ctx,
		Dockerfile:    m.LocalPath(m.Router.Dockerfile),
		Target:        m.Router.Target,
		RuntimeTarget: m.Router.RuntimeTarget,
		Commit:        matrix.GitCommit(m.Router.Context),
		Output:        m.Router.Output,
		Smoke:         slices.Clone(m.Router.Smoke),
		Env:           maps.Clone(m.Router.Env),
		Cmd:           slices.Clone(m.Router.Cmd),
		Ports:         slices.Clone(m.Router.Ports),
	}
}

// release resolves release i of the matrix.
func release(m *matrix.Matrix, i int, repo string) (Release, error) {
	r := &m.Releases[i]
	caps := r.Targets
	cuda, err := r.CUDAVersion()
	if err != nil {
		return Release{}, err
	}
	tags, err := m.Tags(i)
	if err != nil {
		return Release{}, err
	}
	refs := make([]string, len(tags))
	for k, t := range tags {
		refs[k] = repo + ":" + t
	}
	targets := make([]Target, len(caps))
	sms := make([]string, len(caps))
	for k, c := range caps {
		targets[k] = Target{
			SM:         c.String(),
			Arch:       computecap.NVCCArch(c, cuda),
			ComputeCap: c.Digits(),
			Binary:     BinaryName(c),
			Path:       BinaryDir + "/" + BinaryName(c),
		}
		if args := m.TargetBuildArgs(r, r.Targets[k]); len(args) > 0 {
			targets[k].BuildArgs = args
		}
		sms[k] = c.String()
	}
	common := commonKeys(m, r, strings.Join(sms, ","))
	labels := maps.Clone(common)
	maps.Copy(labels, m.Image.Labels)
	annotations := common
	maps.Copy(annotations, m.Image.Annotations)
	facts := m.Facts()
	flavour, _ := facts.FlavourOfJetPack(r.JetPack)
	out := Release{
		Name: r.Name, JetPack: r.JetPack, L4T: r.L4T, CUDA: r.CUDA, Ubuntu: r.Ubuntu,
		Tier: r.Tier, Hardware: slices.Clone(r.Hardware), Platform: Platform,
		BuildBase: r.BuildBase, RuntimeBase: r.RuntimeBase,
		Flavour: flavour, Bases: bases(facts, r.BuildBase, r.RuntimeBase),
		Targets: targets, Tags: refs, Labels: labels, Annotations: annotations,
	}
	if note := m.FactsNote(r); note != "" {
		rows := facts.Declared
		out.Facts, out.FactsNote, out.DeclaredFacts = matrix.FactsDeclared, note, &rows
	}
	if len(r.BuildArgs) > 0 {
		out.BuildArgs = maps.Clone(r.BuildArgs)
	}
	if c := r.CrossBuildBase; c != nil && m.App == nil {
		out.CrossBuildBase, out.CUDATargetDir = c.Image, c.CUDATarget
		if c.Recipe != "" {
			args, err := m.RecipeArgs(r)
			if err != nil {
				return Release{}, fmt.Errorf("release %s: cross_build_base.recipe: %w", r.Name, err)
			}
			out.CrossBuildBase = args[computecap.RecipeArgDevelImage]
			file := c.Recipe
			if file != matrix.BuiltinRecipe {
				file = m.LocalPath(file)
			}
			out.CrossBuildRecipe = &CrossRecipe{Dockerfile: file, Args: args}
		}
	}
	if m.App == nil {
		out.BuildPath = r.BuildPath
	}
	if m.App != nil {
		out.BuildBase, out.RuntimeBase = "", ""
		appRelease(m, r, &out)
		return out, nil
	}
	if m.Router.RuntimeTarget != "" {
		args := maps.Clone(m.Router.BuildArgs)
		if args == nil {
			args = map[string]string{}
		}
		maps.Copy(args, r.BuildArgs)
		if len(args) > 0 {
			out.RuntimeBuildArgs = args
		}
	}
	return out, nil
}

// commonKeys returns the labels and annotations jetbake writes on every
// image of a release. The build adds revision, created and base.digest.
func commonKeys(m *matrix.Matrix, r *matrix.Release, sms string) map[string]string {
	name, base := m.Router.Name, r.RuntimeBase
	if m.App != nil {
		name, base = m.App.Name, r.Base
	}
	keys := map[string]string{
		matrix.KeyTitle:      name,
		matrix.KeyVersion:    m.Version(),
		matrix.KeySource:     m.Image.Source,
		matrix.KeyBaseName:   base,
		matrix.KeyRelease:    r.Name,
		matrix.KeyJetPack:    r.JetPack,
		matrix.KeyL4T:        r.L4T,
		matrix.KeyCUDA:       r.CUDA,
		matrix.KeyUbuntu:     r.Ubuntu,
		matrix.KeySMTargets:  sms,
		matrix.KeyTier:       r.Tier,
		matrix.KeyNVIDIACUDA: r.CUDA,
	}
	if m.FactsNote(r) != "" {
		keys[matrix.KeyFacts] = matrix.FactsDeclared
		if row := m.DeclaredJetPackRow(r); row != "" {
			keys[matrix.KeyFactsJetPack] = row
		}
	}
	return keys
}

// quoteAll quotes every string.
func quoteAll(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Release returns the planned release with the given name.
func (p *Plan) Release(name string) (*Release, bool) {
	for i := range p.Releases {
		if p.Releases[i].Name == name {
			return &p.Releases[i], true
		}
	}
	return nil, false
}
