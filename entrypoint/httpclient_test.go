package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseResponse(t *testing.T) {
	tests := []struct {
		name, raw string
		status    int
		body      string
		err       string
	}{
		{name: "content-length", raw: "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 7\r\n\r\n[[1.5]]", status: 200, body: "[[1.5]]"},
		{name: "content-length shorter than what follows", raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]garbage", status: 200, body: "[]"},
		{name: "an empty health answer", raw: "HTTP/1.1 200 OK\r\ncontent-length: 0\r\ndate: Thu, 20 Nov 2026 09:30:00 GMT\r\n\r\n", status: 200},
		{name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\n[[1\r\n4\r\n.5]]\r\n0\r\n\r\n", status: 200, body: "[[1.5]]"},
		{name: "to the end of the connection", raw: "HTTP/1.0 424 Failed Dependency\r\n\r\n{\"error\":\"x\"}", status: 424, body: `{"error":"x"}`},
		{name: "no end of headers", raw: "HTTP/1.1 200 OK\r\n", err: "no end of headers"},
		{name: "not HTTP", raw: "SSH-2.0-OpenSSH\r\n\r\n", err: "no HTTP/1.x status line"},
		{name: "a status of two digits", raw: "HTTP/1.1 20 OK\r\n\r\n", err: "no HTTP/1.x status line"},
		{name: "a header without a colon", raw: "HTTP/1.1 200 OK\r\nbroken\r\n\r\n", err: "without a colon"},
		{name: "two lengths", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", err: "not one number"},
		{name: "ends early", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab", err: "ended before its Content-Length"},
		{name: "a chunk that ends early", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nff\r\nab", err: "ends early"},
		{name: "a chunk size that is not hex", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: "no hex size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseResponse([]byte(tt.raw))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.status, r.status)
			require.Equal(t, tt.body, string(r.body))
		})
	}
}

// TestRoundTripNothingListens: a port nothing listens on is refused at
// once, and the free port the kernel gives is on 127.0.0.1.
func TestRoundTripNothingListens(t *testing.T) {
	port, err := freeLoopbackPort()
	require.NoError(t, err)
	require.Positive(t, port)
	_, err = roundTrip(port, "GET", "/health", nil, time.Second)
	require.ErrorContains(t, err, "connection refused")
}

// TestStopRouterKillsOneThatIgnoresSIGTERM: SIGTERM, the bound, SIGKILL.
func TestStopRouterKillsOneThatIgnoresSIGTERM(t *testing.T) {
	for _, tt := range []struct {
		script string
		ends   bool
	}{{"trap '' TERM; sleep 30 & wait; sleep 30", false}, {"sleep 30", true}} {
		cmd := exec.Command("sh", "-c", tt.script)
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		require.Equal(t, tt.ends, stopRouter(cmd, exited, 300*time.Millisecond), tt.script)
		require.Less(t, time.Since(start), 5*time.Second)
	}
}

func FuzzParseResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseResponse(data)
		if err != nil {
			return
		}
		if r.status < 100 || r.status > 999 || len(r.body) > len(data) {
			t.Fatalf("status %d, body of %d bytes from %d", r.status, len(r.body), len(data))
		}
		if !strings.HasPrefix(string(data), "HTTP/1.") {
			t.Fatalf("admitted %q", data)
		}
	})
}
