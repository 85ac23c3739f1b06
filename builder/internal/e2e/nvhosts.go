package e2e

import (
	"context"
	"fmt"

	"github.com/jetbake/jetbake/builder/internal/nvtoolkit"
)

// HostLine is one host line of the runs through NVIDIA's runtime: a fake
// host and the release whose image is for it.
type HostLine struct {
	// Host names the fake host.
	Host string
	// Release is the matrix release of the host's own image.
	Release string
}

// HostLines are the host lines the runs through NVIDIA's runtime cover:
// JetPack 5.1.2 (Xavier, Orin), 6.2 (Orin), 7.0 and 7.1 (Thor) and 7.2
// (Orin, Thor). The JetPack 7.0 image is the one for 7.1 hosts too.
func HostLines() []HostLine {
	return []HostLine{
		{Host: "xavier-jp5.1.2", Release: "jetpack5.1"},
		{Host: "orin-jp5.1.2", Release: "jetpack5.1"},
		{Host: "orin-jp6", Release: "jetpack6.2"},
		{Host: "thor-jp7.0", Release: "jetpack7.0"},
		{Host: "thor-jp7.1", Release: "jetpack7.0"},
		{Host: "orin-jp7.2", Release: "jetpack7.2"},
		{Host: "thor-jp7.2", Release: "jetpack7.2"},
	}
}

// NVReleases are the releases whose images the runs through NVIDIA's
// runtime need.
func NVReleases() []string { return []string{"jetpack5.1", "jetpack6.2", "jetpack7.0", "jetpack7.2"} }

// BrokenDriverHost is orin-jp6 with a driver its containers cannot load
// (an x86-64 libcuda at the aarch64 driver's path).
const BrokenDriverHost = "orin-jp6-broken-driver"

// NVBed is NVIDIA's runtime (nvtoolkit.Bed) with a fake host for every host
// line and BrokenDriverHost.
type NVBed struct {
	*nvtoolkit.Bed
	// Hosts are the fake hosts by name, as the runtime reads them.
	Hosts map[string]*nvtoolkit.Host
	// Fakes are the FakeHost each of them models.
	Fakes map[string]FakeHost
}

// NewNVBed lays out the bed and its hosts under dir, with the toolkit of
// env's bin/ and env's cache of ELF stand-ins.
func NewNVBed(ctx context.Context, dir string, env *Env) (*NVBed, error) {
	bed, err := nvtoolkit.NewBed(ctx, dir, env.BinDir(), env.Kit().Cache, env.RepoRoot)
	if err != nil {
		return nil, err
	}
	b := &NVBed{Bed: bed, Hosts: map[string]*nvtoolkit.Host{}, Fakes: map[string]FakeHost{}}
	byName := map[string]FakeHost{}
	for _, h := range hosts {
		byName[h.Name] = h
	}
	add := func(name string, fake FakeHost, broken bool) error {
		spec := nvSpec(fake)
		spec.Name, spec.UnloadableDriver = name, broken
		h, err := bed.AddHost(ctx, spec)
		if err != nil {
			return err
		}
		b.Hosts[name], b.Fakes[name] = h, fake
		return nil
	}
	for _, l := range HostLines() {
		fake, ok := byName[l.Host]
		if !ok {
			return nil, fmt.Errorf("host line %s: no fake host of that name", l.Host)
		}
		if err := add(l.Host, fake, false); err != nil {
			return nil, err
		}
	}
	if err := add(BrokenDriverHost, byName["orin-jp6"], true); err != nil {
		return nil, err
	}
	return b, nil
}

// nvSpec is the fake host h as the toolkit's host tree describes it.
func nvSpec(h FakeHost) nvtoolkit.HostSpec {
	return nvtoolkit.HostSpec{Name: h.Name, L4T: h.L4T, SocID: h.SocID, SocFamily: "Tegra", Machine: h.Machine,
		GPU: h.GPU, DriverCUDA: h.DriverCUDA}
}
