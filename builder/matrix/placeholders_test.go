package matrix

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A valid matrix that keeps init's placeholders parses, with a warning per
// field placed on its line; the user's own values give none.
func TestPlaceholderWarnings(t *testing.T) {
	tests := []struct {
		name, repository, source string
		want                     []string
	}{
		{"both", PlaceholderRepository, PlaceholderSource, []string{"image.repository", "image.source"}},
		{"the repository", PlaceholderRepository, "https://github.com/acme/router", []string{"image.repository"}},
		{"the source", "ghcr.io/acme/router", PlaceholderSource, []string{"image.source"}},
		{"none", "ghcr.io/acme/router", "https://github.com/acme/router", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := shippedTree(t)
			section(doc, "image")["repository"] = tt.repository
			section(doc, "image")["source"] = tt.source
			data, err := json.MarshalIndent(doc, "", "  ")
			require.NoError(t, err)
			m, err := Parse(data)
			require.NoError(t, err)
			var paths []string
			for _, w := range m.Warnings {
				paths = append(paths, w.Path)
				require.NotZero(t, w.Line, w.Path)
				require.Contains(t, w.Message, "is the placeholder 'jetbake init' writes")
				require.Contains(t, w.Fix, "ORG/NAME")
			}
			require.Equal(t, tt.want, paths)
		})
	}
}
