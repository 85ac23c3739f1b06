package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/plan"
)

// overrideFlags are --build-arg and --set, which plan and build both take,
// so that `jetbake plan` shows what a build with them makes.
type overrideFlags struct {
	buildArgs []string
	sets      []string
}

// addOverrideFlags adds --build-arg and --set to cmd.
func addOverrideFlags(cmd *cobra.Command, o *overrideFlags) {
	fl := cmd.Flags()
	fl.StringArrayVar(&o.buildArgs, "build-arg", nil, "give every router stage a build arg: KEY=VALUE, or KEY for the environment's value (repeatable); over the matrix's")
	fl.StringArrayVar(&o.sets, "set", nil, "override a release, as buildx bake --set: RELEASE.args.KEY=VALUE, RELEASE.tags=TAG, RELEASE.cache-from=CACHE, "+
		"RELEASE.cache-to=CACHE or RELEASE.no-cache=true; RELEASE may be a pattern ('*', 'jetpack6.*'); KEY+=VALUE appends to tags and caches (repeatable)")
}

// setKeys are the keys of --set, as buildx bake names them.
func setKeys() []string { return []string{"tags", "cache-from", "cache-to", "no-cache"} }

// override is one parsed --set value.
type override struct {
	flag     string // the value as given
	pattern  string // the releases
	key      string // args, tags, cache-from, cache-to or no-cache
	arg      string // the build arg's name, for args
	value    string
	hasValue bool // false for args.KEY without =VALUE
	append   bool // KEY+=VALUE
}

// parseOverride parses a --set value. Release names hold dots
// (jetpack6.2), so the key is found from the end: RELEASE.args.NAME or
// RELEASE.KEY.
func parseOverride(v string) (override, error) {
	o := override{flag: v}
	key, value, hasValue := strings.Cut(v, "=")
	o.value, o.hasValue = value, hasValue
	if strings.HasSuffix(key, "+") {
		key, o.append = strings.TrimSuffix(key, "+"), true
	}
	for _, k := range setKeys() {
		if pattern, ok := strings.CutSuffix(key, "."+k); ok && pattern != "" {
			o.pattern, o.key = pattern, k
		}
	}
	if i := strings.LastIndex(key, ".args."); o.key == "" && i > 0 && i+len(".args.") < len(key) {
		o.pattern, o.key, o.arg = key[:i], "args", key[i+len(".args."):]
	}
	switch {
	case o.key == "":
		return o, usageErrorf("--set %q: the key is RELEASE.args.NAME, RELEASE.tags, RELEASE.cache-from, RELEASE.cache-to or RELEASE.no-cache, "+
			"where RELEASE is a release or a pattern such as '*'", v)
	case !hasValue && o.key != "args":
		return o, usageErrorf("--set %q: no value: write %s=VALUE", v, key)
	case o.append && (o.key == "args" || o.key == "no-cache"):
		return o, usageErrorf("--set %q: %s takes =, not +=", v, o.key)
	}
	return o, nil
}

// parseBuildArg parses a --build-arg value: KEY=VALUE, or KEY for the
// environment's KEY (ok is false when it is unset, and the arg is left out,
// as buildx leaves it out).
func parseBuildArg(v string) (name, value string, ok bool, err error) {
	name, value, hasValue := strings.Cut(v, "=")
	if name == "" {
		return "", "", false, usageErrorf("--build-arg %q: no name: write KEY=VALUE", v)
	}
	if !hasValue {
		value, ok = os.LookupEnv(name)
		return name, value, ok, nil
	}
	return name, value, true, nil
}

// overrideInput is what overrides apply to besides the plan.
type overrideInput struct {
	// selected are the releases to build (--release), all when empty:
	// a pattern and --build-arg change only these.
	selected []string
	// cacheFrom and cacheTo are the build's --cache-from and --cache-to,
	// which RELEASE.cache-from+= adds to.
	cacheFrom, cacheTo []plan.Cache
	// revision gives the source revision for {sha} in tags.
	revision func() (string, error)
	// tags are --tag's templates, added after --set.
	tags []string
}

