package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/dockerfiles"
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
      "cross_build_base": {"recipe": "jetbake", "platform": "linux/amd64", "cuda": "12.6", "cuda_target": "aarch64-linux"},
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
      "cross_build_base": {"recipe": "jetbake", "platform": "linux/amd64", "cuda": "13.0", "cuda_target": "sbsa-linux"},
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
      "cross_build_base": {"recipe": "jetbake", "platform": "linux/amd64", "cuda": "13.2", "cuda_target": "sbsa-linux"},
      "build_args": {}
    }
  ]
}
`

// teiRouter is the router section `jetbake init --router
// text-embeddings-inference` writes: TEI at the release jetbake's own
// matrix pins (tag and commit), built by the Dockerfile-jetson written beside
// it, with the settings of TEI's own images. It is the shipped matrix's
// router section (a test keeps them equal).
const teiRouter = `{
    "name": "text-embeddings-router",
    "version": "1.9.3",
    "context": "https://github.com/huggingface/text-embeddings-inference.git?ref=v1.9.3&checksum=06670157fb6c1523482219bdb2d1660277d38088",
    "dockerfile": "Dockerfile-jetson",
    "target": "router",
    "runtime_target": "runtime-base",
    "output": "/usr/local/bin/text-embeddings-router",
    "smoke": ["--version"],
    "build_args": {"CARGO_FEATURES": "candle-cuda", "CUDA_LINKING": "static-linking"},
    "target_build_args": {"7.2": {"CARGO_FEATURES": "candle-cuda-volta"}},
    "env": {"PORT": "80", "HUGGINGFACE_HUB_CACHE": "/data"},
    "cmd": ["--json-output"],
    "ports": ["80/tcp"],
    "health": "/health"
  }`

// RouterTEI is the value of `init --router` that writes TEI's router section
// and Dockerfile-jetson.
const RouterTEI = "text-embeddings-inference"

// teiDockerfile is the file name init writes jetbake's Dockerfile-jetson to.
const teiDockerfile = "Dockerfile-jetson"

