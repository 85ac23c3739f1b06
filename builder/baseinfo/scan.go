package baseinfo

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/jetbake/jetbake/computecap"
)

// Paths in the image that tell its CUDA, without the leading "/".
const (
	// cudaLink is where NVIDIA's images put the CUDA in use: a link to
	// /usr/local/cuda-X.Y (directly, or through /etc/alternatives/cuda as
	// the CUDA packages' update-alternatives does).
	cudaLink = "usr/local/cuda"
	// tegraRelease is L4T's release file, in the L4T images.
	tegraRelease = "etc/nv_tegra_release"
)

// Bounds on what a scan keeps: real version.json files are a few KiB and
// nv_tegra_release is one line.
const (
	maxVersionJSON  = 256 << 10
	maxTegraRelease = 4 << 10
	maxLinks        = 1024
	maxHops         = 8
)

// scanner collects, from an image's flattened file system (every entry as
// the top layer that has it shows it), the few entries that tell its CUDA.
type scanner struct {
	// links are the symbolic links under usr/local and etc/alternatives,
	// by name, with their targets made absolute (without the leading "/").
	links map[string]string
	// dirs are the CUDA trees (usr/local/cuda*) known to be folders.
	dirs map[string]bool
	// versions are the version.json files of the CUDA trees.
	versions map[string][]byte
	// targets are the names in each CUDA tree's targets folder.
	targets map[string][]string
	// tegra is /etc/nv_tegra_release, when found.
	tegra      []byte
	foundTegra bool
	// read is how many bytes of file content the layers held so far.
	read int64
}

func newScanner() *scanner {
	return &scanner{links: map[string]string{}, dirs: map[string]bool{}, versions: map[string][]byte{}, targets: map[string][]string{}}
}

// scanImage reads img's layers from the top through go-containerregistry's
// mutate.Extract, which applies whiteouts and opaque folders, and stops as
// soon as the CUDA in use is found, or once limit bytes of file content
// have gone by (partial is then set).
func scanImage(img v1.Image, limit int64) (s *scanner, partial bool, err error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	s = newScanner()
	tr := tar.NewReader(rc)
	for !s.complete() {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			// mutate.Extract ends the tar stream before it reports a
			// layer's error: the error comes after the end.
			if _, err := io.Copy(io.Discard, rc); err != nil {
				return nil, false, fmt.Errorf("read the layers: %w", err)
			}
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("read the layers: %w", err)
		}
		if err := s.add(hdr, tr); err != nil {
			return nil, false, err
		}
		// Checked before the next entry skips this one's content: a
		// sparse entry can claim more than the layer holds.
		if s.read > limit {
			return s, true, nil
		}
	}
	return s, false, nil
}

// add records one entry of the flattened file system.
func (s *scanner) add(hdr *tar.Header, body io.Reader) error {
	s.read += max(hdr.Size, 0)
	name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
	if name == tegraRelease && hdr.Typeflag == tar.TypeReg {
		data, err := readCapped(body, maxTegraRelease, name)
		s.tegra, s.foundTegra = data, true
		return err
	}
	if hdr.Typeflag == tar.TypeSymlink && linkOfInterest(name) && len(s.links) < maxLinks {
		target := hdr.Linkname
		if !path.IsAbs(target) {
			target = path.Join("/"+path.Dir(name), target)
		}
		s.links[name] = strings.TrimPrefix(path.Clean(target), "/")
		return nil
	}
	tree, rest, ok := cudaTree(name)
	if !ok {
		return nil
	}
	if rest == "" {
		if hdr.Typeflag == tar.TypeDir {
			s.dirs[tree] = true
		}
		return nil
	}
	// An entry inside the tree: the tree is a folder in this image.
	s.dirs[tree] = true
	switch {
	case rest == "version.json" && hdr.Typeflag == tar.TypeReg:
		data, err := readCapped(body, maxVersionJSON, name)
		s.versions[tree] = data
		return err
	case strings.HasPrefix(rest, "targets/"):
		t, _, _ := strings.Cut(strings.TrimPrefix(rest, "targets/"), "/")
		if t != "" && !slices.Contains(s.targets[tree], t) && len(s.targets[tree]) < 16 {
			s.targets[tree] = append(s.targets[tree], t)
		}
	}
	return nil
}

// linkOfInterest reports whether a link can be on the way from
// /usr/local/cuda to the CUDA tree: one in /usr/local (cuda, cuda-12) or
// in /etc/alternatives, where the CUDA packages' update-alternatives puts
// its links. The many library links inside a tree are not.
func linkOfInterest(name string) bool {
	dir := path.Dir(name)
	return dir == "usr/local" || dir == "etc/alternatives"
}

