//go:build !jetbake_embed

package entrypoints

import "io/fs"

// embedded returns nil: only `make release` (build tag jetbake_embed)
// embeds the binaries.
func embedded() fs.FS { return nil }
