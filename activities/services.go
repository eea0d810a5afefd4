package activities

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// Services holds the dependencies of the activities that change and
// decommission services. Its methods are registered by worker.RegisterActivities
// through its two views, ServiceChange ("ServiceChange.<Method>") and
// Decommission ("Decommission.<Method>"). Every
// activity is idempotent: run again, it finds what its first run did.
type Services struct {
	store      *models.Store
	operations *operations.Store
	services   *services.Store
	net        simulator.Southbound
	temporal   client.Client // signals subscriptions when billing stops; nil: they end at their period's close
	log        *slog.Logger
}

// NewServices returns the change and decommission activities over store
// and the southbound net; c (may be nil) signals the subscription workflows
// of a decommissioned service.
func NewServices(store *models.Store, net simulator.Southbound, c client.Client, log *slog.Logger) *Services {
	if log == nil {
		log = slog.Default()
	}
	return &Services{store: store, operations: operations.NewStore(store), services: services.NewStore(store), net: net, temporal: c, log: log}
}

// serviceOrder is what the network needs to know about svc for operation opID.
func serviceOrder(svc *services.Service, opID string) simulator.Order {
	return simulator.Order{
		OperationID: opID, ServiceID: svc.ID, OrganizationID: svc.OrganizationID, Environment: svc.Environment, Kind: svc.Kind,
		Name: svc.Name, LocationID: svc.LocationID, ServiceType: svc.ServiceType, TemplateID: svc.TemplateID,
		BandwidthMbps: svc.BandwidthMbps, SLA: svc.SLA, Quantity: svc.Quantity,
	}
}

func (a *Services) service(ctx context.Context, scope models.Scope, id string) (*services.Service, error) {
	p := &models.Principal{OrganizationID: scope.OrganizationID, Environment: scope.Environment, Permissions: []string{"*"}}
	return a.services.GetService(ctx, p, id)
}

// step runs fn as step name of operation opID, recording it on the row;
// an operation that has ended already (a retried last step) is left alone.
func (a *Services) step(ctx context.Context, scope models.Scope, opID, name string, fn func() error) error {
	op, err := a.operations.OperationIn(ctx, scope, opID)
	if err != nil {
		return appError(ctx, a.log, opID, name, err)
	}
	if op.Status.Terminal() {
		return nil
	}
	if err := a.operations.StartStep(ctx, scope, opID, name); err != nil {
		return appError(ctx, a.log, opID, name, err)
	}
	if err := fn(); err != nil {
		return appError(ctx, a.log, opID, name, err)
	}
	if op, err := a.operations.OperationIn(ctx, scope, opID); err == nil && op.Status.Terminal() {
		return nil // fn completed the operation
	}
	return appError(ctx, a.log, opID, name, a.operations.CompleteStep(ctx, scope, opID, name))
}

// mark records a wait step started or done.
func (a *Services) mark(ctx context.Context, scope models.Scope, opID, name string, done bool) error {
	var err error
	if done {
		err = a.operations.CompleteStep(ctx, scope, opID, name)
	} else {
		err = a.operations.StartStep(ctx, scope, opID, name)
	}
	return appError(ctx, a.log, opID, name, err)
}

// ChangeBegin marks the change in progress and, for a scaling, records its
// maintenance window on the service (service.maintenance_scheduled).
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (a *Services) ChangeBegin(ctx context.Context, in workflows.ServiceChangeInput) error {
	scope := in.Scope()
	runID := activity.GetInfo(ctx).WorkflowExecution.RunID
	if _, err := a.operations.BeginOperation(ctx, scope, in.RequestID, runID); err != nil {
		return appError(ctx, a.log, in.RequestID, "begin", err)
	}
	return appError(ctx, a.log, in.RequestID, "begin", a.services.ScheduleMaintenance(ctx, scope, in.ServiceID, in.RequestID, &in.Update))
}

// ChangeMarkStep records a wait of the change: started, or done.
func (a *Services) ChangeMarkStep(ctx context.Context, in workflows.ChangeStepInput) error {
	return a.mark(ctx, in.Input.Scope(), in.Input.RequestID, in.Step, in.Done)
}

// ChangeStartMaintenance puts the service in maintenance (service.status_changed).
// Errors: INVALID_STATE_TRANSITION.
func (a *Services) ChangeStartMaintenance(ctx context.Context, in workflows.ServiceChangeInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, services.StepStartMaintenance, func() error {
		return a.services.EnterMaintenance(ctx, scope, in.ServiceID, in.RequestID)
	})
}

