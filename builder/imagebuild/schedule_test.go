package imagebuild

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func nodeNames(nodes []Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

func TestPlacementsSpreadAndStick(t *testing.T) {
	nodes := []Node{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}}
	releases := []string{"jetpack5.1", "jetpack6.1", "jetpack6.2", "jetpack7.0", "jetpack7.2", "jetpack7.3"}
	first := placements(releases, nodes)
	load := map[string]int{}
	for _, r := range releases {
		order := first[r]
		require.ElementsMatch(t, []string{"node-a", "node-b", "node-c"}, nodeNames(order), "every node is a fallback")
		load[order[0].Name]++
	}
	for _, n := range nodes {
		require.Equal(t, 2, load[n.Name], "six releases on three nodes: two each")
	}
	again := placements(releases, nodes)
	for _, r := range releases {
		require.Equal(t, nodeNames(first[r]), nodeNames(again[r]), "%s lands on the same node every run", r)
	}
}

func TestPlacementsLosingANodeMovesOnlyItsReleases(t *testing.T) {
	var releases []string
	for i := range 40 {
		releases = append(releases, fmt.Sprintf("release-%d", i))
	}
	all := []Node{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	before := rendezvousFirst(releases, all)
	after := rendezvousFirst(releases, all[:3])
	for _, r := range releases {
		if before[r] != "d" {
			require.Equal(t, before[r], after[r], "%s was not on the lost node and stays", r)
		}
	}
}

func rendezvousFirst(releases []string, nodes []Node) map[string]string {
	out := map[string]string{}
	for _, r := range releases {
		out[r] = rendezvous(r, nodes)[0].Name
	}
	return out
}

func TestPlacementsWithoutNodes(t *testing.T) {
	require.Empty(t, placements([]string{"x"}, nil))
}
