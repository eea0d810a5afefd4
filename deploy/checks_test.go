package deploy

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/telcoplatform/platform/config"
)

// testSecretsKey stands in for the example Secret's placeholder SECRETS_KEY
// when the checks load a container's configuration.
var testSecretsKey = strings.Repeat("ab", 32)

// workload is a Deployment's or a Job's pod template.
type workload struct {
	ref    string // "Deployment platform-api"
	labels map[string]string
	pod    *corev1.PodSpec
	probed bool // a Deployment: its containers need probes
}

func (m *manifests) workloads() []workload {
	var ws []workload
	for _, d := range m.deployments {
		ws = append(ws, workload{"Deployment " + d.Name, d.Spec.Template.Labels, &d.Spec.Template.Spec, true})
	}
	for _, j := range m.jobs {
		ws = append(ws, workload{"Job " + j.Name, j.Spec.Template.Labels, &j.Spec.Template.Spec, false})
	}
	return ws
}

// problems runs every check and returns what is wrong, one line each.
func (m *manifests) problems() []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, m.overlay+": "+fmt.Sprintf(format, args...)) }
	known := map[string]bool{}
	for _, v := range config.Variables() {
		known[v.Name] = true
	}
	m.checkObjects(add, known)
	for _, w := range m.workloads() {
		m.checkPod(add, known, w)
	}
	m.checkDeployments(add)
	m.checkServices(add)
	m.checkPolicies(add)
	m.checkMonitors(add)
	switch m.overlay {
	case "dev":
		for _, d := range m.deployments {
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
				add("Deployment %s: the dev overlay runs exactly one replica", d.Name)
			}
		}
		if len(m.hpas) != 0 {
			add("the dev overlay has HorizontalPodAutoscalers: it runs one replica of each")
		}
	case "production":
		for _, d := range m.deployments {
			if n := m.minReplicas(d.Name); n < 2 {
				add("Deployment %s: production runs at least 2 replicas, has %d", d.Name, n)
			}
		}
		if len(m.monitors) == 0 {
			add("production has no ServiceMonitor")
		}
		for _, w := range m.workloads() {
			for _, c := range slices.Concat(w.pod.InitContainers, w.pod.Containers) {
				if _, tag, digest := splitImage(c.Image); digest == "" && !releaseTag.MatchString(tag) {
					add("%s: container %s: production pins the image to a release tag or a digest, not %q", w.ref, c.Name, c.Image)
				}
			}
		}
	default:
		add("no checks for this overlay: add its rules to problems()")
	}
	return ps
}

// checkObjects: one namespace for everything, no Secret rendered (a
// placeholder applied over the real one would break the platform), every
// ConfigMap key and example Secret key a variable of the platform.
func (m *manifests) checkObjects(add func(string, ...any), known map[string]bool) {
	var objs []metav1.Object
	for _, o := range m.deployments {
		objs = append(objs, o)
	}
	for _, o := range m.jobs {
		objs = append(objs, o)
	}
	for _, o := range m.services {
		objs = append(objs, o)
	}
	for _, o := range m.configMaps {
		objs = append(objs, o)
	}
	for _, o := range m.serviceAccounts {
		objs = append(objs, o)
	}
	for _, o := range m.pdbs {
		objs = append(objs, o)
	}
	for _, o := range m.hpas {
		objs = append(objs, o)
	}
	for _, o := range m.netpols {
		objs = append(objs, o)
	}
	for _, o := range m.monitors {
		objs = append(objs, o)
	}
	for _, o := range objs {
		if o.GetNamespace() == "" {
			add("%s has no namespace: overlays set one", o.GetName())
		} else if m.namespace == "" {
			m.namespace = o.GetNamespace()
		} else if o.GetNamespace() != m.namespace {
			add("%s is in namespace %s, the rest in %s", o.GetName(), o.GetNamespace(), m.namespace)
		}
	}
	for _, s := range m.secrets {
		add("renders Secret %s: create the real Secret outside the kustomization (k8s/secret.example.yaml)", s.Name)
	}
	for _, cm := range m.configMaps {
		for k := range cm.Data {
			if !known[k] {
				add("ConfigMap %s: %s is not a variable of the platform (config.Variables)", cm.Name, k)
			}
		}
	}
	for k := range secretKeys(m.secret) {
		if !known[k] {
			add("k8s/secret.example.yaml: %s is not a variable of the platform (config.Variables)", k)
		}
	}
}

