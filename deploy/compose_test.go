package deploy

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/telcoplatform/platform/config"
)

// loadCompose loads a compose file with the Compose specification's loader:
// the schema (unknown keys fail), interpolation, anchors and merge keys, and
// the loader's consistency checks, all offline.
func loadCompose(t *testing.T, file string) (*types.Project, error) {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  filepath.Dir(abs),
		ConfigFiles: []types.ConfigFile{{Filename: abs}},
		Environment: types.Mapping{"SECRETS_KEY": testSecretsKey},
	})
}

// TestCompose loads docker-compose.yml and checks the references between its
// services (composeProblems).
func TestCompose(t *testing.T) {
	p, err := loadCompose(t, "docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"postgres", "redis", "temporal", "migrate", "seed", "api", "worker"} {
		if _, ok := p.Services[name]; !ok {
			t.Errorf("no service %s", name)
		}
	}
	for _, problem := range composeProblems(p) {
		t.Error(problem)
	}
}

// TestComposeLoaderIsStrict: a misspelt key and a dangling depends_on fail
// the loading itself.
func TestComposeLoaderIsStrict(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"misspelt key":       "services:\n  a:\n    image: redis:7\n    helthcheck:\n      test: [\"CMD\", \"true\"]\n",
		"dangling depends":   "services:\n  a:\n    image: redis:7\n    depends_on: [b]\n",
		"undeclared volume":  "services:\n  a:\n    image: redis:7\n    volumes: [\"data:/data\"]\n",
		"unset required var": "services:\n  a:\n    image: redis:7\n    environment:\n      X: ${NOT_SET_ANYWHERE:?required}\n",
	} {
		file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yml")
		if err := os.WriteFile(file, []byte("name: x\n"+doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadCompose(t, file); err == nil {
			t.Errorf("%s: loaded without an error", name)
		}
	}
}

// TestComposeChecksCatchMistakes breaks the loaded file in one place at a
// time and expects composeProblems to name the mistake.
func TestComposeChecksCatchMistakes(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p *types.Project)
		want   string
	}{
		{"deprecated Temporal image", func(p *types.Project) {
			edit(p, "temporal", func(s *types.ServiceConfig) { s.Image = "temporalio/auto-setup:1.29.1" })
		}, "auto-setup"},
		{"latest image", func(p *types.Project) { edit(p, "redis", func(s *types.ServiceConfig) { s.Image = "redis:latest" }) }, "pinned"},
		{"untagged image", func(p *types.Project) { edit(p, "postgres", func(s *types.ServiceConfig) { s.Image = "postgres" }) }, "pinned"},
		{"wrong Temporal port", func(p *types.Project) { setEnv(p, "worker", "TEMPORAL_ADDRESS", "temporal:7234") }, "7234"},
		{"unknown database host", func(p *types.Project) {
			setEnv(p, "api", "DATABASE_URL", "postgres://platform:platform@db:5432/platform")
		}, "no service db"},
		{"Redis on another port", func(p *types.Project) { setEnv(p, "api", "REDIS_URL", "redis://redis:6380/0") }, "6380"},
		{"unknown variable", func(p *types.Project) { setEnv(p, "api", "HTTP_PORT", "8080") }, "HTTP_PORT"},
		{"invalid value", func(p *types.Project) { setEnv(p, "worker", "LOG_FORMAT", "xml") }, "LOG_FORMAT"},
		{"port the API does not listen on", func(p *types.Project) { setEnv(p, "api", "HTTP_ADDR", ":8081") }, "8080"},
		{"no healthcheck where one is awaited", func(p *types.Project) { edit(p, "postgres", func(s *types.ServiceConfig) { s.HealthCheck = nil }) }, "healthcheck"},
		{"awaiting the completion of a server", func(p *types.Project) {
			edit(p, "api", func(s *types.ServiceConfig) {
				s.DependsOn["temporal"] = types.ServiceDependency{Condition: types.ServiceConditionCompletedSuccessfully, Required: true}
			})
		}, "never completes"},
		{"dangling depends_on", func(p *types.Project) {
			edit(p, "api", func(s *types.ServiceConfig) {
				s.DependsOn["cache"] = types.ServiceDependency{Condition: types.ServiceConditionHealthy, Required: true}
			})
		}, "cache"},
		{"undeclared volume", func(p *types.Project) { delete(p.Volumes, "blobs") }, "blobs"},
		{"scaled without INSTANCES", func(p *types.Project) { edit(p, "api", func(s *types.ServiceConfig) { s.SetScale(3) }) }, "INSTANCES"},
		{"several instances without Redis", func(p *types.Project) {
			setEnv(p, "worker", "INSTANCES", "2")
			edit(p, "worker", func(s *types.ServiceConfig) { delete(s.Environment, "REDIS_URL") })
		}, "REDIS_URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := loadCompose(t, "docker-compose.yml")
			if err != nil {
				t.Fatal(err)
			}
			if got := composeProblems(p); len(got) != 0 {
				t.Fatalf("docker-compose.yml has problems before breaking it: %v", got)
			}
			tc.mutate(p)
			got := strings.Join(composeProblems(p), "\n")
			if !strings.Contains(got, tc.want) {
				t.Fatalf("broken (%s): want a problem mentioning %q, got:\n%s", tc.name, tc.want, got)
			}
		})
	}
}

