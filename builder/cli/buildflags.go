package cli

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/moby/buildkit/cmd/buildctl/build"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/secrets/secretsprovider"
	"github.com/moby/buildkit/session/sshforward/sshprovider"
	"github.com/spf13/cobra"
	"github.com/tonistiigi/go-csvvalue"

	"github.com/jetbake/jetbake/builder/bake"
	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// defaultSBOMGenerator is the scanner BuildKit runs for an SBOM when none is
// named (BuildKit's frontend/attestations/parse.go, defaultSBOMGenerator).
const defaultSBOMGenerator = "docker/buildkit-syft-scanner:stable-1"

// parseSecrets turns --secret values, as buildx and buildctl take them
// (id=ID[,src=FILE|,env=VAR][,type=file|env]), into BuildKit's secrets
// provider. Every source is checked now: a file that is missing or an
// environment variable that is unset (which BuildKit would hand on as an
// empty secret) is a usage error. It returns nil for no secrets.
func parseSecrets(values []string) (session.Attachable, error) {
	set, err := newSecretSet(values, "")
	if err != nil || set.store == nil {
		return nil, err
	}
	return secretsprovider.NewSecretProvider(set.store), nil
}

// parseSecretSources parses --secret values (see parseSecrets).
func parseSecretSources(values []string) ([]secretsprovider.Source, error) {
	var sources []secretsprovider.Source
	for _, v := range values {
		src, err := parseSecret(v)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(sources, func(s secretsprovider.Source) bool { return s.ID == src.ID }); i >= 0 {
			return nil, usageErrorf("--secret %q: id %q is given twice: give each secret once", v, src.ID)
		}
		sources = append(sources, src)
	}
	return sources, nil
}

// secretFix is the fix for a --secret value that BuildKit refuses.
const secretFix = "write id=ID,src=FILE or id=ID,env=VAR (the Dockerfile mounts it with RUN --mount=type=secret,id=ID)"

// parseSecret parses one --secret value with buildctl's ParseSecret, as
// --ssh goes through ParseSSH, and checks its source. BuildKit judges the
// syntax, the keys and type, the id and the file (BuildKit's
// secretsprovider.NewStore: id only is the variable of that name, else the
// file; a file must exist and hold at most 500 KiB). Where BuildKit and
// buildx would go on, jetbake stops, in one sentence, before the build:
//
//   - env=VAR of a variable that is not set: BuildKit hands on an empty
//     secret (os.Getenv);
//   - src=DIR: BuildKit fails when the build first reads the secret.
//
// ParseSecret returns the session's provider, not the sources; jetbake
// needs each source (its id, to refuse one given twice, which BuildKit's
// store keeps the last of silently, and to tell the git credentials the
// user gives from the environment's, which share the session's one secrets
// provider). secretSource reads them from a value ParseSecret accepted.
func parseSecret(v string) (secretsprovider.Source, error) {
	if _, err := build.ParseSecret([]string{v}); err != nil {
		fix := secretFix
		if errors.Is(err, fs.ErrNotExist) {
			fix = "give the path of the file that holds the secret, or env=VAR for an environment variable"
		}
		return secretsprovider.Source{}, usageErrorf("--secret %q: %v: %s", v, err, fix)
	}
	s := secretSource(v)
	if s.Env != "" {
		if _, ok := os.LookupEnv(s.Env); !ok {
			return s, usageErrorf("--secret %q: the environment variable %s is not set: export it, or give src=FILE", v, s.Env)
		}
	} else if st, err := os.Stat(s.FilePath); err != nil || st.IsDir() {
		return s, usageErrorf("--secret %q: %s is not a readable file: give the path of the file that holds the secret", v, s.FilePath)
	}
	return s, nil
}

