// Package pyindex is the test bed's Python package index: a PEP 503 "simple"
// index on 127.0.0.1 (net/http) serving real wheels made in Go (package
// pywheel), which a real pip installs from with --index-url. It holds an
// app shaped like OBLITERATUS and the failure shapes jetbake must refuse:
// a dependency whose install pulls a PyPI torch wheel (which would shadow
// the vendor torch), and an SBSA bitsandbytes-like wheel without sm_87 code.
package pyindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/internal/pywheel"
	"github.com/jetbake/jetbake/builder/internal/standin"
)

// The served projects, by name.
const (
	// App is the app: console script obliteratus = obliteratus.cli:main,
	// requires torch>=2.0, einops and tqdm, extra quantization: bitsandbytes.
	App = "obliteratus"
	// TorchPuller requires torch==PyPITorch and torchvision==PyPITorchVision,
	// so installing it with its dependencies pulls PyPI's torch and
	// torchvision wheels, as a library of models (timm) does.
	TorchPuller = "torchy-helper"
	// PyPITorchVision is the version of PyPI's torchvision for PyPITorch.
	PyPITorchVision = "0.24.0"
	// Tqdm is the version of the served tqdm, newer than the stand-in
	// bases' pinned one.
	Tqdm = "4.67.1"
	// PyPITorch is the version of the PyPI-style torch wheel: CPU-only
	// (torch.version.cuda is None), tagged manylinux_2_28_aarch64, without
	// a local version suffix, as PyPI's aarch64 torch before 2.11.
	PyPITorch = "2.9.0"
	// Bitsandbytes is the SBSA wheel (manylinux_2_24_aarch64) whose
	// library has cubins for sm_75, sm_80 and sm_90 and PTX for sm_90 only:
	// no code an Orin (sm_87) may run.
	Bitsandbytes = "bitsandbytes"
	// BitsandbytesLib is its CUDA library's path in site-packages.
	BitsandbytesLib = "bitsandbytes/libbitsandbytes_cuda126.so"
)

// Index is a running index.
type Index struct {
	// URL is the simple index, e.g. "http://127.0.0.1:PORT/simple/", for
	// pip's --index-url.
	URL string
	// Packages are the served projects' names, sorted.
	Packages []string
	// Wheels are the served wheels' file names by project.
	Wheels map[string][]string
	srv    *http.Server
}

// Start builds the wheels (the aarch64 libraries with kit's cross compiler,
// cached in kit.Cache) and serves them on 127.0.0.1 until ctx ends or Close.
func Start(ctx context.Context, kit standin.Kit) (*Index, error) {
	dists, err := Dists(ctx, kit)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	byProject := map[string][]string{}
	for _, d := range dists {
		data, err := d.Wheel()
		if err != nil {
			return nil, err
		}
		files[d.Filename()] = data
		n := pywheel.Normalize(d.Name)
		byProject[n] = append(byProject[n], d.Filename())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("python index: %w", err)
	}
	x := &Index{URL: "http://" + ln.Addr().String() + "/simple/", Wheels: byProject}
	for n := range byProject {
		x.Packages = append(x.Packages, n)
	}
	sort.Strings(x.Packages)
	x.srv = &http.Server{Handler: handler(files, byProject, dists), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = x.srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = x.Close()
	}()
	return x, nil
}

// Close stops the server.
func (x *Index) Close() error {
	if err := x.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// handler serves /simple/ (the projects), /simple/NAME/ (its wheels, each
// link with its sha256 and Requires-Python, PEP 503) and /files/WHEEL.
func handler(files map[string][]byte, byProject map[string][]string, dists []pywheel.Dist) http.Handler {
	requiresPython := map[string]string{}
	for _, d := range dists {
		requiresPython[d.Filename()] = d.RequiresPython
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/", func(w http.ResponseWriter, r *http.Request) {
		project := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
		var b strings.Builder
		b.WriteString("<!DOCTYPE html>\n<html><body>\n")
		if project == "" {
			names := make([]string, 0, len(byProject))
			for n := range byProject {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(&b, "<a href=\"%s/\">%s</a><br>\n", n, n)
			}
		} else {
			wheels, ok := byProject[pywheel.Normalize(project)]
			if !ok {
				http.NotFound(w, r)
				return
			}
			for _, f := range wheels {
				sum := sha256.Sum256(files[f])
				attr := ""
				if rp := requiresPython[f]; rp != "" {
					attr = fmt.Sprintf(" data-requires-python=\"%s\"", html.EscapeString(rp))
				}
				fmt.Fprintf(&b, "<a href=\"../../files/%s#sha256=%s\"%s>%s</a><br>\n", f, hex.EncodeToString(sum[:]), attr, f)
			}
		}
		b.WriteString("</body></html>\n")
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(b.String()))
	})
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[strings.TrimPrefix(r.URL.Path, "/files/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(data)
	})
	return mux
}
