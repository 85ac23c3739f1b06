package computecap

import (
	"strings"
)

// TagScheme says what the tags of a base repository tell about the CUDA
// inside its images.
type TagScheme string

// The tag schemes of NVIDIA's base repositories.
const (
	// TagCUDA tags start with the CUDA version: "12.6.11-runtime",
	// "13.0.1-devel-ubuntu24.04".
	TagCUDA TagScheme = "cuda"
	// TagL4T tags are "r" and the L4T version, "r36.4.0": the image holds
	// the CUDA of that L4T's JetPack.
	TagL4T TagScheme = "l4t"
	// TagNoCUDA images hold no CUDA (l4t-base from L4T R34 on).
	TagNoCUDA TagScheme = "no-cuda"
)

// BaseRepository is a repository of NVIDIA base images whose CUDA flavour
// is known: one row of the table.
type BaseRepository struct {
	// Repository is the image repository without a tag, such as
	// "nvcr.io/nvidia/l4t-jetpack".
	Repository string `json:"repository"`
	// Flavour is the CUDA build its linux/arm64 images carry.
	Flavour Flavour `json:"flavour"`
	// Tags says what a tag tells about the CUDA inside.
	Tags TagScheme `json:"tags"`
}

// BaseImage is a base image known to exist, offered when a release's base
// does not fit it.
type BaseImage struct {
	// Ref is the full reference, such as "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime".
	Ref string `json:"ref"`
	// Devel marks an image with the CUDA toolkit (nvcc, headers, the
	// driver stub): one a router can be compiled in.
	Devel bool `json:"devel,omitempty"`
}

// BaseFacts is what the table tells of a base image from its reference
// alone, before the image is read.
type BaseFacts struct {
	// Repository is the row's repository.
	Repository string
	// Flavour is the CUDA build of the repository's arm64 images.
	Flavour Flavour
	// CUDA is the CUDA version the tag names, or zero when the tag does not
	// say (or the image has none; see NoCUDA).
	CUDA CUDAVersion
	// NoCUDA is set for repositories whose images hold no CUDA.
	NoCUDA bool
}

// Name is the flavour as messages write it: "Tegra" or "SBSA".
func (f Flavour) Name() string {
	switch f {
	case FlavourTegra:
		return "Tegra"
	case FlavourSBSA:
		return "SBSA"
	}
	return string(f)
}

// WithArticle is Name after its indefinite article: "a Tegra", "an SBSA".
func (f Flavour) WithArticle() string {
	if f == FlavourSBSA {
		return "an " + f.Name()
	}
	return "a " + f.Name()
}

// TargetDir is the folder under the CUDA tree that holds a flavour's
// libraries: NVIDIA's Tegra CUDA packages install targets/aarch64-linux,
// the arm64 server (SBSA) ones targets/sbsa-linux.
func (f Flavour) TargetDir() string {
	switch f {
	case FlavourTegra:
		return "targets/aarch64-linux"
	case FlavourSBSA:
		return "targets/sbsa-linux"
	}
	return ""
}

// FlavourOfTarget is the flavour of a CUDA targets folder name
// ("aarch64-linux" or "sbsa-linux"); false for others (x86_64-linux).
func FlavourOfTarget(name string) (Flavour, bool) {
	for _, f := range []Flavour{FlavourTegra, FlavourSBSA} {
		if "targets/"+name == f.TargetDir() {
			return f, true
		}
	}
	return "", false
}

// FlavourMismatch says why a base of flavour base cannot serve a JetPack
// release of flavour want, in one clause for messages.
func FlavourMismatch(base, want Flavour) string {
	switch {
	case base == FlavourSBSA && want == FlavourTegra:
		return "an SBSA CUDA build does not run on the Tegra GPU driver of JetPack 6 and earlier"
	case base == FlavourTegra && want == FlavourSBSA:
		return "JetPack 7 and later run NVIDIA's arm64 server (SBSA) CUDA, and Tegra CUDA images belong to JetPack 6 and earlier"
	}
	return "the CUDA build does not match the release's"
}

