package computecap

// JetPackForL4T maps an L4T (Jetson Linux) major release, as found in
// /etc/nv_tegra_release ("# R36 ..."), to the JetPack releases it holds,
// for messages: 35 is "5.0/5.1", 36 is "6", 38 is "7.0/7.1", 39 is "7.2"
// and 34 (developer previews) is "5.0". The string is not a tag. Other
// majors return false. For the exact JetPack of a full L4T version see
// JetPackForL4TRelease.
func JetPackForL4T(l4tMajor int) (string, bool) {
	return defaultTable.JetPackForL4TMajor(l4tMajor)
}

// JetPackReleases returns the JetPack releases jetbake knows, oldest first,
// each with the SMs of the SoCs that support it. Each call returns a fresh
// slice.
func JetPackReleases() []JetPackRelease {
	return defaultTable.Releases()
}

// JetPackForL4TRelease finds the JetPack release whose L4T version is
// exactly l4t, such as "36.4.3" (JetPack 6.2) or "36.4.7" (also 6.2.1).
// Versions not in the table return false; use JetPackForL4T with the major
// for a series.
func JetPackForL4TRelease(l4t string) (JetPackRelease, bool) {
	v, err := ParseL4TVersion(l4t)
	if err != nil {
		return JetPackRelease{}, false
	}
	return defaultTable.ReleaseForL4T(v)
}

// L4TMajorForJetPack maps a JetPack version to its L4T major: "5", "5.0.2"
// and "5.1.x" give 35; "5.0" and "5.0.1" (developer previews) give 34; "6",
// "6.0" .. "6.2.x" give 36; "7.0.x" and "7.1.x" give 38; "7.2.x" gives 39.
// A bare "7" is ambiguous (38 or 39) and returns false, as do unknown
// releases (such as "6.3") and malformed text. Spaces around the text are
// ignored.
func L4TMajorForJetPack(jetpack string) (int, bool) {
	return defaultTable.L4TMajorForJetPack(jetpack)
}
