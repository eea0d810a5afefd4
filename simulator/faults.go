package simulator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// faultStepsTTL is how long the simulator keeps a location's or template's
// fail_at_step (a sandbox magic value of the seed data) before reading it
// again: every step of every sandbox order asks for it.
const faultStepsTTL = 10 * time.Second

// Kinds of faultSteps entries.
const (
	faultLocation = "location"
	faultTemplate = "template"
)

// faultSteps keeps the fail_at_step of locations and templates for a
// while (faultStepsTTL).
type faultSteps struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]faultStep
}

type faultStep struct {
	step    string
	expires time.Time
}

func newFaultSteps(ttl time.Duration) *faultSteps {
	return &faultSteps{ttl: ttl, entries: map[string]faultStep{}}
}

// get returns the fail_at_step of the kind's id, read by read when it is
// not kept or has expired; an id read finds nothing for has none.
func (f *faultSteps) get(kind, id string, read func() (string, error)) (string, error) {
	key := kind + " " + id
	now := time.Now()
	f.mu.Lock()
	e, ok := f.entries[key]
	f.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.step, nil
	}
	step, err := read()
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return "", models.Internal(err)
	}
	f.mu.Lock()
	if len(f.entries) > 10_000 { // ids come from orders: keep the map bounded
		clear(f.entries)
	}
	f.entries[key] = faultStep{step: step, expires: now.Add(f.ttl)}
	f.mu.Unlock()
	return step, nil
}

// MagicFailName returns the sandbox magic service name that makes an
// operation fail at step: "sandbox-fail-" and the step with dashes.
func MagicFailName(step string) string { return "sandbox-fail-" + strings.ReplaceAll(step, "_", "-") }

// InjectedFault returns the sandbox failure configured for step, if any: in
// the test environment, an order at a location or from a template whose
// fail_at_step is step, or a service named MagicFailName(step), fails there
// with PROVISIONING_FAILED (docs/sandbox.md). The fail_at_step of
// locations and templates (seed data) is read at most once per
// faultStepsTTL per location or template and process.
func (s *Simulator) InjectedFault(ctx context.Context, o Order, step string) error {
	if o.Environment != models.EnvTest {
		return nil
	}
	var magic []string
	if o.Name != "" && o.Name == MagicFailName(step) {
		magic = append(magic, "name "+o.Name)
	}
	if o.LocationID != "" {
		at, err := s.faults.get(faultLocation, o.LocationID, func() (string, error) {
			var loc catalog.ServiceableLocation
			err := s.store.In(ctx, models.SystemScope()).Select("fail_at_step").Where("id = ?", o.LocationID).Take(&loc).Error
			return loc.FailAtStep, err
		})
		if err != nil {
			return err
		}
		if at == step {
			magic = append(magic, "location "+o.LocationID)
		}
	}
	if o.TemplateID != "" {
		at, err := s.faults.get(faultTemplate, o.TemplateID, func() (string, error) {
			var tpl catalog.ProvisioningTemplate
			err := s.store.In(ctx, models.SystemScope()).Select("fail_at_step").Where("id = ?", o.TemplateID).Take(&tpl).Error
			return tpl.FailAtStep, err
		})
		if err != nil {
			return err
		}
		if at == step {
			magic = append(magic, "template "+o.TemplateID)
		}
	}
	if len(magic) == 0 {
		return nil
	}
	return models.Errorf(models.CodeProvisioningFailed, "the network rejected the %s step (sandbox magic value: %s)", step, strings.Join(magic, ", ")).
		WithDetail("sandbox", true).WithDetail("magic_value", strings.Join(magic, ", "))
}
