package computecap

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func mk(major, minor int) Capability { return Capability{Major: major, Minor: minor} }

func mkA(major, minor int) Capability {
	return Capability{Major: major, Minor: minor, ArchSpecific: true}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		in   string
		want Capability
	}{
		{"8.7", mk(8, 7)},
		{"87", mk(8, 7)},
		{"sm_87", mk(8, 7)},
		{"compute_87", mk(8, 7)},
		{"  8.7\t", mk(8, 7)},
		{"\nsm_87 ", mk(8, 7)},
		{"11.0", mk(11, 0)},
		{"110", mk(11, 0)},
		{"sm_110", mk(11, 0)},
		{"compute_110", mk(11, 0)},
		{"101", mk(10, 1)},
		{"10.1", mk(10, 1)},
		{"sm_101", mk(10, 1)},
		{"121", mk(12, 1)},
		{"12.1", mk(12, 1)},
		{"9.0a", mkA(9, 0)},
		{"90a", mkA(9, 0)},
		{"sm_90a", mkA(9, 0)},
		{"compute_90a", mkA(9, 0)},
		{"sm_100a", mkA(10, 0)},
		{"5.3", mk(5, 3)},
		{"53", mk(5, 3)},
		{"7.2", mk(7, 2)},
		{"72", mk(7, 2)},
		{"1.0", mk(1, 0)},
		{"10", mk(1, 0)},
		{"99.9", mk(99, 9)},
		{"999", mk(99, 9)},
		{"sm_999a", mkA(99, 9)},
		{"8.0", mk(8, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.True(t, got.Valid())
		})
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{
		"", " ", "8", "8.", ".7", "8.7.1", "8.10", "8.77", "sm_", "compute_", "sm", "abc",
		"-8.7", "8.-7", "-87", "+87", "8,7", "8 .7", "8. 7", "sm_8x", "sm_8.7", "compute_8.7",
		"0.7", "07", "sm_07", "00", "0", "100.0", "1000", "sm_1000", "08.7", "087",
		"a", "8.7aa", "87aa", "8.7b", "87f", "sm_100f", "SM_87", "Sm_87", "sm87", "sm-87",
		"compute87", "sm_ 87", "a87", "sm_a87", "8.7 a", "\x008.7", "８.７", "8\u00a0.7",
		"1e1", "0x57", "8.7\x00",
	} {
		t.Run(in, func(t *testing.T) {
			got, err := Parse(in)
			require.Error(t, err)
			require.Equal(t, Capability{}, got)
			var pe *ParseError
			require.True(t, errors.As(err, &pe))
			require.Equal(t, in, pe.Input)
			require.Contains(t, err.Error(), `"`)
			require.Contains(t, err.Error(), "want forms like 8.7, 87, sm_87 or compute_87")
		})
	}
}

func TestParseErrorText(t *testing.T) {
	_, err := Parse("sm_8x")
	require.EqualError(t, err, `compute capability "sm_8x" is not valid: want forms like 8.7, 87, sm_87 or compute_87`)
	_, err = Parse("")
	require.EqualError(t, err, `compute capability "" is not valid: want forms like 8.7, 87, sm_87 or compute_87`)
}

func TestFormats(t *testing.T) {
	tests := []struct {
		c                   Capability
		str, sm, digits, pl string
	}{
		{mk(8, 7), "8.7", "sm_87", "87", ""},
		{mk(11, 0), "11.0", "sm_110", "110", ""},
		{mk(10, 1), "10.1", "sm_101", "101", ""},
		{mkA(9, 0), "9.0a", "sm_90a", "90a", ""},
		{mkA(10, 0), "10.0a", "sm_100a", "100a", ""},
		{mk(7, 2), "7.2", "sm_72", "72", ""},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			require.Equal(t, tt.str, tt.c.String())
			require.Equal(t, tt.sm, tt.c.SM())
			require.Equal(t, tt.digits, tt.c.Digits())
		})
	}
}

