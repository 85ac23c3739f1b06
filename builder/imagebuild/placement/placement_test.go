package placement

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// node stands for a BuildKit node, known by its name.
type node struct{ name string }

func nodeName(n node) string { return n.name }

func nodeNames(nodes []node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.name
	}
	return out
}

func TestPlacementsSpreadAndStick(t *testing.T) {
	nodes := []node{{"node-a"}, {"node-b"}, {"node-c"}}
	releases := []string{"jetpack5.1", "jetpack6.1", "jetpack6.2", "jetpack7.0", "jetpack7.2", "jetpack7.3"}
	first := Order(releases, nodes, nodeName)
	load := map[string]int{}
	for _, r := range releases {
		order := first[r]
		require.ElementsMatch(t, []string{"node-a", "node-b", "node-c"}, nodeNames(order), "every node is a fallback")
		load[order[0].name]++
	}
	for _, n := range nodes {
		require.Equal(t, 2, load[n.name], "six releases on three nodes: two each")
	}
	again := Order(releases, nodes, nodeName)
	for _, r := range releases {
		require.Equal(t, nodeNames(first[r]), nodeNames(again[r]), "%s lands on the same node every run", r)
	}
}

func TestPlacementsLosingANodeMovesOnlyItsReleases(t *testing.T) {
	var releases []string
	for i := range 40 {
		releases = append(releases, fmt.Sprintf("release-%d", i))
	}
	all := []node{{"a"}, {"b"}, {"c"}, {"d"}}
	before := rendezvousFirst(releases, all)
	after := rendezvousFirst(releases, all[:3])
	for _, r := range releases {
		if before[r] != "d" {
			require.Equal(t, before[r], after[r], "%s was not on the lost node and stays", r)
		}
	}
}

func rendezvousFirst(releases []string, nodes []node) map[string]string {
	out := map[string]string{}
	for _, r := range releases {
		out[r] = rendezvous(r, nodes, nodeName)[0].name
	}
	return out
}

func TestPlacementsWithoutNodes(t *testing.T) {
	require.Empty(t, Order([]string{"x"}, nil, nodeName))
}
