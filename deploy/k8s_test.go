// Package deploy holds the tests of the deployment files: the Kubernetes
// kustomizations under k8s/ and docker-compose.yml. They render and load the
// files offline (no cluster, no Docker engine, no schema download) and check
// them against the Kubernetes API types and the platform's configuration.
package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// manifests is one rendered kustomization, decoded into the API types.
type manifests struct {
	overlay         string
	namespace       string
	deployments     []*appsv1.Deployment
	jobs            []*batchv1.Job
	services        []*corev1.Service
	configMaps      []*corev1.ConfigMap
	secrets         []*corev1.Secret
	serviceAccounts []*corev1.ServiceAccount
	pdbs            []*policyv1.PodDisruptionBudget
	hpas            []*autoscalingv2.HorizontalPodAutoscaler
	netpols         []*networkingv1.NetworkPolicy
	monitors        []*monitoringv1.ServiceMonitor
	// secret is the example Secret (k8s/secret.example.yaml): the keys the
	// real one is documented to hold.
	secret *corev1.Secret
}

// strictDecoder decodes YAML or JSON into the registered API types and
// fails on unknown or duplicate fields and on kinds it does not know.
func strictDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		policyv1.AddToScheme, autoscalingv2.AddToScheme, networkingv1.AddToScheme, monitoringv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}

// render builds the kustomization in dir (relative to this folder) with
// kustomize's library, plugins off, and decodes every object strictly.
func render(t *testing.T, dir string) *manifests {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	dec := strictDecoder(t)
	m := &manifests{overlay: filepath.Base(dir)}
	for _, r := range res.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %s: %v", dir, r.CurId(), err)
		}
		obj, _, err := dec.Decode(y, nil, nil)
		if err != nil {
			t.Errorf("%s: %s: %v", dir, r.CurId(), err)
			continue
		}
		if err := m.add(obj); err != nil {
			t.Errorf("%s: %s: %v", dir, r.CurId(), err)
		}
	}
	raw, err := os.ReadFile(filepath.Join("k8s", "secret.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := dec.Decode(raw, nil, nil)
	if err != nil {
		t.Fatalf("k8s/secret.example.yaml: %v", err)
	}
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		t.Fatalf("k8s/secret.example.yaml holds a %T, want a Secret", obj)
	}
	m.secret = secret
	return m
}

func (m *manifests) add(obj runtime.Object) error {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		m.deployments = append(m.deployments, o)
	case *batchv1.Job:
		m.jobs = append(m.jobs, o)
	case *corev1.Service:
		m.services = append(m.services, o)
	case *corev1.ConfigMap:
		m.configMaps = append(m.configMaps, o)
	case *corev1.Secret:
		m.secrets = append(m.secrets, o)
	case *corev1.ServiceAccount:
		m.serviceAccounts = append(m.serviceAccounts, o)
	case *policyv1.PodDisruptionBudget:
		m.pdbs = append(m.pdbs, o)
	case *autoscalingv2.HorizontalPodAutoscaler:
		m.hpas = append(m.hpas, o)
	case *networkingv1.NetworkPolicy:
		m.netpols = append(m.netpols, o)
	case *monitoringv1.ServiceMonitor:
		m.monitors = append(m.monitors, o)
	default:
		return fmt.Errorf("unexpected kind %T: teach the checks about it", obj)
	}
	return nil
}

var overlays = []string{"dev", "production"}

// TestKustomizeOverlays renders each overlay, decodes every object strictly
// into the Kubernetes API types, and runs the checks of checks_test.go.
func TestKustomizeOverlays(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			m := render(t, filepath.Join("k8s", "overlays", overlay))
			if len(m.deployments) != 2 || len(m.jobs) != 1 || len(m.services) != 2 || len(m.configMaps) != 1 {
				t.Fatalf("rendered %d Deployments, %d Jobs, %d Services, %d ConfigMaps; want the API and the worker, the migrate Job, their Services and one ConfigMap",
					len(m.deployments), len(m.jobs), len(m.services), len(m.configMaps))
			}
			for _, p := range m.problems() {
				t.Error(p)
			}
		})
	}
}

