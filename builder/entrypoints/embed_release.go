//go:build jetbake_embed

package entrypoints

import (
	"embed"
	"io/fs"
)

// files holds the linux/arm64 binaries `make release` puts in
// embedded/linux-arm64 before building jetbake with -tags jetbake_embed.
//
//go:embed embedded/linux-arm64
var files embed.FS

// embedded returns the binaries built into this jetbake.
func embedded() fs.FS {
	sub, err := fs.Sub(files, "embedded/linux-arm64")
	if err != nil {
		return nil
	}
	return sub
}
