package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
)

// starterMatrix is what `jetbake init` writes: the current JetPack lines
// (Orin on JetPack 6, Thor on JetPack 7, both on JetPack 7.2) and a router
// built by the Dockerfile beside the matrix. REPOSITORY and SOURCE are replaced.
const starterMatrix = `{
  "$schema": "./matrix.schema.json",
  "router": {
    "name": "router",
    "version": "0.1.0",
    "context": ".",
    "dockerfile": "Dockerfile",
    "target": "router",
    "output": "/usr/local/bin/router",
    "smoke": ["--version"]
  },
  "image": {
    "repository": "REPOSITORY",
    "source": "SOURCE",
    "tags": ["{version}-jetpack{jetpack}", "jetpack{jetpack}"],
    "labels": {},
    "annotations": {}
  },
  "releases": [
    {
      "name": "jetpack6.2",
      "jetpack": "6.2",
      "l4t": "36.4.3",
      "cuda": "12.6",
      "ubuntu": "22.04",
      "build_base": "nvcr.io/nvidia/l4t-jetpack:r36.4.0",
      "runtime_base": "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime",
      "targets": ["8.7"],
      "tier": "candidate",
      "hardware": ["Jetson AGX Orin", "Jetson Orin NX", "Jetson Orin Nano", "Jetson Orin Nano Super"],
      "tags": [],
      "build_args": {}
    },
    {
      "name": "jetpack7.0",
      "jetpack": "7.0",
      "l4t": "38.2.0",
      "cuda": "13.0",
      "ubuntu": "24.04",
      "build_base": "nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04",
      "runtime_base": "nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04",
      "targets": ["11.0"],
      "tier": "candidate",
      "hardware": ["Jetson AGX Thor"],
      "tags": [],
      "build_args": {}
    },
    {
      "name": "jetpack7.2",
      "jetpack": "7.2",
      "l4t": "39.2.0",
      "cuda": "13.2",
      "ubuntu": "24.04",
      "build_base": "nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04",
      "runtime_base": "nvcr.io/nvidia/cuda:13.2.0-runtime-ubuntu24.04",
      "targets": ["8.7", "11.0"],
      "tier": "evaluate-later",
      "hardware": ["Jetson AGX Orin", "Jetson Orin NX", "Jetson Orin Nano", "Jetson AGX Thor"],
      "tags": [],
      "build_args": {}
    }
  ]
}
`

func newInitCommand() *cobra.Command {
	var repository, source string
	var force bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a starting matrix.json",
		Long: "init writes a matrix (the file of -f/--file, matrix.json by default) with the current JetPack lines\n" +
			"and a router section that builds the target \"router\" of the Dockerfile beside it. Edit the router\n" +
			"and the repository, write the Dockerfile, then run 'jetbake validate'.",
		Example: "  jetbake init --repository ghcr.io/acme/embedder\n  jetbake init -f ci/matrix.json --force",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := MatrixPath(cmd)
			if _, err := os.Stat(path); err == nil && !force {
				return usageErrorf("%s exists: give --force to replace it, or -f to write another file", path)
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s: %w", path, err)
			}
			data := []byte(strings.NewReplacer("REPOSITORY", repository, "SOURCE", source).Replace(starterMatrix))
			if _, err := matrix.Parse(data); err != nil {
				return usageErrorf("--repository %q, --source %q: %w", repository, source, err)
			}
			if err := inputfile.WriteFile(path, data, 0o644); err != nil {
				return err
			}
			// The schema beside the matrix, for editors ("$schema" names it).
			schema := filepath.Join(filepath.Dir(path), "matrix.schema.json")
			if err := inputfile.WriteFile(schema, matrix.SchemaJSON, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s: next, a Dockerfile with a \"router\" target beside it, then 'jetbake validate'\n", path, schema)
			return nil
		},
	}
	cmd.Flags().StringVar(&repository, "repository", "ghcr.io/example/router", "the image repository to publish to")
	cmd.Flags().StringVar(&source, "source", "https://github.com/example/router", "the URL of your repository (org.opencontainers.image.source)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing matrix file")
	return cmd
}
