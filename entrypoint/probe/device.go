package main

import (
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// moduleClass is one entry of the allow-list of device classes the probe
// may report. The probe never reports the raw board name, which can carry a
// serial number: only these names, which come from the SoC rows of the
// table of Jetson facts (computecap.SoC.Modules), or "Jetson <family>".
type moduleClass struct {
	// name is the device class, as the matrix's hardware lists name it.
	name string
	// soc is the device-tree name of the module's SoC, such as "tegra234".
	soc string
}

// moduleClasses returns the allow-list of the shipped table.
func moduleClasses() []moduleClass {
	var out []moduleClass
	for _, s := range computecap.SoCs() {
		for _, m := range s.Modules {
			out = append(out, moduleClass{name: m.Class, soc: s.Name})
		}
	}
	return out
}

// device is what the probe learned about the board.
type device struct {
	// soc is the Jetson SoC when hasSoC.
	soc    computecap.SoC
	hasSoC bool
	// conflict is set when the device tree and soc_id name different SoCs.
	conflict bool
	// class is the device class: a module of the table, the SoC's class
	// "Jetson <family>" when no part number or board name is visible, or
	// "Jetson <family> (other module)" for a module the table lacks; ""
	// when there is no Jetson SoC.
	class string
	// known is true when class names a module of the table, or the SoC's
	// class because nothing more is visible (fromSoC).
	known, fromSoC bool
}

// readDevice reads the host under root with the shipped table; tests use it.
func readDevice(root host.Root) device {
	return deviceOf(host.Read(root, computecap.DefaultTable(), host.Options{}))
}

// deviceOf takes the SoC (Facts.SoC: soc_id, else the device tree) and the
// device class from the host facts. The board name is used only to match
// the table and is never kept.
func deviceOf(f *host.Facts) device {
	d := device{soc: f.SoC, hasSoC: f.HasSoC, conflict: f.Conflict}
	d.class, d.known, d.fromSoC = f.DeviceClass()
	return d
}

// classFromCompatible matches the module part numbers of the compatible
// entries ("nvidia,p3768-0000+p3767-0005-super": carrier, then module).
func classFromCompatible(soc computecap.SoC, entries []string) (string, bool) {
	return soc.ModuleClass(entries, "")
}

// classFromModel matches the words of the table's modules in a board name.
func classFromModel(soc computecap.SoC, model string) (string, bool) {
	return soc.ModuleClass(nil, model)
}
