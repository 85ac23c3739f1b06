package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// explanation is what --explain prints.
type explanation struct {
	Sysroot     string             `json:"sysroot"`
	Image       *imageSummary      `json:"image,omitempty"`
	Path        string             `json:"path"`
	PathWhy     string             `json:"path_why,omitempty"`
	Sources     []detect.Source    `json:"sources"`
	ComputeCap  string             `json:"compute_cap,omitempty"`
	GPU         string             `json:"gpu,omitempty"`
	DetectedBy  string             `json:"detected_by,omitempty"`
	HostL4T     string             `json:"host_l4t,omitempty"`
	HostJetPack string             `json:"host_jetpack,omitempty"`
	Model       string             `json:"model,omitempty"`
	DriverCUDA  string             `json:"driver_cuda,omitempty"`
	HostFiles   []detect.Source    `json:"host_files"`
	DeviceNodes *detect.NodeCheck  `json:"device_nodes,omitempty"`
	Candidates  []detect.Candidate `json:"candidates"`
	Choice      string             `json:"choice,omitempty"`
	Args        []string           `json:"args"`
	Exec        []string           `json:"exec,omitempty"`
	LibraryPath string             `json:"ld_library_path,omitempty"`
	Failure     string             `json:"failure,omitempty"`
}

// imageSummary is the part of the image description --explain repeats.
type imageSummary struct {
	Kind    string   `json:"kind,omitempty"`
	Router  string   `json:"router"`
	Release string   `json:"release,omitempty"`
	JetPack string   `json:"jetpack,omitempty"`
	L4T     string   `json:"l4t,omitempty"`
	CUDA    string   `json:"cuda,omitempty"`
	Tags    []string `json:"tags,omitempty"`
}

// explain prints the decision as indented JSON and returns exit status 0.
func explain(stdout, stderr io.Writer, cfg *config, img *detect.ParsedDescription, h *detect.Host, d *detect.Decision) int {
	e := explanation{
		Sysroot:     string(cfg.Root),
		Path:        h.Path,
		PathWhy:     h.PathWhy,
		Sources:     h.Sources,
		DetectedBy:  h.From,
		Model:       h.BoardName(),
		HostFiles:   h.HostFiles,
		DeviceNodes: h.NodeCheck(),
		Candidates:  d.Candidates,
		Choice:      d.Choice,
		Args:        cfg.routerArgs,
		LibraryPath: d.LibraryPath,
		Failure:     d.Failure,
	}
	if e.Candidates == nil {
		e.Candidates = []detect.Candidate{}
	}
	if e.Args == nil {
		e.Args = []string{}
	}
	if img != nil {
		if img.Kind == imagespec.KindApp && d.Choice != "" {
			e.Exec = img.Argv(d.Choice, e.Args)
		}
		e.Image = &imageSummary{Kind: img.Kind, Router: img.Router, Release: img.Release, JetPack: img.JetPack,
			L4T: img.L4T, CUDA: img.CUDA, Tags: img.Tags}
	}
	if h.Found() {
		e.ComputeCap, e.GPU = h.GPU.String(), cfg.Table.Describe(h.GPU)
	}
	if h.HasL4T {
		e.HostL4T, e.HostJetPack = h.L4T.String(), cfg.Table.JetPackName(h.L4T)
	}
	if h.HasDriver {
		e.DriverCUDA = h.Driver.String()
	}
	out, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fail(stderr, "cannot write the explanation: "+err.Error())
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}
