// Package placement places a build's releases on its BuildKit nodes:
// each release's nodes ranked by rendezvous hashing of both names, each
// node capped at its fair share (bounded-load rendezvous), so that the
// same matrix on the same nodes lands where its cache is, run after run.
package placement

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
)

// Order orders the nodes for every release, each node known by its name. It ranks nodes per release
// by rendezvous hashing, then caps each node at its fair share (bounded-load
// rendezvous): the same matrix on the same nodes places every release the same
// way run after run, where its cache is, and the work is spread. Losing a
// node moves its releases and, through the caps, a few others. The rest of a
// release's list is its fallbacks.
func Order[N any](releases []string, nodes []N, name func(N) string) map[string][]N {
	out := make(map[string][]N, len(releases))
	if len(nodes) == 0 {
		return out
	}
	capacity := (len(releases) + len(nodes) - 1) / len(nodes)
	load := map[string]int{}
	for _, r := range releases {
		ranked := rendezvous(r, nodes, name)
		for i, n := range ranked {
			if load[name(n)] < capacity {
				load[name(n)]++
				ranked = append([]N{n}, slices.Delete(slices.Clone(ranked), i, i+1)...)
				break
			}
		}
		out[r] = ranked
	}
	return out
}

// rendezvous ranks nodes for one release by a hash of both names.
func rendezvous[N any](release string, nodes []N, name func(N) string) []N {
	type scored struct {
		node  N
		score uint64
	}
	ranked := make([]scored, len(nodes))
	for i, n := range nodes {
		sum := sha256.Sum256([]byte(name(n) + "\x00" + release))
		ranked[i] = scored{n, binary.BigEndian.Uint64(sum[:8])}
	}
	slices.SortStableFunc(ranked, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return strings.Compare(name(a.node), name(b.node))
	})
	out := make([]N, len(ranked))
	for i, r := range ranked {
		out[i] = r.node
	}
	return out
}
