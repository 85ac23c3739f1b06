package cli

import (
	"encoding/csv"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/cmd/buildctl/build"
	"github.com/tonistiigi/go-csvvalue"

	"github.com/jetbake/jetbake/builder/plan"
)

// cacheTypes are BuildKit's cache backends (cache/remotecache) for flag:
// --cache-to can also write the inline cache.
func cacheTypes(flag string) []string {
	types := []string{"registry", "local", "gha", "s3", "azblob"}
	if flag == "--cache-to" {
		types = append(types, "inline")
	}
	return types
}

// parseCaches parses the values of --cache-from or --cache-to (flag).
func parseCaches(flag string, values []string) ([]plan.Cache, error) {
	var out []plan.Cache
	for _, v := range values {
		caches, err := parseCache(flag, v)
		if err != nil {
			return nil, usageErrorf("%s %q: %v", flag, v, err)
		}
		out = append(out, caches...)
	}
	return out, nil
}

// notGiven stands, while BuildKit's parser reads a cache value, for each
// attribute the value does not give (see givenByValue). No flag value
// holds it.
const notGiven = "\x1fjetbake:not-given\x1f"

// givenByValue are the attributes that buildctl's parsers fill in when a
// value leaves them out, and that jetbake leaves as the value gives them:
//
//   - type: buildctl takes a value without the literal "type=" as one
//     registry ref (its deprecated --import-cache REF form) and logs a
//     warning; buildx reads the keys case-insensitively (TYPE=local) and
//     refuses a value of KEY=VALUE pairs with no type. jetbake does as
//     buildx: no type is a usage error.
//   - mode: buildctl's ParseExportCache adds mode=min. buildx sends no
//     mode, and BuildKit's exporters take min then, so the cache is the
//     same; without it the plan, --set and the build metadata show what
//     the user wrote.
//   - token, url and url_v2: for type=gha buildctl reads them from
//     ACTIONS_RUNTIME_TOKEN, ACTIONS_CACHE_URL and ACTIONS_RESULTS_URL
//     while parsing, and refuses the value outside a workflow. buildx
//     fills them at build time and leaves a cache without them out with a
//     warning, so one command line serves a workflow and a laptop; jetbake
//     does as buildx (cacheconfig), and the runner's token stays out of the
//     plan.
var givenByValue = []string{"type", "mode", "token", "url", "url_v2"}

// parseCache parses one cache value of flag (--cache-from or --cache-to)
// as buildx does (util/buildflags/cache.go): a bare list of registry
// references, or CSV type=TYPE,KEY=VALUE read by buildctl's
// ParseImportCache or ParseExportCache. It checks what each type needs.
func parseCache(flag, v string) ([]plan.Cache, error) {
	if v == "" {
		return nil, nil
	}
	if !strings.Contains(v, "=") {
		// buildx's ref-only form: each CSV field is a registry ref.
		// buildctl would take the whole value as one ref, and log that
		// the form is deprecated.
		fields, err := csvvalue.Fields(v, nil)
		if err != nil {
			return nil, fmt.Errorf("%v: write REF[,REF...] or type=TYPE,KEY=VALUE,...", err)
		}
		var out []plan.Cache
		for _, ref := range fields {
			out = append(out, plan.Cache{Type: "registry", Attrs: map[string]string{"ref": ref}})
		}
		return out, nil
	}
	c, err := buildkitCache(flag, v)
	if err != nil {
		return nil, err
	}
	if err := checkCache(flag, c); err != nil {
		return nil, err
	}
	return []plan.Cache{c}, nil
}

// buildkitCache reads a CSV cache value with buildctl's parser for flag's
// direction. The value's own fields come after a notGiven for each of
// givenByValue, so that what the value gives wins and what it leaves out
// is known, and taken out again.
func buildkitCache(flag, v string) (plan.Cache, error) {
	var prefix strings.Builder
	for _, k := range givenByValue {
		prefix.WriteString(k + "=" + notGiven + ",")
	}
	parse := build.ParseImportCache
	if flag == "--cache-to" {
		parse = build.ParseExportCache
	}
	entries, err := parse([]string{prefix.String() + v})
	if err != nil {
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			perr.Column -= prefix.Len() // where in the value itself
		}
		return plan.Cache{}, fmt.Errorf("%w: write type=TYPE,KEY=VALUE,... (quote a value that holds a comma)", err)
	}
	if len(entries) != 1 {
		return plan.Cache{}, fmt.Errorf("BuildKit read %d caches from one value: write type=TYPE,KEY=VALUE,...", len(entries))
	}
	return fromBuildKit(entries[0]), nil
}

// fromBuildKit is a cache entry of buildctl's parser less the attributes
// the value did not give (see givenByValue).
func fromBuildKit(e client.CacheOptionsEntry) plan.Cache {
	c := plan.Cache{Type: e.Type, Attrs: maps.Clone(e.Attrs)}
	if c.Type == notGiven {
		c.Type = ""
	}
	maps.DeleteFunc(c.Attrs, func(_, v string) bool { return v == notGiven })
	return c
}

// checkCache checks that a cache names a backend of flag's direction and
// the attributes jetbake scopes per release.
func checkCache(flag string, c plan.Cache) error {
	types := cacheTypes(flag)
	switch {
	case c.Type == "":
		return errors.New("no type: write type=registry,ref=REF, type=local, type=s3, type=gha or type=azblob")
	case !slices.Contains(types, c.Type):
		return fmt.Errorf("type %q is not a BuildKit cache for %s: use %s", c.Type, flag, strings.Join(types, ", "))
	case c.Type == "registry" && c.Attrs["ref"] == "":
		return errors.New("type=registry needs ref=REF, e.g. type=registry,ref=ghcr.io/acme/cache")
	case c.Type == "local" && flag == "--cache-from" && c.Attrs["src"] == "":
		return errors.New("type=local needs src=DIR, e.g. type=local,src=cache")
	case c.Type == "local" && flag == "--cache-to" && c.Attrs["dest"] == "":
		return errors.New("type=local needs dest=DIR, e.g. type=local,dest=cache")
	}
	return nil
}