// cudaTree splits a path under /usr/local/cuda* into the tree
// ("usr/local/cuda-12.6") and the rest ("targets/aarch64-linux/lib").
func cudaTree(name string) (tree, rest string, ok bool) {
	after, ok := strings.CutPrefix(name, "usr/local/")
	if !ok || !strings.HasPrefix(after, "cuda") {
		return "", "", false
	}
	dir, rest, _ := strings.Cut(after, "/")
	return "usr/local/" + dir, rest, true
}

// readCapped reads a file's content, refusing one larger than limit.
func readCapped(r io.Reader, limit int64, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read /%s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("/%s is larger than %d KiB: not the file NVIDIA's images carry", name, limit>>10)
	}
	return data, nil
}

// inUse follows /usr/local/cuda to the tree it is. ok is false while a
// link on the way, or the tree itself, has not been seen.
func (s *scanner) inUse() (tree string, ok bool) {
	p := cudaLink
	for range maxHops {
		next, isLink := s.links[p]
		if !isLink {
			break
		}
		p = next
	}
	if _, isLink := s.links[p]; isLink || !s.dirs[p] {
		return "", false
	}
	return p, true
}

// complete reports whether the CUDA in use is found with its version.json
// and its targets folder: no lower entry can change what was found.
func (s *scanner) complete() bool {
	tree, ok := s.inUse()
	return ok && s.versions[tree] != nil && len(s.targets[tree]) > 0
}

// tree is the CUDA tree that tells the image's CUDA: the one /usr/local/cuda
// is, else the only tree there is; "" when none.
func (s *scanner) tree() string {
	if tree, ok := s.inUse(); ok {
		return tree
	}
	var trees []string
	for t := range s.dirs {
		if s.versions[t] != nil || len(s.targets[t]) > 0 {
			trees = append(trees, t)
		}
	}
	if len(trees) == 1 {
		return trees[0]
	}
	return ""
}

// info is what the scan found, with the config's CUDA_VERSION as the
// fallback for the version.
func (s *scanner) info(env []string) (Info, error) {
	var info Info
	tree := s.tree()
	if data := s.versions[tree]; tree != "" && data != nil {
		full, _, err := ParseVersionJSON(data)
		if err != nil {
			return Info{}, fmt.Errorf("/%s/version.json: %w", tree, err)
		}
		info.CUDA = full
		info.From = append(info.From, "/"+tree+"/version.json")
	} else if v := cudaFromEnv(env); v != "" {
		if _, err := computecap.ParseCUDAVersion(v); err != nil {
			return Info{}, fmt.Errorf("config: CUDA_VERSION: %w", err)
		}
		info.CUDA = v
		info.From = append(info.From, "config: CUDA_VERSION")
	}
	var flavours []computecap.Flavour
	for _, t := range s.targets[tree] {
		if f, ok := computecap.FlavourOfTarget(t); ok && !slices.Contains(flavours, f) {
			flavours = append(flavours, f)
			info.From = append(info.From, "/"+tree+"/targets/"+t)
		}
	}
	switch {
	case len(flavours) == 1:
		info.Flavour = flavours[0]
	case len(flavours) == 0 && s.foundTegra:
		info.Flavour = computecap.FlavourTegra
		info.From = append(info.From, "/"+tegraRelease)
	}
	if s.foundTegra {
		if v, err := ParseTegraRelease(s.tegra); err == nil {
			info.L4T = v.String()
		}
	}
	return info, nil
}

// Scanner is what ReadImage reads, one entry at a time, for a walk over
// an image's layers that feeds other readers too (package layerwalk's,
// which gives every entry: folders and links as well as files). File
// consumes an entry's content only for the CUDA marker files it reads
// (/etc/nv_tegra_release and a CUDA tree's version.json), and Wants says
// which those are, so that the walk gives the others to other readers.
type Scanner struct{ s *scanner }

// NewScanner returns an empty Scanner.
func NewScanner() *Scanner { return &Scanner{s: newScanner()} }

// Wants reports whether File reads the content of the entry hdr.
func (sc *Scanner) Wants(hdr *tar.Header) bool {
	if hdr.Typeflag != tar.TypeReg {
		return false
	}
	name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
	_, rest, ok := cudaTree(name)
	return name == tegraRelease || ok && rest == "version.json"
}

// File records one entry.
func (sc *Scanner) File(hdr *tar.Header, r io.Reader) error { return sc.s.add(hdr, r) }

// Info is what the entries held, with the config's environment (env) as
// the fallback for the CUDA version; Digest is left empty.
func (sc *Scanner) Info(env []string) (Info, error) { return sc.s.info(env) }