// ChangeValidate checks the change again when it is applied: the service is
// still delivered and changed by this operation, the network agrees, and
// the new bandwidth is still free. Errors: INVALID_STATE_TRANSITION,
// SERVICE_CONFLICT, INSUFFICIENT_BANDWIDTH, PROVISIONING_FAILED.
func (a *Services) ChangeValidate(ctx context.Context, in workflows.ServiceChangeInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, operations.StepValidate, func() error {
		svc, err := a.service(ctx, scope, in.ServiceID)
		if err != nil {
			return err
		}
		if !svc.Live() {
			return models.Errorf(models.CodeInvalidStateTransition, "service %s is %s and can no longer be changed", svc.ID, svc.Status).WithDetail("status", string(svc.Status))
		}
		if svc.PendingOperationID != in.RequestID {
			return models.Errorf(models.CodeServiceConflict, "service %s is being changed by %s", svc.ID, svc.PendingOperationID)
		}
		if err := a.services.CheckUpdateCapacity(ctx, scope, svc, &in.Update); err != nil {
			return err
		}
		return a.net.CheckFeasibility(ctx, serviceOrder(svc, in.RequestID))
	})
}

// ChangeReserveCapacity holds the new bandwidth at every site of the service,
// counting what it holds there now as free (once per operation and slot).
// Errors: INSUFFICIENT_BANDWIDTH, PROVISIONING_FAILED.
func (a *Services) ChangeReserveCapacity(ctx context.Context, in workflows.ServiceChangeInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, operations.StepReserveCapacity, func() error {
		svc, err := a.service(ctx, scope, in.ServiceID)
		if err != nil {
			return err
		}
		o := serviceOrder(svc, in.RequestID)
		o.Replaces = true
		for _, r := range in.Update.Capacity {
			if _, err := a.net.ReserveCapacity(ctx, at(o, r)); err != nil {
				return err
			}
		}
		return nil
	})
}

// ChangeApply reconfigures the network for the change and applies it
// (service.modified; the old capacity is released); a modification
// completes its operation here. Errors: INVALID_STATE_TRANSITION, PROVISIONING_FAILED.
func (a *Services) ChangeApply(ctx context.Context, in workflows.ServiceChangeInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, services.StepApply, func() error {
		svc, err := a.service(ctx, scope, in.ServiceID)
		if err != nil {
			return err
		}
		o := serviceOrder(svc, in.RequestID)
		if in.Update.BandwidthMbps > 0 {
			o.BandwidthMbps = in.Update.BandwidthMbps
		}
		if in.Update.Quantity > 0 {
			o.Quantity = in.Update.Quantity
		}
		cfg := simulator.DeviceConfig{IP: simulator.IPAssignment{CIDR: svc.IPBlock, Gateway: svc.Gateway}, VLANID: svc.VLANID, BandwidthMbps: o.BandwidthMbps}
		if err := a.net.Configure(ctx, o, cfg); err != nil {
			return err
		}
		_, err = a.services.ApplyServiceUpdate(ctx, scope, in.ServiceID, in.RequestID, &in.Update, !in.Update.Windowed())
		return err
	})
}

// ChangeEndMaintenance takes the service out of maintenance at the window's
// end and completes the scaling. Errors: INVALID_STATE_TRANSITION.
func (a *Services) ChangeEndMaintenance(ctx context.Context, in workflows.ServiceChangeInput) error {
	scope := in.Scope()
	result := map[string]any{"service_id": in.ServiceID, "changes": in.Update.Changes, "service_url": "/v1/services/" + in.ServiceID}
	return appError(ctx, a.log, in.RequestID, services.StepEndMaintenance, a.services.LeaveMaintenance(ctx, scope, in.ServiceID, in.RequestID, true, result))
}

// ChangeReleaseCapacity compensates ChangeReserveCapacity (idempotent).
func (a *Services) ChangeReleaseCapacity(ctx context.Context, in workflows.ServiceChangeInput) error {
	o := simulator.Order{OperationID: in.RequestID, ServiceID: in.ServiceID, OrganizationID: in.OrganizationID, Environment: in.Environment}
	return appError(ctx, a.log, in.RequestID, "release_capacity", a.net.Release(ctx, o, catalog.AllocCapacity))
}

// ChangeFinish ends a change that did not complete: the operation, the
// maintenance it started, the service's claim. Calling it again is harmless.
// Errors: INVALID_STATE_TRANSITION (the operation ended otherwise).
func (a *Services) ChangeFinish(ctx context.Context, in workflows.ChangeFinishInput) error {
	result := map[string]any{"service_id": in.Input.ServiceID, "compensated": in.Compensated}
	if len(in.CompensationErrors) > 0 {
		result["compensation_errors"] = in.CompensationErrors
	}
	err := a.services.EndServiceOperation(ctx, in.Input.Scope(), in.Input.ServiceID, in.Input.RequestID, operations.FinishInput{
		Status: in.Status, FailedStep: in.FailedStep, Error: in.Error, Compensated: in.Compensated, Result: result,
	})
	return appError(ctx, a.log, in.Input.RequestID, "finish", err)
}

