package gitcontext

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A git context is the git source operation the Dockerfile frontend makes
// of it: the remote and the ref; a folder is none.
func TestSourceOp(t *testing.T) {
	op, err := SourceOp(t.Context(), "https://github.com/huggingface/text-embeddings-inference.git#v1.8.0")
	require.NoError(t, err)
	require.Equal(t, "git://github.com/huggingface/text-embeddings-inference.git#v1.8.0", op.Identifier)
	require.Equal(t, "https://github.com/huggingface/text-embeddings-inference.git", op.Attrs["git.fullurl"])

	_, err = SourceOp(t.Context(), "./router")
	require.Error(t, err)
}
