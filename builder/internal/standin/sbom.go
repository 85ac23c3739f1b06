package standin

import (
	"context"
	"os"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// SBOMScannerPath is where the stand-in SBOM scanner is in its image.
const SBOMScannerPath = "/bin/sbomscanner"

// SBOMScannerImage is the stand-in for BuildKit's SBOM scanner image
// (docker/buildkit-syft-scanner): the sbomscanner command at binary,
// compiled for goarch, as its entrypoint. BuildKit runs the scanner on its
// worker's native platform (control.go, the scanner platform of the SBOM
// processor), not the built image's: the test machine's.
func SBOMScannerImage(binary, goarch string) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	l := newLayer()
	l.file(SBOMScannerPath[1:], 0o755, data)
	layer, err := l.build()
	if err != nil {
		return nil, err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS: "linux", Architecture: goarch, Created: v1.Time{Time: time.Unix(0, 0).UTC()},
		Config: v1.Config{Entrypoint: []string{SBOMScannerPath}}, RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	return mutate.AppendLayers(img, layer)
}

// PushSBOMScanner pushes the stand-in SBOM scanner, the sbomscanner
// command compiled for this machine at binary, to the registry at host and
// returns its reference.
func PushSBOMScanner(ctx context.Context, binary, host string) (string, error) {
	img, err := SBOMScannerImage(binary, runtime.GOARCH)
	if err != nil {
		return "", err
	}
	ref, err := name.ParseReference(host+"/jetbake/sbom-scanner:standin", name.Insecure)
	if err != nil {
		return "", err
	}
	return ref.String(), remote.Write(ref, img, remote.WithContext(ctx))
}
