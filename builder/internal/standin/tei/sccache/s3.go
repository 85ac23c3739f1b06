package sccache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// s3Cache is sccache's S3 backend (src/cache/s3.rs over OpenDAL's S3
// service): objects at ENDPOINT/BUCKET/PREFIX/KEY (path style), each
// request signed with AWS Signature Version 4, or anonymous with
// SCCACHE_S3_NO_CREDENTIALS.
type s3Cache struct {
	c      S3Config
	region string
	base   string // ENDPOINT/BUCKET/PREFIX
	creds  *aws.Credentials
	client *http.Client
	signer *v4.Signer
}

// newS3 builds the backend as sccache's S3Cache::build and OpenDAL's S3
// builder do: a bucket that is not empty; the endpoint from
// SCCACHE_ENDPOINT (http:// unless it names a scheme or SCCACHE_S3_USE_SSL
// is true), else AWS's; the region from SCCACHE_REGION, else AWS_REGION, or
// it fails; the credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
// and AWS_SESSION_TOKEN. Credentials are needed only when a request is
// made, as OpenDAL loads them.
func newS3(c S3Config, getenv Getenv) (*s3Cache, error) {
	if c.Endpoint != nil {
		if _, err := resolveEndpoint(c); err != nil {
			return nil, err
		}
	}
	if c.Bucket == "" {
		return nil, errors.New("ConfigInvalid (permanent) at Builder::build, context: { service: s3 } => The bucket is misconfigured")
	}
	if c.Region == nil {
		c.Region = lookup(getenv, "AWS_REGION")
	}
	if c.Region == nil {
		return nil, errors.New("ConfigInvalid (permanent) at Builder::build, context: { service: s3 } => region is missing. Please find it by S3::detect_region() or set them in env.")
	}
	endpoint, err := resolveEndpoint(c)
	if err != nil {
		return nil, err
	}
	s := &s3Cache{c: c, region: *c.Region, base: strings.TrimSuffix(endpoint, "/") + "/" + url.PathEscape(c.Bucket) + "/" + c.KeyPrefix,
		client: &http.Client{Timeout: 60 * time.Second}, signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })}
	id, _ := getenv("AWS_ACCESS_KEY_ID")
	secret, _ := getenv("AWS_SECRET_ACCESS_KEY")
	if id != "" && secret != "" {
		token, _ := getenv("AWS_SESSION_TOKEN")
		s.creds = &aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: token}
	}
	return s, nil
}

// resolveEndpoint is sccache's endpoint_resolver (src/cache/s3.rs).
func resolveEndpoint(c S3Config) (string, error) {
	if c.Endpoint == nil {
		return "https://s3." + *c.Region + ".amazonaws.com", nil
	}
	e := *c.Endpoint
	if !strings.Contains(e, "://") {
		e = "http://" + e
	}
	u, err := url.Parse(e)
	if err == nil && u.Host == "" {
		err = errors.New("InvalidUri(Empty)")
	}
	if err != nil {
		return "", fmt.Errorf("input endpoint %s is invalid: %v", *c.Endpoint, err)
	}
	if c.UseSSL != nil {
		u.Scheme = map[bool]string{true: "https", false: "http"}[*c.UseSSL]
	}
	return u.String(), nil
}

func (s *s3Cache) do(ctx context.Context, method, key string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.base+normalizeKey(key), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if !s.c.NoCredentials {
		if s.creds == nil {
			return nil, fmt.Errorf("PermissionDenied (permanent) at %s, context: { service: s3 } => no valid credential found and anonymous access is not allowed", method)
		}
		sum := sha256.Sum256(body)
		payload := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", payload)
		if err := s.signer.SignHTTP(ctx, *s.creds, req, payload, "s3", s.region, time.Now()); err != nil {
			return nil, err
		}
	}
	data, _, err := send(s.client, req, "s3")
	return data, err
}

func (s *s3Cache) Get(ctx context.Context, key string) ([]byte, error) {
	return s.do(ctx, http.MethodGet, key, nil)
}

func (s *s3Cache) Put(ctx context.Context, key string, data []byte) error {
	_, err := s.do(ctx, http.MethodPut, key, data)
	return err
}

func (s *s3Cache) Location() string {
	return fmt.Sprintf("s3, name: %s, prefix: /%s", s.c.Bucket, s.c.KeyPrefix)
}
