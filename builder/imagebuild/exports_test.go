package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOutputPath(t *testing.T) {
	tests := []struct {
		name  string
		out   Output
		multi bool
		want  string
	}{
		{name: "oci single", out: Output{Type: "oci", Dest: "out"}, want: "out"},
		{name: "docker single", out: Output{Type: "docker", Dest: "out/tei.tar"}, want: "out/tei.tar"},
		{name: "oci multi", out: Output{Type: "oci", Dest: "out"}, multi: true, want: "out/jetpack6.2"},
		{name: "docker multi", out: Output{Type: "docker", Dest: "out/tei.tar"}, multi: true, want: "out/tei-jetpack6.2.tar"},
		{name: "docker multi without extension", out: Output{Type: "docker", Dest: "out/tei"}, multi: true, want: "out/tei-jetpack6.2.tar"},
		{name: "docker multi dotted folder", out: Output{Type: "docker", Dest: "v1.2/tei"}, multi: true, want: "v1.2/tei-jetpack6.2.tar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, outputPath(tt.out, "jetpack6.2", tt.multi))
		})
	}
}
