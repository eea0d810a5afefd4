package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
)

// readmeSection is the README section whose commands TestREADMEFirstSession runs.
const readmeSection = "## A first session with curl"

// readmeStep is one ```sh block of the README and the fenced block that
// follows it, if any: what the README says it prints.
type readmeStep struct {
	line     int // of the sh block's fence, for messages
	script   string
	expected string
	hasOut   bool
}

// readmeSteps returns the steps of the section titled title of the markdown text md.
func readmeSteps(md, title string) ([]readmeStep, error) {
	start := strings.Index(md, "\n"+title+"\n")
	if start < 0 {
		return nil, fmt.Errorf("no section %q", title)
	}
	section := md[start+1:]
	if end := strings.Index(section[len(title):], "\n## "); end >= 0 {
		section = section[:len(title)+end]
	}
	firstLine := strings.Count(md[:start+1], "\n") + 1
	var steps []readmeStep
	lines := strings.Split(section, "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") {
			continue
		}
		var body []string
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, lines[j])
		}
		if j == len(lines) {
			return nil, fmt.Errorf("line %d: unclosed block", firstLine+i)
		}
		text := strings.Join(body, "\n")
		switch {
		case fence == "```sh":
			steps = append(steps, readmeStep{line: firstLine + i, script: text})
		case len(steps) > 0 && !steps[len(steps)-1].hasOut && i > 0 && strings.TrimSpace(lines[i-1]) == "```":
			// an output block right after a command block
			steps[len(steps)-1].expected, steps[len(steps)-1].hasOut = text, true
		}
		i = j
	}
	return steps, nil
}

// Normalization of what varies between runs: identifiers, keys, times,
// workflow run ids, and the API's address.
var (
	reSecret = regexp.MustCompile(`\bsk_(live|test)_[A-Za-z0-9.…]+`)
	reID     = regexp.MustCompile(`\b([a-z]+)_[A-Za-z0-9]{20}\b`)
	reTime   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	reUUID   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// a "key": value pair whose value is a scalar or an array of scalars
	rePair   = regexp.MustCompile(`"(\w+)":\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null|\[[^\[\]{}]*\])`)
	reKey    = regexp.MustCompile(`"(\w+)":`)
	reSpaces = regexp.MustCompile(`\s+`)
)

// measured reports whether the field key is a measurement, whose value
// varies between runs: only its presence is compared.
func measured(key string) bool {
	switch key {
	case "latency_ms", "bandwidth_utilization", "packet_loss", "jitter_ms":
		return true
	}
	return false
}

func normalizeOutput(s, base string) string {
	s = strings.ReplaceAll(s, base, "http://localhost:8080")
	s = reSecret.ReplaceAllString(s, "sk_${1}_*")
	s = reID.ReplaceAllString(s, "${1}_*")
	s = reTime.ReplaceAllString(s, "<time>")
	return reUUID.ReplaceAllString(s, "<uuid>")
}

// pairs returns the "key=value" fields of s (arrays without white space),
// measurements without their values.
func pairs(s string) map[string]bool {
	out := map[string]bool{}
	for _, m := range rePair.FindAllStringSubmatch(s, -1) {
		v := m[2]
		if strings.HasPrefix(v, "[") {
			v = reSpaces.ReplaceAllString(v, "")
		}
		if measured(m[1]) {
			v = "<measured>"
		}
		out[m[1]+"="+v] = true
	}
	return out
}

func keys(s string) map[string]bool {
	out := map[string]bool{}
	for _, m := range reKey.FindAllStringSubmatch(s, -1) {
		out[m[1]] = true
	}
	return out
}

func statusLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "HTTP/") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// compareStep returns how the output of a step differs from what the
// README shows: the HTTP status lines, every field the README shows with
// its value (identifiers, keys and times by their shape), and, where the
// README elides nothing ("..." or "…"), no field the README does not show.
func compareStep(expected, got string) []string {
	var diffs []string
	if want, have := statusLines(expected), statusLines(got); !slices.Equal(want, have) {
		diffs = append(diffs, fmt.Sprintf("status lines %q, the README shows %q", have, want))
	}
	have := pairs(got)
	for p := range pairs(expected) {
		if !have[p] {
			diffs = append(diffs, "the README shows "+p+", not in the output")
		}
	}
	if !strings.Contains(expected, "...") && !strings.Contains(expected, "…") {
		shown := keys(expected)
		for k := range keys(got) {
			if !shown[k] {
				diffs = append(diffs, "field "+k+" is in the output but not in the README")
			}
		}
	}
	// Plain text (a CSV file, a single value): its first line, the header.
	if len(keys(expected)) == 0 && strings.TrimSpace(expected) != "" {
		want, _, _ := strings.Cut(strings.TrimSpace(expected), "\n")
		have, _, _ := strings.Cut(strings.TrimSpace(got), "\n")
		shape := func(l string) string { return reTime.ReplaceAllString(reID.ReplaceAllString(l, "${1}_*"), "<time>") }
		if !strings.Contains(want, "...") && !strings.Contains(want, "…") && shape(have) != shape(want) {
			diffs = append(diffs, fmt.Sprintf("first line %q, the README shows %q", have, want))
		}
	}
	slices.Sort(diffs)
	return diffs
}

// TestREADMEFirstSession runs the commands of the README's first session
// with curl, in order and in one shell, against a platform started as
// `make run` starts it (the admin key in .data/admin.key, API overridden
// to the test's address), and compares what each command prints with the
// output the README shows under it: the HTTP status lines, the fields the
// README shows with their values (identifiers, keys and times by their
// shape; measurements by their presence), and no unshown field where the
// README elides nothing. A README that drifts from the API fails here.
func TestREADMEFirstSession(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed to run the README's session", tool)
			}
			t.Skipf("%s is needed to run the README's session", tool)
		}
	}
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	steps, err := readmeSteps(string(raw), readmeSection)
	if err != nil || len(steps) < 5 {
		t.Fatalf("README steps: %d, %v", len(steps), err)
	}

	p := startPlatform(t, platformOptions{keys: demoTestKey, background: true}) // the background worker runs step 13's report
	ctx := context.Background()
	adminKey := "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(p.store).EnsureAPIKey(ctx, p.demo.Provider.ID, adminKey, "Platform admin (bootstrap)", models.RoleAdmin, []string{"*"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".data", "admin.key"), []byte(adminKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// As `platform seed` and `make run` do: the support agents and teams, and the demo tenant's sandbox key.
	if _, err := support.NewStore(p.store).SeedAgents(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".data", "demo.key"), []byte(p.testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	var script strings.Builder
	for i, s := range steps {
		fmt.Fprintf(&script, "printf '\\n@@README-STEP %d@@\\n'\n%s\n", i, s.script)
	}
	fmt.Fprintf(&script, "printf '\\n@@README-STEP %d@@\\n'\n", len(steps))
	runCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "bash", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "API="+p.base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's session: %v\n%s", err, out)
	}

	parts := regexp.MustCompile(`\n?@@README-STEP (\d+)@@\n`).Split(string(out), -1)
	if len(parts) != len(steps)+2 {
		t.Fatalf("the session printed %d parts for %d steps:\n%s", len(parts), len(steps), out)
	}
	for i, s := range steps {
		if !s.hasOut {
			continue
		}
		got := normalizeOutput(parts[i+1], p.base)
		if diffs := compareStep(normalizeOutput(s.expected, p.base), got); len(diffs) > 0 {
			t.Errorf("README.md line %d: the output differs from the README's:\n  %s\noutput:\n%s", s.line, strings.Join(diffs, "\n  "), parts[i+1])
		}
	}
}
