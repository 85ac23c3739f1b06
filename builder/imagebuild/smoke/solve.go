package smoke

import (
	"context"
	"strings"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
)

// Solve solves a smoke run's definition and returns the reader of the
// files it wrote, each trimmed ("" for one it did not write).
func Solve(ctx context.Context, c gateway.Client, def *llb.Definition, imports []gateway.CacheOptionsEntry) (func(name string) string, error) {
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true, CacheImports: imports})
	if err != nil {
		return nil, err
	}
	ref, err := res.SingleRef()
	if err != nil {
		return nil, err
	}
	return func(name string) string {
		data, err := ref.ReadFile(ctx, gateway.ReadRequest{Filename: name})
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(data))
	}, nil
}
