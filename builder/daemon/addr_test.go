package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/buildkit/client/connhelper"
	"github.com/stretchr/testify/require"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr, wantErr string
		helper        bool // reached through a registered connection helper
	}{
		{addr: "unix:///run/buildkit/buildkitd.sock"},
		{addr: "tcp://10.0.0.5:1234"},
		{addr: "docker-container://buildx_buildkit_default0", helper: true},
		{addr: "podman-container://buildkitd", helper: true},
		{addr: "nerdctl-container://buildkitd", helper: true},
		{addr: "kube-pod://buildkitd-0?namespace=buildkit&context=prod", helper: true},
		{addr: "ssh://builder@10.0.0.5:2222", helper: true},
		{addr: "tcp://10.0.0.5", wantErr: "needs a host and a port"},
		{addr: "unix://", wantErr: "names no socket"},
		{addr: "docker-container://", wantErr: "names no docker"},
		{addr: "kube-pod://", wantErr: "names no kube-pod"},
		{addr: "http://10.0.0.5:1234", wantErr: `scheme "http" is not known: use one of unix://, tcp://, docker-container://`},
		{addr: "10.0.0.5:1234", wantErr: "is not an address"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := CheckAddr(tt.addr)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			u, err := url.Parse(tt.addr)
			require.NoError(t, err)
			h, err := connhelper.GetConnectionHelper(tt.addr)
			require.NoError(t, err)
			require.Equal(t, tt.helper, h != nil, "scheme %s registered with BuildKit's client", u.Scheme)
		})
	}
}

// A daemon that cannot be reached is one sentence naming the address, the
// cause and the fix, with no gRPC text, and Connect says so before its
// context's deadline rather than waiting it out: the deadline is shorter than
// the 10 s Connect gives the daemon's first answer, so a Connect that waits
// for a daemon to come up fails here on the context's error. The tcp:// and ssh://
// addresses are a 127.0.0.1 port that was just listened on and closed, the
// unix:// one a socket path in an empty folder: each is known to refuse. The
// helpers run the real docker, kubectl and ssh commands of this machine.
func TestConnectUnreachable(t *testing.T) {
	port := closedPort(t)
	sock := filepath.Join(t.TempDir(), "buildkitd.sock")
	tests := []struct{ addr, cause, fix string }{
		{"docker-container://jetbake-no-such-container", "", "check that the container runs"},
		{"kube-pod://jetbake-no-such-pod?namespace=nowhere", "", "check the pod name"},
		{"ssh://nobody@127.0.0.1:" + port, "ssh: connect to host 127.0.0.1 port " + port + ": Connection refused", "buildctl dial-stdio"},
		{"unix://" + sock, "dial unix " + sock + ": connect: no such file or directory", "start buildkitd there"},
		{"tcp://127.0.0.1:" + port, "dial tcp 127.0.0.1:" + port + ": connect: connection refused", "check that buildkitd listens there"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 9*time.Second)
			defer cancel()
			_, err := Connect(ctx, WithAddr(tt.addr))
			require.NoError(t, ctx.Err(), "Connect waited for its context's deadline: %v", err)
			require.NotErrorIs(t, err, context.DeadlineExceeded)
			var ue *UnreachableError
			require.True(t, errors.As(err, &ue), "%v", err)
			require.Equal(t, tt.addr, ue.Addr)
			require.Equal(t, tt.addr[:strings.Index(tt.addr, "://")], ue.Scheme)
			require.NotEmpty(t, ue.Cause)
			if tt.cause != "" {
				require.Equal(t, tt.cause, ue.Cause)
			}
			msg := err.Error()
			require.Equal(t, "BuildKit at "+tt.addr+" does not answer ("+ue.Cause+"): "+ue.Fix, msg)
			require.Contains(t, ue.Fix, tt.fix)
			for _, raw := range []string{"rpc error", "desc =", "Unavailable", "\n", "server preface"} {
				require.NotContains(t, msg, raw)
			}
			t.Log(msg)
		})
	}
}

// closedPort returns a port of 127.0.0.1 that refuses connections: one that
// was listened on and closed.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(l.Addr().String())
	require.NoError(t, err)
	require.NoError(t, l.Close())
	return port
}

func TestTransportCause(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`failed to call info: Unavailable: connection error: desc = "transport: Error while dialing: dial unix /tmp/nope.sock: connect: no such file or directory"`,
			"dial unix /tmp/nope.sock: connect: no such file or directory"},
		{`failed to call info: Unavailable: connection error: desc = "error reading server preface: command [docker exec -i nope buildctl dial-stdio] has exited with exit status 1, make sure the URL is valid: stderr=Error response from daemon: No such container: nope\n"`,
			"Error response from daemon: No such container: nope"},
		{"something else.", "something else"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, transportCause(errors.New(tt.raw)))
	}
}

func TestCheckNodes(t *testing.T) {
	require.NoError(t, CheckNodes([]NodeSpec{{Name: "a", Addr: "tcp://a:1"}, {Name: "b", Addr: "kube-pod://b"}}))
	err := CheckNodes([]NodeSpec{{Name: "a", Addr: "tcp://a:1"}, {Name: "a", Addr: "tcp://b:1"}})
	require.ErrorContains(t, err, `BuildKit node name "a" is used twice (tcp://a:1 and tcp://b:1)`)
	require.ErrorContains(t, CheckNodes([]NodeSpec{{Name: "a", Addr: "tcp://a"}}), "node a: BuildKit address")
}

// An unreachable node is left out with a line naming it, the cause and the
// fix; with no node left, the error names them all.
func TestConnectNodesUnreachable(t *testing.T) {
	var lines []string
	logf := func(format string, args ...any) {
		lines = append(lines, strings.TrimSpace(fmt.Sprintf(format, args...)))
	}
	_, err := ConnectNodes(t.Context(), []NodeSpec{{Name: "orin-1", Addr: "unix:///nonexistent/orin-1.sock"}, {Name: "thor-1", Addr: "tcp://127.0.0.1:1"}},
		"linux/arm64", TLS{}, logf)
	require.EqualError(t, err, "none of the 2 BuildKit nodes (orin-1, thor-1) can build linux/arm64: "+
		"fix the nodes named in the lines above, or build on one daemon (Connect) instead")
	var none *NoNodeError
	require.ErrorAs(t, err, &none)
	require.Equal(t, []string{"orin-1", "thor-1"}, none.Nodes)
	require.Len(t, lines, 2)
	require.Contains(t, lines[0], "node orin-1 is left out: BuildKit at unix:///nonexistent/orin-1.sock does not answer (")
	require.Contains(t, lines[0], "start buildkitd there")
	require.Contains(t, lines[1], "node thor-1 is left out")

	_, err = ConnectNodes(t.Context(), []NodeSpec{{Name: "a", Addr: "tcp://a:1"}, {Name: "a", Addr: "tcp://b:1"}}, "linux/arm64", TLS{}, logf)
	require.ErrorContains(t, err, "used twice")
}
