package activities

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// Bulk holds the dependencies of the bulk activities, registered by
// worker.RegisterActivities under the names "Bulk.<Method>"
// (workflows.BulkActivities). The operation's
// items are written in batches (Record); each item's work is idempotent,
// keyed by the operation and the item's position.
type Bulk struct {
	store      *models.Store
	operations *operations.Store
	services   *services.Store
	automation *automation.Store
	net        simulator.Southbound
	log        *slog.Logger
	prov       *Provisioning // the steps of a bulk provisioning item (ProvisionBatch)
}

// NewBulk returns the bulk activities over store and the southbound net.
func NewBulk(store *models.Store, net simulator.Southbound, log *slog.Logger) *Bulk {
	if log == nil {
		log = slog.Default()
	}
	return &Bulk{store: store, operations: operations.NewStore(store), services: services.NewStore(store), automation: automation.NewStore(store), net: net, log: log,
		prov: NewProvisioning(store, net, log)}
}

// bulkAppError converts err for Temporal (ApplicationError, RetryByCode)
// and logs it with the activity's name, what.
func bulkAppError(ctx context.Context, log *slog.Logger, what string, err error) error {
	return failed(ctx, log, err, "activity", what)
}

// bulkServiceOrder is what the network needs to act on an existing service:
// its provisioning's order (the network's allocations are keyed by it).
func bulkServiceOrder(svc *services.Service) simulator.Order {
	return simulator.Order{
		OperationID: svc.OperationID, ServiceID: svc.ID, OrganizationID: svc.OrganizationID, Environment: svc.Environment,
		LocationID: svc.LocationID, ServiceType: svc.ServiceType, TemplateID: svc.TemplateID, BandwidthMbps: svc.BandwidthMbps, SLA: svc.SLA,
	}
}

// bulkChangeService makes one status change to a service through the
// network and records it (models.ApplyServiceChange): a suspension turns
// the circuit down, a resumption turns it up. Applying the same key again
// changes nothing.
func bulkChangeService(ctx context.Context, store *models.Store, net simulator.Southbound, scope models.Scope, req automation.ChangeRequest) (*services.Service, error) {
	svc, err := automation.NewStore(store).ServiceForChange(ctx, scope, req.Kind, req.ServiceID)
	if err != nil {
		return nil, err
	}
	o := bulkServiceOrder(svc)
	switch req.Kind {
	case automation.ChangeSuspend:
		if svc.Status != services.ServiceMaintenance {
			if err := net.Deactivate(ctx, o); err != nil {
				return nil, err
			}
		}
	case automation.ChangeResume:
		if svc.Status != services.ServiceOperational {
			if _, err := net.Activate(ctx, o); err != nil {
				return nil, err
			}
		}
	}
	return automation.NewStore(store).ApplyServiceChange(ctx, scope, req)
}

// bulkRevertService undoes the status change recorded under key, turning
// the circuit up or down again.
func bulkRevertService(ctx context.Context, store *models.Store, net simulator.Southbound, scope models.Scope, kind, key, serviceID string) error {
	svc, err := automation.NewStore(store).ServiceForChange(ctx, scope, map[string]string{automation.ChangeSuspend: automation.ChangeResume, automation.ChangeResume: automation.ChangeSuspend}[kind], serviceID)
	if err == nil {
		o := bulkServiceOrder(svc)
		if kind == automation.ChangeSuspend {
			_, err = net.Activate(ctx, o)
		} else {
			err = net.Deactivate(ctx, o)
		}
		if err != nil {
			return err
		}
	} else if models.ErrorCode(err) != models.CodeInvalidStateTransition {
		return err
	}
	return automation.NewStore(store).RevertServiceChange(ctx, scope, key)
}

// changeStart returns a prepared change as the workflow starts it.
func changeStart(scope models.Scope, c *automation.ChangeOperation) *workflows.ChangeStart {
	if c.Noop {
		return &workflows.ChangeStart{Noop: true}
	}
	return &workflows.ChangeStart{Type: c.Operation.Type, Input: workflows.ServiceChangeInput{
		RequestID: c.Operation.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment,
		ServiceID: c.Operation.ResourceID, Update: *c.Update,
	}}
}

// bulkChangeID returns the id of the change operation of bulk item position
// of opID (its rollback's when rollback), derived so that a retry finds it.
func bulkChangeID(opID string, position int, rollback bool) string {
	seed := automation.ChangeKey(opID, position)
	if rollback {
		seed += "#rollback"
	}
	return automation.DerivedID(services.PrefixModification, seed)
}

