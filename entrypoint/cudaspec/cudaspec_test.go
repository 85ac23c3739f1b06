package cudaspec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDriverErrorName(t *testing.T) {
	tests := []struct {
		code int32
		want string
	}{
		{100, "CUDA_ERROR_NO_DEVICE"},
		{34, "CUDA_ERROR_STUB_LIBRARY"},
		{46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
		{35, ""}, // the CUDA runtime's cudaErrorInsufficientDriver: no CUresult
		{0, ""},
		{12345, ""},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, DriverErrorName(tt.code), "%d", tt.code)
	}
	names := DriverErrorNames()
	for code, name := range names {
		require.True(t, strings.HasPrefix(name, "CUDA_ERROR_"), "%d: %s", code, name)
	}
	names[100] = "changed"
	require.Equal(t, "CUDA_ERROR_NO_DEVICE", DriverErrorName(100), "DriverErrorNames returns a copy")
}