func edit(p *types.Project, name string, f func(s *types.ServiceConfig)) {
	s := p.Services[name]
	f(&s)
	p.Services[name] = s
}

func setEnv(p *types.Project, name, key, value string) {
	edit(p, name, func(s *types.ServiceConfig) {
		env := types.MappingWithEquals{}
		for k, v := range s.Environment {
			env[k] = v
		}
		env[key] = &value
		s.Environment = env
	})
}

// isPlatform reports whether s runs the platform's image.
func isPlatform(s types.ServiceConfig) bool {
	return s.Build != nil || strings.HasPrefix(s.Image, "telco-platform:")
}

// composeProblems checks a loaded compose project: pinned images (and not
// the deprecated temporalio/auto-setup), depends_on targets that exist and
// conditions they can meet, addresses in the environment (TEMPORAL_ADDRESS,
// DATABASE_URL, REDIS_URL, POSTGRES_SEEDS) that name a service on a port it
// exposes, healthchecks on every service others await or reach, named
// volumes declared, and for the platform's services: every variable one of
// config.Variables, accepted by config.Load, published ports the process
// listens on, and INSTANCES covering the scale with REDIS_URL set.
func composeProblems(p *types.Project) []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	known := map[string]bool{}
	for _, v := range config.Variables() {
		known[v.Name] = true
	}
	names := make([]string, 0, len(p.Services))
	for name := range p.Services {
		names = append(names, name)
	}
	sort.Strings(names)
	reached := map[string]bool{} // services others connect to
	for _, name := range names {
		s := p.Services[name]
		if _, tag, digest := splitImage(s.Image); digest == "" && (tag == "" || tag == "latest") {
			add("%s: image %q is not pinned to a tag (other than latest) or a digest", name, s.Image)
		}
		if strings.Contains(s.Image, "temporalio/auto-setup") {
			add("%s: temporalio/auto-setup is deprecated: use temporalio/server with the admin-tools schema set-up", name)
		}
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeVolume && v.Source != "" {
				if _, ok := p.Volumes[v.Source]; !ok {
					add("%s: volume %s is not declared under volumes", name, v.Source)
				}
			}
		}
		depNames := make([]string, 0, len(s.DependsOn))
		for dep := range s.DependsOn {
			depNames = append(depNames, dep)
		}
		sort.Strings(depNames)
		for _, dep := range depNames {
			target, ok := p.Services[dep]
			if !ok {
				add("%s: depends_on %s, which is no service of the file", name, dep)
				continue
			}
			switch s.DependsOn[dep].Condition {
			case types.ServiceConditionHealthy:
				reached[dep] = true
			case types.ServiceConditionCompletedSuccessfully:
				if target.Restart == types.RestartPolicyAlways || target.Restart == types.RestartPolicyUnlessStopped || target.HealthCheck != nil || len(target.Ports) > 0 {
					add("%s: waits for %s to complete, but %s is a server that never completes (restart %q, a healthcheck or published ports)", name, dep, dep, target.Restart)
				}
			}
		}
		env := map[string]string{}
		for k, v := range s.Environment {
			if v != nil {
				env[k] = *v
			}
		}
		for _, addr := range addresses(env) {
			reached[addr.host] = true
			target, ok := p.Services[addr.host]
			if !ok {
				add("%s: %s names host %s: no service %s in the file", name, addr.variable, addr.host, addr.host)
				continue
			}
			if !listensOn(target, addr.port) {
				add("%s: %s reaches %s on port %d, which %s neither exposes nor publishes", name, addr.variable, addr.host, addr.port, addr.host)
			}
		}
		if isPlatform(s) {
			checkPlatformService(add, known, name, s, env)
		}
	}
	for _, name := range names {
		if hc := p.Services[name].HealthCheck; reached[name] && (hc == nil || hc.Disable || len(hc.Test) == 0) {
			add("%s: other services reach it or wait for it to be healthy, but it has no healthcheck", name)
		}
	}
	return ps
}