func secretKeys(s *corev1.Secret) map[string]string {
	keys := map[string]string{}
	for k, v := range s.Data {
		keys[k] = string(v)
	}
	for k, v := range s.StringData {
		keys[k] = v
	}
	return keys
}

func (m *manifests) configMap(name string) *corev1.ConfigMap {
	for _, cm := range m.configMaps {
		if cm.Name == name {
			return cm
		}
	}
	return nil
}

// checkPod: security context, resources, pinned images, probes on declared
// ports, and the environment: every reference resolves, every name is a
// variable of the platform, the result passes config.Load, the process
// listens on exactly the ports the container declares, and INSTANCES covers
// the replicas with REDIS_URL guaranteed when it is above 1.
func (m *manifests) checkPod(add func(string, ...any), known map[string]bool, w workload) {
	pod := w.pod
	if pod.ServiceAccountName != "" && !slices.ContainsFunc(m.serviceAccounts, func(sa *corev1.ServiceAccount) bool { return sa.Name == pod.ServiceAccountName }) {
		add("%s: serviceAccountName %s names no ServiceAccount", w.ref, pod.ServiceAccountName)
	}
	podNonRoot := pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
	}
	for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
		ref := w.ref + ": container " + c.Name
		if name, tag, digest := splitImage(c.Image); name == "" || (digest == "" && (tag == "" || tag == "latest")) {
			add("%s: image %q is not pinned to a tag (other than latest) or a digest", ref, c.Image)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[r]
			lim, hasLim := c.Resources.Limits[r]
			if !hasReq {
				add("%s: no requests.%s", ref, r)
			}
			if !hasLim {
				add("%s: no limits.%s", ref, r)
			}
			if hasReq && hasLim && req.Cmp(lim) > 0 {
				add("%s: requests.%s above limits.%s", ref, r, r)
			}
		}
		sc := c.SecurityContext
		switch {
		case sc == nil:
			add("%s: no securityContext", ref)
		default:
			if !podNonRoot && (sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot) {
				add("%s: runAsNonRoot is not true", ref)
			}
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				add("%s: readOnlyRootFilesystem is not true", ref)
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				add("%s: allowPrivilegeEscalation is not false", ref)
			}
			if sc.Privileged != nil && *sc.Privileged {
				add("%s: privileged", ref)
			}
			if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				add("%s: capabilities do not drop ALL", ref)
			}
		}
		for _, vm := range c.VolumeMounts {
			if !volumes[vm.Name] {
				add("%s: volumeMount %s names no volume of the pod", ref, vm.Name)
			}
		}
		if w.probed {
			for name, p := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
				if p == nil {
					if name != "startupProbe" {
						add("%s: no %s", ref, name)
					}
					continue
				}
				if p.HTTPGet == nil || p.HTTPGet.Path == "" {
					add("%s: %s is not an HTTP GET of a path", ref, name)
					continue
				}
				if containerPort(c, p.HTTPGet.Port) == 0 {
					add("%s: %s port %s is not a port the container declares", ref, name, p.HTTPGet.Port.String())
				}
			}
		}
		m.checkEnv(add, known, w, c)
	}
}

// containerPort resolves a port (a name or a number) among the ports c
// declares; 0 when it declares no such port.
func containerPort(c corev1.Container, p intstr.IntOrString) int32 {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort
		}
	}
	return 0
}

