package computecap

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// QuoteLimit is how many bytes of a value a message echoes.
const QuoteLimit = 80

// QuoteShort quotes s for a message as strconv.Quote does, which escapes
// control characters, so that a value given on a command line, read from a
// file or served by a registry can neither flood a terminal nor drive it.
// A value over QuoteLimit bytes is cut at a character boundary and its
// length stated: "8.78.78.7..." (100000 bytes).
func QuoteShort(s string) string {
	if len(s) <= QuoteLimit {
		return strconv.Quote(s)
	}
	cut := QuoteLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// LineColumn turns a byte offset into data into a 1-based line and column
// (the column in characters), for messages about a file: the offset is
// clamped to the data.
func LineColumn(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[lineStart:]) + 1
}
