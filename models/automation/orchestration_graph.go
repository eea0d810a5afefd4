package automation

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
)

// ParseWait parses a wait duration: a positive Go duration (30s, 15m, 2h,
// 1h30m) of at most 30 days. Errors: a plain error saying why.
func ParseWait(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 || d > MaxWait {
		return 0, errors.New("must be a positive duration of at most 30 days, e.g. 30s, 15m, 2h or 1h30m")
	}
	return d, nil
}

// findCycle returns the orders of a dependency cycle among steps, or nil.
func findCycle(steps []OrchestrationStep) []int {
	deps := map[int][]int{}
	for _, st := range steps {
		deps[st.Order] = st.DependsOn
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[int]int{}
	var stack []int
	var visit func(o int) []int
	visit = func(o int) []int {
		state[o] = visiting
		stack = append(stack, o)
		for _, d := range deps[o] {
			switch state[d] {
			case visiting:
				i := slices.Index(stack, d)
				return append(slices.Clone(stack[i:]), d)
			case unvisited:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[o] = done
		return nil
	}
	orders := make([]int, 0, len(steps))
	for _, st := range steps {
		orders = append(orders, st.Order)
	}
	sort.Ints(orders)
	for _, o := range orders {
		if state[o] == unvisited {
			if c := visit(o); c != nil {
				return c
			}
		}
	}
	return nil
}

// Ancestors returns, for each step's order, the orders of every step it
// depends on directly or through others (steps must form no cycle).
func Ancestors(steps []OrchestrationStep) map[int]map[int]bool {
	deps := map[int][]int{}
	for _, st := range steps {
		deps[st.Order] = st.DependsOn
	}
	out := map[int]map[int]bool{}
	var walk func(o int) map[int]bool
	walk = func(o int) map[int]bool {
		if a, ok := out[o]; ok {
			return a
		}
		a := map[int]bool{}
		out[o] = a
		for _, d := range deps[o] {
			a[d] = true
			for x := range walk(d) {
				a[x] = true
			}
		}
		return a
	}
	for _, st := range steps {
		walk(st.Order)
	}
	return out
}

// ResolveParameters returns params with each reference replaced: a string
// that is exactly one reference takes the referenced value (any type);
// references inside longer strings are replaced by their text. outputs holds
// each finished step's outputs by order; event is the triggering event
// ({id, type, resource_id, data}) or nil. Errors: VALIDATION_ERROR naming
// the reference that has no value.
func ResolveParameters(params map[string]any, outputs map[int]map[string]any, event map[string]any) (map[string]any, error) {
	var firstErr error
	lookup := func(expr string) (any, bool) {
		r, ok := parseRef(expr)
		if !ok {
			return nil, false
		}
		if r.event != "" {
			var cur any = event
			for _, p := range strings.Split(r.event, ".")[1:] {
				m, ok := cur.(map[string]any)
				if !ok {
					return nil, false
				}
				if cur, ok = m[p]; !ok {
					return nil, false
				}
			}
			return cur, cur != nil
		}
		val, ok := outputs[r.step][r.output]
		return val, ok && val != nil
	}
	var resolve func(v any) any
	resolve = func(v any) any {
		switch x := v.(type) {
		case string:
			if m := refPattern.FindStringSubmatch(x); m != nil && m[0] == x {
				val, ok := lookup(m[1])
				if !ok && firstErr == nil {
					firstErr = models.Invalid(models.FieldIssue{Field: "parameters", Issue: fmt.Sprintf("${%s} has no value", m[1])})
				}
				return val
			}
			return refPattern.ReplaceAllStringFunc(x, func(ref string) string {
				val, ok := lookup(ref[2 : len(ref)-1])
				if !ok && firstErr == nil {
					firstErr = models.Invalid(models.FieldIssue{Field: "parameters", Issue: fmt.Sprintf("%s has no value", ref)})
				}
				if val == nil {
					return ""
				}
				return fmt.Sprint(val)
			})
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = resolve(e)
			}
			return out
		case map[string]any:
			// Keys in order: the first unresolved reference named in the
			// error is the same on every run (workflows replay this).
			out := make(map[string]any, len(x))
			keys := slices.Sorted(maps.Keys(x)) //workflowcheck:ignore
			for _, k := range keys {
				out[k] = resolve(x[k])
			}
			return out
		}
		return v
	}
	out := resolve(params).(map[string]any)
	return out, firstErr
}

// DerivedID returns an identifier with prefix whose random part is derived
// from seed: the same seed gives the same id (idempotent creation from a
// retried activity or a redelivered event).
func DerivedID(prefix, seed string) string {
	sum := sha256.Sum256([]byte(seed))
	out := make([]byte, 20)
	for i := range out {
		out[i] = models.Base62[int(sum[i])%62]
	}
	return prefix + "_" + string(out)
}