// checkEnv resolves the container's environment as the kubelet would and
// checks it against the platform's configuration.
func (m *manifests) checkEnv(add func(string, ...any), known map[string]bool, w workload, c corev1.Container) {
	ref := w.ref + ": container " + c.Name
	env := map[string]string{}        // everything the container may see
	guaranteed := map[string]string{} // what it always sees (the Secret may lack optional keys)
	secret := secretKeys(m.secret)
	for _, ef := range c.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm := m.configMap(ef.ConfigMapRef.Name)
			if cm == nil {
				add("%s: envFrom names ConfigMap %s, which is not rendered", ref, ef.ConfigMapRef.Name)
				continue
			}
			for k, v := range cm.Data {
				env[ef.Prefix+k], guaranteed[ef.Prefix+k] = v, v
			}
		case ef.SecretRef != nil:
			if ef.SecretRef.Name != m.secret.Name {
				add("%s: envFrom names Secret %s; the documented one is %s (k8s/secret.example.yaml)", ref, ef.SecretRef.Name, m.secret.Name)
				continue
			}
			for k, v := range secret {
				env[ef.Prefix+k] = v
			}
		}
	}
	for _, e := range c.Env {
		if !known[e.Name] {
			add("%s: env %s is not a variable of the platform (config.Variables)", ref, e.Name)
		}
		switch {
		case e.ValueFrom == nil:
			env[e.Name], guaranteed[e.Name] = e.Value, e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ks := e.ValueFrom.SecretKeyRef
			v, ok := secret[ks.Key]
			if ks.Name != m.secret.Name || !ok {
				add("%s: env %s reads key %s of Secret %s, which k8s/secret.example.yaml (%s) does not list", ref, e.Name, ks.Key, ks.Name, m.secret.Name)
				continue
			}
			env[e.Name] = v
			if ks.Optional == nil || !*ks.Optional {
				guaranteed[e.Name] = v
			} else {
				delete(guaranteed, e.Name)
			}
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ks := e.ValueFrom.ConfigMapKeyRef
			cm := m.configMap(ks.Name)
			if cm == nil || cm.Data[ks.Key] == "" {
				add("%s: env %s reads key %s of ConfigMap %s, which is not rendered", ref, e.Name, ks.Key, ks.Name)
				continue
			}
			env[e.Name], guaranteed[e.Name] = cm.Data[ks.Key], cm.Data[ks.Key]
		default:
			add("%s: env %s comes from neither a Secret nor a ConfigMap", ref, e.Name)
		}
	}
	lookup := func(vars map[string]string) func(string) string {
		return func(k string) string {
			if k == "SECRETS_KEY" {
				return testSecretsKey
			}
			return vars[k]
		}
	}
	cfg, err := config.Load(lookup(env))
	if err != nil {
		add("%s: the platform refuses this configuration: %v", ref, err)
		return
	}
	if len(c.Args) == 0 {
		add("%s: no args: name the platform's command", ref)
		return
	}
	var listens []string // the variables of the addresses the process listens on
	switch c.Args[0] {
	case "serve":
		listens = []string{"HTTP_ADDR", "METRICS_ADDR", "MTLS_ADDR"}
	case "worker":
		listens = []string{"WORKER_HTTP_ADDR"}
	case "migrate", "seed":
	default:
		add("%s: args %v: not a command this image runs in a cluster (serve, worker, migrate, seed)", ref, c.Args)
	}
	listening := map[int32]string{}
	for _, name := range listens {
		if addr := env[name]; addr != "" {
			_, port, _ := net.SplitHostPort(addr)
			n, _ := strconv.Atoi(port)
			listening[int32(n)] = name
		}
	}
	for _, p := range c.Ports {
		if _, ok := listening[p.ContainerPort]; !ok {
			add("%s: declares port %d (%s), which `platform %s` does not listen on (it listens on %v)", ref, p.ContainerPort, p.Name, c.Args[0], listening)
		}
	}
	for port, name := range listening {
		if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.ContainerPort == port }) {
			add("%s: `platform %s` listens on %d (%s), a port the container does not declare", ref, c.Args[0], port, name)
		}
	}
	if c.Args[0] != "serve" && c.Args[0] != "worker" {
		return
	}
	if most := m.maxReplicas(w); cfg.Instances < most {
		add("%s: INSTANCES is %d, but %s may run %d pods", ref, cfg.Instances, w.ref, most)
	}
	g, err := config.Load(lookup(guaranteed))
	if err == nil {
		err = g.CheckMultiInstance()
	}
	if err != nil {
		add("%s: without the Secret's optional keys: %v", ref, err)
	}
}

// splitImage splits an image reference into name, tag and digest.
func splitImage(image string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// selects reports whether sel selects a pod with these labels (nil
// selects nothing).
func selects(sel *metav1.LabelSelector, podLabels map[string]string) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(podLabels))
}