// Begin marks the operation in progress and records the current run's id
// (each run after a continue-as-new records its own).
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (the operation has ended).
func (a *Bulk) Begin(ctx context.Context, ref workflows.BulkRef) error {
	runID := activity.GetInfo(ctx).WorkflowExecution.RunID
	_, err := a.operations.BeginOperation(ctx, ref.Scope(), ref.RequestID, runID)
	return bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.Begin), err)
}

// Load returns the next page of items in one of the statuses asked; for
// pending bulk provisioning items it first creates their provisioning
// operations (once), so that their workflows can start. Errors: NOT_FOUND.
func (a *Bulk) Load(ctx context.Context, in workflows.BulkLoadInput) (*workflows.BulkPage, error) {
	scope := in.Bulk.Scope()
	items, next, err := a.automation.BulkItems(ctx, scope, in.Bulk.RequestID, in.From, in.Limit, in.Statuses...)
	if err != nil {
		return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.Load), err)
	}
	if in.Bulk.Type == operations.OpTypeBulkProvision {
		for _, s := range in.Statuses {
			if s == automation.ItemPending {
				if err := a.automation.EnsureChildOperations(ctx, scope, in.Bulk.CreatedBy, items); err != nil {
					return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.Load), err)
				}
			}
		}
	}
	page := &workflows.BulkPage{Items: make([]workflows.BulkWorkItem, len(items)), Next: next}
	for i, it := range items {
		page.Items[i] = workflows.BulkWorkItem{Position: it.Position, ServiceID: it.ServiceID, ChildID: it.ChildID, Order: it.Order, Changes: it.Changes, Action: it.Action}
	}
	return page, nil
}

// Record writes new item statuses to the operation.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (the operation has ended).
func (a *Bulk) Record(ctx context.Context, in workflows.BulkRecordInput) error {
	_, err := a.automation.RecordBulkItems(ctx, in.Bulk.Scope(), in.Bulk.RequestID, in.Updates)
	return bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.Record), err)
}

// Apply performs one bulk status item: a suspension or a resumption (once
// per item). Errors: NOT_FOUND, SERVICE_CONFLICT, SERVICE_MAINTENANCE,
// INVALID_STATE_TRANSITION.
func (a *Bulk) Apply(ctx context.Context, in workflows.BulkItemInput) error {
	if in.Bulk.Type != operations.OpTypeBulkStatus {
		return temporal.NewNonRetryableApplicationError("only bulk status items are applied by this activity", string(models.CodeValidation), nil)
	}
	req := automation.ChangeRequest{Key: automation.ChangeKey(in.Bulk.RequestID, in.Item.Position), OperationID: in.Bulk.RequestID,
		ServiceID: in.Item.ServiceID, Kind: in.Item.Action}
	_, err := bulkChangeService(ctx, a.store, a.net, in.Bulk.Scope(), req)
	return bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.Apply), err)
}

// PrepareChange prepares the change of a bulk modification item: its
// modification operation (mod_, once per item, claiming the service) for a
// child ServiceChange workflow, or Noop when the service already has every
// value asked for. Errors: NOT_FOUND, VALIDATION_ERROR, SERVICE_MAINTENANCE,
// INVALID_STATE_TRANSITION, SERVICE_CONFLICT, INSUFFICIENT_BANDWIDTH.
func (a *Bulk) PrepareChange(ctx context.Context, in workflows.BulkItemInput) (*workflows.ChangeStart, error) {
	if in.Item.Changes == nil {
		return nil, temporal.NewNonRetryableApplicationError("the item has no changes", string(models.CodeValidation), nil)
	}
	scope := in.Bulk.Scope()
	c, err := a.automation.PrepareChangeOperation(ctx, scope, in.Bulk.CreatedBy, bulkChangeID(in.Bulk.RequestID, in.Item.Position, false), in.Item.ServiceID,
		in.Item.Changes.UpdateInput(), map[string]any{"bulk_request_id": in.Bulk.RequestID, "position": in.Item.Position})
	if err != nil {
		return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.PrepareChange), err)
	}
	return changeStart(scope, c), nil
}