type address struct {
	variable, host string
	port           int
}

// addresses returns the service addresses in env: TEMPORAL_ADDRESS
// (host:port), DATABASE_URL and REDIS_URL (URLs, default ports 5432 and
// 6379), and the Temporal server's POSTGRES_SEEDS with DB_PORT.
func addresses(env map[string]string) []address {
	var as []address
	if v := env["TEMPORAL_ADDRESS"]; v != "" {
		host, port, _ := net.SplitHostPort(v)
		n, _ := strconv.Atoi(port)
		as = append(as, address{"TEMPORAL_ADDRESS", host, n})
	}
	for variable, def := range map[string]int{"DATABASE_URL": 5432, "REDIS_URL": 6379} {
		u, err := url.Parse(env[variable])
		if err != nil || u.Hostname() == "" {
			continue
		}
		n := def
		if u.Port() != "" {
			n, _ = strconv.Atoi(u.Port())
		}
		as = append(as, address{variable, u.Hostname(), n})
	}
	if seeds := env["POSTGRES_SEEDS"]; seeds != "" {
		n, _ := strconv.Atoi(env["DB_PORT"])
		for _, host := range strings.Split(seeds, ",") {
			as = append(as, address{"POSTGRES_SEEDS", strings.TrimSpace(host), n})
		}
	}
	slices.SortFunc(as, func(a, b address) int { return strings.Compare(a.variable, b.variable) })
	return as
}

// listensOn reports whether s exposes or publishes container port port.
func listensOn(s types.ServiceConfig, port int) bool {
	for _, p := range s.Ports {
		if int(p.Target) == port {
			return true
		}
	}
	for _, e := range s.Expose {
		if lo, _, _ := strings.Cut(strings.Split(e, "/")[0], "-"); lo == strconv.Itoa(port) {
			return true
		}
	}
	return false
}

// checkPlatformService checks a service running the platform's image.
func checkPlatformService(add func(string, ...any), known map[string]bool, name string, s types.ServiceConfig, env map[string]string) {
	for k := range env {
		if !known[k] {
			add("%s: %s is not a variable of the platform (config.Variables)", name, k)
		}
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		add("%s: the platform refuses this configuration: %v", name, err)
		return
	}
	if len(s.Command) == 0 {
		add("%s: no command: name the platform's command", name)
		return
	}
	var listens []string
	switch s.Command[0] {
	case "serve":
		listens = []string{"HTTP_ADDR", "METRICS_ADDR", "MTLS_ADDR"}
	case "worker":
		listens = []string{"WORKER_HTTP_ADDR"}
	case "migrate", "seed":
	default:
		add("%s: command %v is not one of serve, worker, migrate, seed", name, s.Command)
	}
	ports := map[int]bool{}
	for _, v := range listens {
		if addr := env[v]; addr != "" {
			_, port, _ := net.SplitHostPort(addr)
			n, _ := strconv.Atoi(port)
			ports[n] = true
		}
	}
	for _, p := range s.Ports {
		if !ports[int(p.Target)] {
			add("%s: publishes container port %d, which `platform %s` does not listen on", name, p.Target, s.Command[0])
		}
	}
	if s.Command[0] != "serve" && s.Command[0] != "worker" {
		return
	}
	if scale := s.GetScale(); cfg.Instances < scale {
		add("%s: runs %d instances but INSTANCES is %d", name, scale, cfg.Instances)
	}
	if err := cfg.CheckMultiInstance(); err != nil {
		add("%s: %v", name, err)
	}
}
