package computecap_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

func codes(t *testing.T, specs ...string) []computecap.Code {
	t.Helper()
	var out []computecap.Code
	for _, s := range specs {
		kind := computecap.Cubin
		if len(s) > 8 && s[:8] == "compute_" {
			kind, s = computecap.PTX, s[8:]
		}
		out = append(out, computecap.Code{Kind: kind, Target: computecap.MustParse(s)})
	}
	return out
}

// TestJudgeCode: each verdict, on the shapes of the issue.
func TestJudgeCode(t *testing.T) {
	bnb := []string{"sm_75", "sm_80", "sm_90", "compute_90"}
	for name, tc := range map[string]struct {
		gpu    string
		code   []string
		want   computecap.Verdict
		by     string
		reason string
	}{
		"own cubin on Orin":         {gpu: "8.7", code: []string{"sm_80", "sm_87"}, want: computecap.Runs, by: "sm_87 cubin", reason: "sm_87 code is built for this GPU's own SM 8.7"},
		"Thor under its old name":   {gpu: "10.1", code: []string{"sm_110"}, want: computecap.Runs, by: "sm_110 cubin"},
		"desktop minor rule":        {gpu: "8.6", code: []string{"sm_80"}, want: computecap.Runs, by: "sm_80 cubin", reason: "desktop GPUs run code built for an older minor version"},
		"PTX JIT on a newer GPU":    {gpu: "8.7", code: []string{"sm_75", "compute_75", "compute_80"}, want: computecap.JIT, by: "compute_80 PTX", reason: "compute_80 PTX compiles for Jetson Orin, SM 8.7 when loaded"},
		"PTX for Thor's other name": {gpu: "11.0", code: []string{"compute_101"}, want: computecap.JIT, by: "compute_101 PTX"},
		"cubin wins over PTX":       {gpu: "11.0", code: []string{"compute_87", "sm_110"}, want: computecap.Runs, by: "sm_110 cubin"},
		"bitsandbytes on Orin":      {gpu: "8.7", code: bnb, want: computecap.NoCode, reason: "no code for Jetson Orin, SM 8.7: the file holds sm_75 cubin, sm_80 cubin, sm_90 cubin, compute_90 PTX"},
		"SBSA torch on Orin":        {gpu: "8.7", code: []string{"sm_110", "sm_121"}, want: computecap.NoCode, reason: "a Jetson runs only cubins built for its own SM"},
		"newer PTX does not JIT":    {gpu: "7.2", code: []string{"compute_87"}, want: computecap.NoCode},
		"arch-specific PTX":         {gpu: "10.0", code: []string{"compute_90a"}, want: computecap.NoCode},
		"no GPU code":               {gpu: "8.7", want: computecap.NoCode, reason: "the file holds no GPU code"},
	} {
		t.Run(name, func(t *testing.T) {
			v := computecap.JudgeCode(computecap.MustParse(tc.gpu), codes(t, tc.code...))
			require.Equal(t, tc.want, v.Verdict, v.Reason)
			if tc.by != "" {
				require.Equal(t, tc.by, v.By.String())
			}
			require.Contains(t, v.Reason, tc.reason)
		})
	}
}

// TestJudgeCodeUnpromised: sm_80 cubins on an Orin are reported to run,
// not promised: no code, with the report.
func TestJudgeCodeUnpromised(t *testing.T) {
	v := computecap.JudgeCode(computecap.MustParse("8.7"), codes(t, "sm_80", "sm_90"))
	require.Equal(t, computecap.NoCode, v.Verdict)
	require.Len(t, v.Unpromised, 1)
	require.Equal(t, computecap.MustParse("8.0"), v.Unpromised[0].Compiled)
	require.Contains(t, v.Unpromised[0].Source, "1939")
	require.Empty(t, computecap.JudgeCode(computecap.MustParse("11.0"), codes(t, "sm_80")).Unpromised)
}

// TestJudgeCodeSharesCompat: for cubins the audit and `jetbake compat`
// answer with one rule.
func TestJudgeCodeSharesCompat(t *testing.T) {
	for _, gpu := range []string{"7.2", "8.0", "8.6", "8.7", "9.0", "10.1", "11.0", "12.1"} {
		for _, compiled := range []string{"7.2", "7.5", "8.0", "8.6", "8.7", "9.0", "9.0a", "10.0", "11.0", "12.0"} {
			g, c := computecap.MustParse(gpu), computecap.MustParse(compiled)
			runs, _ := computecap.RunsOn(c, g)
			v := computecap.JudgeCode(g, []computecap.Code{{Kind: computecap.Cubin, Target: c}})
			require.Equal(t, runs, v.Verdict == computecap.Runs, "%s on %s", compiled, gpu)
		}
	}
}

