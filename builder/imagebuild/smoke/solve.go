package smoke

import (
	"context"
	"strings"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
)

// maxFile bounds what is read of one file the smoke run wrote: its last
// 64 KiB (a router that printed more has its output's end judged and
// quoted), so that no router's output is held whole.
const maxFile = 64 << 10

// Solve solves a smoke run's definition and returns the reader of the
// files it wrote, each trimmed ("" for one it did not write), at most
// their last maxFile bytes.
func Solve(ctx context.Context, c gateway.Client, def *llb.Definition, imports []gateway.CacheOptionsEntry) (func(name string) string, error) {
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true, CacheImports: imports})
	if err != nil {
		return nil, err
	}
	ref, err := res.SingleRef()
	if err != nil {
		return nil, err
	}
	return func(name string) string { return strings.TrimSpace(string(tail(ctx, ref, name))) }, nil
}

// tail is the last maxFile bytes of the file name in ref: one ranged read
// for a file that fits, nil for one that cannot be read.
func tail(ctx context.Context, ref gateway.Reference, name string) []byte {
	data, err := ref.ReadFile(ctx, gateway.ReadRequest{Filename: name, Range: &gateway.FileRange{Length: maxFile}})
	if err != nil || len(data) < maxFile {
		return data
	}
	st, err := ref.StatFile(ctx, gateway.StatRequest{Path: name})
	if err != nil || st.Size <= maxFile {
		return data
	}
	data, err = ref.ReadFile(ctx, gateway.ReadRequest{Filename: name, Range: &gateway.FileRange{Offset: int(st.Size - maxFile), Length: maxFile}})
	if err != nil {
		return nil
	}
	return data
}
