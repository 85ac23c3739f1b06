package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// maxResponse bounds what the serving check reads of one answer: a batch
// of vectors of a large model's hidden size is well under a megabyte.
const maxResponse = 8 << 20

// httpResponse is an answer of the router: its status and body.
type httpResponse struct {
	status int
	body   []byte
}

// routerClient is the serving check's HTTP client for the router on
// 127.0.0.1: no proxy (HTTP_PROXY in the image is not for loopback), no
// redirects followed, one connection per request, as the check's numbers
// (load time, latencies) are for single requests.
type routerClient struct {
	base string
	http *http.Client
}

// newRouterClient is a client for the router on 127.0.0.1:port.
func newRouterClient(port int) *routerClient {
	return &routerClient{
		base: "http://127.0.0.1:" + strconv.Itoa(port),
		http: &http.Client{
			Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// do sends one request with a JSON body (nil for none) and reads the whole
// answer, at most maxResponse bytes, within timeout.
func (r *routerClient) do(ctx context.Context, method, path string, body []byte, timeout time.Duration) (httpResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return httpResponse{}, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", name)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return httpResponse{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return httpResponse{}, err
	}
	if len(data) > maxResponse {
		return httpResponse{}, errors.New("the answer is larger than 8 MB")
	}
	return httpResponse{status: resp.StatusCode, body: data}, nil
}

// freeLoopbackPort is a port on 127.0.0.1 that nothing listens on now:
// the kernel's choice for a listener on port 0, which is then closed for
// the router to take.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok || addr.Port == 0 {
		return 0, errors.New("the kernel gave no port")
	}
	return addr.Port, nil
}
