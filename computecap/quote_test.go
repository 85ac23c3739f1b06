package computecap

import (
	"strings"
	"testing"
)

func TestQuoteShort(t *testing.T) {
	long := strings.Repeat("8.7", 100000/3)
	tests := map[string]string{
		"8.7":                         `"8.7"`,
		"\x1b]0;title\x07\x1b[2J":     `"\x1b]0;title\a\x1b[2J"`,
		long:                          `"` + long[:80] + `"... (99999 bytes)`,
		strings.Repeat("é", 50):       `"` + strings.Repeat("é", 40) + `"... (100 bytes)`,
		strings.Repeat("x", 79) + "é": `"` + strings.Repeat("x", 79) + `"... (81 bytes)`,
	}
	for in, want := range tests {
		if got := QuoteShort(in); got != want {
			t.Errorf("QuoteShort(%.20q...) = %.100s, want %.100s", in, got, want)
		}
	}
	if _, err := Parse(long); len(err.Error()) > 200 {
		t.Errorf("Parse echoes %d bytes of a long input", len(err.Error()))
	}
}
