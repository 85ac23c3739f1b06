package selection

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/internal/buildtest"
	"github.com/jetbake/jetbake/builder/plan"
)

func TestReleases(t *testing.T) {
	p := buildtest.Plan()
	tests := []struct {
		name    string
		names   []string
		want    []string
		wantErr string
	}{
		{name: "all", want: []string{"jetpack6.2", "jetpack7.2"}},
		{name: "one", names: []string{"jetpack7.2"}, want: []string{"jetpack7.2"}},
		{name: "given order", names: []string{"jetpack7.2", "jetpack6.2"}, want: []string{"jetpack7.2", "jetpack6.2"}},
		{name: "unknown", names: []string{"jetpack6.2", "jetpack9", "jetpack8", "jetpack9"},
			wantErr: `unknown release "jetpack9", "jetpack8": the matrix has jetpack6.2, jetpack7.2`},
		{name: "twice", names: []string{"jetpack6.2", "jetpack7.2", "jetpack6.2"},
			wantErr: `release "jetpack6.2" is selected twice: select each release once`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Releases(p, tt.names)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				var unknown *plan.UnknownReleaseError
				var twice *DuplicateError
				require.True(t, errors.As(err, &unknown) || errors.As(err, &twice), "typed: %T", err)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, r := range got {
				names = append(names, r.Name)
			}
			require.Equal(t, tt.want, names)
		})
	}
}