// apply applies --build-arg to every selected release, then each --set in
// order, then --tag, and checks that no tag names two releases.
func (o *overrideFlags) apply(p *plan.Plan, in overrideInput) error {
	selected := func(r *plan.Release) bool { return len(in.selected) == 0 || slices.Contains(in.selected, r.Name) }
	for _, v := range o.buildArgs {
		name, value, ok, err := parseBuildArg(v)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		for i := range p.Releases {
			if !selected(&p.Releases[i]) {
				continue
			}
			if err := p.Releases[i].SetBuildArg(name, value); err != nil {
				return usageErrorf("--build-arg %q: %v", v, buildArgError(err))
			}
		}
	}
	reset := map[string]bool{} // release and key whose matrix value a --set replaced
	for _, v := range o.sets {
		ov, err := parseOverride(v)
		if err != nil {
			return err
		}
		rels, err := p.MatchReleases(ov.pattern)
		if err != nil {
			return usageErrorf("--set %q: %v", v, err)
		}
		for _, r := range rels {
			if !selected(r) {
				continue
			}
			if err := ov.applyTo(p, r, reset, in); err != nil {
				return err
			}
		}
	}
	if len(in.tags) > 0 {
		revision, err := in.revision()
		if err != nil {
			return err
		}
		if err := addTags(p, in.tags, in.selected, revision); err != nil {
			return err
		}
	}
	return checkUniqueTags(p)
}

// applyTo applies the override to release r.
func (ov override) applyTo(p *plan.Plan, r *plan.Release, reset map[string]bool, in overrideInput) error {
	first := !ov.append && !reset[r.Name+"\x00"+ov.key]
	reset[r.Name+"\x00"+ov.key] = true
	switch ov.key {
	case "args":
		value, ok := ov.value, ov.hasValue
		if !ok {
			value, ok = os.LookupEnv(ov.arg)
		}
		if !ok {
			return nil
		}
		if err := r.SetBuildArg(ov.arg, value); err != nil {
			return usageErrorf("--set %q: %v", ov.flag, buildArgError(err))
		}
	case "no-cache":
		b, err := strconv.ParseBool(ov.value)
		if err != nil {
			return usageErrorf("--set %q: no-cache is true or false", ov.flag)
		}
		r.NoCache = &b
	case "tags":
		revision := ""
		if strings.Contains(ov.value, "{sha}") {
			var err error
			if revision, err = in.revision(); err != nil {
				return err
			}
		}
		tag, err := expandTag("--set "+ov.pattern+".tags", ov.value, p, r, revision)
		if err != nil {
			return err
		}
		if first {
			r.Tags = []string{}
		}
		if ref := p.Repository + ":" + tag; !slices.Contains(r.Tags, ref) {
			r.Tags = append(r.Tags, ref)
		}
	case "cache-from", "cache-to":
		caches, err := parseCache("--"+ov.key, ov.value)
		if err != nil {
			return usageErrorf("--set %q: %v", ov.flag, err)
		}
		list, global := &r.CacheFrom, in.cacheFrom
		if ov.key == "cache-to" {
			list, global = &r.CacheTo, in.cacheTo
		}
		switch {
		case first:
			*list = []plan.Cache{}
		case *list == nil:
			*list = slices.Clone(global) // += adds to the build's own
		}
		*list = append(*list, caches...)
	}
	return nil
}

// checkUniqueTags refuses a plan in which one reference tags two releases:
// it could name only one of them.
func checkUniqueTags(p *plan.Plan) error {
	owner := map[string]string{}
	for _, r := range p.Releases {
		for _, ref := range r.Tags {
			if prev, dup := owner[ref]; dup && prev != r.Name {
				return usageErrorf("tag %s would name both %s and %s: give each release tags of its own, e.g. with a placeholder such as {release}", ref, prev, r.Name)
			}
			owner[ref] = r.Name
		}
	}
	return nil
}

// buildArgError words a build arg that plan's SetBuildArg refuses: those
// jetbake sets from build's own flags name them. Other errors are returned
// as they are.
func buildArgError(err error) error {
	var re *plan.ReservedBuildArgError
	if !errors.As(err, &re) {
		return err
	}
	switch re.Name {
	case "BUILD_BASE", "RUNTIME_BASE":
		return fmt.Errorf("%s: jetbake sets it from the release's build_base and runtime_base, with --mirror and the lock applied: change the matrix instead", re.Name)
	case "SOURCE_DATE_EPOCH":
		return fmt.Errorf("%s: jetbake sets it from the commit's time: use --source-date-epoch instead", re.Name)
	}
	return err
}
