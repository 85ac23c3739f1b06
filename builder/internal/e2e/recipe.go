package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/plan"
)

// The cross path through jetbake's recipe (dockerfiles/Dockerfile-cross-base)
// in the test bed: the shipped matrix's cross_build_base entries, with only
// the recipe's repositories swapped for the test bed's on 127.0.0.1
// (standin.Kit.CrossRecipeBed) through cross_build_base.build_args; the
// devel images are the table's, reached through --mirror as the other
// bases are.

// WriteRecipeMatrix writes the demo matrix (WriteDemoMatrix with mutate)
// with the shipped cross_build_base of each release kept: jetbake's recipe
// for the releases of JetPack 6 and 7, none for JetPack 5. A release that
// mutate adds as a copy of a shipped one (same jetpack) gets its entry.
// StartRecipeBed then gives them the test bed's repositories.
func WriteRecipeMatrix(repoRoot, registry, out string, mutate ...func(map[string]any)) error {
	shipped, err := shippedCrossBases(repoRoot)
	if err != nil {
		return err
	}
	if err := WriteDemoMatrix(repoRoot, registry, out, mutate...); err != nil {
		return err
	}
	return editMatrix(out, func(m map[string]any) error {
		for _, r := range m["releases"].([]any) {
			rel := r.(map[string]any)
			jp, _ := rel["jetpack"].(string)
			if c, ok := shipped[jp]; ok {
				rel["cross_build_base"] = clone(c)
			}
		}
		return nil
	})
}

// shippedCrossBases are the shipped matrix's cross_build_base entries by
// JetPack release.
func shippedCrossBases(repoRoot string) (map[string]map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "matrix.json"))
	if err != nil {
		return nil, err
	}
	var m struct {
		Releases []map[string]any `json:"releases"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("matrix.json: %w", err)
	}
	out := map[string]map[string]any{}
	for _, rel := range m.Releases {
		jp, _ := rel["jetpack"].(string)
		if c, ok := rel["cross_build_base"].(map[string]any); ok {
			out[jp] = c
		}
	}
	return out, nil
}

// clone copies a matrix object one level deep.
func clone(m map[string]any) map[string]any { return maps.Clone(m) }

// StartRecipeBed pushes the stand-in devel images of p's recipe releases
// (after PushStandins, beside the build bases of the same multi-arch tag),
// serves their repositories and writes the repositories' addresses into
// the matrix at path as each release's cross_build_base.build_args; it
// returns the bed, to close when the builds are done, and the plan of the
// matrix as written. Faults (by release name) serve a release's
// repositories broken.
func (e *Env) StartRecipeBed(ctx context.Context, path string, p *plan.Plan, faults map[string]standin.RecipeFault, opts ...standin.RecipeBedOption) (*standin.RecipeBed, *plan.Plan, error) {
	var releases []standin.RecipeRelease
	for _, rel := range p.Releases {
		if rel.CrossBuildRecipe != nil {
			releases = append(releases, standin.RecipeRelease{Name: rel.Name, Args: rel.CrossBuildRecipe.Args, Fault: faults[rel.Name]})
		}
	}
	if len(releases) == 0 {
		return nil, nil, fmt.Errorf("%s: no release names a cross build recipe", path)
	}
	bed, err := e.Kit().CrossRecipeBed(ctx, e.Registry, releases, opts...)
	if err != nil && len(opts) > 0 {
		// The address asked for may be taken: any free one serves.
		bed, err = e.Kit().CrossRecipeBed(ctx, e.Registry, releases)
	}
	if err != nil {
		return nil, nil, err
	}
	err = editMatrix(path, func(m map[string]any) error {
		for _, r := range m["releases"].([]any) {
			rel := r.(map[string]any)
			served, ok := bed.Releases[rel["name"].(string)]
			if !ok {
				continue
			}
			c := rel["cross_build_base"].(map[string]any)
			args := map[string]any{}
			for k, v := range served.BuildArgs {
				args[k] = v
			}
			c["build_args"] = args
		}
		return nil
	})
	if err == nil {
		p, err = LoadPlan(path, AllowStandin(e.RepoRoot))
	}
	if err != nil {
		return nil, nil, errors.Join(err, bed.Close())
	}
	return bed, p, nil
}