func newInitCommand() *cobra.Command {
	var repository, source, router, app string
	var force, gate bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a starting matrix.json, or with --gate the Jetson gate's workflow and issue form",
		Long: "init writes a matrix (the file of -f/--file, matrix.json by default) with the current JetPack lines\n" +
			"and a router section that builds the target \"router\" of the Dockerfile beside it. Edit the router\n" +
			"and the repository, write the Dockerfile, then run 'jetbake validate'.\n\n" +
			"With --router text-embeddings-inference it writes text-embeddings-inference's router section (the\n" +
			"release jetbake pins, static cudarc linking, TEI's image settings) and jetbake's Dockerfile-jetson\n" +
			"beside the matrix: your repository then builds TEI for Jetson with nothing else.\n\n" +
			"With --app pytorch it writes an app's matrix (JetPack 6.2 on Orin on nvcr.io/nvidia/pytorch:25.06-py3-igpu,\n" +
			"JetPack 7.0 on Thor on the SBSA 25.08-py3) and a Dockerfile for an app with a pyproject.toml: a venv\n" +
			"with --system-site-packages, pip with constraints that keep the container's torch, bitsandbytes left\n" +
			"out, pip check; give --build-arg PIP_INDEX_URL=... for a mirror or an offline index.\n\n" +
			"With --gate it writes, at the root of the matrix's git repository, " + GateWorkflow + ": a workflow\n" +
			"run by hand (workflow_dispatch, the default branch or a tag only) on a self-hosted Jetson runner\n" +
			"(labels self-hosted, linux, ARM64, jetson) that runs jetbake doctor, jetbake pick, the probe with its\n" +
			"CUDA kernel and serving checks on a model folder of the runner (for an app's matrix, the CUDA kernel\n" +
			"check and the app check, with no model), jetbake evidence add and the evidence report into the step\n" +
			"summary, and keeps the evidence and logs 30 days; and " + GateIssueForm + ", a form for people\n" +
			"without a runner to paste 'jetbake evidence report' into (an app's also asks for the app check's\n" +
			"status); and, when the repository has no actionlint configuration, " + GateActionlint + " naming\n" +
			"the runner label jetson. It reads the matrix for its kind and image repository and writes nothing else.",
		Example: "  jetbake init --repository ghcr.io/acme/embedder\n  jetbake init --router text-embeddings-inference --repository ghcr.io/acme/tei\n" +
			"  jetbake init --app pytorch --repository ghcr.io/acme/obliteratus\n" +
			"  jetbake init -f ci/matrix.json --force\n  jetbake init --gate",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := MatrixPath(cmd)
			var files []initFile
			var err error
			next := "next, a Dockerfile with a \"router\" target beside it, then 'jetbake validate'"
			switch {
			case gate && (router != "" || app != ""):
				return usageErrorf("--gate writes the gate for the matrix there is, --router and --app a new matrix: give one of them")
			case router != "" && app != "":
				return usageErrorf("--router writes a router's matrix, --app an app's: give one of them")
			case gate:
				files, err = gateFiles(path)
				next = "next, commit them, register a Jetson as a self-hosted runner with the label jetson, and run the Jetson gate from the Actions tab"
			default:
				files, err = initFiles(path, router, app, repository, source)
				switch {
				case router == RouterTEI:
					next = "next, 'jetbake validate', then 'jetbake lock' and 'jetbake build'"
				case app != "":
					next = "next, set app.name and app.command to your pyproject.toml's script, then 'jetbake validate' and 'jetbake plan'"
				}
			}
			if err != nil {
				return err
			}
			names, err := writeInitFiles(files, force)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s\n", strings.Join(names, ", "), next)
			return nil
		},
	}
	cmd.Flags().StringVar(&repository, "repository", matrix.PlaceholderRepository, "the image repository to write as the matrix's image.repository, where 'jetbake build --push' pushes")
	cmd.Flags().StringVar(&source, "source", matrix.PlaceholderSource, "the URL of your repository (org.opencontainers.image.source)")
	cmd.Flags().StringVar(&router, "router", "", "write a known router's section and Dockerfile: "+RouterTEI)
	cmd.Flags().StringVar(&app, "app", "", "write an app's matrix and Dockerfile on NVIDIA's framework containers: "+AppPyTorch)
	cmd.Flags().BoolVar(&gate, "gate", false, "write the Jetson gate's workflow and issue form for the matrix instead of a matrix")
	cmd.Flags().BoolVar(&force, "force", false, "replace existing files")
	AddMatrixFlags(cmd, "the matrix file to write (with --gate, the matrix to read)")
	return cmd
}

// initFile is one file init writes; guarded files are not replaced without --force.
type initFile struct {
	path    string
	data    []byte
	guarded bool
	// makeDir creates the file's folder (.github/...) when it is missing.
	makeDir bool
}

// initFiles are the files init writes for path: the matrix, the schema
// beside it (for editors; "$schema" names it), for TEI Dockerfile-jetson,
// and for an app its Dockerfile.
func initFiles(path, router, app, repository, source string) ([]initFile, error) {
	doc := starterMatrix
	var appFile []byte
	if app != "" {
		var err error
		if doc, appFile, err = appStarter(app); err != nil {
			return nil, err
		}
	}
	switch router {
	case "":
	case RouterTEI:
		start := strings.Index(doc, `"router": {`) + len(`"router": `)
		end := start + strings.Index(doc[start:], "},") + 1
		doc = doc[:start] + teiRouter + doc[end:]
	default:
		return nil, usageErrorf("--router %q: jetbake knows %s; leave --router out for a router of your own", router, RouterTEI)
	}
	data := []byte(strings.NewReplacer("REPOSITORY", repository, "SOURCE", source).Replace(doc))
	if _, err := matrix.Parse(data); err != nil {
		return nil, usageErrorf("--repository %q, --source %q: %w", repository, source, err)
	}
	dir := filepath.Dir(path)
	files := []initFile{{path: path, data: data, guarded: true}, {path: filepath.Join(dir, "matrix.schema.json"), data: matrix.SchemaJSON()}}
	if router == RouterTEI {
		files = append(files, initFile{path: filepath.Join(dir, teiDockerfile), data: dockerfiles.DockerfileJetson(), guarded: true})
	}
	if appFile != nil {
		files = append(files, initFile{path: appDockerfile(path), data: appFile, guarded: true})
	}
	return files, nil
}
