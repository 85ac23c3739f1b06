package version

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFromBuildInfo(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want Info
	}{
		{name: "go install at a tag", bi: debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: ModulePath, Version: "v0.3.0"}},
			want: Info{Version: "v0.3.0", GoVersion: "go1.26", FromModule: true}},
		{name: "go install at a commit", bi: debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v0.0.0-20261130150000-abcdef123456"}},
			want: Info{Version: "v0.0.0-20261130150000-abcdef123456", Commit: "abcdef123456", FromModule: true,
				CommitTime: time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)}},
		{name: "go install at a commit after a pre-release", bi: debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v0.3.0-rc.1.0.20261130150000-abcdef123456"}},
			want: Info{Version: "v0.3.0-rc.1.0.20261130150000-abcdef123456", Commit: "abcdef123456", FromModule: true,
				CommitTime: time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)}},
		{name: "checkout", bi: debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "true"},
				{Key: "vcs.time", Value: "2026-12-01T10:20:30Z"}}},
			want: Info{Version: "(devel)", Commit: "0123456789abcdef0123456789abcdef01234567", Modified: true,
				CommitTime: time.Date(2026, 12, 1, 10, 20, 30, 0, time.UTC)}},
		{name: "another module's test binary", bi: debug.BuildInfo{Main: debug.Module{Path: "example.com/x", Version: "v1.0.0"}},
			want: Info{Version: "v1.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, FromBuildInfo(&tt.bi))
		})
	}
	require.Equal(t, "v1.0.0 (commit abc, modified)", Info{Version: "v1.0.0", Commit: "abc", Modified: true}.String())
}