// TestJudgeModules: every module with code is the worst module's verdict
// (runs or JIT), named; no module with code is no code, naming none; some
// with and some without is partial, naming the first without.
func TestJudgeModules(t *testing.T) {
	tab := computecap.DefaultTable()
	orin := computecap.MustParse("8.7")
	v, m := tab.JudgeModules(orin, [][]computecap.Code{codes(t, "8.7"), codes(t, "7.5", "8.0", "9.0"), codes(t, "compute_80")})
	require.Equal(t, computecap.Partial, v.Verdict)
	require.Equal(t, 1, m)
	require.Equal(t, 3, v.Modules)
	require.Equal(t, 2, v.WithCode)
	require.Equal(t, "2 of 3 fat binaries hold code for Jetson Orin, SM 8.7 (sm_87 or compute_80 PTX (JIT)); 1 hold only sm_75, sm_80 and sm_90 kernels, "+
		`which fail if launched on this GPU ("no kernel image is available for execution on the device")`, v.Reason)
	require.Len(t, v.Unpromised, 1, "the sm_80 cubin reported to work on an Orin")
	v, m = tab.JudgeModules(orin, [][]computecap.Code{codes(t, "8.7"), codes(t, "compute_80")})
	require.Equal(t, computecap.JIT, v.Verdict)
	require.Equal(t, 1, m)
	v, m = tab.JudgeModules(orin, [][]computecap.Code{codes(t, "8.7"), codes(t, "8.7", "compute_87")})
	require.Equal(t, computecap.Runs, v.Verdict)
	require.Equal(t, 0, m)
	require.Equal(t, 2, v.WithCode)
	v, m = tab.JudgeModules(orin, [][]computecap.Code{codes(t, "7.5", "9.0"), codes(t, "7.2", "compute_90")})
	require.Equal(t, computecap.NoCode, v.Verdict)
	require.Equal(t, -1, m, "no module is worse than another")
	require.Contains(t, v.Reason, "none of its 2 fat binaries holds code for it: no code for Jetson Orin, SM 8.7: the file holds sm_75 cubin, sm_90 cubin, sm_72 cubin, compute_90 PTX")
	v, m = tab.JudgeModules(orin, nil)
	require.Equal(t, computecap.NoCode, v.Verdict)
	require.Equal(t, -1, m)
}

// TestJudgeModulesLikeCuBLAS: NVIDIA's cuBLAS 11.8 (SBSA) has 225 modules:
// 188 with sm_35 to sm_90 cubins and compute_90 PTX, 35 with sm_35 only, one
// with sm_60 and sm_61 only, one with sm_35 and sm_50. On SM 9.0 and 8.6 it
// is partial (it loads, and 37 modules' kernels fail if launched); an Orin
// has no code in any module.
func TestJudgeModulesLikeCuBLAS(t *testing.T) {
	tab := computecap.DefaultTable()
	var mods [][]computecap.Code
	for range 188 {
		mods = append(mods, codes(t, "3.5", "5.0", "6.0", "7.0", "8.0", "9.0", "compute_90"))
	}
	for range 35 {
		mods = append(mods, codes(t, "3.5"))
	}
	mods = append(mods, codes(t, "6.0", "6.1"), codes(t, "3.5", "5.0"))
	v, m := tab.JudgeModules(computecap.MustParse("9.0"), mods)
	require.Equal(t, computecap.Partial, v.Verdict)
	require.Equal(t, 188, m)
	require.Equal(t, "188 of 225 fat binaries hold code for GPU with SM 9.0 (sm_90); 37 hold only sm_35, sm_50, sm_60 and sm_61 kernels, "+
		`which fail if launched on this GPU ("no kernel image is available for execution on the device")`, v.Reason)
	v, _ = tab.JudgeModules(computecap.MustParse("8.6"), mods)
	require.Equal(t, computecap.Partial, v.Verdict)
	require.Contains(t, v.Reason, "188 of 225 fat binaries hold code for GPU with SM 8.6 (sm_80)")
	for _, gpu := range []string{"8.7", "7.2"} {
		v, m = tab.JudgeModules(computecap.MustParse(gpu), mods)
		require.Equal(t, computecap.NoCode, v.Verdict, gpu)
		require.Equal(t, -1, m)
		require.Contains(t, v.Reason, "none of its 225 fat binaries holds code for it")
	}
}

// TestParseVerdict reads every verdict's word back, and nothing else.
func TestParseVerdict(t *testing.T) {
	for _, v := range computecap.Verdicts() {
		got, ok := computecap.ParseVerdict(v.String())
		require.True(t, ok)
		require.Equal(t, v, got)
	}
	_, ok := computecap.ParseVerdict("fine")
	require.False(t, ok)
	require.Equal(t, "partial", computecap.Partial.String())
}
