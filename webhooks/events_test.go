package webhooks

import (
	"slices"
	"testing"
)

func TestEventNames(t *testing.T) {
	names := EventNames()
	if len(names) != 29 {
		t.Fatalf("%d names, want 29", len(names))
	}
	perArea := map[Area]int{}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Fatalf("duplicate %q", n)
		}
		seen[n] = true
		if c, ok := Canonical(n); !ok || c != n {
			t.Fatalf("Canonical(%q) = %q, %v", n, c, ok)
		}
		perArea[AreaOf(n)]++
	}
	if want := map[Area]int{AreaServices: 8, AreaBilling: 10, AreaSupport: 9, AreaAnalytics: 2}; !mapsEqual(perArea, want) {
		t.Fatalf("names per area = %v, want %v", perArea, want)
	}
	if slices.Contains(names, EventTest) {
		t.Fatal("EventNames contains the test ping")
	}
	names[0] = "mutated"
	if EventNames()[0] != EventServiceProvisioned {
		t.Fatal("EventNames shares its slice")
	}
}

func mapsEqual(a, b map[Area]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"invoice.generated", "invoice.created", true},
		{"payment.received", "payment.successful", true},
		{"service.down", "service.down", true},
		{"webhook.test", "webhook.test", true},
		{"Service.Down", "", false},
		{"service.exploded", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := Canonical(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("Canonical(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestNormalizePatterns(t *testing.T) {
	tests := []struct {
		name       string
		area       Area
		in         []string
		want       []string
		wantFields []string // nil: no error
	}{
		{"all areas, mixed", AreaAll, []string{"service.*", "invoice.paid", "ticket.created", "*"},
			[]string{"service.*", "invoice.paid", "ticket.created", "*"}, nil},
		{"aliases canonicalised", AreaAll, []string{"invoice.generated", "payment.received"},
			[]string{"invoice.created", "payment.successful"}, nil},
		{"alias and canonical deduplicated", AreaBilling, []string{"invoice.created", "invoice.generated", "invoice.created"},
			[]string{"invoice.created"}, nil},
		{"services area", AreaServices, []string{"service.*", "service.down"},
			[]string{"service.*", "service.down"}, nil},
		{"billing groups", AreaBilling, []string{"invoice.*", "payment.*", "subscription.*", "usage.*"},
			[]string{"invoice.*", "payment.*", "subscription.*", "usage.*"}, nil},
		{"support groups", AreaSupport, []string{"ticket.*", "comment.*", "sla.*", "sla.breach"},
			[]string{"ticket.*", "comment.*", "sla.*", "sla.breach"}, nil},
		{"empty list", AreaAll, nil, nil, []string{"events"}},
		{"unknown name", AreaAll, []string{"service.down", "service.exploded"}, nil, []string{"events[1]"}},
		{"unknown group", AreaAll, []string{"network.*"}, nil, []string{"events[0]"}},
		{"test ping not subscribable", AreaAll, []string{"webhook.test"}, nil, []string{"events[0]"}},
		{"webhook group not subscribable", AreaAll, []string{"webhook.*"}, nil, []string{"events[0]"}},
		{"other pattern shapes", AreaAll, []string{"service.d*", "*.down", "**", "service.", ""}, nil,
			[]string{"events[0]", "events[1]", "events[2]", "events[3]", "events[4]"}},
		{"case matters", AreaAll, []string{"Service.Down"}, nil, []string{"events[0]"}},
		{"billing event in services area", AreaServices, []string{"service.down", "invoice.paid"}, nil, []string{"events[1]"}},
		{"alias outside area", AreaSupport, []string{"payment.received"}, nil, []string{"events[0]"}},
		{"group outside area", AreaBilling, []string{"ticket.*", "invoice.*", "service.*"}, nil, []string{"events[0]", "events[2]"}},
		{"star refused in an area", AreaServices, []string{"*"}, nil, []string{"events[0]"}},
		{"unknown area", Area("network"), []string{"service.down"}, nil, []string{"area"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizePatterns(tt.area, tt.in)
			if tt.wantFields == nil {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if !slices.Equal(got, tt.want) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
				return
			}
			if got != nil {
				t.Fatalf("patterns %v returned with an error", got)
			}
			if fields := fieldsOf(t, err); !slices.Equal(fields, tt.wantFields) {
				t.Fatalf("fields = %v, want %v (%v)", fields, tt.wantFields, err)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		event    string
		want     bool
	}{
		{"exact", []string{"service.down"}, "service.down", true},
		{"other exact", []string{"service.down"}, "service.restored", false},
		{"group", []string{"invoice.*"}, "invoice.overdue", true},
		{"group of another", []string{"invoice.*"}, "payment.failed", false},
		{"star", []string{"*"}, "sla.breach", true},
		{"alias event", []string{"invoice.created"}, "invoice.generated", true},
		{"alias pattern", []string{"payment.received"}, "payment.successful", true},
		{"alias event in group", []string{"payment.*"}, "payment.received", true},
		{"second pattern", []string{"ticket.*", "comment.added"}, "comment.added", true},
		{"unknown event", []string{"*"}, "service.exploded", false},
		{"test ping never matches", []string{"*"}, "webhook.test", false},
		{"no patterns", nil, "service.down", false},
		{"group prefix is not a group", []string{"sla.*"}, "service.down", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Matches(tt.patterns, tt.event); got != tt.want {
				t.Fatalf("Matches(%v, %q) = %v, want %v", tt.patterns, tt.event, got, tt.want)
			}
		})
	}
}

// TestAreasPartitionEvents checks that every canonical name is matched by
// exactly its own area's group patterns.
func TestAreasPartitionEvents(t *testing.T) {
	areaPatterns := map[Area][]string{
		AreaServices: {"service.*"},
		AreaBilling:  {"invoice.*", "payment.*", "subscription.*", "usage.*"},
		AreaSupport:  {"ticket.*", "comment.*", "sla.*", "report.*"},
	}
	for _, ev := range EventNames() {
		for area, pats := range areaPatterns {
			if got, want := Matches(pats, ev), AreaOf(ev) == area; got != want {
				t.Errorf("%s: Matches(%s patterns) = %v, want %v", ev, area, got, want)
			}
			if _, err := NormalizePatterns(area, []string{ev}); (err == nil) != (AreaOf(ev) == area) {
				t.Errorf("%s in %s: err = %v", ev, area, err)
			}
		}
	}
}
