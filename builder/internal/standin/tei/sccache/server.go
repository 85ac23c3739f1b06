package sccache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Server is what sccache's server holds while it runs: where it caches,
// whether it may write there, and its counters. Real sccache keeps it in a
// server process that lives as long as the build step; the stand-in keeps
// it in a file under StateDir, which is as short-lived (a tmpfs of the
// container) and never part of an image layer.
type Server struct {
	// Backend is "s3", "gha" or "disk"; Location is its "Cache location".
	Backend  string `json:"backend"`
	Location string `json:"location"`
	// ReadOnly is set when the write check at start failed.
	ReadOnly bool `json:"read_only,omitempty"`
	// Version is the client's version.
	Version string `json:"version"`
	// Compilers are the compilers' versions (`rustc -vV`) by path, which
	// the server asks once, as sccache does.
	Compilers map[string]string `json:"compilers,omitempty"`
	// Stats are the counters `sccache --show-stats` prints.
	Stats Stats `json:"stats"`
}

// Stats are sccache's counters, and the stand-in's record of each call.
type Stats struct {
	Requests     int            `json:"compile_requests"`
	Executed     int            `json:"requests_executed"`
	Hits         int            `json:"cache_hits"`
	Misses       int            `json:"cache_misses"`
	ReadErrors   int            `json:"cache_read_errors"`
	WriteErrors  int            `json:"cache_write_errors"`
	NonCacheable int            `json:"non_cacheable_calls"`
	Reasons      map[string]int `json:"non_cacheable_reasons,omitempty"`
	// Compiles are the calls, in order: crate, kind and result.
	Compiles []Record `json:"compiles,omitempty"`
}

// Record is one call the server handled.
type Record struct {
	Crate string `json:"crate"`
	Kind  string `json:"kind"`
	// Result is "hit", "miss" or "not cacheable"; Reason says why not.
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
}

// StateDir is where the stand-in server's state lives: /dev/shm, the
// container's tmpfs, when there is one, else the temporary folder.
func StateDir(getenv Getenv) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm/jetbake-standin-sccache"
	}
	tmp, _ := getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, "jetbake-standin-sccache")
}

func statePath(dir string) string { return filepath.Join(dir, "server.json") }

// LoadServer reads the running server's state; nil when none is running.
func LoadServer(dir string) (*Server, error) {
	data, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Server
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("stand-in sccache server state %s: %w", statePath(dir), err)
	}
	return &s, nil
}

// Save writes the server's state.
func (s *Server) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dir))
}

// Stop ends the server: its state is gone.
func Stop(dir string) error {
	err := os.Remove(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// PrintStats writes what `sccache --show-stats` prints (sccache's lines
// for what the stand-in counts), then the stand-in's record of each call.
func (s *Server) PrintStats(w io.Writer) {
	st := s.Stats
	line := func(name string, v any) { fmt.Fprintf(w, "%-36s %v\n", name, v) }
	line("Compile requests", st.Requests)
	line("Compile requests executed", st.Executed)
	line("Cache hits", st.Hits)
	if st.Hits > 0 {
		line("Cache hits (Rust)", st.Hits)
	}
	line("Cache misses", st.Misses)
	if st.Misses > 0 {
		line("Cache misses (Rust)", st.Misses)
	}
	line("Cache read errors", st.ReadErrors)
	line("Cache write errors", st.WriteErrors)
	line("Non-cacheable calls", st.NonCacheable)
	if len(st.Reasons) > 0 {
		fmt.Fprintln(w, "\nNon-cacheable reasons:")
		reasons := make([]string, 0, len(st.Reasons))
		for r := range st.Reasons {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		for _, r := range reasons {
			line(r, st.Reasons[r])
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-31s %s\n", "Cache location", s.Location)
	if s.ReadOnly {
		fmt.Fprintf(w, "%-31s %s\n", "Cache mode", "read-only")
	}
	fmt.Fprintf(w, "%-31s %s\n", "Version (client)", s.Version)
	for _, c := range st.Compiles {
		fmt.Fprintf(w, "jetbake stand-in: %s %s %s\n", c.Crate, c.Kind, strings.TrimSpace(c.Result+" "+c.Reason))
	}
}

// Reported is what `sccache --show-stats` printed, read back from a log.
type Reported struct {
	// Location is the "Cache location" line's value.
	Location string
	// Compiles are the stand-in's records: "CRATE KIND" to its result
	// ("hit", "miss", "not cacheable (crate-type)"). A crate compiled twice
	// (two build scripts) keeps its last result.
	Compiles map[string]string
}

var (
	locationLine = regexp.MustCompile(`(?m)^Cache location +(.+)$`)
	compileLine  = regexp.MustCompile(`(?m)^jetbake stand-in: (\S+) (\S+) (.+)$`)
)

// ReadStats reads what PrintStats wrote, out of a build's log.
func ReadStats(log string) Reported {
	r := Reported{Compiles: map[string]string{}}
	if m := locationLine.FindStringSubmatch(log); m != nil {
		r.Location = strings.TrimSpace(m[1])
	}
	for _, m := range compileLine.FindAllStringSubmatch(log, -1) {
		r.Compiles[m[1]+" "+m[2]] = strings.TrimSpace(m[3])
	}
	return r
}
