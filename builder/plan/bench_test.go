package plan

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
)

// bigMatrix returns a matrix of n releases built from the shipped ones, each
// with a unique name and unique tags.
func bigMatrix(b *testing.B, n int) []byte {
	b.Helper()
	m := shippedMatrix(b)
	base := m.Releases
	m.Image.Tags = []string{"{version}-{release}", "{release}"}
	m.Releases = make([]matrix.Release, n)
	for i := range m.Releases {
		r := base[i%len(base)]
		r.Name = fmt.Sprintf("r%04d-%s", i, r.Name)
		r.Tags = []string{"{release}-cuda{cuda}"}
		m.Releases[i] = r
	}
	data, err := json.Marshal(m)
	require.NoError(b, err)
	return data
}

// BenchmarkValidateAndPlan1000 parses, checks and plans a matrix of 1,000
// releases (3,000 tags, 1,400 SM targets). Goal: under 50 ms per run.
func BenchmarkValidateAndPlan1000(b *testing.B) {
	data := bigMatrix(b, 1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := matrix.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		p, err := New(m)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Releases) != 1000 {
			b.Fatalf("planned %d releases", len(p.Releases))
		}
	}
}
