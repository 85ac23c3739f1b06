package refs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// RegistryError is a registry's refusal or failure in one sentence: what
// was asked, the status, the registry's own error codes, and the fix. It
// never carries the response body, which a failing registry or a proxy in
// front of it fills with an HTML page.
type RegistryError struct {
	// What says what jetbake asked for, such as "list the tags of ghcr.io/acme/router".
	What string
	// Status is the HTTP status, 0 when none came.
	Status int
	// Request is the method and URL asked, without query or credentials.
	Request string
	// Codes are the registry's error codes and messages, escaped and cut.
	Codes []string
	// Fix says what to do.
	Fix string
	// TimedOut is set when the call's deadline passed before the registry
	// answered: the fix is then more time, which a command that set the
	// deadline from a flag names.
	TimedOut bool
	// Unresolved is set when the registry's name (or its proxy's) did not
	// resolve to an address: offline, a typo, DNS down. A command that can
	// read through a mirror adds its flag to the fix.
	Unresolved bool
	// Err is the error of go-containerregistry.
	Err error
}

// Error writes the sentence.
func (e *RegistryError) Error() string {
	var b strings.Builder
	b.WriteString("cannot " + e.What + ": ")
	switch {
	case e.Status != 0:
		b.WriteString("the registry answered " + strconv.Itoa(e.Status) + " " + http.StatusText(e.Status))
		if e.Request != "" {
			b.WriteString(" to " + e.Request)
		}
		if len(e.Codes) > 0 {
			b.WriteString(" (" + strings.Join(e.Codes, "; ") + ")")
		}
	case e.Err != nil:
		b.WriteString(errorText(e.Err))
	default:
		b.WriteString("it failed")
	}
	return b.String() + "; fix: " + e.Fix
}

// Unwrap returns the error of go-containerregistry.
func (e *RegistryError) Unwrap() error { return e.Err }

// DescribeRegistryError turns an error of a registry call made to do what
// (such as "read ghcr.io/acme/router:1.0") into a *RegistryError; errors
// that did not come from a registry's answer pass through, except a
// deadline, which becomes a RegistryError that is TimedOut.
func DescribeRegistryError(what string, err error) error {
	var terr *transport.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, new(*net.DNSError)):
		// A name that does not resolve, retried until the deadline passed.
		return describeNoStatus(what, err)
	case errors.Is(err, context.DeadlineExceeded):
		return &RegistryError{What: what, Err: errors.New("the registry did not answer in time"), TimedOut: true,
			Fix: "check that the registry is up and reachable, or give it more time"}
	case !errors.As(err, &terr) || terr == nil || terr.StatusCode == 0:
		return describeNoStatus(what, err)
	}
	e := &RegistryError{What: what, Status: terr.StatusCode, Err: err, Fix: statusFix(terr.StatusCode)}
	if r := terr.Request; r != nil && r.URL != nil {
		u := url.URL{Scheme: r.URL.Scheme, Host: r.URL.Host, Path: r.URL.Path}
		e.Request = r.Method + " " + Printable(u.String())
		if terr.StatusCode == http.StatusBadRequest && u.Scheme == "http" && u.Path == "/v2/" {
			// go-containerregistry falls back to plain HTTP for a loopback or
			// private address whose HTTPS failed; a TLS server refuses it so.
			e.Fix = "the registry may speak only HTTPS, with a certificate this machine does not trust: " +
				"add the registry's CA to this machine's trusted certificates (update-ca-certificates)"
		}
	}
	for _, d := range terr.Errors {
		code := Printable(string(d.Code))
		if d.Message != "" {
			code += ": " + Printable(d.Message)
		}
		e.Codes = append(e.Codes, code)
		if len(e.Codes) == 3 {
			break
		}
	}
	return e
}

// DescribeIfRegistry is DescribeRegistryError for an error that came from
// a registry (its answer, a garbled answer, no answer, a name that does not
// resolve, a deadline); any
// other error, such as one a reader of the image's content wrote, passes
// through unchanged.
func DescribeIfRegistry(what string, err error) error {
	var terr *transport.Error
	var uerr *url.Error
	var operr *net.OpError
	var dnserr *net.DNSError
	if errors.As(err, &terr) || garbled(err) || errors.As(err, &uerr) || errors.As(err, &operr) || errors.As(err, &dnserr) ||
		errors.Is(err, context.DeadlineExceeded) {
		return DescribeRegistryError(what, err)
	}
	return err
}

