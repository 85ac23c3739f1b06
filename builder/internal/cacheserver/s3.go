// Package cacheserver serves, on 127.0.0.1, the remote caches a build's
// compile cache talks to, for the tests: S3 (gofakes3, with every request's
// AWS Signature Version 4 checked against the one key pair it accepts, as
// S3 checks it) and GitHub's Actions cache service (its v2 twirp API and
// the signed blob URLs it hands out). Both record what they were asked, so
// that a test sees which credentials reached the client and what it read
// and wrote.
package cacheserver

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/jetbake/jetbake/builder/internal/statuswriter"
)

// S3 is an S3 server that accepts requests signed with one key pair.
type S3 struct {
	// URL is the endpoint, http://127.0.0.1:PORT.
	URL string
	// Backend holds the buckets and objects.
	Backend *s3mem.Backend
	// Region is the region signatures must name.
	Region string

	srv   *httptest.Server
	creds aws.Credentials
	mu    sync.Mutex
	log   []Request
}

// Request is what a server was asked.
type Request struct {
	Method, Path string
	// Status is the answer's status code.
	Status int
}

// NewS3 starts an S3 server with the buckets named, accepting requests
// signed with accessKey and secret for region.
func NewS3(region, accessKey, secret string, buckets ...string) (*S3, error) {
	s := &S3{Backend: s3mem.New(), Region: region, creds: aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secret}}
	for _, b := range buckets {
		if err := s.Backend.CreateBucket(b); err != nil {
			return nil, err
		}
	}
	fake := gofakes3.New(s.Backend).Server()
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := statuswriter.New(w)
		if err := s.verify(r); err != nil {
			http.Error(rec, "<Error><Code>SignatureDoesNotMatch</Code><Message>"+err.Error()+"</Message></Error>", http.StatusForbidden)
		} else {
			fake.ServeHTTP(rec, r)
		}
		s.mu.Lock()
		s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Status: rec.Status})
		s.mu.Unlock()
	}))
	s.URL = s.srv.URL
	return s, nil
}

// Close stops the server.
func (s *S3) Close() { s.srv.Close() }

// Requests returns what the server was asked, in order.
func (s *S3) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Keys lists the objects of bucket under prefix.
func (s *S3) Keys(bucket, prefix string) ([]string, error) {
	p := gofakes3.NewPrefix(&prefix, nil)
	list, err := s.Backend.ListBucket(bucket, &p, gofakes3.ListBucketPage{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range list.Contents {
		out = append(out, c.Key)
	}
	return out, nil
}

// Object returns the content of an object.
func (s *S3) Object(bucket, key string) ([]byte, error) {
	obj, err := s.Backend.GetObject(bucket, key, nil)
	if err != nil {
		return nil, err
	}
	defer obj.Contents.Close()
	return io.ReadAll(obj.Contents)
}

// authHeader reads AWS4-HMAC-SHA256 Credential=ID/DATE/REGION/s3/aws4_request,
// SignedHeaders=..., Signature=....
var authHeader = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/\d{8}/([^/]+)/s3/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$`)

// verify signs the request again with the accepted credentials, over the
// headers it says it signed, and compares the signatures.
func (s *S3) verify(r *http.Request) error {
	m := authHeader.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return fmt.Errorf("the request is not signed with AWS Signature Version 4")
	}
	if m[1] != s.creds.AccessKeyID {
		return fmt.Errorf("the access key %q is not known", m[1])
	}
	if m[2] != s.Region {
		return fmt.Errorf("the signature is for region %s, not %s", m[2], s.Region)
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %v", err)
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return err
	}
	for _, h := range strings.Split(m[3], ";") {
		switch h {
		case "host":
		case "content-length":
			again.ContentLength = r.ContentLength
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := signer.SignHTTP(r.Context(), s.creds, again, payload, "s3", s.Region, when); err != nil {
		return err
	}
	if again.Header.Get("Authorization") != r.Header.Get("Authorization") {
		return fmt.Errorf("the request signature we calculated does not match the signature you provided")
	}
	if r.Body != nil && payload != "UNSIGNED-PAYLOAD" {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if got := fmt.Sprintf("%x", sha256.Sum256(body)); got != payload {
			return fmt.Errorf("the content's SHA-256 %s is not the signed %s", got, payload)
		}
	}
	return nil
}
