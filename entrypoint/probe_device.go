package main

import (
	"strings"

	computecap "github.com/jetbake/jetbake/compute_cap"
)

// moduleClass is one entry of the allow-list that maps a Jetson module to
// the device class the probe reports. The probe never reports the raw
// device-tree model, which can carry a serial number: only these names.
type moduleClass struct {
	// name is the device class, as the matrix's hardware lists name it.
	name string
	// soc is the device-tree name of the module's SoC, such as "tegra234".
	soc string
	// parts are module part numbers as the device tree's compatible
	// entries write them ("p3767-0005"); an entry matches a part when it
	// equals it or continues it with '-' ("p3701" matches "p3701-0005").
	parts []string
	// words must all appear in the device-tree model when no compatible
	// entry matched, such as "AGX Orin".
	words []string
}

// moduleClasses returns the allow-list, the more specific entries first
// (the Orin Nano Super before the Orin Nano). The part numbers are NVIDIA's:
// p3701 AGX Orin, p3767-0000/0001 Orin NX, p3767-0003/0004/0005 Orin Nano
// (a "-super" board entry on JetPack 6.2 and later), p3834-0008 AGX Thor
// (T5000), p2888 AGX Xavier, p3668 Xavier NX, p3448 Nano, p2180 TX1, p3310
// and p3489 TX2, p3636 TX2 NX.
func moduleClasses() []moduleClass {
	return []moduleClass{
		{name: "Jetson AGX Thor", soc: "tegra264", parts: []string{"p3834-0008"}, words: []string{"AGX Thor"}},
		{name: "Jetson AGX Orin", soc: "tegra234", parts: []string{"p3701"}, words: []string{"AGX Orin"}},
		{name: "Jetson Orin Nano Super", soc: "tegra234",
			parts: []string{"p3767-0003-super", "p3767-0004-super", "p3767-0005-super"}, words: []string{"Orin Nano", "Super"}},
		{name: "Jetson Orin NX", soc: "tegra234", parts: []string{"p3767-0000", "p3767-0001"}, words: []string{"Orin NX"}},
		{name: "Jetson Orin Nano", soc: "tegra234", parts: []string{"p3767-0003", "p3767-0004", "p3767-0005"}, words: []string{"Orin Nano"}},
		{name: "Jetson AGX Xavier", soc: "tegra194", parts: []string{"p2888"}, words: []string{"AGX Xavier"}},
		{name: "Jetson Xavier NX", soc: "tegra194", parts: []string{"p3668"}, words: []string{"Xavier NX"}},
		{name: "Jetson TX2 NX", soc: "tegra186", parts: []string{"p3636"}, words: []string{"TX2 NX"}},
		{name: "Jetson TX2", soc: "tegra186", parts: []string{"p3310", "p3489"}, words: []string{"TX2"}},
		{name: "Jetson TX1", soc: "tegra210", parts: []string{"p2180"}, words: []string{"TX1"}},
		{name: "Jetson Nano", soc: "tegra210", parts: []string{"p3448"}, words: []string{"Jetson Nano"}},
	}
}

// device is what the probe learned about the board.
type device struct {
	// soc is the Jetson SoC when hasSoC.
	soc    computecap.SoC
	hasSoC bool
	// conflict is set when the device tree and soc_id name different SoCs.
	conflict bool
	// class is the device class: an allow-list name, "Jetson <family>
	// (other module)" for a Jetson SoC on a module the list lacks, or ""
	// when there is no Jetson SoC.
	class string
	// known is true when class comes from the allow-list.
	known bool
}

// readDevice finds the SoC (device tree, else soc_id) and the device class.
// The model is read only to match the allow-list and is never kept.
func readDevice(root sysroot) device {
	var d device
	var entries []string
	for _, p := range deviceTreeFiles(compatibleName) {
		if data, err := root.readFile(p); err == nil {
			entries = parseCompatible(data)
			break
		}
	}
	d.soc, d.hasSoC = socFromCompatible(entries)
	if byID, ok := socFromID(root); ok {
		if d.hasSoC && byID.Name != d.soc.Name {
			d.conflict = true
		}
		if !d.hasSoC {
			d.soc, d.hasSoC = byID, true
		}
	}
	if !d.hasSoC {
		return d
	}
	d.class, d.known = classFromCompatible(d.soc, entries)
	if !d.known {
		d.class, d.known = classFromModel(d.soc, readModelText(root))
	}
	if !d.known {
		d.class = "Jetson " + d.soc.Family + " (other module)"
	}
	return d
}

// socFromID reads /sys/devices/soc0/soc_id when the family is Tegra.
func socFromID(root sysroot) (computecap.SoC, bool) {
	data, err := root.readFile(socIDPath)
	if err != nil {
		return computecap.SoC{}, false
	}
	if fam, err := root.readFile(socFamilyPath); err == nil && strings.TrimSpace(string(fam)) != "Tegra" {
		return computecap.SoC{}, false
	}
	id, err := parseSocID(data)
	if err != nil {
		return computecap.SoC{}, false
	}
	return computecap.SoCByID(id)
}

// readModelText reads the device-tree model; "" when absent.
func readModelText(root sysroot) string {
	for _, p := range deviceTreeFiles(modelName) {
		if data, err := root.readFile(p); err == nil {
			return parseModel(data)
		}
	}
	return ""
}

// classFromCompatible matches the module part numbers of the compatible
// entries ("nvidia,p3768-0000+p3767-0005-super": carrier, then module).
func classFromCompatible(soc computecap.SoC, entries []string) (string, bool) {
	for _, c := range moduleClasses() {
		if c.soc != soc.Name {
			continue
		}
		for _, e := range entries {
			for part := range strings.SplitSeq(strings.TrimPrefix(e, "nvidia,"), "+") {
				if partMatches(part, c.parts) {
					return c.name, true
				}
			}
		}
	}
	return "", false
}

// partMatches reports whether a compatible part equals one of parts or
// continues it with '-'.
func partMatches(part string, parts []string) bool {
	for _, p := range parts {
		if part == p || strings.HasPrefix(part, p+"-") {
			return true
		}
	}
	return false
}

// classFromModel matches the words of the allow-list in the model name.
func classFromModel(soc computecap.SoC, model string) (string, bool) {
	if model == "" {
		return "", false
	}
	lower := strings.ToLower(model)
	for _, c := range moduleClasses() {
		if c.soc != soc.Name {
			continue
		}
		all := true
		for _, w := range c.words {
			all = all && strings.Contains(lower, strings.ToLower(w))
		}
		if all {
			return c.name, true
		}
	}
	return "", false
}
