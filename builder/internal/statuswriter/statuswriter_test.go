package statuswriter

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	w := New(rec)
	require.Equal(t, http.StatusOK, w.Status, "a handler that writes no status answers 200")
	http.Error(w, "nope", http.StatusForbidden)
	require.Equal(t, http.StatusForbidden, w.Status)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "nope\n", rec.Body.String())

	var rw http.ResponseWriter = w
	_, readerFrom := rw.(io.ReaderFrom)
	_, flusher := rw.(http.Flusher)
	require.False(t, readerFrom || flusher, "the writer's optional interfaces stay hidden")
	_, err := io.Copy(w, strings.NewReader("body"))
	require.NoError(t, err)
	require.Equal(t, "nope\nbody", rec.Body.String())
}
