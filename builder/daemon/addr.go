package daemon

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	// BuildKit's connection helpers: each registers its scheme with
	// client.New, as buildctl and buildx register them.
	_ "github.com/moby/buildkit/client/connhelper/dockercontainer"
	_ "github.com/moby/buildkit/client/connhelper/kubepod"
	_ "github.com/moby/buildkit/client/connhelper/nerdctlcontainer"
	_ "github.com/moby/buildkit/client/connhelper/podmancontainer"
	_ "github.com/moby/buildkit/client/connhelper/ssh"
	"google.golang.org/grpc/status"
)

// scheme is one kind of BuildKit address and the fix to offer when a
// daemon at such an address does not answer.
type scheme struct {
	name    string
	example string
	fix     string
}

// schemes are the addresses jetbake reaches: unix and tcp by BuildKit's
// client itself, the rest by its connection helpers (the same set that
// buildctl's address takes).
func schemes() []scheme {
	return []scheme{
		{"unix", "unix:///run/buildkit/buildkitd.sock", "start buildkitd there, or give the address of a running daemon (WithAddr or BUILDKIT_HOST)"},
		{"tcp", "tcp://10.0.0.5:1234", "check that buildkitd listens there and that the client's CA certificate, certificate and key (WithTLS) match its certificates"},
		{"docker-container", "docker-container://buildx_buildkit_default0", "check that the container runs ('docker ps'; a buildx builder NAME runs in buildx_buildkit_NAME0, started by 'docker buildx inspect --bootstrap NAME')"},
		{"podman-container", "podman-container://buildkitd", "check that the container runs ('podman ps') and has buildctl"},
		{"nerdctl-container", "nerdctl-container://buildkitd", "check that the container runs ('nerdctl ps') and has buildctl"},
		{"kube-pod", "kube-pod://buildkitd-0?namespace=buildkit", "check the pod name and its ?namespace= and ?context= ('kubectl get pods -n NAMESPACE'), and that kubectl reaches the cluster"},
		{"ssh", "ssh://user@host", "check that 'ssh user@host buildctl dial-stdio' works from this machine"},
	}
}

// CheckAddr checks that addr names a daemon jetbake can reach: a known
// scheme and the parts it needs. It dials nothing.
func CheckAddr(addr string) error {
	u, err := url.Parse(addr)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("BuildKit address %q is not an address: want SCHEME://..., e.g. %s", addr, schemes()[0].example)
	}
	s, ok := lookupScheme(u.Scheme)
	if !ok {
		var names []string
		for _, s := range schemes() {
			names = append(names, s.name+"://")
		}
		return fmt.Errorf("BuildKit address %q: scheme %q is not known: use one of %s", addr, u.Scheme, strings.Join(names, ", "))
	}
	switch s.name {
	case "unix":
		if u.Path == "" {
			return fmt.Errorf("BuildKit address %q names no socket: want e.g. %s", addr, s.example)
		}
	case "tcp":
		if _, err := strconv.Atoi(u.Port()); err != nil || u.Hostname() == "" {
			return fmt.Errorf("BuildKit address %q needs a host and a port: want e.g. %s", addr, s.example)
		}
	default:
		if u.Host == "" {
			return fmt.Errorf("BuildKit address %q names no %s: want e.g. %s", addr, strings.TrimSuffix(s.name, "-container"), s.example)
		}
	}
	return nil
}

func lookupScheme(name string) (scheme, bool) {
	for _, s := range schemes() {
		if s.name == name {
			return s, true
		}
	}
	return scheme{}, false
}

// UnreachableError is a daemon that does not answer at Addr.
type UnreachableError struct {
	// Addr is the daemon's address; Scheme is its scheme ("unix", "tcp",
	// ...), which Fix is for.
	Addr, Scheme string
	// Cause is why it does not answer, in a few words from the transport.
	Cause string
	// Fix says what to check.
	Fix string
	// Err is the client's error.
	Err error
}

// Error is one sentence: the address, the cause and the fix.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("BuildKit at %s does not answer (%s): %s", e.Addr, e.Cause, e.Fix)
}

// Unwrap returns the client's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// unreachable describes err, the failure of a first call to addr.
func unreachable(addr string, err error) *UnreachableError {
	s := schemes()[0]
	if u, perr := url.Parse(addr); perr == nil {
		if known, ok := lookupScheme(u.Scheme); ok {
			s = known
		}
	}
	return &UnreachableError{Addr: addr, Scheme: s.name, Cause: transportCause(err), Fix: s.fix, Err: err}
}

// transportCause takes the readable part out of a gRPC connection error:
// the last line a connection helper's command wrote on stderr, else the
// dialer's error.
func transportCause(err error) string {
	msg := err.Error()
	if st, ok := status.FromError(err); ok && st != nil {
		msg = st.Message()
	}
	if _, desc, ok := strings.Cut(msg, "desc = "); ok {
		if unq, err := strconv.Unquote(desc); err == nil {
			desc = unq
		}
		msg = desc
	}
	if _, stderr, ok := strings.Cut(msg, "stderr="); ok {
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		msg = strings.TrimSpace(lines[len(lines)-1])
		if msg == "" {
			msg = "the connection command failed"
		}
	} else if _, dial, ok := strings.Cut(msg, "Error while dialing: "); ok {
		msg = dial
	}
	msg = strings.TrimRight(strings.TrimSpace(msg), ".")
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}
