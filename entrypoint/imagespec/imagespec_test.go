package imagespec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{name: "minimal", in: `{"schema_version":1,"router":"r","targets":[{"sm":"8.7","path":"/usr/local/bin/router-87"}]}`},
		{name: "not JSON", in: `{`, wantErr: "image description is not valid JSON: unexpected end of JSON input"},
		{name: "old schema", in: `{"router":"r"}`, wantErr: "schema_version is 0, this entrypoint reads 1"},
		{name: "no router", in: `{"schema_version":1}`, wantErr: "router is empty"},
		{name: "no targets", in: `{"schema_version":1,"router":"r","targets":[]}`, wantErr: "targets is empty: the image holds no router binary"},
		{name: "target without path", in: `{"schema_version":1,"router":"r","targets":[{"sm":"8.7"}]}`, wantErr: "targets[0] needs both sm and path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Parse([]byte(tt.in))
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				require.Nil(t, img)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "r", img.Router)
		})
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "image.json")
	_, err := Read(p)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, os.WriteFile(p, []byte(`{"schema_version":1}`), 0o644))
	_, err = Read(p)
	require.EqualError(t, err, p+": router is empty")
}
