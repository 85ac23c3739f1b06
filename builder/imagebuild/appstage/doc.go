// Package appstage reads what an app's image holds before it is exported,
// for the checks that compare the app stage with its framework container:
// the base's Python distributions and CUDA files, read once per build from
// its registry (Bases), and the stage's own, read through the gateway from
// its changes to the base (Read). It needs no release job: the stage, its
// base and the gateway client are its arguments.
package appstage
