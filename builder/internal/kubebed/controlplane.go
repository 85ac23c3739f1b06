// Package kubebed runs a real Kubernetes control plane on 127.0.0.1 for
// tests: etcd, kube-apiserver, kube-controller-manager and kube-scheduler,
// built by `make deps` into bin/kube from the module
// builder/internal/kubebed/controlplane pins. Nodes are registered and kept
// Ready as a kubelet keeps them (status and Leases), and a pod bound to one
// is reported Running and Ready with an IP as a kubelet reports it; no
// kubelet runs, so no container starts and no probe is sent.
package kubebed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// binaries are the control plane's programs, in the order they start.
func binaries() []string {
	return []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}
}

// Find returns bin/kube under the repository root, or an error that says to
// run make deps when a binary is missing.
func Find(repoRoot string) (string, error) {
	dir := filepath.Join(repoRoot, "bin", "kube")
	for _, b := range binaries() {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("the Kubernetes control plane is not built (%s missing): run make deps (or make kube-deps)", filepath.Join(dir, b))
		}
	}
	return dir, nil
}

// ControlPlane is a running control plane; Close stops it.
type ControlPlane struct {
	// Config reaches the API server as an admin (system:masters).
	Config *rest.Config
	// Client is a clientset over Config.
	Client kubernetes.Interface
	// Dir holds the certificates, etcd's data and each program's log.
	Dir   string
	procs []*exec.Cmd
}

// adminToken is the static token of the admin user; the control plane only
// listens on 127.0.0.1 and lives as long as one test.
const adminToken = "kubebed-admin-token"

// Start starts etcd, kube-apiserver, kube-controller-manager (with the
// controllers named, e.g. "daemonset,deployment,replicaset,serviceaccount")
// and kube-scheduler from binDir, with their files under dir (made if
// missing), and waits
// until the API server is ready. On error nothing is left running.
func Start(ctx context.Context, binDir, dir string, controllers string) (*ControlPlane, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cp := &ControlPlane{Dir: dir}
	if err := cp.startAll(ctx, binDir, controllers); err != nil {
		_ = cp.Close()
		return nil, err
	}
	return cp, nil
}

// startAll starts the programs in order.
func (cp *ControlPlane) startAll(ctx context.Context, binDir, controllers string) error {
	dir := cp.Dir
	c, err := writeCerts(dir)
	if err != nil {
		return err
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	if err := cp.start(binDir, "etcd", "--name=kubebed", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=kubebed="+peerURL, "--unsafe-no-fsync=true", "--listen-metrics-urls="); err != nil {
		return err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(adminToken+",admin,admin,system:masters\n"), 0o600); err != nil {
		return err
	}
	port := ports[2]
	if err := cp.start(binDir, "kube-apiserver", "--etcd-servers="+etcdURL, "--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+c.cert, "--tls-private-key-file="+c.key,
		"--service-account-key-file="+c.saKey, "--service-account-signing-key-file="+c.saKey,
		"--service-account-issuer=https://kubernetes.default.svc", "--api-audiences=https://kubernetes.default.svc",
		"--token-auth-file="+tokens, "--authorization-mode=RBAC", "--service-cluster-ip-range=10.96.0.0/16",
		"--enable-priority-and-fairness=false", "--profiling=false", "--endpoint-reconciler-type=none"); err != nil {
		return err
	}
	cp.Config = &rest.Config{Host: "https://127.0.0.1:" + strconv.Itoa(port), BearerToken: adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.ca}, QPS: 100, Burst: 200}
	if cp.Client, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return err
	}
	if err := cp.waitReady(ctx); err != nil {
		return err
	}
	kubeconfig, err := c.kubeconfig(dir, cp.Config.Host)
	if err != nil {
		return err
	}
	if err := cp.start(binDir, "kube-controller-manager", "--kubeconfig="+kubeconfig, "--controllers="+controllers,
		"--use-service-account-credentials=false", "--leader-elect=false", "--secure-port=0",
		"--bind-address=127.0.0.1", "--concurrent-daemonset-syncs=4"); err != nil {
		return err
	}
	if err := cp.start(binDir, "kube-scheduler", "--kubeconfig="+kubeconfig, "--leader-elect=false",
		"--secure-port=0", "--bind-address=127.0.0.1"); err != nil {
		return err
	}
	return nil
}

// start runs one program with its output in DIR/NAME.log.
func (cp *ControlPlane) start(binDir, name string, args ...string) error {
	log, err := os.Create(filepath.Join(cp.Dir, name+".log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	cp.procs = append(cp.procs, cmd)
	return nil
}

// waitReady polls /readyz until the API server answers ok, or a program
// exits, or ctx ends.
func (cp *ControlPlane) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last error
	for {
		body, err := cp.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		last = err
		for _, p := range cp.procs {
			if p.ProcessState != nil || processGone(p) {
				return fmt.Errorf("%s exited: %s", filepath.Base(p.Path), cp.LogTail(filepath.Base(p.Path)))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready (%v): %s", last, cp.LogTail("kube-apiserver"))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// processGone reports whether the process has exited, without reaping it.
func processGone(p *exec.Cmd) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Process.Pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

// LogTail is the end of a program's log, for error messages.
func (cp *ControlPlane) LogTail(name string) string {
	b, _ := os.ReadFile(filepath.Join(cp.Dir, name+".log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// Close stops the programs, the last started first.
func (cp *ControlPlane) Close() error {
	var errs []error
	for i := len(cp.procs) - 1; i >= 0; i-- {
		p := cp.procs[i]
		if err := p.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			errs = append(errs, err)
		}
		_ = p.Wait()
	}
	cp.procs = nil
	return errors.Join(errs...)
}

// freePorts returns n ports free on 127.0.0.1 now.
func freePorts(n int) ([]int, error) {
	var out []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
