package standin

import (
	"bytes"
	"io"
)

type ioReadCloser = io.ReadCloser

func nopCloser(data []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(data)) }
