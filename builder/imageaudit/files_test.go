package imageaudit_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/computecap"
)

// writeFiles writes files (path: content) under dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o755))
	}
}

// verdicts is each file's verdict per GPU: "path SM: verdict".
func verdicts(r *imageaudit.Report) []string {
	var out []string
	for _, f := range r.Files {
		for _, v := range f.Verdicts {
			out = append(out, f.Path+" "+v.GPU.String()+": "+v.Verdict.String())
		}
	}
	return out
}

// TestAuditFiles: one ELF file, or a folder that is not an OCI layout, is
// audited as an image's files are (the same reader, the same judge), each
// file shown by its path in the folder; other files are skipped, links
// are not followed (a loop, a link out of the folder), and a named pipe is
// not read.
func TestAuditFiles(t *testing.T) {
	c := fatbintest.Cubin
	orin := elf(c("8.7"))
	both := elf(c("8.7"), c("11.0"))
	partial := fatbintest.ELF(fatbintest.Fatbins(fatbin.SectionLoaded, []fatbintest.Code{c("8.7")}, []fatbintest.Code{c("8.7"), c("8.0")}))
	jit := elf(fatbintest.PTX("8.7"))
	plain := fatbintest.ELF(fatbintest.Filler(200))

	outside := t.TempDir()
	writeFiles(t, outside, map[string][]byte{"libout.so": orin})
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{
		"lib/libboth.so":                both,
		"lib/deep/er/libkernels.so":     orin,
		"lib/python3/torch/libpart.so":  partial,
		"bin/jit":                       jit,
		"bin/plain":                     plain,
		"notes.txt":                     []byte(strings.Repeat("not ELF\n", 20)),
		"small":                         []byte("\x7fELF"),
		"etc/jetbake/image.json.backup": []byte(strings.Repeat("{}", 40)),
	})
	require.NoError(t, os.Symlink("libboth.so", filepath.Join(dir, "lib", "libboth.so.1")))
	require.NoError(t, os.Symlink("..", filepath.Join(dir, "lib", "loop")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "libout.so"), filepath.Join(dir, "lib", "libout.so")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "outside")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "bin", "fifo"), 0o644))
	single := filepath.Join(dir, "lib", "libboth.so")

	for _, tc := range []struct {
		name, path string
		source     imageaudit.Source
		gpus       []computecap.Capability
		verdicts   []string
		ok         bool
		partial    bool
		elfs       int
		sentence   string
	}{
		{name: "one ELF file", path: single, source: imageaudit.SourceELF, gpus: cc("8.7", "11.0"),
			verdicts: []string{single + " 8.7: runs", single + " 11.0: runs"}, ok: true, elfs: 1,
			sentence: "every CUDA file of " + single + " (1 file) runs on Jetson Orin, SM 8.7 and Jetson Thor, SM 11.0"},
		{name: "one ELF file without code for a GPU", path: filepath.Join(dir, "lib/deep/er/libkernels.so"), source: imageaudit.SourceELF, gpus: cc("11.0"),
			verdicts: []string{filepath.Join(dir, "lib/deep/er/libkernels.so") + " 11.0: no code"}, elfs: 1,
			sentence: filepath.Join(dir, "lib/deep/er/libkernels.so") + " cannot run everywhere it should: Jetson Thor, SM 11.0: 1 file without code for it"},
		{name: "an ELF file without GPU code", path: filepath.Join(dir, "bin/plain"), source: imageaudit.SourceELF, gpus: cc("8.7"), ok: true, elfs: 1,
			sentence: "no ELF file of " + filepath.Join(dir, "bin/plain") + " holds CUDA code (1 ELF file read): nothing there needs a GPU"},
		{name: "a folder, nested", path: dir, source: imageaudit.SourceFolder, gpus: cc("8.7"),
			verdicts: []string{"bin/jit 8.7: JIT", "lib/deep/er/libkernels.so 8.7: runs", "lib/libboth.so 8.7: runs", "lib/python3/torch/libpart.so 8.7: runs"},
			ok:       true, elfs: 5, sentence: "every CUDA file of " + dir + " (4 files) runs on Jetson Orin, SM 8.7; 1 verdict rely on PTX compiled when loaded (JIT): a slower first start"},
		{name: "a folder, partial and no code", path: dir, source: imageaudit.SourceFolder, gpus: cc("11.0"),
			verdicts: []string{"bin/jit 11.0: JIT", "lib/deep/er/libkernels.so 11.0: no code", "lib/libboth.so 11.0: runs", "lib/python3/torch/libpart.so 11.0: no code"},
			elfs:     5, sentence: dir + " cannot run everywhere it should: Jetson Thor, SM 11.0: 2 files without code for it, such as lib/deep/er/libkernels.so (it holds sm_87 cubins)"},
		{name: "a folder, partial", path: filepath.Join(dir, "lib", "python3"), source: imageaudit.SourceFolder, gpus: cc("8.0"),
			verdicts: []string{"torch/libpart.so 8.0: partial"}, ok: true, partial: true, elfs: 1,
			sentence: "every CUDA file of " + filepath.Join(dir, "lib", "python3") + " (1 file) holds code for GPU with SM 8.0, but not in all its fat binaries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im, err := imageaudit.Open(t.Context(), tc.path)
			require.NoError(t, err)
			require.Equal(t, tc.source, im.Source)
			require.Nil(t, im.Image)
			_, err = im.Targets()
			var nt *imageaudit.NoTargetsError
			require.ErrorAs(t, err, &nt)
			require.Contains(t, err.Error(), " is "+tc.source.String()+", not an image: ")
			r, err := imageaudit.Audit(t.Context(), im, tc.gpus)
			require.NoError(t, err)
			require.Equal(t, tc.verdicts, verdicts(r))
			require.Equal(t, tc.ok, r.OK, r.Sentence)
			require.Equal(t, tc.partial, r.Partial, r.Sentence)
			require.Equal(t, tc.elfs, r.ELFs)
			require.Contains(t, r.Sentence, tc.sentence)
			require.Empty(t, r.Skipped)
		})
	}
}

