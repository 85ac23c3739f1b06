package evidence

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStoreAddAndRead(t *testing.T) {
	dir := t.TempDir()
	m := testMatrix(t, dir)
	s := StoreFor(m)
	require.Equal(t, filepath.Join(dir, "evidence"), s.Dir)
	rel, _ := m.Release("jetpack6.2")
	built := Built{Release: "jetpack6.2", Digest: goldenDigest}

	first := &Admitted{Evidence: golden(t, nil), Release: rel, Built: built}
	path, err := s.Add(first)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "evidence", "jetpack6.2", "c2efadaaded6-jetson-orin-nano-super-2026-11-20.json"), path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(goldenBytes(t)), string(data), "the store keeps the probe's bytes")

	later := golden(t, func(ev *Evidence) {
		ev.GeneratedAt = "2026-11-25T08:00:00Z"
		ev.Host.DeviceClass = "Jetson AGX Orin"
	})
	_, err = s.Add(&Admitted{Evidence: later, Release: rel, Built: built})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{
		"jetpack6.2/c2efadaaded6-jetson-orin-nano-super-2026-11-20.json",
		"jetpack6.2/c2efadaaded6-jetson-agx-orin-2026-11-25.json",
	}, listFiles(t, s.Dir), "no temporary file is left")

	entries, err := s.Release("jetpack6.2")
	require.NoError(t, err)
	require.Len(t, entries, 2)
	require.Equal(t, "Jetson AGX Orin", entries[0].Evidence.Host.DeviceClass, "newest first")
	none, err := s.Release("jetpack7.0")
	require.NoError(t, err)
	require.Empty(t, none)

	// Older evidence for the same image, device and day does not replace newer.
	earlier := golden(t, func(ev *Evidence) { ev.GeneratedAt = "2026-11-20T07:00:00Z" })
	_, err = s.Add(&Admitted{Evidence: earlier, Release: rel, Built: built})
	require.ErrorContains(t, err, "holds newer evidence (2026-11-20T09:30:00Z) for the same image, device and day: nothing written")

	// A broken file in the store is named.
	broken := filepath.Join(s.Dir, "jetpack6.2", "broken.json")
	require.NoError(t, os.WriteFile(broken, []byte(`{"schema_version": 1}`), 0o644))
	_, err = s.Release("jetpack6.2")
	require.ErrorContains(t, err, "evidence store: "+broken+":1:1: generated_at: is not an RFC 3339 time")
}

func TestFileNameSlug(t *testing.T) {
	ev := golden(t, func(ev *Evidence) { ev.Host.DeviceClass = "Jetson Orin (other module)" })
	require.Equal(t, "c2efadaaded6-jetson-orin-other-module-2026-11-20.json", FileName(ev))
	require.Equal(t, "unknown", slug(""))
}

