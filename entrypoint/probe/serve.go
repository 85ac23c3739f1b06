package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// Bounds of the serving check.
const (
	// defaultLoadTimeout bounds the wait for the router's health route
	// when --load-timeout is not given: TEI reads the weights, moves them
	// to the GPU and warms up before it listens, a minute or more for a
	// large model on a Jetson.
	defaultLoadTimeout = 5 * time.Minute
	// healthEvery is how often the health route is asked while it loads.
	healthEvery = 100 * time.Millisecond
	// requestTimeout bounds each request once the router is healthy.
	requestTimeout = 30 * time.Second
	// stopTimeout is how long the router has to end after SIGTERM before
	// SIGKILL.
	stopTimeout = 10 * time.Second
	// serveRequests is how many POST /embed requests the check makes.
	serveRequests = 20
	// maxServeOutput bounds the router's output passed on to stderr.
	maxServeOutput = 64 << 10
)

// serveInputs are the fixed inputs of the requests, one text and a batch
// of two, taken in turn.
func serveInputs() [][]string {
	return [][]string{
		{"jetbake checks that this Jetson serves embeddings."},
		{"What does 64 GB of unified memory hold?", "The OS, CUDA, the weights, the activations and the file cache share it."},
	}
}

// servedModel is what the check gives the router for --model-id.
type servedModel struct {
	// arg is --model-id's value: the folder, or a Hub id to download.
	arg string
	// hubID is set for a Hub id, which the evidence may keep.
	hubID string
}

// serveCheck runs the serving check when --serve asks for it: the chosen
// router started on 127.0.0.1 with TEI's flags and the model, its health
// route waited for within the load timeout, its info read, POST /embed
// asked serveRequests times with fixed inputs, every vector checked
// against the model's hidden_size and for finite values, then the router
// stopped. Its output goes to stderr; the evidence keeps the allow-listed
// run.
func serveCheck(ctx context.Context, cfg *config, d *detect.Decision, stderr io.Writer) (evidencespec.Check, *evidencespec.Serve) {
	c := evidencespec.Check{Name: evidencespec.CheckServe, Status: evidencespec.Skipped}
	m, detail := chooseModel(cfg)
	switch {
	case d.Choice == "":
		c.Detail = evidencespec.DetailServeNoBinary
		return c, nil
	case detail != "":
		c.Detail = detail
		return c, nil
	}
	run := &evidencespec.Serve{ModelID: m.hubID}
	s := &serving{cfg: cfg, run: run, c: &c}
	s.serve(ctx, cfg.Root.Path(d.Choice), m, d.Env, stderr)
	return c, run
}

// chooseModel reads --serve: a folder in the container, else a Hub id
// when --allow-download lets the router download it; otherwise the check
// does not run, with the phrase that says why.
func chooseModel(cfg *config) (servedModel, string) {
	if st, err := os.Stat(cfg.serve); err == nil && st.IsDir() {
		return servedModel{arg: cfg.serve}, ""
	}
	if hubID(cfg.serve) && !strings.HasPrefix(cfg.serve, ".") {
		if cfg.allowDownload {
			return servedModel{arg: cfg.serve, hubID: cfg.serve}, ""
		}
		return servedModel{}, evidencespec.DetailServeNoDownload
	}
	return servedModel{}, evidencespec.DetailServeNoModel
}

// hubID reports whether s has the form of a Hugging Face Hub model id,
// "org/name" (or "name"), each part a safe token: the only form of a
// model id the evidence keeps.
func hubID(s string) bool {
	org, name, two := strings.Cut(s, "/")
	if !two {
		name, org = org, "x"
	}
	return safeToken(org) && safeToken(name) && len(s) <= 96 && !strings.Contains(s, "..") && !strings.Contains(name, "/")
}

// serving is one run of the serving check.
type serving struct {
	cfg    *config
	run    *evidencespec.Serve
	c      *evidencespec.Check
	router *routerClient
}

// fail marks the check failed at step with detail.
func (s *serving) fail(step, detail string) {
	s.c.Status, s.c.Detail, s.run.Step = evidencespec.Failed, detail, step
}