// DecomBegin marks the decommission in progress. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION.
func (a *Services) DecomBegin(ctx context.Context, in workflows.DecommissionInput) error {
	runID := activity.GetInfo(ctx).WorkflowExecution.RunID
	_, err := a.operations.BeginOperation(ctx, in.Scope(), in.RequestID, runID)
	return appError(ctx, a.log, in.RequestID, "begin", err)
}

// DecomMarkStep records the wait for the decommission date: started, or done.
func (a *Services) DecomMarkStep(ctx context.Context, in workflows.DecomStepInput) error {
	return a.mark(ctx, in.Input.Scope(), in.Input.RequestID, in.Step, in.Done)
}

func (a *Services) decomOrder(ctx context.Context, in workflows.DecommissionInput) (simulator.Order, error) {
	svc, err := a.service(ctx, in.Scope(), in.ServiceID)
	if err != nil {
		return simulator.Order{}, err
	}
	o := serviceOrder(svc, in.RequestID)
	o.Reason = in.Plan.Reason
	return o, nil
}

// DecomValidate checks the decommission again when its date has come.
// Errors: VALIDATION_ERROR, SERVICE_MAINTENANCE, INVALID_STATE_TRANSITION,
// SERVICE_CONFLICT, PROVISIONING_FAILED.
func (a *Services) DecomValidate(ctx context.Context, in workflows.DecommissionInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, operations.StepValidate, func() error {
		if err := a.services.ValidateDecommission(ctx, scope, in.RequestID, &in.Plan); err != nil {
			return err
		}
		o, err := a.decomOrder(ctx, in)
		if err != nil {
			return err
		}
		return a.net.CheckFeasibility(ctx, o)
	})
}

// DecomMigrateData copies the service's data to the destination (once),
// which must still be in service and not being decommissioned.
// Errors: VALIDATION_ERROR (the destination), PROVISIONING_FAILED.
func (a *Services) DecomMigrateData(ctx context.Context, in workflows.DecommissionInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, services.StepMigrateData, func() error {
		o, err := a.decomOrder(ctx, in)
		if err != nil {
			return err
		}
		if err := a.services.CheckMigrationDestination(ctx, scope, in.ServiceID, in.Plan.Destination); err != nil {
			return err // the destination left service (or is leaving it) since the decommission began
		}
		_, err = a.net.MigrateData(ctx, o, in.Plan.Destination)
		return err
	})
}

// DecomVerifyMigration checks that the destination, still in service and
// not being decommissioned, received the data.
// Errors: VALIDATION_ERROR (the destination), PROVISIONING_FAILED (mismatch).
func (a *Services) DecomVerifyMigration(ctx context.Context, in workflows.DecommissionInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, services.StepVerifyMigration, func() error {
		o, err := a.decomOrder(ctx, in)
		if err != nil {
			return err
		}
		if err := a.services.CheckMigrationDestination(ctx, scope, in.ServiceID, in.Plan.Destination); err != nil {
			return err // data on a service that is leaving service is not verified
		}
		return a.net.VerifyMigration(ctx, o)
	})
}

// DecomRollbackMigration compensates DecomMigrateData (idempotent).
func (a *Services) DecomRollbackMigration(ctx context.Context, in workflows.DecommissionInput) error {
	o := simulator.Order{OperationID: in.RequestID, ServiceID: in.ServiceID, OrganizationID: in.OrganizationID, Environment: in.Environment}
	return appError(ctx, a.log, in.RequestID, "rollback_migration", a.net.RollbackMigration(ctx, o))
}

// DecomDeactivate moves the service to decommissioning
// (service.status_changed) and turns it down in the network.
// Errors: INVALID_STATE_TRANSITION.
func (a *Services) DecomDeactivate(ctx context.Context, in workflows.DecommissionInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, services.StepDeactivate, func() error {
		if _, err := a.services.BeginDecommissioning(ctx, scope, in.ServiceID, in.RequestID, in.Plan.Reason); err != nil {
			return err
		}
		o, err := a.decomOrder(ctx, in)
		if err != nil {
			return err
		}
		if err := a.net.Deactivate(ctx, o); err != nil {
			return err
		}
		return a.net.Deconfigure(ctx, o)
	})
}

