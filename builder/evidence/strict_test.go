package evidence

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
)

// storeGolden stores the golden evidence for jetpack6.2 in m's store.
func storeGolden(t *testing.T, m *matrix.Matrix, edit func(ev *Evidence)) {
	t.Helper()
	rel, _ := m.Release("jetpack6.2")
	ev := supported(t, edit)
	_, err := StoreFor(m).Add(&Admitted{Evidence: ev, Release: rel, Built: Built{Release: rel.Name, Digest: ev.Image.Digest}})
	require.NoError(t, err)
}

func TestCheckStrict(t *testing.T) {
	day := 24 * time.Hour
	fix := "run 'jetbake-probe --smoke --kernel --serve /model --out evidence.json' in that image on a Jetson, " +
		"with a small embedding model's folder mounted at /model, then 'jetbake evidence add evidence.json' " +
		"(supported needs its cuda-kernel and serve checks); or set the tier to \"candidate\""
	tests := []struct {
		name   string
		store  bool
		opts   []Option
		tier   string
		broken bool
		want   []matrix.FieldError
	}{
		{name: "fresh evidence for the current digest", store: true,
			opts: []Option{WithResolver(metadata(goldenDigest)), WithNow(goldenTime().Add(day))}},
		{name: "no evidence", opts: []Option{WithResolver(metadata(goldenDigest)), WithNow(goldenTime())},
			want: []matrix.FieldError{{Path: "releases[2].tier", Value: `"supported"`, Fix: fix,
				Message: "release jetpack6.2 claims supported without passing evidence for its current image " + goldenDigest +
					" (build.json) no older than 30d: there is no evidence for the release"}}},
		{name: "evidence for an older digest", store: true, opts: []Option{WithResolver(metadata(otherDigest)), WithNow(goldenTime())},
			want: []matrix.FieldError{{Path: "releases[2].tier", Value: `"supported"`, Fix: fix,
				Message: "release jetpack6.2 claims supported without passing evidence for its current image " + otherDigest +
					" (build.json) no older than 30d: c2efadaaded6-jetson-orin-nano-super-2026-11-20.json (not-current: the evidence is for " +
					goldenDigest + ", not " + otherDigest + " (build.json))"}}},
		{name: "evidence older than the limit", store: true, opts: []Option{WithResolver(metadata(goldenDigest)), WithNow(goldenTime().Add(40 * day))},
			want: []matrix.FieldError{{Path: "releases[2].tier", Value: `"supported"`, Fix: fix,
				Message: "release jetpack6.2 claims supported without passing evidence for its current image " + goldenDigest +
					" (build.json) no older than 30d: c2efadaaded6-jetson-orin-nano-super-2026-11-20.json (too-old: the evidence is from 2026-11-20, 40d old, more than the limit of 30d)"}}},
		{name: "a shorter limit", store: true,
			opts: []Option{WithResolver(metadata(goldenDigest)), WithNow(goldenTime().Add(2 * day)), WithMaxAge(day)},
			want: []matrix.FieldError{{Path: "releases[2].tier", Value: `"supported"`, Fix: fix,
				Message: "release jetpack6.2 claims supported without passing evidence for its current image " + goldenDigest +
					" (build.json) no older than 1d: c2efadaaded6-jetson-orin-nano-super-2026-11-20.json (too-old: the evidence is from 2026-11-20, 2d old, more than the limit of 1d)"}}},
		{name: "current digest unknown", store: true, opts: []Option{WithNow(goldenTime())},
			want: []matrix.FieldError{{Path: "releases[2].tier", Value: `"supported"`,
				Message: "release jetpack6.2 claims supported, but the digest of its current image is unknown: no build metadata or registry to ask",
				Fix:     "read the report of the latest 'jetbake build' with a MetadataResolver, or push the release and its tags"}}},
		{name: "current digest unknown, in a command's words", store: true, opts: []Option{WithNow(goldenTime()), WithMetadataFix("pass -m")},
			want: []matrix.FieldError{{Path: "releases[2].tier", Value: `"supported"`,
				Message: "release jetpack6.2 claims supported, but the digest of its current image is unknown: no build metadata or registry to ask",
				Fix:     "pass -m, or push the release and its tags"}}},
		{name: "other tiers need nothing", tier: "candidate", opts: []Option{WithNow(goldenTime())}},
		{name: "a broken file in the store", store: true, broken: true, opts: []Option{WithResolver(metadata(goldenDigest))},
			want: []matrix.FieldError{{Path: "releases[2].tier", Value: `"supported"`,
				Message: "release jetpack6.2 claims supported, but its evidence cannot be read: evidence store: ",
				Fix:     "remove or repair the file; 'jetbake evidence add' writes only valid evidence"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMatrix(t, t.TempDir())
			if tt.tier != "" {
				rel, _ := m.Release("jetpack6.2")
				rel.Tier = tt.tier
			}
			if tt.store {
				storeGolden(t, m, nil)
			}
			if tt.broken {
				require.NoError(t, os.WriteFile(filepath.Join(m.Dir, "evidence", "jetpack6.2", "x.json"), []byte("{"), 0o644))
			}
			got := CheckStrict(t.Context(), m, tt.opts...)
			if tt.broken {
				require.Len(t, got, 1)
				require.Contains(t, got[0].Message, tt.want[0].Message)
				got[0].Message = tt.want[0].Message
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// A release built with CUDA 13 stays below supported until its router ran
// on a Thor: passing evidence from an Orin does not lift it, from a Thor does.
func TestCheckStrictCUDA13NeedsThor(t *testing.T) {
	m := testMatrix(t, t.TempDir())
	rel, _ := m.Release("jetpack6.2")
	rel.CUDA = "13.0"
	storeGolden(t, m, nil)
	opts := []Option{WithResolver(metadata(goldenDigest)), WithNow(goldenTime().Add(time.Hour))}
	got := CheckStrict(t.Context(), m, opts...)
	require.Len(t, got, 1)
	require.Equal(t, "releases[2].tier", got[0].Path)
	require.Contains(t, got[0].Message, "TEI's CUDA 13 support is unproven")
	require.Contains(t, got[0].Message, "none of its passing evidence ran the SM 11.0 binary")
	require.Contains(t, got[0].Fix, "Jetson Thor")

	table, err := Support(t.Context(), m, opts...)
	require.NoError(t, err)
	require.Contains(t, table.Releases[2].Why, "has run on a Jetson Thor")

	storeGolden(t, m, func(ev *Evidence) {
		ev.GeneratedAt = "2026-11-20T09:40:00Z"
		ev.Result.Binary.SM, ev.Result.Binary.Name = "11.0", "router-110"
	})
	require.Empty(t, CheckStrict(t.Context(), m, opts...), "Thor evidence lifts it")
	table, err = Support(t.Context(), m, opts...)
	require.NoError(t, err)
	require.Empty(t, table.Releases[2].Why)
}

func TestSupport(t *testing.T) {
	m := testMatrix(t, t.TempDir())
	storeGolden(t, m, nil)
	storeGolden(t, m, func(ev *Evidence) {
		ev.Image.Digest, ev.GeneratedAt, ev.Host.DeviceClass = otherDigest, "2026-11-01T10:00:00Z", "Jetson AGX Orin"
	})

	table, err := Support(t.Context(), m, WithNow(goldenTime().Add(time.Hour)))
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, table.WriteText(&text))
	require.Equal(t, ""+
		"jetpack5.1  legacy          JetPack 5.1.2 (L4T 35.4.1): Jetson AGX Xavier, Jetson Xavier NX, Jetson AGX Orin, Jetson Orin NX, Jetson Orin Nano\n"+
		"    no evidence\n"+
		"jetpack6.1  candidate       JetPack 6.1 (L4T 36.4.0): Jetson AGX Orin, Jetson Orin NX, Jetson Orin Nano\n"+
		"    no evidence\n"+
		"jetpack6.2  supported       JetPack 6.2 (L4T 36.4.3): Jetson AGX Orin, Jetson Orin NX, Jetson Orin Nano, Jetson Orin Nano Super\n"+
		"    Jetson Orin Nano Super, 2026-11-20, sha256:c2efadaaded6, rev 677e5d8f2a41, level serve\n"+
		"    Jetson AGX Orin, 2026-11-01, sha256:3bfcb1f42ae9, rev 677e5d8f2a41, level serve\n"+
		"jetpack7.0  candidate       JetPack 7.0 (L4T 38.2.0): Jetson AGX Thor\n    why not supported: TEI's CUDA 13 support is unproven (TEI v1.8.0 to v1.9.3 pin cudarc 0.13.5, which has no CUDA 13 feature, cuda-13000 first being in cudarc 0.17.1, so its router compiles against CUDA 12.2 bindings): below supported until a router built for CUDA 13 has run on a Jetson Thor\n"+
		"    no evidence\n"+
		"jetpack7.2  evaluate-later  JetPack 7.2 (L4T 39.2.0): Jetson AGX Orin, Jetson Orin NX, Jetson Orin Nano, Jetson AGX Thor\n    why not supported: TEI's CUDA 13 support is unproven (TEI v1.8.0 to v1.9.3 pin cudarc 0.13.5, which has no CUDA 13 feature, cuda-13000 first being in cudarc 0.17.1, so its router compiles against CUDA 12.2 bindings): below supported until a router built for CUDA 13 has run on a Jetson Thor\n"+
		"    no evidence\n", text.String())

	// With the current digest known, each piece says whether it counts.
	table, err = Support(t.Context(), m, WithResolver(metadata(goldenDigest)), WithNow(goldenTime().Add(time.Hour)))
	require.NoError(t, err)
	var md bytes.Buffer
	require.NoError(t, table.WriteMarkdown(&md))
	require.Contains(t, md.String(), "| Release | JetPack (L4T) | Tier | Hardware | Evidence |\n|---|---|---|---|---|\n")
	require.Contains(t, md.String(), "| jetpack6.2 | 6.2 (36.4.3) | supported | Jetson AGX Orin, Jetson Orin NX, Jetson Orin Nano, Jetson Orin Nano Super | "+
		"Jetson Orin Nano Super, 2026-11-20, `sha256:c2efadaaded6`, rev `677e5d8f2a41`, level serve (counts)<br>"+
		"Jetson AGX Orin, 2026-11-01, `sha256:3bfcb1f42ae9`, rev `677e5d8f2a41`, level serve (does not count) |\n")
	require.Contains(t, md.String(), "| jetpack7.0 | 7.0 (38.2.0) | candidate | Jetson AGX Thor | no evidence |\n")

	var js bytes.Buffer
	require.NoError(t, table.WriteJSON(&js))
	var back SupportTable
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Equal(t, "30d", back.MaxAge)
	row := back.Releases[2]
	require.Equal(t, goldenDigest, row.CurrentDigest)
	require.True(t, *row.Backed)
	require.Equal(t, SupportEvidence{DeviceClass: "Jetson Orin Nano Super", Date: "2026-11-20T09:30:00Z", Digest: goldenDigest,
		Revision: goldenRevision, Level: LevelServe, Counts: ptr(true), File: "c2efadaaded6-jetson-orin-nano-super-2026-11-20.json"}, row.Evidence[0])
	require.Empty(t, back.Releases[3].Evidence)
	require.Nil(t, back.Releases[3].Backed, "jetpack7.0 has no built image in the metadata")

	// A supported release whose evidence does not count is marked.
	table, err = Support(t.Context(), m, WithResolver(metadata(goldenDigest)), WithNow(goldenTime().Add(60*24*time.Hour)))
	require.NoError(t, err)
	md.Reset()
	require.NoError(t, table.WriteMarkdown(&md))
	require.Contains(t, md.String(), "| supported (not backed by evidence) |")
}

// TestCheckStrictNeedsServing: evidence of the smoke run alone, or with the
// CUDA kernel but without serving, does not back "supported"; support
// shows the level each piece reached.
func TestCheckStrictNeedsServing(t *testing.T) {
	m := testMatrix(t, t.TempDir())
	rel, _ := m.Release("jetpack6.2")
	ev := golden(t, nil) // the smoke run only
	_, err := StoreFor(m).Add(&Admitted{Evidence: ev, Release: rel, Built: Built{Release: rel.Name, Digest: ev.Image.Digest}})
	require.NoError(t, err)
	opts := []Option{WithResolver(metadata(goldenDigest)), WithNow(goldenTime().Add(time.Hour))}
	got := CheckStrict(t.Context(), m, opts...)
	require.Len(t, got, 1)
	require.Contains(t, got[0].Message, "(below-supported: release jetpack6.2 claims tier supported, which needs evidence of level serve "+
		"(passing cuda-kernel and serve checks), but this evidence reached level smoke (no passing cuda-kernel check, no passing serve check))")
	require.Contains(t, got[0].Fix, "--kernel --serve /model")
	table, err := Support(t.Context(), m, opts...)
	require.NoError(t, err)
	require.Equal(t, LevelSmoke, table.Releases[2].Evidence[0].Level)
	require.False(t, *table.Releases[2].Evidence[0].Counts)

	// The same evidence backs a candidate release.
	rel.Tier = "candidate"
	require.Empty(t, CheckStrict(t.Context(), m, opts...))
	table, err = Support(t.Context(), m, opts...)
	require.NoError(t, err)
	require.True(t, *table.Releases[2].Evidence[0].Counts, "a candidate needs no level")
}
