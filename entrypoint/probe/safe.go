package main

import "strings"

// The probe's evidence is an allow-listed profile: every value it copies
// from the image or the environment passes one of these checks, or is left
// out. Host values are built from parsed numbers and the allow-list of
// device classes, never copied as text.

// safeToken reports whether s is 1 to 128 characters of letters, digits,
// '.', '_', '+' and '-': a release name, revision or router argument.
func safeToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tokenByte(s[i]) {
			return false
		}
	}
	return true
}

// tokenByte reports whether b may appear in a safe token.
func tokenByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-' || b == '+'
}

// safeRef reports whether s has the form of a tagged image reference,
// "registry[:port]/repository:tag", in at most 255 characters: a host of
// letters, digits, '.' and '-' with an optional numeric port, a lowercase
// repository of letters, digits, '.', '_', '-' and '/', and a tag of letters,
// digits, '.', '_' and '-'. It keeps out user names and passwords
// ("user:pass@host"), spaces, quotes and anything a shell would read.
func safeRef(s string) bool {
	host, rest, ok := strings.Cut(s, "/")
	colon := strings.LastIndexByte(rest, ':')
	if !ok || len(s) > 255 || colon <= 0 || !safeHost(host) || strings.Contains(s, "..") {
		return false
	}
	repo, tag := rest[:colon], rest[colon+1:]
	if strings.Contains(repo, "//") || strings.HasSuffix(repo, "/") || tag == "" || tag[0] == '.' || tag[0] == '-' {
		return false
	}
	for i := 0; i < len(repo); i++ {
		if b := repo[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-' || b == '/') {
			return false
		}
	}
	return safeToken(tag) && !strings.Contains(tag, "+")
}

// safeHost reports whether s is a registry host such as "ghcr.io" or
// "127.0.0.1:5000".
func safeHost(s string) bool {
	name, port, hasPort := strings.Cut(s, ":")
	if name == "" || strings.Contains(name, "..") || strings.Trim(name, ".-") != name || (hasPort && (port == "" || len(port) > 5)) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if b := name[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '-') {
			return false
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

// safeRevision reports whether s is a git commit id: 7 to 64 lowercase hex
// digits. Other revisions are left out of the evidence.
func safeRevision(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// safeRefs returns the references of refs that pass safeRef, in order.
func safeRefs(refs []string) []string {
	out := []string{}
	for _, r := range refs {
		if safeRef(r) {
			out = append(out, r)
		}
	}
	return out
}

// validDigest reports whether s is "sha256:" and 64 lowercase hex digits.
func validDigest(s string) bool {
	hex, ok := strings.CutPrefix(s, "sha256:")
	return ok && len(hex) == 64 && safeRevision(hex)
}
