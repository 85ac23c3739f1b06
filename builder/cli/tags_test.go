package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

func TestAddTags(t *testing.T) {
	load := func() *plan.Plan {
		m, err := matrix.Load(matrixCopy(t, nil))
		require.NoError(t, err)
		p, err := plan.New(m)
		require.NoError(t, err)
		return p
	}
	sha := "0123456789abcdef0123"
	p := load()
	require.NoError(t, addTags(p, []string{"{version}-jetpack{jetpack}-{sha}"}, nil, sha))
	rel, _ := p.Release("jetpack6.2")
	require.Contains(t, rel.Tags, p.Repository+":1.9.3-jetpack6.2-0123456789ab")
	rel, _ = p.Release("jetpack7.2")
	require.Contains(t, rel.Tags, p.Repository+":1.9.3-jetpack7.2-0123456789ab")

	p = load()
	require.NoError(t, addTags(p, []string{"latest"}, []string{"jetpack7.2"}, sha))
	rel, _ = p.Release("jetpack7.2")
	require.Contains(t, rel.Tags, p.Repository+":latest")
	rel, _ = p.Release("jetpack6.2")
	require.NotContains(t, rel.Tags, p.Repository+":latest", "only the selected release")

	for tpl, want := range map[string]string{
		"latest":       `gives "latest" to both jetpack5.1 and jetpack6.1: add a placeholder`,
		"{nope}":       "unknown placeholder {nope}",
		"a b{jetpack}": "not a valid tag",
	} {
		err := addTags(load(), []string{tpl}, nil, sha)
		require.Equal(t, ExitUsage, ExitCode(err), tpl)
		require.ErrorContains(t, err, want)
	}
	err := addTags(load(), []string{"{sha}"}, []string{"jetpack6.2"}, "")
	require.ErrorContains(t, err, "give --revision")
}
