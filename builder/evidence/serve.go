package evidence

import (
	"regexp"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// Serve is the run of the probe's serving check.
type Serve = evidencespec.Serve

// hubIDRE is the form of a Hugging Face Hub model id, as the probe keeps it:
// "org/name" or "name", each part a safe token. It is the one value of the
// evidence outside image references that may hold a '/'.
var hubIDRE = regexp.MustCompile(`^[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,63}(/[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,63})?$`)

// validateServe checks result.serve against the form the probe writes:
// the model id a Hub id, the dtype TEI's, the step one the check takes,
// sizes, counts and times in range.
func validateServe(s *Serve) error {
	if err := optional("result.serve.model_id", s.ModelID, hubIDRE, "is not a Hub model id such as BAAI/bge-small-en-v1.5"); err != nil {
		return err
	}
	if s.DType != "" && s.DType != "float16" && s.DType != "float32" {
		return schemaErr("result.serve.dtype", s.DType, "is not float16 or float32")
	}
	if s.Step != "" && !oneOf(s.Step, evidencespec.ServeSteps()) {
		return schemaErr("result.serve.step", s.Step, "is not a step of the serving check, such as health")
	}
	if err := counts(map[string]int{"result.serve.dimensions": s.Dimensions, "result.serve.requests": s.Requests},
		1<<16, "is not a count from 0 to 65536"); err != nil {
		return err
	}
	return millis(map[string]float64{"result.serve.load_ms": s.LoadMillis, "result.serve.p50_ms": s.P50Millis, "result.serve.p95_ms": s.P95Millis})
}

// checkRun reports whether a passed check of name comes with its run, as
// the probe writes it: a passing cuda-kernel check with result.kernel and
// no failed step, a passing serve check with result.serve, vectors and
// requests, and no failed step.
func (ev *Evidence) checkRun(name string) error {
	r := &ev.Result
	switch name {
	case evidencespec.CheckCUDAKernel:
		if r.Kernel == nil || r.Kernel.Step != "" || r.Kernel.Elements == 0 {
			return schemaErr("result.kernel", "", "does not show the passing run its cuda-kernel check claims")
		}
	case evidencespec.CheckServe:
		if r.Serve == nil || r.Serve.Step != "" || r.Serve.Requests == 0 || r.Serve.Dimensions == 0 {
			return schemaErr("result.serve", "", "does not show the passing run its serve check claims")
		}
	}
	return nil
}
