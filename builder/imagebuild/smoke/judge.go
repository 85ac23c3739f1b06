package smoke

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// missingLib finds the library in the dynamic loader's sentence
// "error while loading shared libraries: libssl.so.3: cannot open ...".
var missingLib = regexp.MustCompile(`error while loading shared libraries: ([^:\s]+):`)

// smokeFindings are the lines of the smoke run's result file.
type smokeFindings struct {
	stub     string
	rcs      map[string]string
	ldd      map[string]bool
	noInterp map[string]bool
	ca       bool
	links    []string
}

func parseSmoke(result string) smokeFindings {
	f := smokeFindings{rcs: map[string]string{}, ldd: map[string]bool{}, noInterp: map[string]bool{}}
	for _, line := range strings.Split(result, "\n") {
		switch fields := strings.Fields(line); {
		case len(fields) == 3 && fields[0] == "rc":
			f.rcs[fields[1]] = fields[2]
		case len(fields) == 3 && fields[0] == "ldd":
			f.ldd[fields[1]] = true
		case len(fields) == 2 && fields[0] == "nointerp":
			f.noInterp[fields[1]] = true
		case len(fields) == 2 && fields[0] == "stub":
			f.stub = fields[1]
		case len(fields) == 1 && fields[0] == "ca":
			f.ca = true
		case len(fields) == 2 && fields[0] == "link":
			f.links = append(f.links, fields[1])
		}
	}
	return f
}

// Judge turns the smoke run's result file into the build's verdict.
// image names the runtime image in messages; bins are what was read of
// the routers' ELF headers; read reads a file the run wrote (NAME.log,
// NAME.ldd, and ResultFile), only for a binary that failed.
func (s Spec) Judge(image, result string, bins []Binary, read func(name string) string) error {
	f := parseSmoke(result)
	if err := s.judgeLibraries(image, f, bins, read); err != nil {
		return err
	}
	for _, p := range s.Paths {
		name := path.Base(p)
		rc, ok := f.rcs[name]
		if !ok {
			return fmt.Errorf("smoke run of %s on %s left no exit status: does it have /bin/sh?", name, image)
		}
		if err := s.result(name, rc, read(name+".log"), image); err != nil {
			return err
		}
	}
	if len(f.links) > 0 {
		return fmt.Errorf("%s has %s as a symbolic link: jetbake's layers put a real folder there, which would hide what the link points to in the image; use a base where %s is a folder",
			image, strings.Join(f.links, ", "), strings.Join(f.links, ", "))
	}
	if !f.ca {
		return fmt.Errorf("%s has no CA bundle at %s: the router could not download models over HTTPS; install ca-certificates in the runtime image, or use a base that has it",
			image, CABundlePath)
	}
	return nil
}

// judgeLibraries names, all at once, every library some binary needs that
// its loader did not find in the image (the "=> not found" lines of
// --list), and the loader itself when the image lacks it.
func (s Spec) judgeLibraries(image string, f smokeFindings, bins []Binary, read func(name string) string) error {
	var missing, who []string
	var loaderSays string
	for _, p := range s.Paths {
		name := path.Base(p)
		if f.noInterp[name] {
			interp := "its dynamic loader"
			if b := binary(bins, name); b != nil && b.Interpreter != "" {
				interp = b.Interpreter
			}
			return fmt.Errorf("%s lacks %s, the dynamic loader %s names: use a glibc-based runtime base (NVIDIA's l4t and CUDA images are Ubuntu)", image, interp, name)
		}
		if !f.ldd[name] {
			continue
		}
		var these []string
		for _, line := range strings.Split(read(name+".ldd"), "\n") {
			lib, rest, ok := strings.Cut(strings.TrimSpace(line), " => ")
			if ok && strings.TrimSpace(rest) == "not found" {
				these = append(these, lib)
			}
		}
		if len(these) == 0 {
			continue
		}
		who = append(who, name)
		for _, lib := range these {
			if !slices.Contains(missing, lib) {
				missing = append(missing, lib)
			}
		}
		if loaderSays == "" {
			loaderSays = lastLine(read(name + ".log"))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s: the smoke run's loader finds no %s in %s", strings.Join(who, ", "), strings.Join(missing, ", "), image)
	if loaderSays != "" {
		msg += " (" + loaderSays + ")"
	}
	if b := binary(bins, who[0]); b != nil && len(b.Needed) > 0 {
		msg += fmt.Sprintf("; %s's DT_NEEDED: %s", who[0], strings.Join(b.Needed, ", "))
	}
	if slices.Contains(missing, DriverLib) {
		msg += fmt.Sprintf("; %s is the CUDA driver, which NVIDIA's runtime mounts from the Jetson, so the smoke run stands a base's driver stub in for it, and %s has none (%s): %s",
			DriverLib, s.Stub.Base, strings.Join(s.Stub.Paths, ", "), s.Stub.Fix)
	}
	if cudart := slices.IndexFunc(missing, func(l string) bool { return strings.HasPrefix(l, "libcudart.so.") }); cudart >= 0 {
		msg += fmt.Sprintf("; %s is CUDA's runtime, which a router with flash attention NEEDs in every linking mode (candle-flash-attn links it dynamically): install cuda-cudart-%s in the runtime stage and put the CUDA library folder (/usr/local/cuda/lib64) in /etc/ld.so.conf.d, as the shipped Dockerfile-jetson does",
			missing[cudart], strings.ReplaceAll(s.CUDA, ".", "-"))
	}
	if others := slices.DeleteFunc(slices.Clone(missing), func(l string) bool { return l == DriverLib || strings.HasPrefix(l, "libcudart.so.") }); len(others) > 0 {
		msg += fmt.Sprintf("; install what provides %s in the runtime stage (TEI's images install libssl and ca-certificates; dynamic linking needs CUDA's libraries), or use a base that has them", strings.Join(others, ", "))
	}
	return fmt.Errorf("%s", msg)
}

// DriverLib is the CUDA driver's soname.
const DriverLib = "libcuda.so.1"

// binary is the binary of bins named name, or nil.
func binary(bins []Binary, name string) *Binary {
	for i := range bins {
		if bins[i].Binary == name {
			return &bins[i]
		}
	}
	return nil
}

// result turns one binary's exit status and output into an error
// that names a missing library when the loader named one.
func (s Spec) result(name, rc, log, image string) error {
	if rc == "0" {
		return nil
	}
	cmd := name + " " + strings.Join(s.Args, " ")
	if code, err := strconv.Atoi(rc); err == nil {
		cmd += " (exit " + strconv.Itoa(code) + ")"
	}
	if m := missingLib.FindStringSubmatch(log); m != nil {
		return fmt.Errorf("%s fails on %s: it needs %s, which %s lacks; install the package that provides %s in the runtime image (TEI's images install libssl and ca-certificates), or use a base that has it",
			cmd, image, m[1], image, m[1])
	}
	return fmt.Errorf("%s fails on %s: %s", cmd, image, lastLine(log))
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CABundlePath is where Debian and Ubuntu (and so NVIDIA's l4t and CUDA
// images) keep the CA bundle the router needs to download models
// (ca-certificates' /etc/ssl/certs/ca-certificates.crt).
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
