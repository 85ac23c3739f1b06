package imagebuild

import (
	"github.com/jetbake/jetbake/builder/imagebuild/internal/buildtest"
	"github.com/jetbake/jetbake/builder/plan"
)

const (
	testRepo  = buildtest.Repo
	testEpoch = buildtest.Epoch
)

// testPlan is a two-release plan shaped like the shipped matrix's.
func testPlan() *plan.Plan { return buildtest.Plan() }
