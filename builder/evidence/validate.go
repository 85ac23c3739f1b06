package evidence

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// The forms of the evidence's values. They are what the probe writes and
// no more, so that a hand-edited file cannot carry a path, an address or a
// token into the store either: no '/' outside image references and the
// served model's Hub id, no '@'.
var (
	tokenRE       = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,128}$`)
	refRE         = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/[a-z0-9._/-]+:[A-Za-z0-9_.-]{1,128}$`)
	digestRE      = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	revisionRE    = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
	l4tRE         = regexp.MustCompile(`^[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}$`)
	jetpackRE     = regexp.MustCompile(`^[0-9]{1,2}(\.[0-9]{1,2}){0,2}(/[0-9]{1,2}(\.[0-9]{1,2}){0,2})?$`)
	deviceClassRE = regexp.MustCompile(`^Jetson [A-Za-z0-9 ()-]{1,60}$`)
	socRE         = regexp.MustCompile(`^tegra[0-9]{3}$`)
	checkNameRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)
)

// digestSources are the places the probe reads the digest from.
func digestSources() []string {
	return []string{evidencespec.DigestFromEnv, evidencespec.DigestFromImage}
}

// Validate checks every field against the form the probe writes and that
// result.pass agrees with the checks. It reports the first field that
// does not, as a *SchemaError.
func (ev *Evidence) Validate() error {
	if ev.SchemaVersion != SchemaVersion {
		return schemaErr("schema_version", strconv.Itoa(ev.SchemaVersion),
			fmt.Sprintf("this jetbake reads schema %d: use the probe of a matching jetbake", SchemaVersion))
	}
	at, err := time.Parse(time.RFC3339, ev.GeneratedAt)
	if err != nil {
		return schemaErr("generated_at", ev.GeneratedAt, "is not an RFC 3339 time such as 2026-11-20T09:30:00Z")
	}
	for _, check := range []func() error{ev.validateImage, ev.validateHost, ev.validateResult, ev.validateAudit} {
		if err := check(); err != nil {
			return err
		}
	}
	ev.at = at
	return nil
}

// validateImage checks the image's fields and the revision.
func (ev *Evidence) validateImage() error {
	im := &ev.Image
	if err := optional("image.release", im.Release, tokenRE, "is not a release name such as jetpack6.2"); err != nil {
		return err
	}
	if im.Tags == nil {
		return schemaErr("image.tags", "", "is missing: the probe always writes the list, empty or not")
	}
	for i, t := range im.Tags {
		if !refRE.MatchString(t) || strings.Contains(t, "..") || strings.Contains(t, "//") {
			return schemaErr("image.tags["+strconv.Itoa(i)+"]", t, "is not a tagged image reference such as ghcr.io/owner/name:tag")
		}
	}
	if err := optional("image.digest", im.Digest, digestRE, "is not a digest: want sha256: and 64 lowercase hex digits"); err != nil {
		return err
	}
	if im.DigestSource != "" && !oneOf(im.DigestSource, digestSources()) {
		return schemaErr("image.digest_source", im.DigestSource, "is not "+strings.Join(digestSources(), " or "))
	}
	if im.Kind != "" && im.Kind != evidencespec.KindApp {
		return schemaErr("image.kind", im.Kind, "is not \"app\": the probe writes it for an app image only")
	}
	return optional("revision", ev.Revision, revisionRE, "is not a git commit id of 7 to 64 lowercase hex digits")
}

// validateHost checks the host's profile.
func (ev *Evidence) validateHost() error {
	h := &ev.Host
	if !tokenRE.MatchString(h.Architecture) {
		return schemaErr("host.architecture", h.Architecture, "is not an architecture such as arm64")
	}
	fields := []struct {
		path, value string
		re          *regexp.Regexp
		want        string
	}{
		{"host.l4t", h.L4T, l4tRE, "is not an L4T release such as 36.4.3"},
		{"host.jetpack", h.JetPack, jetpackRE, "is not a JetPack version such as 6.2"},
		{"host.device_class", h.DeviceClass, deviceClassRE, "is not a device class such as Jetson AGX Orin"},
		{"host.soc", h.SoC, socRE, "is not a Tegra SoC such as tegra234"},
	}
	for _, f := range fields {
		if err := optional(f.path, f.value, f.re, f.want); err != nil {
			return err
		}
	}
	if h.DeviceClass != "" && !knownDeviceClass(h.DeviceClass) {
		return schemaErr("host.device_class", h.DeviceClass, "is not a device class of the table of Jetson facts, such as Jetson AGX Orin")
	}
	if h.ComputeCapability != "" {
		if c, err := computecap.Parse(h.ComputeCapability); err != nil || c.String() != h.ComputeCapability {
			return schemaErr("host.compute_capability", h.ComputeCapability, "is not a compute capability such as 8.7")
		}
	}
	if h.CUDADriver != "" {
		if _, err := computecap.ParseCUDAVersion(h.CUDADriver); err != nil {
			return schemaErr("host.cuda_driver", h.CUDADriver, "is not a CUDA version such as 12.6")
		}
	}
	return nil
}