func TestIsTegraAndCanonical(t *testing.T) {
	tegra := []Capability{mk(5, 3), mk(6, 2), mk(7, 2), mk(8, 7), mk(10, 1), mk(11, 0), mkA(11, 0)}
	for _, c := range tegra {
		require.True(t, c.IsTegra(), c.String())
	}
	desktop := []Capability{mk(5, 0), mk(5, 2), mk(6, 0), mk(6, 1), mk(7, 0), mk(7, 5), mk(8, 0),
		mk(8, 6), mk(8, 9), mk(9, 0), mkA(9, 0), mk(10, 0), mk(10, 3), mk(12, 0), mk(12, 1), {}}
	for _, c := range desktop {
		require.False(t, c.IsTegra(), c.String())
	}

	require.Equal(t, mk(11, 0), mk(10, 1).Canonical())
	require.Equal(t, mkA(11, 0), mkA(10, 1).Canonical())
	for _, c := range slices.Concat(tegra[:4], desktop) {
		require.Equal(t, c, c.Canonical(), c.String())
	}
	require.Equal(t, mk(11, 0), mk(11, 0).Canonical())
}

func TestLessAndCompare(t *testing.T) {
	ordered := []Capability{mk(5, 3), mk(7, 2), mk(7, 5), mk(8, 0), mk(8, 7), mk(9, 0), mkA(9, 0),
		mk(10, 0), mkA(10, 0), mk(10, 1), mk(11, 0), mk(12, 0), mk(12, 1)}
	for i := range ordered {
		for j := range ordered {
			require.Equal(t, i < j, ordered[i].Less(ordered[j]), "%v < %v", ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			require.Equal(t, want, ordered[i].Compare(ordered[j]))
		}
	}
	shuffled := []Capability{mk(12, 1), mkA(9, 0), mk(5, 3), mk(11, 0), mk(8, 0), mk(10, 1),
		mk(9, 0), mk(12, 0), mkA(10, 0), mk(7, 5), mk(8, 7), mk(10, 0), mk(7, 2)}
	slices.SortFunc(shuffled, Capability.Compare)
	require.Equal(t, ordered, shuffled)
}

func TestValid(t *testing.T) {
	require.True(t, mk(1, 0).Valid())
	require.True(t, mk(99, 9).Valid())
	require.False(t, Capability{}.Valid())
	require.False(t, mk(0, 5).Valid())
	require.False(t, mk(100, 0).Valid())
	require.False(t, mk(8, 10).Valid())
	require.False(t, mk(8, -1).Valid())
	require.True(t, Capability{}.IsZero())
	require.False(t, mk(8, 7).IsZero())
}

func TestMustParse(t *testing.T) {
	require.Equal(t, mkA(9, 0), MustParse("sm_90a"))
	require.Panics(t, func() { MustParse("nope") })
}

func TestJSON(t *testing.T) {
	type doc struct {
		GPU     Capability   `json:"gpu"`
		Targets []Capability `json:"targets"`
		Unset   Capability   `json:"unset,omitzero"`
	}
	in := doc{GPU: mk(8, 7), Targets: []Capability{mk(11, 0), mkA(9, 0)}}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	require.JSONEq(t, `{"gpu":"8.7","targets":["11.0","9.0a"]}`, string(b))

	var out doc
	require.NoError(t, json.Unmarshal(b, &out))
	require.Equal(t, in, out)

	require.NoError(t, json.Unmarshal([]byte(`{"gpu":"sm_87","targets":["110","compute_90a"],"unset":""}`), &out))
	require.Equal(t, in, out)

	err = json.Unmarshal([]byte(`{"gpu":"8.x"}`), &out)
	require.ErrorContains(t, err, `compute capability "8.x" is not valid`)

	_, err = json.Marshal(doc{GPU: Capability{Major: 8, Minor: 12}})
	require.Error(t, err)

	b, err = json.Marshal(struct{ C Capability }{})
	require.NoError(t, err)
	require.JSONEq(t, `{"C":""}`, string(b))
}