// TestAuditFolderAsImage: the files of a folder get the verdicts the same
// files get in an image, paths aside; an image's file system unpacked into
// a folder keeps its router binaries' rule (/etc/jetbake/image.json).
func TestAuditFolderAsImage(t *testing.T) {
	c := fatbintest.Cubin
	files := map[string][]byte{
		"usr/local/bin/router-87":  elf(c("8.7")),
		"usr/local/bin/router-110": elf(c("11.0")),
		"usr/lib/libmixed.so":      fatbintest.ELF(fatbintest.Fatbins(fatbin.SectionLoaded, []fatbintest.Code{c("8.7"), c("11.0")}, []fatbintest.Code{c("8.0")})),
		"etc/jetbake/image.json": []byte(`{"schema_version":1,"targets":[{"sm":"8.7","path":"/usr/local/bin/router-87"},` +
			`{"sm":"11.0","path":"/usr/local/bin/router-110"}]}`),
	}
	var tfs []file
	for n, d := range files {
		tfs = append(tfs, file{n, d})
	}
	ri, err := imageaudit.Audit(t.Context(), &imageaudit.Opened{Name: "img", Image: image(t, nil, layer(t, tfs...))}, cc("8.7", "11.0"))
	require.NoError(t, err)
	dir := t.TempDir()
	writeFiles(t, dir, files)
	im, err := imageaudit.Open(t.Context(), dir)
	require.NoError(t, err)
	rf, err := imageaudit.Audit(t.Context(), im, cc("8.7", "11.0"))
	require.NoError(t, err)
	want := verdicts(ri)
	for i := range want {
		want[i] = strings.TrimPrefix(want[i], "/")
	}
	require.Equal(t, want, verdicts(rf))
	require.Equal(t, []string{"usr/lib/libmixed.so 8.7: partial", "usr/lib/libmixed.so 11.0: partial",
		"usr/local/bin/router-110 11.0: runs", "usr/local/bin/router-87 8.7: runs"}, verdicts(rf),
		"each router is judged for the GPU its entrypoint picks it for")
}