// secretSource is the source of a --secret value that buildctl's
// ParseSecret accepted, read as its parseSecret and NewStore read it: the
// last of src and source wins, type=env takes src as the variable's name,
// and an id alone is the variable of that name if set, else the file.
func secretSource(v string) secretsprovider.Source {
	fields, _ := csvvalue.Fields(v, nil) // ParseSecret read them
	var s secretsprovider.Source
	var typ string
	for _, field := range fields {
		k, val, _ := strings.Cut(field, "=")
		switch strings.ToLower(k) {
		case "type":
			typ = val
		case "id":
			s.ID = val
		case "src", "source":
			s.FilePath = val
		case "env":
			s.Env = val
		}
	}
	if typ == "env" && s.Env == "" {
		s.Env, s.FilePath = s.FilePath, ""
	}
	if s.Env == "" && s.FilePath == "" {
		if _, ok := os.LookupEnv(s.ID); ok {
			s.Env = s.ID
		} else {
			s.FilePath = s.ID
		}
	}
	return s
}

// parseSSH turns --ssh values, as buildx and buildctl take them (default,
// ID=SOCKET or ID=KEYFILE[,KEYFILE...]), into BuildKit's SSH agent
// provider. It returns nil for none.
func parseSSH(values []string) (session.Attachable, error) {
	if len(values) == 0 {
		return nil, nil
	}
	configs, err := build.ParseSSH(values)
	if err != nil {
		return nil, usageErrorf("--ssh: %w", err)
	}
	for i, c := range configs {
		if c.ID == "" {
			return nil, usageErrorf("--ssh %q: no id: write default, default=SOCKET or ID=KEYFILE", values[i])
		}
		if j := slices.IndexFunc(configs[:i], func(o sshprovider.AgentConfig) bool { return o.ID == c.ID }); j >= 0 {
			return nil, usageErrorf("--ssh %q: id %q is given twice: give each agent once", values[i], c.ID)
		}
		// One at a time, so that the error names the value.
		if _, err := sshprovider.NewSSHAgentProvider([]sshprovider.AgentConfig{c}); err != nil {
			return nil, usageErrorf("--ssh %q: %v: give an ssh-agent socket (default uses SSH_AUTH_SOCK) or unencrypted private key files; for a key with a passphrase, ssh-add it to an agent", values[i], err)
		}
	}
	p, err := sshprovider.NewSSHAgentProvider(configs)
	if err != nil {
		return nil, usageErrorf("--ssh: %w", err)
	}
	return p, nil
}

// parseSBOM turns an --sbom value, as buildx takes it (true, false, or
// attributes such as generator=IMAGE), into the SBOM attestation's
// attributes, "" for none. The generator defaults to BuildKit's and goes
// through the --mirror rewrites, as base images do.
func parseSBOM(v string, mirrors refs.Mirrors) (string, error) {
	switch strings.TrimSpace(v) {
	case "", "false", "0":
		return "", nil
	case "true", "1":
		v = ""
	}
	var fields []string
	if v != "" {
		var err error
		if fields, err = csvvalue.Fields(v, nil); err != nil {
			return "", usageErrorf("--sbom %q: %v: write true, false or generator=IMAGE", v, err)
		}
	}
	generator := defaultSBOMGenerator
	var params []string
	for _, field := range fields {
		k, val, ok := strings.Cut(field, "=")
		switch {
		case !ok || k == "":
			return "", usageErrorf("--sbom %q: %q is not KEY=VALUE: write true, false or generator=IMAGE", v, field)
		case k == "generator":
			generator = val
		case k == "disabled" && val == "true":
			return "", nil
		case k != "disabled" && k != "type":
			params = append(params, field) // the scanner gets it as BUILDKIT_SCAN_KEY
		}
	}
	if _, err := name.ParseReference(generator); err != nil {
		return "", usageErrorf("--sbom %q: generator %q is not an image reference: %v", v, generator, err)
	}
	ref, err := mirrors.Rewrite(generator, "")
	if err != nil {
		return "", usageErrorf("--sbom %q: %w", v, err)
	}
	return strings.Join(append([]string{"generator=" + ref}, params...), ","), nil
}