// SplitImageRef splits an image reference into its repository (Docker
// Hub's names written in full, "docker.io/nvidia/cuda") and its tag,
// dropping a digest; the tag is "" when the reference has none. It is no
// validator: package matrix checks references against the schema first.
func SplitImageRef(ref string) (repository, tag string) {
	ref = strings.TrimSpace(ref)
	if at := strings.IndexByte(ref, '@'); at >= 0 {
		ref = ref[:at]
	}
	if colon := strings.LastIndexByte(ref, ':'); colon > strings.LastIndexByte(ref, '/') {
		ref, tag = ref[:colon], ref[colon+1:]
	}
	first, _, found := strings.Cut(ref, "/")
	switch {
	case !found:
		ref = "docker.io/library/" + ref
	case first == "index.docker.io":
		ref = "docker.io/" + strings.TrimPrefix(ref, "index.docker.io/")
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		ref = "docker.io/" + ref
	}
	return ref, tag
}

// BaseRepositoryOf finds the row of the repository of ref.
func (t *Table) BaseRepositoryOf(ref string) (BaseRepository, bool) {
	repo, _ := SplitImageRef(ref)
	for _, r := range t.BaseRepositories {
		if r.Repository == repo {
			return r, true
		}
	}
	return BaseRepository{}, false
}

// BaseFactsOf tells what the table knows of the base image ref: its
// repository's flavour and the CUDA version its tag names. False when the
// repository is not in the table: such a base is known only once read.
func (t *Table) BaseFactsOf(ref string) (BaseFacts, bool) {
	row, ok := t.BaseRepositoryOf(ref)
	if !ok {
		return BaseFacts{}, false
	}
	_, tag := SplitImageRef(ref)
	f := BaseFacts{Repository: row.Repository, Flavour: row.Flavour}
	head, _, _ := strings.Cut(tag, "-")
	switch row.Tags {
	case TagNoCUDA:
		f.NoCUDA = true
	case TagCUDA:
		if v, err := ParseCUDAVersion(head); err == nil {
			f.CUDA = v
		}
	case TagL4T:
		if l4t, err := ParseL4TVersion(strings.TrimPrefix(head, "r")); err == nil && strings.HasPrefix(head, "r") {
			if v, ok := t.DriverCUDAForL4T(l4t); ok {
				f.CUDA = v
			}
		}
	}
	return f, true
}

// FlavourOfJetPack is the CUDA flavour of a JetPack version's L4T line;
// false when the table does not know the version.
func (t *Table) FlavourOfJetPack(jetpack string) (Flavour, bool) {
	major, ok := t.L4TMajorForJetPack(jetpack)
	if !ok {
		return "", false
	}
	f, _, ok := t.FlavourOfL4T(major)
	return f, ok
}

// BasesFitting lists the known base images of flavour f with CUDA cuda
// (major and minor): devel ones only when devel is set (a build base),
// else runtime ones first and then devel ones (which serve as runtime
// bases too, only larger). When none has that CUDA, the images of the
// flavour with other CUDA versions come instead, in the same order, so
// that a fix can always name one.
func (t *Table) BasesFitting(f Flavour, cuda CUDAVersion, devel bool) []string {
	// Ranks: 0 the CUDA and kind asked for, 1 the CUDA in a devel image
	// for a runtime base, 2 and 3 the same with another CUDA.
	var ranked [4][]string
	for _, img := range t.BaseImages {
		facts, ok := t.BaseFactsOf(img.Ref)
		if !ok || facts.Flavour != f || facts.NoCUDA || (devel && !img.Devel) {
			continue
		}
		r := 0
		if facts.CUDA != cuda {
			r = 2
		}
		if !devel && img.Devel {
			r++
		}
		ranked[r] = append(ranked[r], img.Ref)
	}
	if len(ranked[0])+len(ranked[1]) > 0 {
		return append(ranked[0], ranked[1]...)
	}
	return append(ranked[2], ranked[3]...)
}
