package refs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// chainFrom builds an error chain from ops, one byte a link: the errors a
// registry call meets (Go's dial, DNS and URL errors, go-containerregistry's
// transport errors, the JSON decoder's, deadlines), with their fields nil
// or set, wrapped with %w and joined with errors.Join. text fills the
// strings. A chain never holds a nil pointer as a link: the standard
// library's own errors.Is panics on one.
func chainFrom(ops []byte, text string) error {
	var err error
	for i, op := range ops {
		s := text
		if len(s) > i {
			s = s[i:]
		}
		switch op % 16 {
		case 0:
			err = errors.New(s)
		case 1:
			err = &net.OpError{Op: "dial", Net: "tcp", Err: err}
		case 2:
			err = &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(op)}, Err: err}
		case 3:
			err = &net.OpError{Op: "read", Err: err}
		case 4:
			err = &url.Error{Op: "Get", URL: s, Err: err}
		case 5:
			err = &url.Error{}
		case 6:
			err = &net.DNSError{Name: s, Err: "no such host", IsNotFound: true}
		case 7:
			err = &net.DNSError{}
		case 8:
			err = &transport.Error{StatusCode: int(op) * 3}
		case 9:
			err = &transport.Error{StatusCode: int(op), Request: &http.Request{Method: s}, Errors: []transport.Diagnostic{{Code: transport.ErrorCode(s), Message: s}}}
		case 10:
			err = fmt.Errorf("%s: %w", s, err)
		case 11:
			err = errors.Join(err, chainFrom(ops[i+1:min(len(ops), i+3)], s))
		case 12:
			err = errors.Join()
		case 13:
			err = fmt.Errorf("get: %w", context.DeadlineExceeded)
		case 14:
			err = &json.SyntaxError{}
		case 15:
			err = fmt.Errorf("%w; %w", io.ErrUnexpectedEOF, err)
		}
	}
	return err
}

// FuzzDescribeRegistryError: no error chain makes DescribeRegistryError or
// DescribeIfRegistry panic, and what they return prints as one line.
func FuzzDescribeRegistryError(f *testing.F) {
	f.Add([]byte{1}, "")
	f.Add([]byte{7, 1, 4}, "https://ghcr.io/v2/")
	f.Add([]byte{6, 1, 4, 10}, "ghcr.io")
	f.Add([]byte{0, 3, 5, 11, 1, 7}, "x\x1b[2J\ny")
	f.Add([]byte{8, 10, 9, 11, 12, 13}, "GET")
	f.Add([]byte{1, 3, 4, 14, 15}, "")
	f.Fuzz(func(t *testing.T, ops []byte, text string) {
		if len(ops) > 32 {
			ops = ops[:32]
		}
		err := chainFrom(ops, text)
		for _, describe := range []func(string, error) error{DescribeRegistryError, DescribeIfRegistry} {
			got := describe("read r:1", err)
			if err == nil {
				if got != nil {
					t.Fatalf("nil became %v", got)
				}
				continue
			}
			var re *RegistryError
			if !errors.As(got, &re) {
				continue
			}
			if msg := got.Error(); strings.ContainsAny(msg, "\n\x1b") || !strings.Contains(msg, "; fix: ") {
				t.Fatalf("not one printable sentence: %q", msg)
			}
		}
	})
}
