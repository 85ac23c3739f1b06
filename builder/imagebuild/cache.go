package imagebuild

import (
	"maps"
	"strconv"
	"strings"

	"github.com/moby/buildkit/client"

	"github.com/jetbake/jetbake/builder/plan"
)

// cacheEntries turns a release's caches of the plan into BuildKit's.
func cacheEntries(caches []plan.Cache) []client.CacheOptionsEntry {
	out := make([]client.CacheOptionsEntry, len(caches))
	for i, c := range caches {
		out[i] = client.CacheOptionsEntry{Type: c.Type, Attrs: maps.Clone(c.Attrs)}
	}
	return out
}

// releaseCaches are the cache imports and exports of j's release as
// BuildKit gets them: the release's own (--set RELEASE.cache-from=...) or
// else the build's, each completed from the environment (see
// fromEnvironment), left out when BuildKit could not use it (see usable),
// and given a scope of the release's own (see perRelease).
func (b *Builder) releaseCaches(j *releaseJob) (imports, exports []client.CacheOptionsEntry) {
	from, to := b.opts.cacheFrom, b.opts.cacheTo
	if j.release.CacheFrom != nil {
		from = cacheEntries(j.release.CacheFrom)
	}
	if j.release.CacheTo != nil {
		to = cacheEntries(j.release.CacheTo)
	}
	complete := func(entries []client.CacheOptionsEntry) []client.CacheOptionsEntry {
		var out []client.CacheOptionsEntry
		for _, e := range entries {
			if e = fromEnvironment(e, b.opts.lookupEnv); usable(e) {
				out = append(out, e)
			}
		}
		return perRelease(out, j.release.Name)
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

// unusableCaches describes the caches of the build that BuildKit could not
// use (see usable), once each, for a warning.
func (b *Builder) unusableCaches(jobs []*releaseJob) []string {
	var out []string
	seen := map[string]bool{}
	note := func(dir string, entries []client.CacheOptionsEntry) {
		for _, e := range entries {
			if usable(fromEnvironment(e, b.opts.lookupEnv)) {
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
	note("cache import", b.opts.cacheFrom)
	note("cache export", b.opts.cacheTo)
	for _, j := range jobs {
		note("cache import", cacheEntries(j.release.CacheFrom))
		note("cache export", cacheEntries(j.release.CacheTo))
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

// hasLocalCaches reports whether any release's own caches (--set) use a
// local folder.
func hasLocalCaches(jobs []*releaseJob) bool {
	for _, j := range jobs {
		if hasLocalCache(cacheEntries(j.release.CacheFrom)) || hasLocalCache(cacheEntries(j.release.CacheTo)) {
			return true
		}
	}
	return false
}