// serve starts the router, checks it and stops it.
func (s *serving) serve(ctx context.Context, bin string, m servedModel, env detect.Environ, stderr io.Writer) {
	port, err := freeLoopbackPort()
	if err != nil {
		s.fail(evidencespec.ServeStepStart, evidencespec.DetailServeNoStart)
		return
	}
	s.router = newRouterClient(port)
	cmd := exec.Command(bin, "--model-id", m.arg, "--hostname", "127.0.0.1", "--port", strconv.Itoa(port))
	out := &capWriter{w: stderr, left: maxServeOutput}
	cmd.Env, cmd.Stdout, cmd.Stderr = env, out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		s.fail(evidencespec.ServeStepStart, evidencespec.DetailServeNoStart)
		return
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if !s.waitHealthy(ctx, cmd, exited) {
		stopRouter(cmd, exited, stopTimeout)
		return
	}
	s.run.LoadMillis = boundMillis(float64(time.Since(start).Microseconds()) / 1000)
	s.run.Dimensions = modelHidden(s.cfg, m)
	s.check(ctx)
	if !stopRouter(cmd, exited, stopTimeout) && s.c.Status != evidencespec.Failed {
		s.fail(evidencespec.ServeStepStop, evidencespec.Fill(evidencespec.DetailServeNoStop, stopTimeout.String()))
	}
}

// waitHealthy asks the health route until it answers 200, the router
// exits, or the load timeout passes; it reports whether it answered.
func (s *serving) waitHealthy(ctx context.Context, cmd *exec.Cmd, exited <-chan struct{}) bool {
	limit := s.cfg.loadTimeout
	if limit == 0 {
		limit = defaultLoadTimeout
	}
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-exited:
			s.exitedEarly(cmd.ProcessState)
			return false
		default:
		}
		if r, err := s.router.do(ctx, "GET", "/health", nil, time.Second); err == nil && r.status == 200 {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.fail(evidencespec.ServeStepHealth, evidencespec.Fill(evidencespec.DetailServeLoad, limit.String()))
			return false
		}
		select {
		case <-time.After(healthEvery):
		case <-exited:
		}
	}
}

// exitedEarly says how the router ended before it served.
func (s *serving) exitedEarly(ps *os.ProcessState) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		s.fail(evidencespec.ServeStepStart, evidencespec.DetailServeSignal)
		return
	}
	s.fail(evidencespec.ServeStepStart, evidencespec.Fill(evidencespec.DetailServeExited, strconv.Itoa(bound(ps.ExitCode())%1000)))
}

// check reads the info and asks POST /embed, and marks the check.
func (s *serving) check(ctx context.Context) {
	r, err := s.router.do(ctx, "GET", "/info", nil, requestTimeout)
	var info struct {
		ModelID    *string         `json:"model_id"`
		ModelDType string          `json:"model_dtype"`
		ModelType  json.RawMessage `json:"model_type"`
	}
	if err != nil || r.status != 200 || json.Unmarshal(r.body, &info) != nil || info.ModelID == nil || info.ModelType == nil {
		s.fail(evidencespec.ServeStepInfo, evidencespec.DetailServeInfo)
		return
	}
	if info.ModelDType == "float16" || info.ModelDType == "float32" {
		s.run.DType = info.ModelDType
	}
	if s.run.Dimensions == 0 {
		s.fail(evidencespec.ServeStepShape, evidencespec.DetailServeNoHidden)
		return
	}
	var took []float64
	for i := range serveRequests {
		inputs := serveInputs()[i%len(serveInputs())]
		t0 := time.Now()
		vecs, ok := s.embed(ctx, inputs)
		if !ok {
			return
		}
		took = append(took, float64(time.Since(t0).Microseconds())/1000)
		if !s.checkVectors(inputs, vecs) {
			return
		}
		s.run.Requests++
	}
	s.run.P50Millis, s.run.P95Millis = boundMillis(percentile(took, 50)), boundMillis(percentile(took, 95))
	s.c.Status = evidencespec.Passed
	s.c.Detail = evidencespec.Fill(evidencespec.DetailServePassed, strconv.Itoa(s.run.Requests), strconv.Itoa(s.run.Dimensions),
		millis(s.run.LoadMillis), millis(s.run.P50Millis), millis(s.run.P95Millis))
}

