package activities

import (
	"context"

	"github.com/telcoplatform/platform/workflows"
)

// ServiceChange is the view of Services that the ServiceChange workflow
// calls (workflows.ServiceChangeActivities): the change activities,
// registered by worker.RegisterActivities as "ServiceChange.<Method>".
// Each method is Services' Change<Method>.
type ServiceChange struct{ s *Services }

// Decommission is the view of Services that the Decommission workflow
// calls (workflows.DecommissionActivities): the decommission activities,
// registered by worker.RegisterActivities as "Decommission.<Method>".
// Each method is Services' Decom<Method>.
type Decommission struct{ s *Services }

// NewServiceChange returns the change activities of s. (A function, not a
// method: every exported method of Services is an activity.)
func NewServiceChange(s *Services) *ServiceChange { return &ServiceChange{s: s} }

// NewDecommission returns the decommission activities of s.
func NewDecommission(s *Services) *Decommission { return &Decommission{s: s} }

// Begin is Services.ChangeBegin.
func (v *ServiceChange) Begin(ctx context.Context, in workflows.ServiceChangeInput) error {
	return v.s.ChangeBegin(ctx, in)
}

// MarkStep is Services.ChangeMarkStep.
func (v *ServiceChange) MarkStep(ctx context.Context, in workflows.ChangeStepInput) error {
	return v.s.ChangeMarkStep(ctx, in)
}

// StartMaintenance is Services.ChangeStartMaintenance.
func (v *ServiceChange) StartMaintenance(ctx context.Context, in workflows.ServiceChangeInput) error {
	return v.s.ChangeStartMaintenance(ctx, in)
}

// Validate is Services.ChangeValidate.
func (v *ServiceChange) Validate(ctx context.Context, in workflows.ServiceChangeInput) error {
	return v.s.ChangeValidate(ctx, in)
}

// ReserveCapacity is Services.ChangeReserveCapacity.
func (v *ServiceChange) ReserveCapacity(ctx context.Context, in workflows.ServiceChangeInput) error {
	return v.s.ChangeReserveCapacity(ctx, in)
}

// Apply is Services.ChangeApply.
func (v *ServiceChange) Apply(ctx context.Context, in workflows.ServiceChangeInput) error {
	return v.s.ChangeApply(ctx, in)
}

// EndMaintenance is Services.ChangeEndMaintenance.
func (v *ServiceChange) EndMaintenance(ctx context.Context, in workflows.ServiceChangeInput) error {
	return v.s.ChangeEndMaintenance(ctx, in)
}

// ReleaseCapacity is Services.ChangeReleaseCapacity.
func (v *ServiceChange) ReleaseCapacity(ctx context.Context, in workflows.ServiceChangeInput) error {
	return v.s.ChangeReleaseCapacity(ctx, in)
}

// Finish is Services.ChangeFinish.
func (v *ServiceChange) Finish(ctx context.Context, in workflows.ChangeFinishInput) error {
	return v.s.ChangeFinish(ctx, in)
}

// Begin is Services.DecomBegin.
func (v *Decommission) Begin(ctx context.Context, in workflows.DecommissionInput) error {
	return v.s.DecomBegin(ctx, in)
}

// MarkStep is Services.DecomMarkStep.
func (v *Decommission) MarkStep(ctx context.Context, in workflows.DecomStepInput) error {
	return v.s.DecomMarkStep(ctx, in)
}

// Validate is Services.DecomValidate.
func (v *Decommission) Validate(ctx context.Context, in workflows.DecommissionInput) error {
	return v.s.DecomValidate(ctx, in)
}

// MigrateData is Services.DecomMigrateData.
func (v *Decommission) MigrateData(ctx context.Context, in workflows.DecommissionInput) error {
	return v.s.DecomMigrateData(ctx, in)
}

// VerifyMigration is Services.DecomVerifyMigration.
func (v *Decommission) VerifyMigration(ctx context.Context, in workflows.DecommissionInput) error {
	return v.s.DecomVerifyMigration(ctx, in)
}

// RollbackMigration is Services.DecomRollbackMigration.
func (v *Decommission) RollbackMigration(ctx context.Context, in workflows.DecommissionInput) error {
	return v.s.DecomRollbackMigration(ctx, in)
}

// Deactivate is Services.DecomDeactivate.
func (v *Decommission) Deactivate(ctx context.Context, in workflows.DecommissionInput) error {
	return v.s.DecomDeactivate(ctx, in)
}

// ReleaseInventory is Services.DecomReleaseInventory.
func (v *Decommission) ReleaseInventory(ctx context.Context, in workflows.DecommissionInput) error {
	return v.s.DecomReleaseInventory(ctx, in)
}

// StopBilling is Services.DecomStopBilling.
func (v *Decommission) StopBilling(ctx context.Context, in workflows.DecommissionInput) error {
	return v.s.DecomStopBilling(ctx, in)
}

// Record is Services.DecomRecord.
func (v *Decommission) Record(ctx context.Context, in workflows.DecommissionInput) (*workflows.DecommissionResult, error) {
	return v.s.DecomRecord(ctx, in)
}

// Finish is Services.DecomFinish.
func (v *Decommission) Finish(ctx context.Context, in workflows.DecomFinishInput) error {
	return v.s.DecomFinish(ctx, in)
}
