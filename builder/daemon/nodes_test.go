package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
)

func TestParseNode(t *testing.T) {
	spec, err := ParseNode(NodeExample)
	require.NoError(t, err)
	require.Equal(t, NodeSpec{Name: "orin-1", Addr: "tcp://10.0.0.5:1234"}, spec)
	for _, bad := range []string{"orin-1", "=tcp://x:1", "orin-1=10.0.0.5:1234", ""} {
		_, err := ParseNode(bad)
		require.EqualError(t, err, fmt.Sprintf("node %q: want NAME=ADDR, e.g. orin-1=tcp://10.0.0.5:1234", bad))
		var ve *NodeValueError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, bad, ve.Value)
		require.NoError(t, ve.Err)
	}
	_, err = ParseNode("orin-1=docker://x")
	require.ErrorContains(t, err, `node orin-1: BuildKit address "docker://x": scheme "docker" is not known`)
	var ve *NodeValueError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "orin-1", ve.Name)
	require.Error(t, ve.Err)
}

func TestReadBuildersFile(t *testing.T) {
	tests := []struct {
		name, body, wantErr string
	}{
		{name: "good", body: `{"nodes": [{"name": "a", "addr": "tcp://a:1234", "tls": {"ca_cert": "ca.pem", "cert": "c.pem", "key": "k.pem"}}, {"name": "b", "addr": "unix:///run/b.sock"}]}`},
		{name: "unknown field", body: `{"nodes": [{"name": "a", "address": "tcp://a:1"}]}`, wantErr: `:1:37: nodes[0].address: unknown field; fix: did you mean "addr"?`},
		{name: "no name", body: `{"nodes": [{"addr": "tcp://a:1"}]}`, wantErr: ":1:12: nodes[0].name: is empty; fix: give every node a name"},
		{name: "bad addr", body: `{"nodes": [{"name": "a", "addr": "a:1"}]}`, wantErr: `:1:34: nodes[0].addr: "a:1": is not a BuildKit address; fix: write it like "tcp://host:1234"`},
		{name: "unknown scheme", body: `{"nodes": [{"name": "a", "addr": "http://a:1"}]}`, wantErr: `nodes[0].addr: "http://a:1": BuildKit address "http://a:1": scheme "http" is not known`},
		{name: "duplicate", body: `{"nodes": [{"name": "a", "addr": "tcp://a:1"}, {"name": "a", "addr": "tcp://b:1"}]}`, wantErr: `nodes[1].name: "a": is used twice`},
		{name: "empty", body: `{"nodes": []}`, wantErr: ":1:11: nodes: lists no node"},
		{name: "nodes as an object", body: `{"nodes": {}}`, wantErr: ":1:11: nodes: must be an array, not an object"},
		{name: "cut short", body: `{"nodes": [`, wantErr: ":1:12: $: not valid JSON at line 1, column 12: unexpected end of the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "builders.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.body), 0o644))
			specs, err := ReadBuildersFile(path)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, path)
				require.ErrorContains(t, err, tt.wantErr)
				var fe *matrix.FileError
				require.ErrorAs(t, err, &fe)
				return
			}
			require.NoError(t, err)
			require.Len(t, specs, 2)
			require.Equal(t, "ca.pem", specs[0].TLS.CACert)
			require.Nil(t, specs[1].TLS)
		})
	}
}