// parseProgress checks a --progress value; none is quiet, as buildx takes it.
func parseProgress(v string) (string, error) {
	switch v {
	case "auto", "tty", "plain", "rawjson", "quiet":
		return v, nil
	case "none":
		return "quiet", nil
	}
	return "", usageErrorf("--progress %q: use auto, tty, plain, rawjson, quiet or none", v)
}

// parseProvenance turns a --provenance value into the attestation's
// attributes as buildx takes them: false (none), true or min or max
// (mode=...), or attributes such as mode=max,version=v1.
func parseProvenance(v string) (string, error) {
	switch strings.TrimSpace(v) {
	case "false", "0", "":
		return "", nil
	case "true", "1", "min":
		return "mode=min", nil
	case "max":
		return "mode=max", nil
	}
	for _, field := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(field, "=")
		if !ok || k == "" {
			return "", usageErrorf("--provenance %q: want mode=min, mode=max or false", v)
		}
		if k == "mode" && val != "min" && val != "max" {
			return "", usageErrorf("--provenance %q: mode is min or max", v)
		}
	}
	return v, nil
}

// options parses the flags into bake's options and applies --build-arg,
// --set and --tag to p. Everything the flags can get wrong is found here,
// before a daemon is started or dialed, but the releases, which
// bake.Build checks first.
func (f *buildFlags) options(cmd *cobra.Command, p *plan.Plan, mirrors refs.Mirrors) (o bake.Options, err error) {
	o = f.o
	o.MatrixPath, o.Mirrors, o.Log, o.Advice = MatrixPath(cmd), mirrors, cmd.ErrOrStderr(), buildAdvice()
	if f.metadataFile != "" {
		if err := inputfile.CheckFolder(f.metadataFile); err != nil {
			return o, err
		}
	}
	if o.Daemons, err = f.daemons(); err != nil {
		return o, err
	}
	if o.Source, err = bake.ReadSource(cmd.Context(), o.MatrixPath, f.revision, f.epoch); err != nil {
		return o, err
	}
	if o.CacheFrom, err = parseCaches("--cache-from", f.cacheFrom); err != nil {
		return o, err
	}
	if o.CacheTo, err = parseCaches("--cache-to", f.cacheTo); err != nil {
		return o, err
	}
	if err := f.overrides.apply(p, overrideInput{selected: o.Releases, cacheFrom: o.CacheFrom, cacheTo: o.CacheTo, tags: f.tags,
		revision: func() (string, error) { return o.Source.Revision, nil }}); err != nil {
		return o, err
	}
	secrets, err := newSecretSet(f.secrets, p.Context())
	if err != nil {
		return o, err
	}
	o.Secrets, o.GitCredentials = secrets.store, secrets.gitIDs
	for _, v := range f.outputs {
		out, err := localoutput.Parse(v)
		if err != nil {
			return o, flagError(err)
		}
		o.Outputs = append(o.Outputs, out)
	}
	if err := f.parseSwitches(&o, mirrors); err != nil {
		return o, err
	}
	switch o.BuildPath {
	case "", "auto", "cross", "qemu":
	default:
		return o, usageErrorf("--build-path %q: use auto, cross or qemu", o.BuildPath)
	}
	if o.Parallel < 1 {
		return o, usageErrorf("--parallel %d: must be at least 1", o.Parallel)
	}
	return o, nil
}

// parseSwitches checks --format and parses --progress, --provenance,
// --sbom and --ssh into o.
func (f *buildFlags) parseSwitches(o *bake.Options, mirrors refs.Mirrors) (err error) {
	if _, err := f.format(); err != nil {
		return err
	}
	if o.Progress, err = parseProgress(f.progress); err != nil {
		return err
	}
	if o.Controls.Provenance, err = parseProvenance(f.provenance); err != nil {
		return err
	}
	if o.Controls.SBOM, err = parseSBOM(f.sbom, mirrors); err != nil {
		return err
	}
	ssh, err := parseSSH(f.ssh)
	if ssh != nil {
		o.Session = []session.Attachable{ssh}
	}
	return err
}