// embed sends one POST /embed; a value that is null (TEI's JSON for NaN
// and the infinities) reads as nil.
func (s *serving) embed(ctx context.Context, inputs []string) ([][]*float64, bool) {
	body, _ := json.Marshal(map[string]any{"inputs": inputs})
	r, err := s.router.do(ctx, "POST", "/embed", body, requestTimeout)
	var vecs [][]*float64
	switch {
	case err != nil:
		s.fail(evidencespec.ServeStepEmbed, evidencespec.Fill(evidencespec.DetailServeNoAnswer, requestTimeout.String()))
	case r.status != 200:
		s.fail(evidencespec.ServeStepEmbed, evidencespec.Fill(evidencespec.DetailServeStatus, strconv.Itoa(r.status)))
	case json.Unmarshal(r.body, &vecs) != nil:
		s.fail(evidencespec.ServeStepEmbed, evidencespec.DetailServeNotVectors)
	default:
		return vecs, true
	}
	return nil, false
}

// checkVectors checks one vector per input, each of the hidden size, every
// value finite.
func (s *serving) checkVectors(inputs []string, vecs [][]*float64) bool {
	if len(vecs) != len(inputs) {
		s.fail(evidencespec.ServeStepShape, evidencespec.Fill(evidencespec.DetailServeCount, strconv.Itoa(bound(len(vecs))), strconv.Itoa(len(inputs))))
		return false
	}
	bad := 0
	for _, v := range vecs {
		if len(v) != s.run.Dimensions {
			s.fail(evidencespec.ServeStepShape, evidencespec.Fill(evidencespec.DetailServeShape, strconv.Itoa(bound(len(v))), strconv.Itoa(s.run.Dimensions)))
			return false
		}
		for _, x := range v {
			if x == nil {
				bad++
			}
		}
	}
	if bad > 0 {
		s.fail(evidencespec.ServeStepFinite, evidencespec.Fill(evidencespec.DetailServeNonFinite, strconv.Itoa(bad)))
		return false
	}
	return true
}

// stopRouter sends SIGTERM, waits up to limit, then SIGKILL; it reports
// whether the router ended by itself.
func stopRouter(cmd *exec.Cmd, exited <-chan struct{}, limit time.Duration) bool {
	select {
	case <-exited:
		return true
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return true
	case <-time.After(limit):
	}
	_ = cmd.Process.Kill()
	<-exited
	return false
}

// percentile is the nearest-rank p-th percentile of the values.
func percentile(values []float64, p int) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// modelHidden is the model's hidden_size from its config.json: in the
// folder, or for a downloaded Hub id in the Hub cache the router wrote it
// to; 0 when it cannot be read.
func modelHidden(cfg *config, m servedModel) int {
	dir := m.arg
	if m.hubID != "" {
		dir = hubSnapshot(cfg.Env, m.hubID)
	}
	data, err := host.ReadRegular(filepath.Join(dir, "config.json"), 1<<20)
	if err != nil || dir == "" {
		return 0
	}
	var c struct {
		HiddenSize int `json:"hidden_size"`
	}
	if json.Unmarshal(data, &c) != nil || c.HiddenSize <= 0 || c.HiddenSize > 1<<16 {
		return 0
	}
	return c.HiddenSize
}

// hubSnapshot is the folder of the model's main revision in the Hub cache
// (huggingface_hub's layout: models--ORG--NAME/refs/main names the
// snapshot), under HUGGINGFACE_HUB_CACHE as TEI's images set it, else
// HF_HOME/hub, else ~/.cache/huggingface/hub.
func hubSnapshot(env detect.Environ, id string) string {
	cache := env.Get("HUGGINGFACE_HUB_CACHE")
	switch {
	case cache != "":
	case env.Get("HF_HOME") != "":
		cache = filepath.Join(env.Get("HF_HOME"), "hub")
	default:
		cache = filepath.Join(env.Get("HOME"), ".cache", "huggingface", "hub")
	}
	repo := filepath.Join(cache, "models--"+strings.ReplaceAll(id, "/", "--"))
	ref, err := host.ReadRegular(filepath.Join(repo, "refs", "main"), 256)
	if sha := strings.TrimSpace(string(ref)); err == nil && safeRevision(sha) {
		return filepath.Join(repo, "snapshots", sha)
	}
	return ""
}