// TestStrictDecodingRefusesUnknownFields: a misspelt field fails the
// decoding instead of being dropped (as `kubectl apply` would drop it with
// client-side validation off).
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	dec := strictDecoder(t)
	for name, doc := range map[string]string{
		"misspelt field":  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 2\n",
		"nested unknown":  "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports:\n    - port: 80\n      targetport: http\n",
		"duplicate field": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {A: b}\ndata: {C: d}\n",
		"unknown monitor": "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: x}\nspec:\n  endpoint: [{port: metrics}]\n",
		"unknown kind":    "apiVersion: v1\nkind: Pods\nmetadata: {name: x}\n",
	} {
		if _, _, err := dec.Decode([]byte(doc), nil, nil); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
	if _, _, err := dec.Decode([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: 2\n"), nil, nil); err != nil {
		t.Errorf("a valid Deployment: %v", err)
	}
}

// TestChecksCatchMistakes breaks a rendered production overlay in one place
// at a time and expects the checks to name the mistake.
func TestChecksCatchMistakes(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m *manifests)
		want   string
	}{
		{"no readiness probe", func(m *manifests) { m.deployments[0].Spec.Template.Spec.Containers[0].ReadinessProbe = nil }, "readinessProbe"},
		{"probe on an undeclared port", func(m *manifests) {
			m.deployments[1].Spec.Template.Spec.Containers[0].LivenessProbe.HTTPGet.Port.StrVal = "admin"
		}, "not a port the container declares"},
		{"latest image", func(m *manifests) { m.deployments[0].Spec.Template.Spec.Containers[0].Image = "telco-platform:latest" }, "pinned"},
		{"untagged image", func(m *manifests) { m.jobs[0].Spec.Template.Spec.Containers[0].Image = "telco-platform" }, "pinned"},
		{"no memory limit", func(m *manifests) {
			delete(m.deployments[1].Spec.Template.Spec.Containers[0].Resources.Limits, "memory")
		}, "limits.memory"},
		{"writable root", func(m *manifests) {
			f := false
			m.deployments[0].Spec.Template.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem = &f
		}, "readOnlyRootFilesystem"},
		{"root allowed", func(m *manifests) {
			m.deployments[0].Spec.Template.Spec.SecurityContext.RunAsNonRoot = nil
			m.deployments[0].Spec.Template.Spec.Containers[0].SecurityContext.RunAsNonRoot = nil
		}, "runAsNonRoot"},
		{"HPA on a missing Deployment", func(m *manifests) { m.hpas[0].Spec.ScaleTargetRef.Name = "platform-gone" }, "scaleTargetRef"},
		{"PDB selecting nothing", func(m *manifests) { m.pdbs[0].Spec.Selector.MatchLabels["app.kubernetes.io/component"] = "gone" }, "selects no"},
		{"NetworkPolicy selecting nothing", func(m *manifests) {
			m.netpols[1].Spec.PodSelector.MatchLabels["app.kubernetes.io/component"] = "gone"
		}, "selects no"},
		{"Service selecting nothing", func(m *manifests) { m.services[0].Spec.Selector["app.kubernetes.io/component"] = "gone" }, "selects no"},
		{"ServiceMonitor on an unknown port", func(m *manifests) { m.monitors[0].Spec.Endpoints[0].Port = "metricz" }, "metricz"},
		{"ServiceMonitor selecting no Service", func(m *manifests) {
			m.monitors[1].Spec.Selector.MatchLabels["app.kubernetes.io/component"] = "gone"
		}, "selects no Service"},
		{"unknown variable", func(m *manifests) { m.configMaps[0].Data["HTTP_PORT"] = "8080" }, "HTTP_PORT"},
		{"invalid value", func(m *manifests) { m.configMaps[0].Data["LOG_LEVEL"] = "loud" }, "LOG_LEVEL"},
		{"port the process does not listen on", func(m *manifests) { m.configMaps[0].Data["WORKER_HTTP_ADDR"] = ":9999" }, "9091"},
		{"one instance configured", func(m *manifests) { m.configMaps[0].Data["INSTANCES"] = "1" }, "INSTANCES"},
		{"REDIS_URL optional", func(m *manifests) {
			t := true
			for _, e := range m.deployments[0].Spec.Template.Spec.Containers[0].Env {
				if e.Name == "REDIS_URL" {
					e.ValueFrom.SecretKeyRef.Optional = &t
				}
			}
		}, "REDIS_URL"},
		{"secret key not in the example", func(m *manifests) { delete(m.secret.StringData, "REDIS_URL") }, "REDIS_URL"},
		{"a Secret in the output", func(m *manifests) { m.secrets = append(m.secrets, m.secret.DeepCopy()) }, "Secret"},
		{"single replica", func(m *manifests) { var one int32 = 1; m.hpas[0].Spec.MinReplicas = &one }, "at least 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := render(t, filepath.Join("k8s", "overlays", "production"))
			if got := m.problems(); len(got) != 0 {
				t.Fatalf("the production overlay has problems before breaking it: %v", got)
			}
			byName(m)
			tc.mutate(m)
			got := strings.Join(m.problems(), "\n")
			if !strings.Contains(got, tc.want) {
				t.Fatalf("broken (%s): want a problem mentioning %q, got:\n%s", tc.name, tc.want, got)
			}
		})
	}
}

// byName orders the objects the mistakes above edit by name (API before
// worker; NetworkPolicies platform-api-http, platform-default-deny-ingress,
// platform-metrics).
func byName(m *manifests) {
	slices.SortFunc(m.deployments, func(a, b *appsv1.Deployment) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(m.services, func(a, b *corev1.Service) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(m.pdbs, func(a, b *policyv1.PodDisruptionBudget) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(m.hpas, func(a, b *autoscalingv2.HorizontalPodAutoscaler) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(m.netpols, func(a, b *networkingv1.NetworkPolicy) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(m.monitors, func(a, b *monitoringv1.ServiceMonitor) int { return strings.Compare(a.Name, b.Name) })
}

// releaseTag is a version tag (production pins a release, never a branch
// name such as `dev` or `main`).
var releaseTag = regexp.MustCompile(`^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$`)
