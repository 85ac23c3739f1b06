package imagebuild

import "testing"

// The smoke run's findings come from a container: judging them never panics.
func FuzzJudgeSmoke(f *testing.F) {
	f.Add("stub /x\nldd router-87 1\nrc router-87 127\nca\nlink /usr\nnointerp router-110\n", "\tlibssl.so.3 => not found\n")
	f.Fuzz(func(t *testing.T, result, file string) {
		p := testPlan()
		j := &releaseJob{plan: p, release: p.Releases[1]}
		_ = j.judgeSmoke("the runtime image", result, func(string) string { return file })
	})
}
