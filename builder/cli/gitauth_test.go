package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewSecretSet(t *testing.T) {
	const context = "https://git.example.com/acme/router.git#v1.0.0"
	get := func(set secretSet, id string) string {
		t.Helper()
		dt, err := set.store.GetSecret(t.Context(), id)
		require.NoError(t, err, id)
		return string(dt)
	}

	set, err := newSecretSet(nil, context)
	require.NoError(t, err)
	require.Nil(t, set.store, "no secrets, no store")
	require.Empty(t, set.gitIDs)

	t.Setenv("JETBAKE_GIT_AUTH_TOKEN", "from-env")
	set, err = newSecretSet(nil, context)
	require.NoError(t, err)
	require.Equal(t, []string{"GIT_AUTH_TOKEN.git.example.com"}, set.gitIDs)
	require.Equal(t, "from-env", get(set, "GIT_AUTH_TOKEN.git.example.com"))

	t.Setenv("JETBAKE_GIT_AUTH_HEADER", "basic eDp5")
	t.Setenv("JETBAKE_TEST_FLAG_TOKEN", "from-flag")
	set, err = newSecretSet([]string{"id=GIT_AUTH_TOKEN.git.example.com,env=JETBAKE_TEST_FLAG_TOKEN", "id=other,env=JETBAKE_TEST_FLAG_TOKEN"}, context)
	require.NoError(t, err)
	require.Equal(t, []string{"GIT_AUTH_HEADER.git.example.com", "GIT_AUTH_TOKEN.git.example.com"}, set.gitIDs, "in BuildKit's order")
	require.Equal(t, "from-flag", get(set, "GIT_AUTH_TOKEN.git.example.com"), "the flag wins over the environment")
	require.Equal(t, "basic eDp5", get(set, "GIT_AUTH_HEADER.git.example.com"))

	for _, other := range []string{"git@github.com:acme/router.git#v1.0.0", "./router"} {
		set, err = newSecretSet(nil, other)
		require.NoError(t, err)
		require.Nil(t, set.store, "%s: no host to give the environment's token to", other)
	}
	_, err = newSecretSet([]string{"id=x,env=JETBAKE_TEST_UNSET_VARIABLE"}, context)
	require.Equal(t, ExitUsage, ExitCode(err))
}
