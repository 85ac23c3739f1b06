// Command sbomscanner stands in for BuildKit's SBOM scanner image
// (docker/buildkit-syft-scanner, which cannot be pulled here). It keeps
// the scanner protocol of BuildKit's docs/attestations/sbom-protocol.md:
// BuildKit mounts the image's root file system read-only at
// $BUILDKIT_SCAN_SOURCE, optional extra file systems under
// $BUILDKIT_SCAN_SOURCE_EXTRAS, and collects every
// $BUILDKIT_SCAN_DESTINATION/<scan>.spdx.json as an SPDX attestation. Like
// the real scanner it fails when a required variable is missing, writes
// one document per file system, named after the file system's folder, and
// nothing for file systems it was not given. Each document is an in-toto
// statement whose predicate is the SPDX document, as
// docker/buildkit-syft-scanner writes it: BuildKit decodes every file of
// the destination as a statement and refuses one of another predicate type
// (exporter/attestation/unbundle.go).
//
// Its SPDX 2.3 document lists one package per executable file under
// usr/local/bin (the router binaries and jetbake's entrypoint), with the
// file's SHA-256, so that a test can tell that it scanned the built image.
package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sbomscanner:", err)
		os.Exit(1)
	}
}

func run() error {
	dest, src := os.Getenv("BUILDKIT_SCAN_DESTINATION"), os.Getenv("BUILDKIT_SCAN_SOURCE")
	if dest == "" || src == "" {
		return errors.New("BUILDKIT_SCAN_DESTINATION and BUILDKIT_SCAN_SOURCE must be set (BuildKit's SBOM scanner protocol)")
	}
	roots := []string{src}
	if extras := os.Getenv("BUILDKIT_SCAN_SOURCE_EXTRAS"); extras != "" {
		entries, _ := os.ReadDir(extras) // a missing folder means no extras
		for _, e := range entries {
			if e.IsDir() {
				roots = append(roots, filepath.Join(extras, e.Name()))
			}
		}
	}
	for _, root := range roots {
		doc, err := scan(root)
		if err != nil {
			return err
		}
		data, err := json.MarshalIndent(statement{Type: "https://in-toto.io/Statement/v0.1", PredicateType: "https://spdx.dev/Document", Predicate: doc}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dest, filepath.Base(root)+".spdx.json"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// statement is an in-toto statement without subjects: BuildKit adds the
// image as the subject.
type statement struct {
	Type          string   `json:"_type"`
	PredicateType string   `json:"predicateType"`
	Predicate     document `json:"predicate"`
}

// document is the part of an SPDX 2.3 JSON document the stand-in writes.
type document struct {
	SPDXVersion       string       `json:"spdxVersion"`
	DataLicense       string       `json:"dataLicense"`
	SPDXID            string       `json:"SPDXID"`
	Name              string       `json:"name"`
	DocumentNamespace string       `json:"documentNamespace"`
	CreationInfo      creationInfo `json:"creationInfo"`
	Packages          []pkg        `json:"packages"`
}

type creationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type pkg struct {
	Name             string     `json:"name"`
	SPDXID           string     `json:"SPDXID"`
	DownloadLocation string     `json:"downloadLocation"`
	FilesAnalyzed    bool       `json:"filesAnalyzed"`
	Checksums        []checksum `json:"checksums"`
}

type checksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

// scan lists the executables under root's usr/local/bin.
func scan(root string) (document, error) {
	doc := document{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT", Name: filepath.Base(root),
		CreationInfo: creationInfo{Created: "1970-01-01T00:00:00Z", Creators: []string{"Tool: jetbake-standin-sbomscanner"}},
	}
	bin := filepath.Join(root, "usr", "local", "bin")
	err := filepath.WalkDir(bin, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		doc.Packages = append(doc.Packages, pkg{
			Name: d.Name(), SPDXID: "SPDXRef-Package-" + d.Name(), DownloadLocation: "NOASSERTION",
			Checksums: []checksum{{Algorithm: "SHA256", Value: hex.EncodeToString(sum[:])}},
		})
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return doc, err
	}
	slices.SortFunc(doc.Packages, func(a, b pkg) int { return cmp.Compare(a.Name, b.Name) })
	h := sha256.New()
	for _, p := range doc.Packages {
		h.Write([]byte(p.Checksums[0].Value))
	}
	sum := h.Sum(nil)
	doc.DocumentNamespace = "https://jetbake.invalid/standin-sbomscanner/" + hex.EncodeToString(sum[:8])
	return doc, nil
}
