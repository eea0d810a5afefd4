package deploy

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// hpaFor returns the HorizontalPodAutoscaler scaling Deployment name.
func (m *manifests) hpaFor(name string) *autoscalingv2.HorizontalPodAutoscaler {
	for _, h := range m.hpas {
		if h.Spec.ScaleTargetRef.Kind == "Deployment" && h.Spec.ScaleTargetRef.Name == name {
			return h
		}
	}
	return nil
}

func (m *manifests) deployment(name string) *appsv1.Deployment {
	for _, d := range m.deployments {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// minReplicas is the fewest pods Deployment name runs: its autoscaler's
// minimum, or its replicas (1 when unset).
func (m *manifests) minReplicas(name string) int32 {
	if h := m.hpaFor(name); h != nil {
		if h.Spec.MinReplicas == nil {
			return 1
		}
		return *h.Spec.MinReplicas
	}
	if d := m.deployment(name); d != nil && d.Spec.Replicas != nil {
		return *d.Spec.Replicas
	}
	return 1
}

// maxReplicas is the most pods w runs at once: its autoscaler's maximum,
// or its replicas (1 when unset, and for a Job).
func (m *manifests) maxReplicas(w workload) int {
	for _, d := range m.deployments {
		if "Deployment "+d.Name != w.ref {
			continue
		}
		if h := m.hpaFor(d.Name); h != nil {
			return int(h.Spec.MaxReplicas)
		}
		if d.Spec.Replicas != nil {
			return int(*d.Spec.Replicas)
		}
	}
	return 1
}

// checkDeployments: selectors select their own template, and a Deployment an
// autoscaler scales leaves replicas unset (each apply would reset it).
func (m *manifests) checkDeployments(add func(string, ...any)) {
	for _, d := range m.deployments {
		if !selects(d.Spec.Selector, d.Spec.Template.Labels) {
			add("Deployment %s: its selector does not select its pod template", d.Name)
		}
		if m.hpaFor(d.Name) != nil && d.Spec.Replicas != nil {
			add("Deployment %s: sets replicas while a HorizontalPodAutoscaler scales it", d.Name)
		}
	}
	for _, h := range m.hpas {
		d := m.deployment(h.Spec.ScaleTargetRef.Name)
		if h.Spec.ScaleTargetRef.Kind != "Deployment" || d == nil {
			add("HorizontalPodAutoscaler %s: scaleTargetRef %s %s names no Deployment", h.Name, h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name)
			continue
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || h.Spec.MaxReplicas < *h.Spec.MinReplicas {
			add("HorizontalPodAutoscaler %s: minReplicas must be set, at least 1 and at most maxReplicas", h.Name)
		}
		for _, metric := range h.Spec.Metrics {
			if metric.Resource == nil {
				continue
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				if _, ok := c.Resources.Requests[metric.Resource.Name]; !ok {
					add("HorizontalPodAutoscaler %s: scales on %s, which container %s does not request", h.Name, metric.Resource.Name, c.Name)
				}
			}
		}
	}
}

// podsSelectedBy returns the Deployments' and Jobs' pod templates sel
// selects.
func (m *manifests) podsSelected(sel func(map[string]string) bool) []workload {
	var ws []workload
	for _, w := range m.workloads() {
		if sel(w.labels) {
			ws = append(ws, w)
		}
	}
	return ws
}

// declares reports whether a container of one of ws declares port p.
func declares(ws []workload, p intstr.IntOrString) bool {
	for _, w := range ws {
		for _, c := range w.pod.Containers {
			if containerPort(c, p) != 0 {
				return true
			}
		}
	}
	return false
}

// checkServices: every Service selects the pods of a Deployment, and each
// target port is one those pods declare.
func (m *manifests) checkServices(add func(string, ...any)) {
	for _, s := range m.services {
		var ws []workload
		if len(s.Spec.Selector) > 0 {
			for _, w := range m.podsSelected(func(l map[string]string) bool {
				for k, v := range s.Spec.Selector {
					if l[k] != v {
						return false
					}
				}
				return true
			}) {
				if w.probed {
					ws = append(ws, w)
				}
			}
		}
		if len(ws) == 0 {
			add("Service %s selects no pods of a Deployment", s.Name)
			continue
		}
		for _, p := range s.Spec.Ports {
			target := p.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(p.Port)
			}
			if !declares(ws, target) {
				add("Service %s: port %s targets %s, which its pods do not declare", s.Name, p.Name, target.String())
			}
		}
	}
}

// checkPolicies: PodDisruptionBudgets select a Deployment's pods and
// NetworkPolicies select pods of the platform, allowing only ports those
// pods declare.
func (m *manifests) checkPolicies(add func(string, ...any)) {
	for _, p := range m.pdbs {
		if !slices.ContainsFunc(m.deployments, func(d *appsv1.Deployment) bool { return selects(p.Spec.Selector, d.Spec.Template.Labels) }) {
			add("PodDisruptionBudget %s selects no pods of a Deployment", p.Name)
		}
		if p.Spec.MaxUnavailable == nil && p.Spec.MinAvailable == nil {
			add("PodDisruptionBudget %s sets neither maxUnavailable nor minAvailable", p.Name)
		}
	}
	for _, np := range m.netpols {
		ws := m.podsSelected(func(l map[string]string) bool { return selects(&np.Spec.PodSelector, l) })
		if len(ws) == 0 {
			add("NetworkPolicy %s selects no pods of the platform", np.Name)
			continue
		}
		for _, rule := range np.Spec.Ingress {
			for _, port := range rule.Ports {
				if port.Port != nil && !declares(ws, *port.Port) {
					add("NetworkPolicy %s: port %s is declared by none of the pods it selects", np.Name, port.Port.String())
				}
			}
		}
	}
}

// checkMonitors: each ServiceMonitor selects a Service of this namespace
// and scrapes a port that Service names; every Service with a `metrics`
// port is scraped when there are ServiceMonitors.
func (m *manifests) checkMonitors(add func(string, ...any)) {
	scraped := map[string]bool{}
	for _, mon := range m.monitors {
		if ns := mon.Spec.NamespaceSelector; !ns.Any && len(ns.MatchNames) > 0 && !slices.Contains(ns.MatchNames, m.namespace) {
			add("ServiceMonitor %s looks in namespaces %v, not %s", mon.Name, ns.MatchNames, m.namespace)
		}
		var matched []*corev1.Service
		for _, s := range m.services {
			if selects(&mon.Spec.Selector, s.Labels) {
				matched = append(matched, s)
			}
		}
		if len(matched) == 0 {
			add("ServiceMonitor %s selects no Service", mon.Name)
			continue
		}
		if len(mon.Spec.Endpoints) == 0 {
			add("ServiceMonitor %s has no endpoints", mon.Name)
		}
		for _, ep := range mon.Spec.Endpoints {
			for _, s := range matched {
				if !slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
					add("ServiceMonitor %s: port %q is not a port of Service %s", mon.Name, ep.Port, s.Name)
				}
				scraped[s.Name] = true
			}
		}
	}
	if len(m.monitors) == 0 {
		return
	}
	for _, s := range m.services {
		if slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "metrics" }) && !scraped[s.Name] {
			add("Service %s has a metrics port no ServiceMonitor scrapes", s.Name)
		}
	}
}
