package licenses

// The licenses an Apache-2.0 program may link, by licensecheck's SPDX
// identifiers. Source: the Apache Software Foundation's third-party
// license policy, https://www.apache.org/legal/resolved.html: its
// category A (permissive: may be included in source and binary form) and
// category B (weak copyleft: may be included in binary form, unmodified,
// with its source available; jetbake's dependencies are built from the
// module proxy's source, unmodified). Its category X (GPL, LGPL, AGPL,
// SSPL, BUSL, non-commercial terms) may not be linked. A license that is on
// neither list is not compatible until someone has read it and added it here
// with its category.

// rule is how one license is treated.
type rule struct {
	// category is the ASF category, as the report prints it.
	category string
	// incompatible marks a license that may not be linked; category then
	// says why.
	incompatible bool
}

// policy maps SPDX identifiers to their rule.
func policy() map[string]rule {
	a := rule{category: "ASF category A (permissive)"}
	b := rule{category: "ASF category B (weak copyleft, linked unmodified)"}
	copyleft := rule{category: "ASF category X: copyleft that would cover jetbake's binaries", incompatible: true}
	server := rule{category: "ASF category X: network copyleft that would cover jetbake's binaries", incompatible: true}
	restricted := rule{category: "ASF category X: restricts use", incompatible: true}
	return map[string]rule{
		"Apache-2.0": a, "Apache-1.1": a, "MIT": a, "MIT-0": a, "X11": a, "ISC": a, "0BSD": a,
		"BSD-2-Clause": a, "BSD-3-Clause": a, "BSD-3-Clause-Clear": a,
		"Zlib": a, "BSL-1.0": a, "CC0-1.0": a, "Unlicense": a, "PostgreSQL": a, "Python-2.0": a,
		"PSF-2.0": a, "NCSA": a, "UPL-1.0": a, "BlueOak-1.0.0": a, "W3C": a, "ICU": a,
		"MPL-1.1": b, "MPL-2.0": b, "MPL-2.0-no-copyleft-exception": b,
		"EPL-1.0": b, "EPL-2.0": b, "CDDL-1.0": b, "CDDL-1.1": b,
		"GPL-2.0": copyleft, "GPL-2.0-or-later": copyleft, "GPL-3.0": copyleft, "GPL-3.0-or-later": copyleft,
		"LGPL-2.1": copyleft, "LGPL-2.1-or-later": copyleft, "LGPL-3.0": copyleft, "LGPL-3.0-or-later": copyleft,
		"AGPL-3.0": server, "AGPL-3.0-or-later": server, "SSPL-1.0": server,
		"CC-BY-NC-4.0": restricted, "CommonsClause": restricted, "BSD-4-Clause": restricted,
	}
}

// policyReason says why a license may not be linked.
func policyReason(id string) string {
	if r, ok := policy()[id]; ok {
		return r.category
	}
	return "not on the list of licenses compatible with Apache-2.0 in builder/internal/licenses/policy.go"
}

// notLinked are license files that the nearest-file rule finds for code
// that jetbake's binaries do not link, keyed by module path and file name,
// each with the reason.
func notLinked() map[string]string {
	return map[string]string{
		StdModule + " src/crypto/internal/boring/LICENSE": "covers BoringSSL's object file, linked only with " +
			"GOEXPERIMENT=boringcrypto and cgo (the file says so); jetbake's binaries are built with CGO_ENABLED=0",
	}
}
