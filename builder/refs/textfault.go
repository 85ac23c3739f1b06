package refs

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// lookupFailure matches Go's words for a registry's name that did not
// resolve, as they reach jetbake in text only: BuildKit's errors come
// through gRPC, which keeps none of Go's types. net.DNSError writes
// "lookup HOST on SERVER: ..." or "lookup HOST: ...", after the dial that
// needed the address ("dial tcp: "). FuzzDescribeTextFault runs it.
var lookupFailure = regexp.MustCompile(`dial tcp[46]?: lookup ([^\s:"]+)(?: on |: )`)

// requestURL matches the request Go's HTTP client names in its error:
// `Head "https://nvcr.io/v2/nvidia/l4t-cuda/manifests/12.6.11-runtime"`.
var requestURL = regexp.MustCompile(`(?:Head|Get|GET|HEAD) "(https?://[^"\s]+)"`)

// DescribeTextFault is DescribeRegistryError for an error that reached
// jetbake as text (a BuildKit daemon's pull of a base, through gRPC): when
// its words say a registry's name did not resolve, the *RegistryError that
// names the host, the image asked for and the fix; any other error is
// returned as it is.
func DescribeTextFault(err error) error {
	if err == nil {
		return nil
	}
	var re *RegistryError
	if errors.As(err, &re) {
		return err
	}
	text := errorText(err)
	m := lookupFailure.FindStringSubmatch(text)
	if m == nil {
		return err
	}
	host := Printable(m[1])
	what := "reach the registry " + host
	if image := imageOfRequest(text); image != "" {
		what = "pull " + Printable(image)
	}
	return &RegistryError{What: what, Unresolved: true, Fix: UnresolvedFix,
		Err: &answerError{msg: "the registry's name " + host + " does not resolve to an address", err: err}}
}

// imageOfRequest is the image a registry request in text asked for
// (REGISTRY/REPOSITORY:TAG or @DIGEST, from /v2/REPOSITORY/manifests/REF),
// "" when text names no such request.
func imageOfRequest(text string) string {
	m := requestURL.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	u, err := url.Parse(m[1])
	if err != nil || u.Host == "" {
		return ""
	}
	repo, ref, ok := strings.Cut(strings.TrimPrefix(u.Path, "/v2/"), "/manifests/")
	if !ok || repo == "" || ref == "" {
		return ""
	}
	if strings.Contains(ref, ":") {
		return u.Host + "/" + repo + "@" + ref
	}
	return u.Host + "/" + repo + ":" + ref
}
