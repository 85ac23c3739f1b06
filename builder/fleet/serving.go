package fleet

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jetbake/jetbake/builder/matrix"
)

// Serving is what makes each release's pod a server a Kubernetes user
// reaches: the image's ports, its health route, the program's arguments and
// environment, a model cache and resources. The zero value serves nothing.
type Serving struct {
	// Ports are the container ports, from the image's exposed ports.
	Ports []corev1.ContainerPort
	// HealthPath is the HTTP route of the probes on the first TCP port;
	// "" writes no probe.
	HealthPath string
	// Args are the container's args; nil keeps the image's CMD.
	Args []string
	// Env is added after the entrypoint's environment (Env), and replaces
	// a variable of the same name.
	Env []corev1.EnvVar
	// Cache is the model cache volume; nil for none.
	Cache *CacheVolume
	// Resources are the container's requests and limits.
	Resources corev1.ResourceRequirements
}

// HealthTEI is text-embeddings-inference's health route: GET /health
// answers 200 once the model is loaded and the backend answers, 503 when it
// does not (TEI v1.9.3, router/src/http/server.rs: `.route("/health",
// get(health))`, infer.health()). TEI binds its port only after the model
// is downloaded and loaded, so the startup probe waits for it.
const HealthTEI = "/health"

// TEIRouterName is the binary name of TEI's router in a matrix.
const TEIRouterName = "text-embeddings-router"

// DefaultHealthPath is the health route of what the matrix builds: the
// router's or the app's "health", else TEI's for TEI's router (a matrix
// written before the field), else none (give --health-path).
func DefaultHealthPath(m *matrix.Matrix) string {
	if m.App != nil {
		return m.App.Health
	}
	if m.Router.Health != "" {
		return m.Router.Health
	}
	if m.Router.Name == TEIRouterName {
		return HealthTEI
	}
	return ""
}

// ImagePorts returns what the matrix builds into the image config as its
// exposed ports ("80/tcp", "8000") as container ports, each named
// PROTO-PORT ("tcp-80"), which the Service targets.
func ImagePorts(m *matrix.Matrix) ([]corev1.ContainerPort, error) {
	ports := m.Router.Ports
	if m.App != nil {
		ports = m.App.Ports
	}
	var out []corev1.ContainerPort
	for _, p := range ports {
		num, proto, _ := strings.Cut(p, "/")
		if proto == "" {
			proto = "tcp"
		}
		n, err := strconv.ParseInt(num, 10, 32)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %q of the matrix is not PORT or PORT/PROTOCOL: write it as \"80/tcp\"", p)
		}
		protos := map[string]corev1.Protocol{"tcp": corev1.ProtocolTCP, "udp": corev1.ProtocolUDP, "sctp": corev1.ProtocolSCTP}
		pr, ok := protos[strings.ToLower(proto)]
		if !ok {
			return nil, fmt.Errorf("port %q of the matrix has protocol %q: Kubernetes takes tcp, udp or sctp", p, proto)
		}
		out = append(out, corev1.ContainerPort{Name: strings.ToLower(proto) + "-" + num, ContainerPort: int32(n), Protocol: pr})
	}
	return out, nil
}

// ImageCmd is the image's CMD as the matrix sets it: the arguments a
// container's args replace.
func ImageCmd(m *matrix.Matrix) []string {
	if m.App != nil {
		return m.App.Cmd
	}
	return m.Router.Cmd
}

// ParseEnv reads NAME=VALUE, one --env.
func ParseEnv(s string) (corev1.EnvVar, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok {
		return corev1.EnvVar{}, fmt.Errorf("--env %q has no '=': write NAME=VALUE, e.g. --env MAX_BATCH_TOKENS=8192", s)
	}
	if errs := validation.IsEnvVarName(name); len(errs) > 0 {
		return corev1.EnvVar{}, fmt.Errorf("--env %q: %q is not an environment variable name Kubernetes takes (letters, digits, '_', '-' and '.', not starting with a digit): write NAME=VALUE, e.g. MODEL_ID=BAAI/bge-small-en-v1.5", s, name)
	}
	return corev1.EnvVar{Name: name, Value: value}, nil
}

// CacheVolume is the model cache: a host folder or a PersistentVolumeClaim,
// mounted at MountPath.
type CacheVolume struct {
	// HostPath is the node's folder (created when missing); "" for a claim.
	HostPath string
	// Claim is the PersistentVolumeClaim's name; "" for a host folder.
	Claim string
	// MountPath is where the container sees it.
	MountPath string
}

// DefaultCachePath is where TEI keeps its models: its Dockerfiles set
// HUGGINGFACE_HUB_CACHE=/data (TEI v1.9.3, Dockerfile-cuda), as the shipped
// matrix's env does.
const DefaultCachePath = "/data"

// ParseCacheVolume reads --cache-volume: hostPath:/ABSOLUTE/PATH or
// pvc:NAME, mounted at mountPath.
func ParseCacheVolume(s, mountPath string) (*CacheVolume, error) {
	const fix = "write hostPath:/var/lib/jetbake/models (a folder on each node) or pvc:NAME (a PersistentVolumeClaim in the namespace)"
	kind, val, ok := strings.Cut(s, ":")
	if !ok || val == "" {
		return nil, fmt.Errorf("--cache-volume %q is not KIND:VALUE: %s", s, fix)
	}
	if mountPath == "" || !path.IsAbs(mountPath) || path.Clean(mountPath) != mountPath {
		return nil, fmt.Errorf("--cache-path %q is not a clean absolute path: give the folder the router keeps its models in, e.g. %s", mountPath, DefaultCachePath)
	}
	switch kind {
	case "hostPath", "hostpath":
		if !path.IsAbs(val) || path.Clean(val) != val || val == "/" {
			return nil, fmt.Errorf("--cache-volume %q: host path %q is not a clean absolute folder other than /: %s", s, val, fix)
		}
		return &CacheVolume{HostPath: val, MountPath: mountPath}, nil
	case "pvc":
		if errs := validation.IsDNS1123Subdomain(val); len(errs) > 0 {
			return nil, fmt.Errorf("--cache-volume %q: claim name %q is not a Kubernetes name (lowercase letters, digits, '-' and '.'): %s", s, val, fix)
		}
		return &CacheVolume{Claim: val, MountPath: mountPath}, nil
	}
	return nil, fmt.Errorf("--cache-volume %q: kind %q is neither hostPath nor pvc: %s", s, kind, fix)
}