// TestOpenPathErrors: a path that is neither files audit reads nor an
// image is bad input, in one sentence that names the path, what it is and
// what audit takes, with no text of Go's libraries.
func TestOpenPathErrors(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	writeFiles(t, dir, map[string][]byte{
		"notes.txt":                []byte("# build notes\nnvcc -arch=sm_87 kernels.cu\n"),
		"blob.bin":                 {0, 1, 2, 3, 0xff, 0xfe, 0, 0},
		"empty":                    {},
		"wheel.whl":                []byte("PK\x03\x04rest of a zip"),
		"broken-layout/index.json": []byte("{not json"),
		"broken-layout/oci-layout": []byte(`{"imageLayoutVersion": "1.0.0"}`),
	})
	tarOf := func(name string, entries map[string]string) {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for n, d := range entries {
			require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(d)), Typeflag: tar.TypeReg}))
			_, err := tw.Write([]byte(d))
			require.NoError(t, err)
		}
		require.NoError(t, tw.Close())
		require.NoError(t, os.WriteFile(p(name), b.Bytes(), 0o644))
	}
	tarOf("rootfs.tar", map[string]string{"usr/lib/libx.so": "x"})
	tarOf("oci.tar", map[string]string{"oci-layout": `{"imageLayoutVersion": "1.0.0"}`, "index.json": `{}`})
	tarOf("two.tar", map[string]string{"manifest.json": `[{"Config":"a.json","Layers":[]},{"Config":"b.json","Layers":[]}]`})
	tarOf("cut.tar", map[string]string{"manifest.json": `[{"Config":"missing.json","Layers":["l.tar"]}]`})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("x"))
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(p("image.tar.gz"), gz.Bytes(), 0o644))
	require.NoError(t, syscall.Mkfifo(p("fifo"), 0o644))
	// An OCI layout folder still opens as an image.
	lp, err := layout.Write(p("oci"), empty.Index)
	require.NoError(t, err)
	require.NoError(t, lp.AppendImage(image(t, nil, layer(t, file{"usr/lib/libx.so", elf(fatbintest.Cubin("8.7"))}))))

	const takes = "jetbake audit takes an ELF file (an executable or a shared library), a folder of files, an OCI layout folder, " +
		"a Docker tarball (docker save IMAGE -o image.tar) or an image reference such as ghcr.io/acme/router:1.0"
	for _, tc := range []struct{ path, says string }{
		{p("notes.txt"), p("notes.txt") + " is a text file, not something jetbake audit reads: " + takes},
		{p("blob.bin"), p("blob.bin") + " is neither an ELF file nor a tar archive, not something jetbake audit reads: " + takes},
		{p("empty"), p("empty") + " is an empty file, not something jetbake audit reads: " + takes},
		{p("wheel.whl"), p("wheel.whl") + " is a zip archive (a Python wheel is one): extract it into a folder (unzip " + p("wheel.whl") + " -d files) and audit the folder; " + takes},
		{p("image.tar.gz"), p("image.tar.gz") + " is gzip-compressed: decompress it first (gunzip -k " + p("image.tar.gz") + ") and audit what it holds; " + takes},
		{p("rootfs.tar"), p("rootfs.tar") + " is a tar archive but not a Docker tarball (it has no manifest.json): to audit the files in it, extract it into a folder (mkdir files && tar -xf " + p("rootfs.tar") + " -C files) and audit the folder; " + takes},
		{p("oci.tar"), p("oci.tar") + " is a tar archive of an OCI layout, not a Docker tarball: extract it into a folder (mkdir oci && tar -xf " + p("oci.tar") + " -C oci) and audit the folder"},
		{p("two.tar"), p("two.tar") + " is a Docker tarball of 2 images: save the one to audit alone (docker save IMAGE -o image.tar)"},
		{p("cut.tar"), p("cut.tar") + " is a Docker tarball whose manifest.json does not lead to a readable image (its config or a layer is missing or damaged): save the image again (docker save IMAGE -o image.tar)"},
		{p("fifo"), p("fifo") + " is a named pipe (FIFO), not a file jetbake audit reads: " + takes},
		{p("missing.so"), p("missing.so") + " does not exist (no such file or folder): " + takes},
		{p("broken-layout"), p("broken-layout") + " is a folder with an OCI layout's files (oci-layout, or index.json and blobs), but not a readable OCI layout (its index.json, or an index it names, is missing or damaged): write the layout again (docker buildx build --output type=oci,tar=false,dest=DIR)"},
	} {
		_, err := imageaudit.Open(t.Context(), tc.path)
		var ie *imageaudit.InputError
		require.ErrorAs(t, err, &ie, tc.path)
		require.True(t, ie.BadInput())
		require.Equal(t, tc.says, err.Error())
		for _, g := range []string{"archive/tar", "invalid tar header", "open ", "unexpected EOF", "json:"} {
			require.NotContains(t, err.Error(), g)
		}
	}
	im, err := imageaudit.Open(t.Context(), p("oci"))
	require.NoError(t, err, "an OCI layout is an image")
	require.Equal(t, imageaudit.SourceImage, im.Source)
	require.NotNil(t, im.Image)
}

// TestAuditFolderUnreadable: a folder under the audited one that cannot
// be read is listed as not read; the rest is audited.
func TestAuditFolderUnreadable(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"lib/libx.so": elf(fatbintest.Cubin("8.7")), "locked/liby.so": elf(fatbintest.Cubin("8.7"))})
	require.NoError(t, os.Chmod(filepath.Join(dir, "locked"), 0))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	im, err := imageaudit.Open(t.Context(), dir)
	require.NoError(t, err)
	r, err := imageaudit.Audit(t.Context(), im, cc("8.7"))
	require.NoError(t, err)
	require.True(t, r.OK, r.Sentence)
	if os.Geteuid() == 0 {
		// A folder's mode does not stop root (make test runs as root):
		// both files are read.
		require.Len(t, r.Files, 2)
		return
	}
	require.Equal(t, []string{"lib/libx.so 8.7: runs"}, verdicts(r))
	require.Equal(t, []string{"locked: the folder cannot be read (permission denied)"}, r.Skipped)
}
