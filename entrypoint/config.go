package main

import (
	"github.com/jetbake/jetbake/entrypoint/detect"
)

// The entrypoint's one flag and its variable.
const (
	envExplain  = "JETBAKE_EXPLAIN"
	explainFlag = "--explain"
)

// config is what the command line and the environment ask for.
type config struct {
	// Config is what detection and the choice are asked to do.
	detect.Config
	// routerArgs are the arguments passed to the router.
	routerArgs []string
}

// newConfig reads args (without the program name) and env. A first
// argument --explain, or JETBAKE_EXPLAIN=1, prints the decision instead
// of acting on it; every other argument belongs to the router.
func newConfig(args, env []string) config {
	cfg := config{Config: detect.NewConfig(env), routerArgs: args}
	if len(args) > 0 && args[0] == explainFlag {
		cfg.Explain, cfg.routerArgs = true, args[1:]
	}
	cfg.Explain = cfg.Explain || detect.Truthy(cfg.Env.Get(envExplain))
	return cfg
}