// cacheVolumeName names the cache volume in the pod.
const cacheVolumeName = "model-cache"

// volume is the pod's volume of the cache.
func (c *CacheVolume) volume() corev1.Volume {
	v := corev1.Volume{Name: cacheVolumeName}
	if c.Claim != "" {
		v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Claim}
	} else {
		v.HostPath = &corev1.HostPathVolumeSource{Path: c.HostPath, Type: ptr(corev1.HostPathDirectoryOrCreate)}
	}
	return v
}

// Resources reads the requests and limits of --cpu, --memory, --cpu-limit
// and --memory-limit ("" leaves one out), by flag name.
func Resources(flags map[string]string) (corev1.ResourceRequirements, error) {
	var out corev1.ResourceRequirements
	set := func(list *corev1.ResourceList, flag string, name corev1.ResourceName, example string) error {
		v := flags[flag]
		if v == "" {
			return nil
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() <= 0 {
			return fmt.Errorf("--%s %q is not a positive Kubernetes quantity: write it as %s", flag, v, example)
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
		return nil
	}
	for _, f := range []struct {
		flag    string
		list    *corev1.ResourceList
		name    corev1.ResourceName
		example string
	}{
		{"cpu", &out.Requests, corev1.ResourceCPU, "2 or 500m"},
		{"memory", &out.Requests, corev1.ResourceMemory, "4Gi or 512Mi"},
		{"cpu-limit", &out.Limits, corev1.ResourceCPU, "4 or 1500m"},
		{"memory-limit", &out.Limits, corev1.ResourceMemory, "8Gi"},
	} {
		if err := set(f.list, f.flag, f.name, f.example); err != nil {
			return out, err
		}
	}
	for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := out.Requests[n]
		lim, hasLim := out.Limits[n]
		if hasReq && hasLim && req.Cmp(lim) > 0 {
			return out, fmt.Errorf("--%s %s is more than --%s-limit %s: Kubernetes refuses a request above its limit; raise the limit or lower the request", n, req.String(), n, lim.String())
		}
	}
	return out, nil
}

// container is the release's container: the image by digest, its ports,
// probes, arguments, environment, cache mount and resources.
func (s Serving) container(name, image string) corev1.Container {
	c := corev1.Container{Name: name, Image: image, Args: s.Args, Env: mergeEnv(Env(), s.Env), Ports: s.Ports, Resources: s.Resources}
	if s.Cache != nil {
		c.VolumeMounts = []corev1.VolumeMount{{Name: cacheVolumeName, MountPath: s.Cache.MountPath}}
	}
	port, ok := s.probePort()
	if !ok {
		return c
	}
	probe := func(period, failures int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: s.HealthPath, Port: port}},
			PeriodSeconds: period, FailureThreshold: failures, TimeoutSeconds: 5}
	}
	// The first start downloads and loads the model: up to 10 minutes
	// before the router listens; then readiness takes the pod out of the
	// Service after 30 s of failures and liveness restarts it after 90 s.
	c.StartupProbe, c.ReadinessProbe, c.LivenessProbe = probe(10, 60), probe(10, 3), probe(30, 3)
	return c
}

// probePort is the named first TCP port the health route is served on.
func (s Serving) probePort() (intstr.IntOrString, bool) {
	if s.HealthPath == "" {
		return intstr.IntOrString{}, false
	}
	for _, p := range s.Ports {
		if p.Protocol == corev1.ProtocolTCP {
			return intstr.FromString(p.Name), true
		}
	}
	return intstr.IntOrString{}, false
}

// mergeEnv is base with extra's variables, each replacing one of the same
// name in place or appended.
func mergeEnv(base, extra []corev1.EnvVar) []corev1.EnvVar {
	out := append([]corev1.EnvVar(nil), base...)
	for _, e := range extra {
		replaced := false
		for i := range out {
			if out[i].Name == e.Name {
				out[i], replaced = e, true
			}
		}
		if !replaced {
			out = append(out, e)
		}
	}
	return out
}

// ServingWarning is the sentence that says the pods would not start as
// written, or "": TEI's router needs a model (--model-id, or MODEL_ID in
// its environment; TEI v1.9.3, router/src/main.rs: model_id has no
// default) and exits at start without one.
func ServingWarning(m *matrix.Matrix, s Serving) string {
	if m.App != nil || m.Router.Name != TEIRouterName {
		return ""
	}
	for i, a := range s.Args {
		if a == "--model-id" && i+1 < len(s.Args) || strings.HasPrefix(a, "--model-id=") {
			return ""
		}
	}
	for _, e := range append(s.Env, envOf(m.Router.Env)...) {
		if e.Name == "MODEL_ID" && e.Value != "" {
			return ""
		}
	}
	return "TEI's router needs a model and exits at start without one: give --arg=--model-id --arg=MODEL (e.g. BAAI/bge-small-en-v1.5), or --env MODEL_ID=MODEL"
}

// envOf is an environment map as variables.
func envOf(env map[string]string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for k, v := range env {
		out = append(out, corev1.EnvVar{Name: k, Value: v})
	}
	return out
}
