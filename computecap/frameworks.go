package computecap

import "strings"

// FrameworkPyTorch names the PyTorch family of framework containers, as an
// app's framework field writes it.
const FrameworkPyTorch = "pytorch"

// FrameworkContainer is one of NVIDIA's framework containers for Jetson
// (its PyTorch containers): one row of the table. Empty CUDA, PyTorch and
// Python mean that the sources do not say; Unknown writes them for messages.
type FrameworkContainer struct {
	// Framework is the family, FrameworkPyTorch.
	Framework string `json:"framework"`
	// Repository is the image repository, "nvcr.io/nvidia/pytorch".
	Repository string `json:"repository"`
	// Tag is the image tag, such as "25.06-py3-igpu".
	Tag string `json:"tag"`
	// Line is the JetPack line the container is built for: "6.2" covers
	// 6.2 and 6.2.1 (see LineCovers).
	Line string `json:"line"`
	// Flavour is the container's CUDA: the Tegra (-igpu) build or the
	// unified arm64 server (SBSA) build.
	Flavour Flavour `json:"flavour"`
	// CUDA, PyTorch and Python are the versions inside, such as "12.9",
	// "2.8.0a0" and "3.12"; "" when unknown.
	CUDA    string `json:"cuda,omitempty"`
	PyTorch string `json:"pytorch,omitempty"`
	Python  string `json:"python,omitempty"`
	// Source is the public page the row comes from.
	Source string `json:"source"`
	// Note qualifies a row that is a report rather than NVIDIA's table.
	Note string `json:"note,omitempty"`
}

// Ref is the row's image reference, repository:tag.
func (c FrameworkContainer) Ref() string { return c.Repository + ":" + c.Tag }

// Unknown returns v, or "unknown" when the row leaves it empty.
func Unknown(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}

// frameworkRepository reports whether repo (as SplitImageRef writes it)
// is row's repository, directly or on a mirror that keeps its path
// ("127.0.0.1:5000/nvidia/pytorch" for "nvcr.io/nvidia/pytorch").
func frameworkRepository(row FrameworkContainer, repo string) bool {
	if repo == row.Repository {
		return true
	}
	_, rowPath, _ := strings.Cut(row.Repository, "/")
	host, path, _ := strings.Cut(repo, "/")
	return path == rowPath && strings.ContainsAny(host, ".:")
}

// SameFrameworkRepository reports whether ref is in row's repository,
// directly or on a mirror that keeps its path.
func (t *Table) SameFrameworkRepository(row FrameworkContainer, ref string) bool {
	repo, _ := SplitImageRef(ref)
	return frameworkRepository(row, repo)
}

// FrameworkRepositoryOf reports whether ref's repository is one of the
// table's framework repositories (a mirror host counts), and which family;
// a tag the table has no row for is still in a known repository.
func (t *Table) FrameworkRepositoryOf(ref string) (framework string, ok bool) {
	repo, _ := SplitImageRef(ref)
	for _, row := range t.Frameworks {
		if frameworkRepository(row, repo) {
			return row.Framework, true
		}
	}
	return "", false
}

// FrameworkContainerOf finds the row of image reference ref, with or
// without a digest, on the registry or a mirror of it. False means the
// table has no row for that tag: the caller says so rather than guess.
func (t *Table) FrameworkContainerOf(ref string) (FrameworkContainer, bool) {
	repo, tag := SplitImageRef(ref)
	for _, row := range t.Frameworks {
		if row.Tag == tag && frameworkRepository(row, repo) {
			return row, true
		}
	}
	return FrameworkContainer{}, false
}

// FrameworkContainersFor lists the rows of a framework built for a JetPack
// version (their line covers it), newest first: the fix for a base of
// the wrong line names the first.
func (t *Table) FrameworkContainersFor(framework, jetpack string) []FrameworkContainer {
	var out []FrameworkContainer
	for i := len(t.Frameworks) - 1; i >= 0; i-- {
		if row := t.Frameworks[i]; row.Framework == framework && LineCovers(row.Line, jetpack) {
			out = append(out, row)
		}
	}
	return out
}
