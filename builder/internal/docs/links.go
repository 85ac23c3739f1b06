// Package docs checks the repository's Markdown as GitHub shows it: every
// relative link names a file of the repository and, after '#', a heading of
// that file, by the anchor GitHub gives the heading. Its tests check
// README.md, CONTRIBUTING.md, SECURITY.md, CHANGELOG.md and docs/, and
// every page of docs/ and anchor that the code, scripts and workflows name.
//
// The files are parsed with goldmark and its GitHub Flavored Markdown
// extension, so that a link is what GitHub renders as one: not the text of
// a code span or a code block, and a reference link by its definition.
// Links written as raw HTML (<a href>) are not seen.
package docs

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// A Link is a relative link or image of a Markdown file.
type Link struct {
	// File is the linking file, slash-separated and relative to the
	// repository's root.
	File string
	// Line is the line of File the link is on, from 1.
	Line int
	// Dest is the link's destination as written.
	Dest string
}

// A Broken link does not resolve; Reason says what is missing.
type Broken struct {
	Link
	Reason string
}

func (b Broken) String() string {
	return fmt.Sprintf("%s:%d: link %q: %s", b.File, b.Line, b.Dest, b.Reason)
}

// parse parses a Markdown document as GitHub does.
func parse(source []byte) ast.Node {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	return md.Parser().Parse(text.NewReader(source))
}

// Links returns the relative links and images of the Markdown document
// source, in the order they appear, with the line each is on. Links with a
// scheme (https:, mailto:) or a host are left out. file is the document's
// path, recorded in each Link.
func Links(file string, source []byte) []Link {
	var links []Link
	lines := newLineIndex(source)
	_ = ast.Walk(parse(source), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var dest []byte
		switch l := n.(type) {
		case *ast.Link:
			dest = l.Destination
		case *ast.Image:
			dest = l.Destination
		default:
			return ast.WalkContinue, nil
		}
		if relative(string(dest)) {
			links = append(links, Link{File: file, Line: lines.line(offset(n)), Dest: string(dest)})
		}
		return ast.WalkContinue, nil
	})
	return links
}

// relative reports whether dest is a link into the repository: it has no
// scheme and no host.
func relative(dest string) bool {
	u, err := url.Parse(dest)
	if err != nil {
		return true // a broken destination is checked, and reported
	}
	return u.Scheme == "" && u.Host == "" && !strings.HasPrefix(dest, "//")
}

// offset is where in the source an inline node's text starts: its first
// text, else the first line of the block that holds it.
func offset(n ast.Node) int {
	found := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			found = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if found >= 0 {
		return found
	}
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			return p.Lines().At(0).Start
		}
	}
	return 0
}

// lineIndex maps byte offsets to line numbers.
type lineIndex []int

func newLineIndex(source []byte) lineIndex {
	starts := lineIndex{0}
	for i, b := range source {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func (l lineIndex) line(off int) int {
	return sort.Search(len(l), func(i int) bool { return l[i] > off })
}

// Anchors returns the anchors GitHub gives the headings of the Markdown
// document source: each heading's Slug, a repeated one with -1, -2, ...
// after it, as GitHub numbers them.
func Anchors(source []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	_ = ast.Walk(parse(source), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			slug := Slug(headingText(h, source))
			anchor := slug
			if k := seen[slug]; k > 0 {
				anchor = fmt.Sprintf("%s-%d", slug, k)
			}
			seen[slug]++
			anchors[anchor] = true
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return anchors
}

// headingText is a heading's text as GitHub renders it: its text, that of
// its code spans, emphasis and links, without markup, raw HTML or images.
func headingText(h *ast.Heading, source []byte) string {
	var b bytes.Buffer
	_ = ast.Walk(h, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := n.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(source))
		case *ast.String:
			b.Write(t.Value)
		case *ast.Image, *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// Slug is the anchor GitHub gives a heading of this text
// (github-slugger, which github.com uses): lower case, each space a '-',
// and every character that is not a letter, a digit, a mark, '-' or '_'
// dropped.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Check checks every relative link of the Markdown files (slash-separated,
// relative to root) and returns those that do not resolve: to a file or
// folder inside root, relative to the linking file, and, after '#', to a
// heading of that Markdown file (or of the linking file, for a link that is
// only '#anchor'). It fails only when a file cannot be read.
func Check(root string, files []string) ([]Broken, error) {
	var broken []Broken
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, err
		}
		anchors[file] = Anchors(data)
		return anchors[file], nil
	}
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, err
		}
		for _, l := range Links(file, data) {
			reason, err := resolve(root, path.Dir(file), l, anchorsOf)
			if err != nil {
				return nil, err
			}
			if reason != "" {
				broken = append(broken, Broken{Link: l, Reason: reason})
			}
		}
	}
	return broken, nil
}

// CheckReference checks a Markdown file named in code (a help text, an
// error message, a comment), such as docs/matrix.md#adding-an-sm-target:
// its path is relative to root. It says what is missing, or "" when the
// reference resolves.
func CheckReference(root string, ref Link) (string, error) {
	return resolve(root, ".", ref, func(file string) (map[string]bool, error) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		return Anchors(data), err
	})
}

// resolve says what is missing for the link l, whose path is relative to
// the folder dir, or "" when it resolves.
func resolve(root, dir string, l Link, anchorsOf func(string) (map[string]bool, error)) (string, error) {
	u, err := url.Parse(l.Dest)
	if err != nil {
		return fmt.Sprintf("is not a valid URL (%v)", err), nil
	}
	target := l.File
	if u.Path != "" {
		if strings.HasPrefix(u.Path, "/") {
			return "is an absolute path, which a checkout and GitHub read differently: write it relative to " + l.File, nil
		}
		target = path.Join(dir, u.Path)
		if target == ".." || strings.HasPrefix(target, "../") {
			return "leads outside the repository", nil
		}
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(target)))
		if err != nil {
			return target + " does not exist", nil
		}
		if u.Fragment != "" && (info.IsDir() || !strings.HasSuffix(strings.ToLower(target), ".md")) {
			return "has an anchor, but " + target + " is not a Markdown file whose headings could be checked: link the file alone", nil
		}
	}
	if u.Fragment == "" {
		return "", nil
	}
	a, err := anchorsOf(target)
	if err != nil {
		return "", err
	}
	if !a[u.Fragment] {
		return fmt.Sprintf("%s has no heading whose anchor is %q (its anchors: %s)", target, u.Fragment, sortedKeys(a)), nil
	}
	return "", nil
}

func sortedKeys(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