// PrepareRevert prepares the rollback of a completed bulk modification
// item: a modification back to the values its change replaced, or Noop
// when the item changed nothing. Errors: as PrepareChange.
func (a *Bulk) PrepareRevert(ctx context.Context, in workflows.BulkItemInput) (*workflows.ChangeStart, error) {
	scope := in.Bulk.Scope()
	back, ok, err := a.automation.ReverseChange(ctx, scope, bulkChangeID(in.Bulk.RequestID, in.Item.Position, false))
	if err != nil && models.ErrorCode(err) != models.CodeNotFound {
		return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.PrepareRevert), err)
	}
	if !ok {
		return &workflows.ChangeStart{Noop: true}, nil
	}
	c, err := a.automation.PrepareChangeOperation(ctx, scope, in.Bulk.CreatedBy, bulkChangeID(in.Bulk.RequestID, in.Item.Position, true), in.Item.ServiceID,
		back, map[string]any{"bulk_request_id": in.Bulk.RequestID, "position": in.Item.Position, "rollback": true})
	if err != nil {
		return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.PrepareRevert), err)
	}
	return changeStart(scope, c), nil
}

// Rollback undoes one completed item (idempotent): a provisioned service
// has its circuit turned down, its device deconfigured, its capacity, IP
// block and VLAN released, and is decommissioned (service.decommissioned);
// a status change is reverted. (A modification is undone by a
// ServiceChange workflow: PrepareRevert.)
// Errors: INVALID_STATE_TRANSITION, SERVICE_CONFLICT (the service moved on since).
func (a *Bulk) Rollback(ctx context.Context, in workflows.BulkItemInput) error {
	scope := in.Bulk.Scope()
	var err error
	switch in.Bulk.Type {
	case operations.OpTypeBulkProvision:
		err = bulkRollbackProvisioned(ctx, a.store, a.net, scope, in.Bulk.RequestID, in.Item.ServiceID, in.Item.ChildID, in.Item.Order)
	case operations.OpTypeBulkStatus:
		err = bulkRevertService(ctx, a.store, a.net, scope, in.Item.Action, automation.ChangeKey(in.Bulk.RequestID, in.Item.Position), in.Item.ServiceID)
	default:
		return temporal.NewNonRetryableApplicationError("a modification is rolled back by PrepareRevert", string(models.CodeValidation), nil)
	}
	return bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.Rollback), err)
}

// bulkRollbackProvisioned undoes the provisioning childID of service serviceID.
func bulkRollbackProvisioned(ctx context.Context, store *models.Store, net simulator.Southbound, scope models.Scope, opID, serviceID, childID string, o *services.ProvisioningOrder) error {
	order := simulator.Order{OperationID: childID, ServiceID: serviceID, OrganizationID: scope.OrganizationID, Environment: scope.Environment}
	if o != nil {
		order.LocationID, order.ServiceType, order.TemplateID, order.BandwidthMbps, order.SLA = o.LocationID, o.ServiceType, o.TemplateID, o.BandwidthMbps, o.SLA
	}
	if err := net.Deactivate(ctx, order); err != nil {
		return err
	}
	if err := net.Deconfigure(ctx, order); err != nil {
		return err
	}
	if err := net.Release(ctx, order); err != nil {
		return err
	}
	return automation.NewStore(store).RetireProvisionedService(ctx, scope, serviceID, opID)
}

// Finish ends the operation from its items (models.FinishBulk) and cancels
// the provisioning operations of items that never started.
func (a *Bulk) Finish(ctx context.Context, in workflows.BulkFinishInput) (*workflows.BulkResult, error) {
	scope := in.Bulk.Scope()
	op, err := a.automation.FinishBulk(ctx, scope, in.Bulk.RequestID, in.Finish)
	if err != nil {
		return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.Finish), err)
	}
	if in.Bulk.Type == operations.OpTypeBulkProvision {
		items, _, err := a.automation.BulkItems(ctx, scope, in.Bulk.RequestID, 0, len(op.Items), automation.ItemSkipped, automation.ItemCancelled)
		if err != nil {
			return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.Finish), err)
		}
		ids := make([]string, 0, len(items))
		for _, it := range items {
			ids = append(ids, it.ChildID)
		}
		if err := a.automation.CancelPendingOperations(ctx, scope, ids); err != nil {
			return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.Finish), err)
		}
	}
	o := automation.CountItems(op.Items)
	return &workflows.BulkResult{Status: op.Status, Total: o.Total, Completed: o.Completed, Failed: o.Failed,
		RolledBack: o.RolledBack, Skipped: o.Skipped, Cancelled: o.Cancelled}, nil
}
