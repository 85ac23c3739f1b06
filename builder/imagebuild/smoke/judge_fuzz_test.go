package smoke

import "testing"

// The smoke run's findings come from a container: judging them never panics.
func FuzzJudgeSmoke(f *testing.F) {
	f.Add("stub /x\nldd router-87 1\nrc router-87 127\nca\nlink /usr\nnointerp router-110\n", "\tlibssl.so.3 => not found\n")
	f.Fuzz(func(t *testing.T, result, file string) {
		_ = testSpec().Judge("the runtime image", result, nil, func(string) string { return file })
	})
}
