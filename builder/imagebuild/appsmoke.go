package imagebuild

import (
	"context"

	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
)

// appSmoke is an app's build-time smoke run (app.smoke, e.g. --help): the
// app's command run with those arguments on the app's stage under QEMU,
// with the pinned base's CUDA driver stub standing in for the Jetson's
// driver, before anything is exported (so before any tag). nil when the
// app names no smoke arguments.
func (j *releaseJob) appSmoke(ctx context.Context, c gateway.Client, image runtimeImage, base string, imports []gateway.CacheOptionsEntry) error {
	app := j.plan.App
	if len(app.Smoke) == 0 {
		return nil
	}
	run := smoke.App{Name: app.Name, Command: app.Command, Args: app.Smoke, Env: app.Env}
	def, err := run.Definition(ctx, image.state, image.name, image.config, smoke.Stub(base, j.resolveMode()))
	if err != nil {
		return err
	}
	read, err := smoke.Solve(ctx, c, def, imports)
	if err != nil {
		return err
	}
	return run.Judge(image.name, read(smoke.ResultFile), read)
}
