package simulator

import (
	"context"
	"strings"

	"github.com/telcoplatform/platform/models"
)

// MagicFailName returns the sandbox magic service name that makes an
// operation fail at step: "sandbox-fail-" and the step with dashes.
func MagicFailName(step string) string { return "sandbox-fail-" + strings.ReplaceAll(step, "_", "-") }

// InjectedFault returns the sandbox failure configured for step, if any: in
// the test environment, an order at a location or from a template whose
// fail_at_step is step, or a service named MagicFailName(step), fails there
// with PROVISIONING_FAILED (docs/sandbox.md). The fail_at_step of
// locations and templates (seed data) comes from the catalog's reference
// data, kept in memory (catalog.ReferenceTTL).
func (s *Simulator) InjectedFault(ctx context.Context, o Order, step string) error {
	if o.Environment != models.EnvTest {
		return nil
	}
	var magic []string
	if o.Name != "" && o.Name == MagicFailName(step) {
		magic = append(magic, "name "+o.Name)
	}
	if o.LocationID != "" || o.TemplateID != "" {
		atLocation, atTemplate, err := s.catalog.FailAtSteps(ctx, o.LocationID, o.TemplateID)
		if err != nil {
			return err
		}
		if o.LocationID != "" && atLocation == step {
			magic = append(magic, "location "+o.LocationID)
		}
		if o.TemplateID != "" && atTemplate == step {
			magic = append(magic, "template "+o.TemplateID)
		}
	}
	if len(magic) == 0 {
		return nil
	}
	return models.Errorf(models.CodeProvisioningFailed, "the network rejected the %s step (sandbox magic value: %s)", step, strings.Join(magic, ", ")).
		WithDetail("sandbox", true).WithDetail("magic_value", strings.Join(magic, ", "))
}
