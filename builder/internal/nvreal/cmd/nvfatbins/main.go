// Command nvfatbins makes the test bed's real fat binaries with NVIDIA's
// ptxas and fatbinary (see nvreal.AllSpecs) under bin/nvidia-fatbins, those
// not made yet; `make deps` runs it from the repository's root.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/jetbake/jetbake/builder/internal/nvreal"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "nvfatbins:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	p, err := nvreal.Find(root)
	if err != nil {
		return err
	}
	specs := nvreal.AllSpecs()
	for _, spec := range specs {
		if _, err := p.Fatbin(ctx, spec); err != nil {
			return err
		}
	}
	fmt.Printf("deps: %d fat binaries made by NVIDIA's ptxas and fatbinary in %s\n", len(specs), p.Made)
	return nil
}