// validateResult checks the checks, the binary, the smoke, kernel and serve runs, and that
// result.pass is true exactly when every check passed.
func (ev *Evidence) validateResult() error {
	r := &ev.Result
	if len(r.Checks) == 0 {
		return schemaErr("result.checks", "", "is empty: the probe always writes its checks")
	}
	seen := map[string]bool{}
	allPassed := true
	for i, c := range r.Checks {
		path := "result.checks[" + strconv.Itoa(i) + "]"
		switch {
		case !checkNameRE.MatchString(c.Name):
			return schemaErr(path+".name", c.Name, "is not a check name such as cuda-driver")
		case seen[c.Name]:
			return schemaErr(path+".name", c.Name, "repeats an earlier check")
		case evidencespec.Phrases()[c.Name] == nil:
			return schemaErr(path+".name", c.Name, "is not a check the probe writes")
		case !oneOf(string(c.Status), []string{string(Passed), string(Failed), string(Skipped)}):
			return schemaErr(path+".status", string(c.Status), "is not passed, failed or skipped")
		case !evidencespec.ValidDetail(c.Name, c.Detail) || !ev.classAgrees(c):
			return schemaErr(path+".detail", c.Detail, "is not one of the phrases the probe writes for "+c.Name+
				": evidence holds only fixed phrases and parsed values, never a host name, address, path or serial number")
		}
		if c.Status == Passed {
			if err := ev.checkRun(c.Name); err != nil {
				return err
			}
		}
		seen[c.Name] = true
		allPassed = allPassed && c.Status == Passed
	}
	if r.Pass != allPassed {
		return schemaErr("result.pass", strconv.FormatBool(r.Pass), "disagrees with the checks: it is true exactly when every check passed")
	}
	if b := r.Binary; b != nil {
		if c, err := computecap.Parse(b.SM); err != nil || c.String() != b.SM {
			return schemaErr("result.binary.sm", b.SM, "is not a compute capability such as 8.7")
		}
		if err := optional("result.binary.name", b.Name, tokenRE, "is not a file name such as router-87"); err != nil {
			return err
		}
	}
	if s := r.Smoke; s != nil {
		for i, a := range s.Args {
			if !tokenRE.MatchString(a) {
				return schemaErr("result.smoke.args["+strconv.Itoa(i)+"]", a, "is not an argument such as --version")
			}
		}
	}
	if r.Kernel != nil {
		if err := validateKernel(r.Kernel); err != nil {
			return err
		}
	}
	if r.Serve != nil {
		return validateServe(r.Serve)
	}
	return nil
}

// knownDeviceClass reports whether class is one the probe can write: a
// module class of the table of Jetson facts, or "Jetson FAMILY" and
// "Jetson FAMILY (other module)" for a SoC's.
func knownDeviceClass(class string) bool {
	for _, soc := range computecap.DefaultTable().SoCs {
		family := "Jetson " + soc.Family
		if class == family || class == family+" (other module)" {
			return true
		}
		for _, m := range soc.Modules {
			if class == m.Class {
				return true
			}
		}
	}
	return false
}

// classAgrees reports whether a device-class check names the host's
// device class, the only class its detail may hold.
func (ev *Evidence) classAgrees(c Check) bool {
	if c.Name != "device-class" || !strings.HasPrefix(c.Detail, "Jetson ") {
		return true
	}
	return c.Detail == evidencespec.Fill(evidencespec.DetailClass, ev.Host.DeviceClass) ||
		c.Detail == evidencespec.Fill(evidencespec.DetailClassFromSoC, ev.Host.DeviceClass)
}

// optional checks a value that may be empty against re.
func optional(path, value string, re *regexp.Regexp, want string) error {
	if value != "" && !re.MatchString(value) {
		return schemaErr(path, value, want)
	}
	return nil
}

// oneOf reports whether s is one of list.
func oneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}
