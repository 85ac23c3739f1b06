package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/computecap"
)

// entry is one file of a stand-in layer.
type entry struct {
	name  string
	size  int64
	write func(io.Writer) error
}

func smallFile(name string, size int64) entry {
	return entry{name: name, size: size, write: func(w io.Writer) error {
		return fatbintest.Filler(size).Write(w)
	}}
}

func elfFile(name string, sections ...fatbintest.Section) entry {
	return entry{name: name, size: fatbintest.ELFSize(sections...), write: func(w io.Writer) error {
		return fatbintest.WriteELF(w, sections...)
	}}
}

// cudaLib is a library of about size bytes: a .text and cubins for sms,
// split in several fat binaries as NVIDIA's libraries are.
func cudaLib(name string, size int64, sms ...string) entry {
	var fatbins [][]fatbintest.Code
	per := size / int64(8*len(sms))
	for range 8 {
		var codes []fatbintest.Code
		for _, sm := range sms {
			codes = append(codes, fatbintest.Code{Kind: fatbin.KindCubin, SM: computecap.MustParse(sm), Size: per})
		}
		fatbins = append(fatbins, codes)
	}
	return elfFile(name, fatbintest.Filler(size/10), fatbintest.Fatbins(".nv_fatbin", fatbins...))
}

// layers are the stand-in image: Python-like trees of small files, plain
// ELF files, CUDA libraries of a few hundred MB and the routers.
func layers() [][]entry {
	var base, torch, extra, app []entry
	for i := range 3000 {
		base = append(base, smallFile(fmt.Sprintf("usr/lib/python3/dist-packages/pkg%03d/mod%d.py", i/30, i), 24<<10))
	}
	for i := range 200 {
		base = append(base, elfFile(fmt.Sprintf("usr/lib/aarch64-linux-gnu/libplain%d.so", i), fatbintest.Filler(512<<10)))
	}
	for i, name := range []string{"libcublasLt.so.12", "libcublas.so.12", "libcudnn_engines.so.9", "libcufft.so.11"} {
		torch = append(torch, cudaLib("usr/local/cuda/lib64/"+name, 250<<20+int64(i)<<20, "8.7", "11.0"))
	}
	for i := range 1000 {
		torch = append(torch, smallFile(fmt.Sprintf("usr/lib/python3/dist-packages/torch/include/h%d.h", i), 16<<10))
	}
	for i, name := range []string{"libtorch_cuda.so", "libnccl.so.2", "libbitsandbytes_cuda.so"} {
		extra = append(extra, cudaLib("usr/lib/python3/dist-packages/torch/lib/"+name, 250<<20+int64(i)<<20, "8.7", "11.0"))
	}
	extra = append(extra, elfFile("usr/bin/python3.12", fatbintest.Filler(50<<20)))
	spec := []byte(`{"schema_version":1,"targets":[{"sm":"8.7","path":"/usr/local/bin/router-87"},{"sm":"11.0","path":"/usr/local/bin/router-110"}]}`)
	app = append(app, cudaLib("usr/local/bin/router-87", 30<<20, "8.7"), cudaLib("usr/local/bin/router-110", 30<<20, "11.0"),
		entry{name: "etc/jetbake/image.json", size: int64(len(spec)), write: func(w io.Writer) error { _, err := w.Write(spec); return err }})
	return [][]entry{base, torch, extra, app}
}

// writeLayer writes one layer, gzip-compressed, to path (once: a layer
// already there is kept).
func writeLayer(path string, files []entry) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer f.Close()
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, e := range files {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o755, Size: e.size, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if err := e.write(tw); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeLayers writes the stand-in image's layers under dir and returns
// their paths and the size of their files.
func writeLayers(dir string) ([]string, int64, error) {
	var paths []string
	var total int64
	for i, files := range layers() {
		p := filepath.Join(dir, fmt.Sprintf("layer%d-v2.tar.gz", i))
		for _, e := range files {
			total += e.size
		}
		if err := writeLayer(p, files); err != nil {
			return nil, 0, err
		}
		paths = append(paths, p)
	}
	return paths, total, nil
}
