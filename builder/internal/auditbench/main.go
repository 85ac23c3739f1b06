// Command auditbench measures `jetbake audit` on a stand-in image of more
// than 2 GB whose CUDA libraries sit among many other files, against
// reading the same image with go-containerregistry (crane) in the same
// run, from a registry on 127.0.0.1: the wall time of each, their ratio,
// and the audit's peak memory (the child process's maximum resident set).
// `make bench` runs it; docs/speed.md reports it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/computecap"
)

func main() {
	child := flag.String("child", "", "internal: run one reader (audit, export, blobs) on -ref")
	ref := flag.String("ref", "", "internal: the image")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "jetbake-auditbench"), "where the stand-in image's layers are kept between runs")
	rounds := flag.Int("rounds", 2, "runs of each reader; the best counts")
	flag.Parse()
	if *child != "" {
		if err := runChild(*child, *ref); err != nil {
			log.Fatalf("auditbench %s: %v", *child, err)
		}
		// VmHWM is this process's own peak resident set: the rusage of a
		// child also counts its parent's at the fork.
		status, err := os.ReadFile("/proc/self/status")
		if err != nil {
			log.Fatalf("auditbench %s: %v", *child, err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				fmt.Println(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			}
		}
		return
	}
	if err := bench(*dir, *rounds); err != nil {
		log.Fatalf("auditbench: %v", err)
	}
}

// runChild is one reader, in its own process so that its peak memory is
// its own.
func runChild(kind, ref string) error {
	ctx := context.Background()
	switch kind {
	case "audit":
		im, err := imageaudit.Open(ctx, ref, imageaudit.WithRemoteOptions())
		if err != nil {
			return err
		}
		r, err := imageaudit.Audit(ctx, im, []computecap.Capability{computecap.MustParse("8.7"), computecap.MustParse("11.0")})
		if err != nil {
			return err
		}
		if !r.OK || len(r.Files) != 9 {
			return fmt.Errorf("unexpected audit: %d CUDA files: %s", len(r.Files), r.Sentence)
		}
		return nil
	case "export":
		img, err := crane.Pull(ref)
		if err != nil {
			return err
		}
		return crane.Export(img, io.Discard)
	case "blobs":
		img, err := crane.Pull(ref)
		if err != nil {
			return err
		}
		layers, err := img.Layers()
		if err != nil {
			return err
		}
		for _, l := range layers {
			rc, err := l.Compressed()
			if err != nil {
				return err
			}
			if _, err := io.Copy(io.Discard, rc); err != nil {
				return err
			}
			rc.Close()
		}
		return nil
	}
	return fmt.Errorf("unknown reader %q", kind)
}

func bench(dir string, rounds int) error {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o755); err != nil {
		return err
	}
	start := time.Now()
	paths, total, err := writeLayers(dir)
	if err != nil {
		return err
	}
	fmt.Printf("auditbench: stand-in image of %d MiB of files in %d layers (written in %s)\n", total>>20, len(paths), time.Since(start).Round(time.Second))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)),
		registry.WithBlobHandler(registry.NewDiskBlobHandler(filepath.Join(dir, "blobs"))))}
	go srv.Serve(ln)
	defer srv.Close()
	ref := ln.Addr().String() + "/bench/standin:1"
	if err := push(ref, paths); err != nil {
		return err
	}
	results := map[string]run{}
	for _, kind := range []string{"blobs", "export", "audit"} {
		for range rounds {
			r, err := measure(kind, ref)
			if err != nil {
				return err
			}
			if best, ok := results[kind]; !ok || r.wall < best.wall {
				results[kind] = r
			}
		}
	}
	a, e, b := results["audit"], results["export"], results["blobs"]
	fmt.Printf("auditbench: crane, compressed blobs only:      %6.2fs  peak %4d MiB\n", b.wall.Seconds(), b.peak>>20)
	fmt.Printf("auditbench: crane export (layers unpacked):    %6.2fs  peak %4d MiB\n", e.wall.Seconds(), e.peak>>20)
	fmt.Printf("auditbench: jetbake audit:                     %6.2fs  peak %4d MiB  (%.0f MiB/s of files)\n",
		a.wall.Seconds(), a.peak>>20, float64(total>>20)/a.wall.Seconds())
	fmt.Printf("auditbench: audit / crane export = %.2fx (goal <= 1.2x); audit / blobs = %.2fx; peak memory %d MiB (goal < 100 MiB)\n",
		a.wall.Seconds()/e.wall.Seconds(), a.wall.Seconds()/b.wall.Seconds(), a.peak>>20)
	return nil
}

type run struct {
	wall time.Duration
	peak int64
}

// measure runs one reader in a child process.
func measure(kind, ref string) (run, error) {
	self, err := os.Executable()
	if err != nil {
		return run{}, err
	}
	cmd := exec.Command(self, "-child", kind, "-ref", ref)
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		return run{}, fmt.Errorf("%s: %w", kind, err)
	}
	r := run{wall: time.Since(start)}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return run{}, fmt.Errorf("%s: its peak memory: %w", kind, err)
	}
	r.peak = kib << 10
	return r, nil
}

// push writes the image of the layer files to the registry.
func push(ref string, paths []string) error {
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "arm64"})
	if err != nil {
		return err
	}
	for _, p := range paths {
		l, err := tarball.LayerFromFile(p)
		if err != nil {
			return err
		}
		if img, err = mutate.AppendLayers(img, l); err != nil {
			return err
		}
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	return remote.Write(r, img)
}
