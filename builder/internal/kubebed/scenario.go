package kubebed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/jetbake/jetbake/builder/doctor"
	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// ShippedReleases writes, under dir, the build report `jetbake build --push
// --metadata-file` leaves for the shipped matrix (every release pushed to
// registry.example/router with a digest of its own, its annotations and an
// audit that covers every target), and reads it back as `jetbake fleet`
// does.
func ShippedReleases(repoRoot, dir string) ([]fleet.Release, error) {
	m, err := matrix.Load(filepath.Join(repoRoot, "matrix.json"))
	if err != nil {
		return nil, err
	}
	p, err := plan.New(m)
	if err != nil {
		return nil, err
	}
	rep := &imagebuild.Report{}
	for i, r := range p.Releases {
		var audit []string
		for _, tg := range r.Targets {
			audit = append(audit, tg.SM+"=runs")
		}
		r.Annotations[matrix.KeyAudit] = strings.Join(audit, ",")
		rep.Releases = append(rep.Releases, imagebuild.ReleaseReport{Name: r.Name, Outcome: imagebuild.Succeeded,
			Digest: "sha256:" + strings.Repeat(fmt.Sprintf("%x", i+10), 64), Repository: "registry.example/router", Annotations: r.Annotations})
	}
	file := filepath.Join(dir, "build.json")
	if err := rep.WriteFile(file); err != nil {
		return nil, err
	}
	md, err := evidence.ReadMetadata(file)
	if err != nil {
		return nil, err
	}
	return fleet.ReleasesFromReport(file, md.Report)
}

// HostNode is a test bed host view as a node: the labels `jetbake doctor`
// reads there (a k3s node with NVIDIA's runtime, WriteK3sNVIDIA) and the image pick's rule
// chooses for that host ("" for none).
type HostNode struct {
	Name   string
	Labels map[string]string
	Want   string
}

// HostNodes runs doctor on every test bed host view, laid out under dir.
func HostNodes(ctx context.Context, releases []fleet.Release, dir string) ([]HostNode, error) {
	return HostNodesOf(ctx, releases, dir, e2e.HostViews(), hostfit.SysrootReader{})
}

// HostNodesOf is HostNodes on the host views given, read with reader: the
// table with a matrix's declared rows for e2e.DeclaredHostViews, as
// `jetbake doctor --facts` reads them.
func HostNodesOf(ctx context.Context, releases []fleet.Release, dir string, views []e2e.FakeHost, reader hostfit.SysrootReader) ([]HostNode, error) {
	metas := make([]imagepick.Meta, len(releases))
	for i, r := range releases {
		metas[i] = r.Meta
	}
	var out []HostNode
	for _, h := range views {
		root := filepath.Join(dir, h.Name)
		if err := h.WriteFacts(root); err != nil {
			return nil, err
		}
		if err := WriteK3sNVIDIA(root); err != nil {
			return nil, err
		}
		r, err := doctor.Run(ctx, doctor.WithSysroot(root), doctor.WithHostFacts(reader))
		if err != nil {
			return nil, fmt.Errorf("doctor on %s: %w", h.Name, err)
		}
		n := HostNode{Name: h.Name, Labels: r.NodeLabels()}
		if order := imagepick.Order(r.Host, metas, hostfit.Compatible); len(order) > 0 {
			n.Want = releases[order[0]].Image
		}
		out = append(out, n)
	}
	return out, nil
}

// WaitPlaced polls until every node holds exactly the image want gives it
// (none where it gives ""), with no pod of namespace left unbound, and
// returns the placement table; after timeout it returns an error with
// what is wrong, the table and the namespace's events.
func WaitPlaced(ctx context.Context, c kubernetes.Interface, namespace string, want map[string]string, timeout time.Duration) ([]Row, error) {
	deadline := time.Now().Add(timeout)
	for {
		rows, err := Placement(ctx, c, namespace)
		if err != nil {
			return nil, err
		}
		pending, err := Pending(ctx, c, namespace)
		if err != nil {
			return nil, err
		}
		var wrong []string
		for _, r := range rows {
			w, ok := want[r.Node]
			if !ok {
				wrong = append(wrong, fmt.Sprintf("%s: a node nobody registered", r))
			} else if (w == "" && len(r.Images) > 0) || (w != "" && !slices.Equal(r.Images, []string{w})) {
				wrong = append(wrong, fmt.Sprintf("%s: want %q", r, w))
			}
		}
		if len(wrong) == 0 && pending == 0 && len(rows) == len(want) {
			return rows, nil
		}
		if time.Now().After(deadline) {
			return rows, fmt.Errorf("pods not placed as pick chooses within %s (%d unbound):\n%s\nplacement now:\n%s\nevents:\n%s",
				timeout, pending, strings.Join(wrong, "\n"), Table(rows), Events(ctx, c, namespace))
		}
		select {
		case <-ctx.Done():
			return rows, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// k3sNVIDIARuntime is the part of the containerd configuration the k3s agent
// writes (k3s, pkg/agent/templates) when it finds nvidia-container-runtime
// in /usr/bin at start.
const k3sNVIDIARuntime = `# File generated by k3s. DO NOT EDIT. Use config.toml.tmpl instead.
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia"]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia".options]
  BinaryName = "/usr/bin/nvidia-container-runtime"
`

// WriteK3sNVIDIA makes the host view under root a k3s node with NVIDIA's
// container toolkit: the runtime in /usr/bin, and k3s's containerd
// configuration with the nvidia runtime it adds for it.
func WriteK3sNVIDIA(root string) error {
	for _, f := range []struct {
		rel, data string
		mode      os.FileMode
	}{
		{"usr/bin/nvidia-container-runtime", "#!/bin/sh\n", 0o755},
		{"var/lib/rancher/k3s/agent/etc/containerd/config.toml", k3sNVIDIARuntime, 0o644},
	} {
		p := filepath.Join(root, f.rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(f.data), f.mode); err != nil {
			return err
		}
	}
	return nil
}
