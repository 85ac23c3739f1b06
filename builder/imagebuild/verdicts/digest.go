package verdicts

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// digestDir is where the digest step mounts what it digests, and writes
// its files in out/.
const digestDir = "/jetbake-verdict"

// RuntimeFile is the file of Digests' result that holds the runtime
// stage's digest; RouterFile(i) the one of the i-th router.
const RuntimeFile = "runtime"

// RouterFile is the file of Digests' result that holds router i's digest.
func RouterFile(i int) string { return "router-" + strconv.Itoa(i) }

// MaxDigestFile bounds a read of one of Digests' files: a sha256sum line.
const MaxDigestFile = 512

// Digests is the step that digests, inside BuildKit, what a release's
// verdict depends on and the daemon already has: each router stage's
// output file (routers, in target order, with the binary at output), and,
// when the release has a runtime stage (runtime, built on base; nil base
// without one), that stage's own files: its changes on the runtime base,
// BuildKit's DiffOp, so that a stage whose steps gave other bytes after a
// prune gets another key. It runs on the first router stage's file
// system, on that stage's platform (the build platform on the cross
// path), with its sha256sum or its busybox's; the result holds one small
// file per digest (RouterFile, RuntimeFile), which Solve reads. BuildKit
// caches the step with the stages it reads: a warm build reads only those
// files, never the routers.
func Digests(routers []llb.State, output string, base *llb.State, runtime llb.State) llb.State {
	opt := []llb.RunOption{llb.Args([]string{"/bin/sh", "-c", Script(len(routers), output, base != nil)}),
		llb.ReadonlyRootFS(), llb.AddEnv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
		// GNU stat's %N quotes names in QUOTING_STYLE's style, and prints
		// bytes outside ASCII by the locale: both fixed here, so that the
		// router stage's environment does not change the key.
		llb.AddEnv("LC_ALL", "C"), llb.AddEnv("QUOTING_STYLE", "shell-escape-always"),
		llb.WithCustomName("smoke: the verdict's key: sha256 of the routers and the runtime stage's files")}
	for i, r := range routers {
		opt = append(opt, llb.AddMount(routerMount(digestDir, i), r, llb.SourcePath(path.Dir(output)), llb.Readonly))
	}
	if base != nil {
		opt = append(opt, llb.AddMount(digestDir+"/runtime", llb.Diff(*base, runtime), llb.Readonly))
	}
	return routers[0].Run(opt...).AddMount(digestDir+"/out", llb.Scratch())
}

// routerMount is where router i's output folder is mounted under dir.
func routerMount(dir string, i int) string { return dir + "/router-" + strconv.Itoa(i) }

// Script is the digest step's shell script for n routers whose binary is
// at output in their stage, and the runtime stage's files when stage is
// set: its regular files' contents, every entry's mode and kind, and each
// symbolic link's target, sorted, in one sha256. It uses the file
// system's sha256sum, find, stat and sort, else busybox's, and
// always exits 0: a digest it could not write is Parse's error.
func Script(n int, output string, stage bool) string { return script(digestDir, n, output, stage) }

// script is Script with its folder at dir.
func script(dir string, n int, output string, stage bool) string {
	var s strings.Builder
	s.WriteString("t=; command -v sha256sum >/dev/null 2>&1 || t='busybox '; export t\n")
	for i := range n {
		fmt.Fprintf(&s, "${t}sha256sum %s >%s\n", shellQuote(routerMount(dir, i)+"/"+path.Base(output)), shellQuote(dir+"/out/"+RouterFile(i)))
	}
	if stage {
		fmt.Fprintf(&s, "cd %s && {\n", shellQuote(dir+"/runtime"))
		s.WriteString("  ${t}find . -type f -exec ${t}sha256sum {} +\n")
		// %N: the name, and a link's target after " -> ", in the same
		// process for every entry; a process per link (readlink) cost
		// seconds under QEMU on a stage with ca-certificates' links.
		s.WriteString("  ${t}find . -exec ${t}stat -c '%a %F %N' {} +\n")
		fmt.Fprintf(&s, "} | LC_ALL=C ${t}sort | ${t}sha256sum >%s/%s\n", shellQuote(dir+"/out"), RuntimeFile)
	}
	s.WriteString("exit 0\n")
	return s.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// sumLine is a sha256sum line: the digest, then the file's name or "-".
var sumLine = regexp.MustCompile(`^([0-9a-f]{64})(\s|$)`)

// Parse returns the digest ("sha256:...") in one of Digests' files, whose
// content is data; what names the file in the error.
func Parse(data []byte, what string) (string, error) {
	m := sumLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("the daemon gave no sha256 of %s (its file system has no sha256sum, nor busybox)", what)
	}
	return "sha256:" + string(m[1]), nil
}

// Solve builds the digest step st (Digests) in c, marshalled for platform
// with the session's cache imports, and returns the reader of its files:
// read(name, what) is the digest in file name (RouterFile, RuntimeFile),
// read in one range of MaxDigestFile bytes; what names it in errors.
func Solve(ctx context.Context, c gateway.Client, st llb.State, platform ocispecs.Platform, imports []gateway.CacheOptionsEntry) (func(name, what string) (string, error), error) {
	def, err := st.Marshal(ctx, llb.Platform(platform))
	if err != nil {
		return nil, err
	}
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true, CacheImports: imports})
	if err != nil {
		return nil, fmt.Errorf("digest the routers and the runtime stage: %w", err)
	}
	ref, err := res.SingleRef()
	if err != nil {
		return nil, err
	}
	return func(name, what string) (string, error) {
		data, err := ref.ReadFile(ctx, gateway.ReadRequest{Filename: name, Range: &gateway.FileRange{Length: MaxDigestFile}})
		if err != nil {
			return "", fmt.Errorf("read the sha256 of %s: %w", what, err)
		}
		return Parse(data, what)
	}, nil
}
