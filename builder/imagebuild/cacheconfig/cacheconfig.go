// Package cacheconfig is a build's cache settings as BuildKit gets them:
// the build's cache imports and exports or a release's own, completed from
// the environment as buildx completes them, the unusable ones left out with
// a warning, and each given a name, scope or tag of its release's own.
package cacheconfig

import (
	"maps"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/buildkit/client"

	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// Settings are a build's cache imports and exports (--cache-from,
// --cache-to), and the environment that completes them.
type Settings struct {
	From, To []client.CacheOptionsEntry
	// LookupEnv reads the environment (os.LookupEnv).
	LookupEnv func(string) (string, bool)
}

// Entries turns a release's caches of the plan into BuildKit's.
func Entries(caches []plan.Cache) []client.CacheOptionsEntry {
	out := make([]client.CacheOptionsEntry, len(caches))
	for i, c := range caches {
		out[i] = client.CacheOptionsEntry{Type: c.Type, Attrs: maps.Clone(c.Attrs)}
	}
	return out
}

// Release returns the cache imports and exports of release r as
// BuildKit gets them: the release's own (--set RELEASE.cache-from=...) or
// else the build's, each completed from the environment (see
// fromEnvironment), left out when BuildKit could not use it (see usable),
// and given a scope of the release's own (see perRelease).
func (s Settings) Release(r plan.Release) (imports, exports []client.CacheOptionsEntry) {
	from, to := s.From, s.To
	if r.CacheFrom != nil {
		from = Entries(r.CacheFrom)
	}
	if r.CacheTo != nil {
		to = Entries(r.CacheTo)
	}
	complete := func(entries []client.CacheOptionsEntry) []client.CacheOptionsEntry {
		var out []client.CacheOptionsEntry
		for _, e := range entries {
			if e = fromEnvironment(e, s.LookupEnv); usable(e) {
				out = append(out, e)
			}
		}
		return perRelease(out, r.Name)
	}
	return complete(from), complete(to)
}

// fromEnvironment fills in what a cache entry leaves out from the
// environment, as buildx's build/opt.go (addGithubToken, addAwsCredentials)
// does: for the GitHub Actions cache (type=gha) the token from
// ACTIONS_RUNTIME_TOKEN and the url from ACTIONS_CACHE_URL, else
// ACTIONS_RESULTS_URL, plus url_v2 from ACTIONS_RESULTS_URL when
// ACTIONS_CACHE_SERVICE_V2 is true and no version is given (BuildKit's
// cache/remotecache/gha then speaks the v2 protocol: url_v2 given and
// version not 1); for S3 the keys of AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN unless both keys are given,
// so that a remote node gets the runner's credentials. buildx reads the
// whole AWS configuration chain; jetbake reads these variables only, and a
// daemon it starts inherits the rest of the environment.
func fromEnvironment(e client.CacheOptionsEntry, lookup func(string) (string, bool)) client.CacheOptionsEntry {
	attrs := maps.Clone(e.Attrs)
	if attrs == nil {
		attrs = map[string]string{}
	}
	setFrom := func(attr string, vars ...string) {
		if _, ok := attrs[attr]; ok {
			return
		}
		for _, v := range vars {
			if val, ok := lookup(v); ok {
				attrs[attr] = val
				return
			}
		}
	}
	switch e.Type {
	case "gha":
		version, ok := attrs["version"]
		if !ok {
			if v, ok := lookup("ACTIONS_CACHE_SERVICE_V2"); ok {
				if b, err := strconv.ParseBool(v); err == nil && b {
					version = "2"
				}
			}
		}
		setFrom("token", "ACTIONS_RUNTIME_TOKEN")
		if version == "2" {
			setFrom("url_v2", "ACTIONS_RESULTS_URL")
		}
		setFrom("url", "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL")
	case "s3":
		_, hasID := attrs["access_key_id"]
		_, hasKey := attrs["secret_access_key"]
		if !hasID || !hasKey {
			setFrom("access_key_id", "AWS_ACCESS_KEY_ID")
			setFrom("secret_access_key", "AWS_SECRET_ACCESS_KEY")
			setFrom("session_token", "AWS_SESSION_TOKEN")
		}
	}
	return client.CacheOptionsEntry{Type: e.Type, Attrs: attrs}
}

// usable reports whether BuildKit can use e. A GitHub Actions cache needs a
// token and a url, which a run outside a workflow does not have: buildx
// leaves such a cache out rather than fail the build, so that one
// configuration serves a workflow and a laptop.
func usable(e client.CacheOptionsEntry) bool {
	if e.Type != "gha" {
		return true
	}
	return e.Attrs["token"] != "" && (e.Attrs["url"] != "" || e.Attrs["url_v2"] != "")
}

// Unusable describes the caches of the build and of releases that
// BuildKit could not use (see usable), once each, for a warning.
func (s Settings) Unusable(releases []plan.Release) []string {
	var out []string
	seen := map[string]bool{}
	note := func(dir string, entries []client.CacheOptionsEntry) {
		for _, e := range entries {
			if usable(fromEnvironment(e, s.LookupEnv)) {
				continue
			}
			line := "the " + dir + " type=gha" + scopeNote(e) +
				" is left out: it needs a token and a url, from ACTIONS_RUNTIME_TOKEN and ACTIONS_CACHE_URL or ACTIONS_RESULTS_URL inside a GitHub Actions workflow, or token= and url= in the flag"
			if !seen[line] {
				seen[line] = true
				out = append(out, line)
			}
		}
	}
	note("cache import", s.From)
	note("cache export", s.To)
	for _, r := range releases {
		note("cache import", Entries(r.CacheFrom))
		note("cache export", Entries(r.CacheTo))
	}
	return out
}

// scopeNote names an entry's scope, if it has one.
func scopeNote(e client.CacheOptionsEntry) string {
	if s := e.Attrs["scope"]; s != "" {
		return ",scope=" + s
	}
	return ""
}

// releaseName puts release into a cache name list of S3 or Azure Blob
// (names separated by ';', default "buildkit"): "" -> release, a;b ->
// a-release;b-release. Each release's manifests get a name of their own;
// the blobs stay shared under the prefix, where equal layers are stored once.
func releaseName(names, release string) string {
	if names == "" {
		return release
	}
	parts := strings.Split(names, ";")
	for i, n := range parts {
		parts[i] = n + "-" + release
	}
	return strings.Join(parts, ";")
}

// releaseScope puts release into a GitHub Actions cache scope: "" ->
// release, x -> x-release.
func releaseScope(scope, release string) string {
	if scope == "" {
		return release
	}
	return scope + "-" + release
}

// Local reports whether the build's caches or any release's own (--set)
// use a local folder, which BuildKit's client serves from the build's own
// session.
func (s Settings) Local(releases []plan.Release) bool {
	if hasLocalCache(s.From) || hasLocalCache(s.To) {
		return true
	}
	for _, r := range releases {
		if hasLocalCache(Entries(r.CacheFrom)) || hasLocalCache(Entries(r.CacheTo)) {
			return true
		}
	}
	return false
}

// hasLocalCache reports whether a cache import or export uses a local
// folder, which BuildKit's client serves from the build's own session.
func hasLocalCache(entries []client.CacheOptionsEntry) bool {
	for _, e := range entries {
		if e.Type == "local" {
			return true
		}
	}
	return false
}

// perRelease gives each release its own cache entry: a registry ref gets the
// release in its tag (and registry.insecure where the registry is reached
// over plain HTTP, as the image exporter is told), a local folder a
// subfolder, S3 and Azure Blob a name, the inline cache nothing, other
// backends (the GitHub Actions cache) a scope.
func perRelease(entries []client.CacheOptionsEntry, release string) []client.CacheOptionsEntry {
	out := make([]client.CacheOptionsEntry, 0, len(entries))
	for _, e := range entries {
		attrs := maps.Clone(e.Attrs)
		if attrs == nil {
			attrs = map[string]string{}
		}
		switch e.Type {
		case "registry":
			attrs["ref"] = cacheRef(attrs["ref"], release)
			if _, ok := attrs["registry.insecure"]; !ok && refs.PlainHTTP(attrs["ref"]) {
				attrs["registry.insecure"] = "true"
			}
		case "local":
			for _, k := range []string{"src", "dest"} {
				if v, ok := attrs[k]; ok {
					attrs[k] = filepath.Join(v, release)
				}
			}
		case "s3", "azblob":
			attrs["name"] = releaseName(attrs["name"], release)
		case "inline":
		default:
			attrs["scope"] = releaseScope(attrs["scope"], release)
		}
		out = append(out, client.CacheOptionsEntry{Type: e.Type, Attrs: attrs})
	}
	return out
}

// cacheRef puts release into ref's tag: repo:cache -> repo:cache-<release>, repo -> repo:<release>.
func cacheRef(ref, release string) string {
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		return ref + "-" + release
	}
	return ref + ":" + release
}
