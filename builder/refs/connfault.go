package refs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"syscall"
)

// plainAnswer is what Go's HTTP client says, without a type to match, when
// a TLS handshake meets a plain HTTP answer.
const plainAnswer = "server gave HTTP response to HTTPS client"

// describeConnection fills e for a connection that failed under the HTTP
// exchange: a certificate this machine does not trust, TLS spoken to a
// registry that speaks plain HTTP, a connection reset while the registry
// answered. It reports whether err was one of them.
func describeConnection(e *RegistryError, err error) bool {
	host := connectionHost(err)
	var verify *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &unknownCA) || (errors.As(err, &verify) && verify != nil && !errors.As(err, &hostname)):
		e.Err = &answerError{msg: "the certificate of " + host + " is not signed by an authority this machine trusts", err: err}
		e.Fix = "add the registry's CA to this machine's trusted certificates (update-ca-certificates), or name the registry by an address whose certificate is trusted"
	case errors.As(err, &hostname):
		e.Err = &answerError{msg: "the certificate of " + host + " is for another name", err: err}
		e.Fix = "name the registry as its certificate does"
	case errors.As(err, &record) || strings.Contains(errorText(err), plainAnswer):
		e.Err = &answerError{msg: host + " does not speak TLS (it answered an HTTPS request in plain HTTP)", err: err}
		e.Fix = "check the registry's address and port; jetbake speaks plain HTTP only to localhost, loopback and private addresses"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		e.Err = &answerError{msg: "the connection to " + host + " was reset while it answered", err: err}
		e.Fix = "retry: the registry, or a proxy in front of it, cut the connection; if it keeps happening, tell its operator"
	default:
		return false
	}
	return true
}

// connectionHost is the registry's HOST[:PORT] as the failed request or the
// connection names it, or "the registry".
func connectionHost(err error) string {
	if h := urlHost(err); h != "" {
		return Printable(h)
	}
	var operr *net.OpError
	if errors.As(err, &operr) && operr != nil && operr.Addr != nil {
		return Printable(operr.Addr.String())
	}
	return "the registry"
}