func TestIssueMarkdown(t *testing.T) {
	body, err := IssueMarkdown(golden(t, nil))
	require.NoError(t, err)
	for _, want := range []string{
		"## Hardware evidence: jetpack6.2 on Jetson Orin Nano Super: pass\n",
		"| Image digest | `" + goldenDigest + "` |\n",
		"| Device | Jetson Orin Nano Super (tegra234, SM 8.7) |\n",
		"| L4T / JetPack | 36.4.3 / 6.2 |\n",
		"| Binary chosen | `router-87` (SM 8.7) |\n",
		"| Smoke run | `--version` exited 0 |\n",
		"| CUDA kernel | not run (add --kernel) |\n",
		"| Serving | not run (add --serve MODEL_DIR) |\n",
		"| Level | smoke: the image starts on the Jetson (no CUDA work was checked) |\n",
		"| Collected | 2026-11-20 09:30 UTC |\n",
		"| cuda-driver | ✅ passed | the driver reports SM 8.7 and CUDA 12.6 |\n",
	} {
		require.Contains(t, body, want)
	}
	full, err := IssueMarkdown(supported(t, nil))
	require.NoError(t, err)
	for _, want := range []string{
		"| CUDA kernel | 4096 values exact on SM 8.7 (JIT 0.812 ms, kernel 0.051 ms) |\n",
		"| Serving | a local model, 384 dimensions, float16: 20 requests, load 812.25 ms, p50 3.12 ms, p95 4.8 ms |\n",
		"| Level | serve: a CUDA kernel ran and the router served embeddings: enough for supported |\n",
		"| serve | ✅ passed | " + servePassed + " |\n",
	} {
		require.Contains(t, full, want)
	}
	stuck, err := IssueMarkdown(supported(t, func(ev *Evidence) {
		setCheck(ev, "serve", Failed, "the router's health route did not answer within 5m0s")
		ev.Result.Serve = &Serve{ModelID: "BAAI/bge-small-en-v1.5", Dimensions: 384, Step: "health", LoadMillis: 300000}
	}))
	require.NoError(t, err)
	require.Contains(t, stuck, "| Serving | `BAAI/bge-small-en-v1.5`, 384 dimensions: failed at `health` after 0 requests |\n")
	require.Contains(t, stuck, "| Level | none: not a pass |\n")
	// The folded JSON reads back as the same evidence.
	_, rest, ok := strings.Cut(body, "```json\n")
	require.True(t, ok)
	raw, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	require.Equal(t, string(goldenBytes(t)), raw)

	failing := golden(t, func(ev *Evidence) {
		setCheck(ev, "smoke", Skipped, "not run: add --smoke to run the chosen binary")
		ev.Result.Smoke = nil
	})
	body, err = IssueMarkdown(failing)
	require.NoError(t, err)
	require.Contains(t, body, ": not a pass\n")
	require.Contains(t, body, "| smoke | ⏭️ skipped | not run: add --smoke to run the chosen binary |\n")
	require.Contains(t, body, "| Smoke run | not run |\n")
}

// TestStoreFollowsNoLinkOut makes evidence/ and a release's folder links to
// a folder outside the matrix's: Add refuses, names the link, and writes
// nothing there; Release reads nothing through it.
func TestStoreFollowsNoLinkOut(t *testing.T) {
	for _, link := range []string{"evidence", filepath.Join("evidence", "jetpack6.2")} {
		t.Run(link, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			m := testMatrix(t, dir)
			s := StoreFor(m)
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, link)), 0o755))
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, link)))
			rel, _ := m.Release("jetpack6.2")
			_, err := s.Add(&Admitted{Evidence: golden(t, nil), Release: rel, Built: Built{Release: "jetpack6.2", Digest: goldenDigest}})
			require.ErrorContains(t, err, "leads out of "+dir+" through a link: the store follows no link out of the matrix's folder")
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			require.Empty(t, entries, "nothing is written outside")

			require.NoError(t, os.MkdirAll(filepath.Join(outside, "jetpack6.2"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(outside, "jetpack6.2", "x.json"), goldenBytes(t), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(outside, "x.json"), goldenBytes(t), 0o644))
			_, err = s.Release("jetpack6.2")
			require.ErrorContains(t, err, "leads out of")
		})
	}
}

// TestStoreCreatesNothingForARefusedName gives Add a release name no file
// system takes: it fails before it creates a folder.
func TestStoreCreatesNothingForARefusedName(t *testing.T) {
	dir := t.TempDir()
	m := testMatrix(t, dir)
	rel := m.Releases[0]
	rel.Name = strings.Repeat("a", 300)
	_, err := StoreFor(m).Add(&Admitted{Evidence: golden(t, nil), Release: &rel})
	require.ErrorContains(t, err, "cannot be a file name: nothing written")
	_, err = os.Stat(filepath.Join(dir, "evidence"))
	require.ErrorIs(t, err, os.ErrNotExist, "no evidence/ folder is left behind")
}
