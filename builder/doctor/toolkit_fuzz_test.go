package doctor

import (
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseDpkgStatus checks parseDpkgStatus on any input: it does not
// panic, it answers the same twice, every package it returns is one stanza's
// Package with that stanza's Version and a Status that ends in "installed",
// and a stanza appended to the input adds its package when installed and
// nothing when not, leaving the others as they were.
func FuzzParseDpkgStatus(f *testing.F) {
	f.Add(dpkg("1.17.8-1", "install ok installed"))
	f.Add(dpkg("1.19.0~rc.1-1", "deinstall ok config-files"))
	f.Add("Package: x\nStatus: install ok installed\n")
	f.Add("Package: x\r\nStatus: install ok installed\r\nVersion: 1\r\n \r\nPackage: x\nStatus: hold ok installed\nVersion: 2\n")
	f.Add("Package: y\n Version: 1\nStatus: install ok installed\nVersion:2:3-4\n")
	f.Fuzz(func(t *testing.T, s string) {
		pkgs, err := parseDpkgStatus(strings.NewReader(s))
		if err != nil {
			return // a line over the scanner's 1 MiB
		}
		again, err := parseDpkgStatus(strings.NewReader(s))
		require.NoError(t, err)
		require.Equal(t, pkgs, again, "two parses of the same status differ")

		installed := installedStanzas(s)
		for name, version := range pkgs {
			require.NotEmpty(t, name)
			require.Contains(t, installed[name], version, "package %q version %q is no installed stanza of the input", name, version)
			require.Contains(t, version, upstreamVersion(version))
			_ = versionLess(version, compatOrinSince)
		}

		const probe = "jetbake-fuzz-probe"
		want := maps.Clone(pkgs)
		want[probe] = "1:2.3.4-5"
		got, err := parseDpkgStatus(strings.NewReader(s + "\n\nPackage: " + probe + "\nStatus: install ok installed\nVersion: 1:2.3.4-5\n"))
		require.NoError(t, err)
		require.Equal(t, want, got, "an installed stanza appended")

		delete(want, probe)
		got, err = parseDpkgStatus(strings.NewReader(s + "\n\nPackage: " + probe + "\nStatus: deinstall ok config-files\nVersion: 9\n"))
		require.NoError(t, err)
		if _, ok := pkgs[probe]; !ok {
			require.Equal(t, want, got, "a removed package's stanza appended")
		}
	})
}

// installedStanzas reads s a stanza at a time, as dpkg writes its status
// file, and returns the versions of each package name that have a stanza
// with a Status ending in " installed". It is the fuzz target's oracle: it
// splits the stanzas first and reads their fields after, where the parser
// reads line by line.
func installedStanzas(s string) map[string][]string {
	out := map[string][]string{}
	var stanza []string
	end := func() {
		fields := map[string]string{}
		for _, line := range stanza {
			if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
				fields[k] = strings.TrimSpace(v)
			}
		}
		if name := fields["Package"]; name != "" && strings.HasSuffix(fields["Status"], " installed") {
			out[name] = append(out[name], fields["Version"])
		}
		stanza = nil
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			end()
			continue
		}
		stanza = append(stanza, strings.TrimSuffix(line, "\r"))
	}
	end()
	return out
}
