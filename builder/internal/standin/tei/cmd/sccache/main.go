// Command sccache is the stand-in sccache of jetbake's stand-in build
// images: a static linux/arm64 program that `cargo install sccache` (the
// stand-in cargo) installs with the version and features asked for
// compiled in, and that cargo runs as RUSTC_WRAPPER. See package sccache
// for the contract it keeps.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/jetbake/jetbake/builder/internal/standin/tei/sccache"
)

func main() {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sccache: error: "+err.Error())
		os.Exit(2)
	}
	build, err := sccache.ReadBuild(self)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sccache: error: "+err.Error())
		os.Exit(2)
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sccache: error: "+err.Error())
		os.Exit(2)
	}
	c := &sccache.Client{Build: build, Env: os.Environ(), Getenv: os.LookupEnv, Dir: dir,
		StateDir: sccache.StateDir(os.LookupEnv), Stdout: os.Stdout, Stderr: os.Stderr}
	os.Exit(c.Run(context.Background(), os.Args[1:]))
}