// UnresolvedFix is the fix for a registry's name that does not resolve.
const UnresolvedFix = "check the registry's name and this machine's DNS or proxy settings"

// describeNoStatus is the sentence for a registry call that failed
// without an HTTP status: an answer that is not the JSON a registry sends
// (a web page, a proxy's text, a cut answer), or no answer at all. The
// decoder's and the HTTP library's words stay out of it: they name Go's
// types and the request, not what happened.
func describeNoStatus(what string, err error) error {
	var uerr *url.Error
	var operr *net.OpError
	var dnserr *net.DNSError
	e := &RegistryError{What: what, Err: err, Fix: "check the registry's address and that it is reachable"}
	switch {
	case describeConnection(e, err):
	case garbled(err):
		e.Err = &answerError{msg: "the registry's answer is not the JSON a registry sends (it may be a web page, or a proxy's), or was cut short", err: err}
		e.Fix = "check that the address names a container registry (the OCI distribution API), not a web server or a proxy in front of one, and retry"
	case errors.As(err, &dnserr) && dnserr != nil:
		msg := "the registry's name does not resolve to an address"
		if host := cmp.Or(dnserr.Name, urlHost(err)); host != "" {
			msg = "the registry's name " + Printable(host) + " does not resolve to an address"
		}
		e.Err = &answerError{msg: msg, err: err}
		e.Fix, e.Unresolved = UnresolvedFix, true
	case errors.As(err, &operr) && operr != nil && operr.Op == "dial" && operr.Addr != nil:
		e.Err = &answerError{msg: "nothing answers at " + Printable(operr.Addr.String()), err: err}
		e.Fix = "check the registry's address and port, and that it is up"
	case errors.As(err, &uerr) || errors.As(err, &operr):
		host := connectionHost(err)
		e.Err = &answerError{msg: "the connection to " + host + " failed before it answered", err: err}
	default:
		e.Err = &answerError{msg: strings.ReplaceAll(Printable(errorText(err)), "\\n", " "), err: err}
	}
	return e
}

// urlHost is the host of the URL of the first *url.Error in err's chain,
// "" when there is none.
func urlHost(err error) string {
	var uerr *url.Error
	if !errors.As(err, &uerr) || uerr == nil {
		return ""
	}
	u, perr := url.Parse(uerr.URL)
	if perr != nil {
		return ""
	}
	return u.Host
}

// errorText is err's message; an Error method that panics (as some do on
// a nil receiver) gives "an error without a message" instead.
func errorText(err error) (text string) {
	defer func() {
		if recover() != nil {
			text = "an error without a message"
		}
	}()
	return err.Error()
}

// garbled reports whether err is a JSON decoder's: the answer was not the
// JSON a registry sends, or was cut short.
func garbled(err error) bool {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syntax) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF)
}

// answerError is the sentence of a failed call that keeps the library's
// error for errors.Is and errors.As.
type answerError struct {
	msg string
	err error
}

func (e *answerError) Error() string { return e.msg }
func (e *answerError) Unwrap() error { return e.err }

// statusFix is the fix for an HTTP status of a registry.
func statusFix(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "log in with 'docker login REGISTRY', or check that your account may read the repository"
	case status == http.StatusNotFound:
		return "check the repository's name, and that the image exists"
	case status == http.StatusTooManyRequests:
		return "wait and retry: the registry limits how often it is asked"
	case status >= 500:
		return "retry later: the registry failed; if it keeps failing, tell its operator"
	}
	return "check the repository's name and the registry's address"
}

// Printable escapes the characters of s that are not graphic (control
// characters, escape sequences) as Go writes them ("\x1b"), and cuts it at
// 200 bytes: for text a registry chose, which jetbake prints.
func Printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 200 {
			b.WriteString("...")
			break
		}
		if unicode.IsGraphic(r) && r != utf8.RuneError {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}