// DecomReleaseInventory returns every allocation of the service (capacity,
// IP blocks, VLANs, numbers, compute units) to the inventory.
func (a *Services) DecomReleaseInventory(ctx context.Context, in workflows.DecommissionInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, services.StepReleaseInventory, func() error {
		o, err := a.decomOrder(ctx, in)
		if err != nil {
			return err
		}
		return a.net.ReleaseService(ctx, o)
	})
}

// DecomStopBilling records when billing of the service stopped (once) and
// wakes the workflow of each open subscription of the service, which bills
// the period up to that moment and ends the subscription
// (service_decommissioned) at once rather than at the period's end. The
// wake-up is best effort: without it a subscription ends at its period's
// close, billed up to the same moment.
func (a *Services) DecomStopBilling(ctx context.Context, in workflows.DecommissionInput) error {
	scope := in.Scope()
	return a.step(ctx, scope, in.RequestID, services.StepStopBilling, func() error {
		at, err := a.services.StopBilling(ctx, scope, in.ServiceID)
		if err != nil {
			return err
		}
		// Best effort: billing_ended_at is recorded, and each subscription
		// ends at its period's close without the signal. A decommission
		// past deactivate must not fail for it.
		if err := a.endSubscriptions(ctx, scope, in.ServiceID, at); err != nil {
			a.log.WarnContext(ctx, "could not wake the subscriptions of a decommissioned service; they end at their period's close",
				"request_id", in.RequestID, "service_id", in.ServiceID, "error", err)
		}
		return nil
	})
}

// endSubscriptions signals every open subscription of serviceID that its
// billing stopped at at. Signalling again is harmless (the workflow keeps
// the earliest end); a subscription without a workflow is left to its row.
// Errors: DEPENDENCY_UNAVAILABLE (Temporal unreachable), INTERNAL_ERROR.
func (a *Services) endSubscriptions(ctx context.Context, scope models.Scope, serviceID string, at time.Time) error {
	if a.temporal == nil {
		return nil
	}
	var ids []string
	if err := a.store.In(ctx, scope).Model(&billing.Subscription{}).Where("service_id = ? AND status IN ?", serviceID,
		[]billing.SubscriptionStatus{billing.SubscriptionPending, billing.SubscriptionActive}).Pluck("id", &ids).Error; err != nil {
		return models.DBErr(err)
	}
	for _, id := range ids {
		activity.RecordHeartbeat(ctx, id)
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := a.temporal.SignalWorkflow(sctx, id, "", workflows.SignalCancelSubscription, workflows.CancelSignal{At: at})
		cancel()
		var nf *serviceerror.NotFound
		if err != nil && !errors.As(err, &nf) {
			e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable; retry later")
			e.Cause = err
			return e
		}
	}
	return nil
}

// DecomRecord makes the service decommissioned, writes
// service.decommissioned, notifies its contacts and completes the operation,
// in one transaction. Errors: INVALID_STATE_TRANSITION.
func (a *Services) DecomRecord(ctx context.Context, in workflows.DecommissionInput) (*workflows.DecommissionResult, error) {
	scope := in.Scope()
	op, err := a.operations.OperationIn(ctx, scope, in.RequestID)
	if err != nil {
		return nil, appError(ctx, a.log, in.RequestID, services.StepRecordDecommission, err)
	}
	if op.Status != operations.OpCompleted {
		if err := a.operations.StartStep(ctx, scope, in.RequestID, services.StepRecordDecommission); err != nil {
			return nil, appError(ctx, a.log, in.RequestID, services.StepRecordDecommission, err)
		}
	}
	svc, err := a.services.CompleteDecommission(ctx, scope, in.RequestID, &in.Plan)
	if err != nil {
		return nil, appError(ctx, a.log, in.RequestID, services.StepRecordDecommission, err)
	}
	return &workflows.DecommissionResult{ServiceID: svc.ID, Status: string(svc.Status)}, nil
}

// DecomFinish ends a decommission that did not complete, and frees the
// service for other changes. Calling it again is harmless.
// Errors: INVALID_STATE_TRANSITION (the operation ended otherwise).
func (a *Services) DecomFinish(ctx context.Context, in workflows.DecomFinishInput) error {
	result := map[string]any{"service_id": in.Input.ServiceID, "compensated": in.Compensated}
	if len(in.CompensationErrors) > 0 {
		result["compensation_errors"] = in.CompensationErrors
	}
	err := a.services.EndServiceOperation(ctx, in.Input.Scope(), in.Input.ServiceID, in.Input.RequestID, operations.FinishInput{
		Status: in.Status, FailedStep: in.FailedStep, Error: in.Error, Compensated: in.Compensated, Result: result,
	})
	return appError(ctx, a.log, in.Input.RequestID, "finish", err)
}
