// Package activities holds the platform's Temporal activities: all the I/O
// of the workflows, through the models' store and the southbound interface.
// Activities are idempotent: a retried activity finds what its first attempt
// did and never allocates twice.
package activities

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/activity"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// Provisioning holds the dependencies of the provisioning activities. Its
// methods are registered by worker.RegisterActivities under the names
// "Provisioning.<Method>" (workflows.ProvisioningActivities). Each step activity records its step on the operation row (started,
// completed); the workflow records failures through Finish.
type Provisioning struct {
	store      *models.Store
	operations *operations.Store
	services   *services.Store
	net        simulator.Southbound
	log        *slog.Logger
}

// NewProvisioning returns the provisioning activities over store and the southbound net.
func NewProvisioning(store *models.Store, net simulator.Southbound, log *slog.Logger) *Provisioning {
	if log == nil {
		log = slog.Default()
	}
	return &Provisioning{store: store, operations: operations.NewStore(store), services: services.NewStore(store), net: net, log: log}
}

func order(in workflows.ProvisioningInput) simulator.Order {
	return simulator.Order{
		OperationID: in.RequestID, ServiceID: in.ServiceID, OrganizationID: in.OrganizationID, Environment: in.Environment,
		Kind: in.Order.Profile().Kind, Name: in.Order.Name, LocationID: in.Order.LocationID, ServiceType: in.Order.ServiceType,
		TemplateID: in.Order.TemplateID, BandwidthMbps: in.Order.BandwidthMbps, SLA: in.Order.SLA, Quantity: in.Order.Quantity,
	}
}

// at returns o for one allocation of the plan: its slot, place, pool and amount.
func at(o simulator.Order, r services.ResourceRequest) simulator.Order {
	o.Slot, o.LocationID = r.Slot, r.LocationID
	if r.Pool != "" {
		o.ServiceType = r.Pool
	}
	if r.Amount > 0 {
		o.BandwidthMbps = r.Amount
	}
	return o
}

// isCompute reports whether a capacity pool is a compute pool of a region.
func isCompute(pool string) bool { return pool == catalog.PoolVCPU || pool == catalog.PoolGPU }

// temporalError converts err for Temporal (ApplicationError, RetryByCode)
// and logs it with the operation's request id and step.
func (a *Provisioning) temporalError(ctx context.Context, in workflows.ProvisioningInput, step string, err error) error {
	return appError(ctx, a.log, in.RequestID, step, err)
}

// appError converts err for Temporal (see Provisioning.temporalError).
func appError(ctx context.Context, log *slog.Logger, requestID, step string, err error) error {
	return failed(ctx, log, err, "request_id", requestID, "step", step)
}

// step runs fn as the step name of the operation, recording it on the row
// (or, for an item of a bulk batch, in its step log: see withStepLog).
func (a *Provisioning) step(ctx context.Context, in workflows.ProvisioningInput, name string, fn func(scope models.Scope) error) error {
	scope := in.Scope()
	if err := a.startStep(ctx, scope, in.RequestID, name); err != nil {
		return a.temporalError(ctx, in, name, err)
	}
	if err := fn(scope); err != nil {
		return a.temporalError(ctx, in, name, err)
	}
	if l := stepLogOf(ctx); l != nil {
		l.mark(name, true, a.store.Now())
		return nil
	}
	return a.temporalError(ctx, in, name, a.operations.CompleteStep(ctx, scope, in.RequestID, name))
}

// startStep marks the step name of operation id started, on the row or in
// ctx's step log.
func (a *Provisioning) startStep(ctx context.Context, scope models.Scope, id, name string) error {
	if l := stepLogOf(ctx); l != nil {
		l.mark(name, false, a.store.Now())
		return nil
	}
	return a.operations.StartStep(ctx, scope, id, name)
}

// Begin marks the operation in progress and records the workflow's run id.
// Errors: NOT_FOUND (the API removed the row), INVALID_STATE_TRANSITION.
func (a *Provisioning) Begin(ctx context.Context, in workflows.ProvisioningInput) error {
	runID := activity.GetInfo(ctx).WorkflowExecution.RunID
	_, err := a.operations.BeginOperation(ctx, in.Scope(), in.RequestID, runID)
	return a.temporalError(ctx, in, "begin", err)
}

// MarkStep records a step that no activity of its own runs (waiting for the
// preferred date): started, or done. When the wait starts, the service
// record is created (pending), so that the service_id the API answered
// names a service for the whole wait (and a failed one if the order is
// cancelled during it); Validate finds it there.
func (a *Provisioning) MarkStep(ctx context.Context, in workflows.StepInput) error {
	var err error
	if in.Step == operations.StepSchedule && !in.Done {
		o := in.Input.Order
		if _, err := a.services.EnsureService(ctx, in.Input.Scope(), in.Input.ServiceID, in.Input.RequestID, &o); err != nil {
			return a.temporalError(ctx, in.Input, in.Step, err)
		}
	}
	if in.Done {
		err = a.operations.CompleteStep(ctx, in.Input.Scope(), in.Input.RequestID, in.Step)
	} else {
		err = a.operations.StartStep(ctx, in.Input.Scope(), in.Input.RequestID, in.Step)
	}
	return a.temporalError(ctx, in.Input, in.Step, err)
}

// Validate creates the service record (pending), re-validates the order
// (fields, account, template, availability now) and asks the network for
// feasibility, then moves the service to provisioning. Errors: the order's
// validation codes, PROVISIONING_FAILED.
func (a *Provisioning) Validate(ctx context.Context, in workflows.ProvisioningInput) error {
	return a.step(ctx, in, operations.StepValidate, func(scope models.Scope) error {
		o := in.Order
		if _, err := a.services.EnsureService(ctx, scope, in.ServiceID, in.RequestID, &o); err != nil {
			return err
		}
		if err := a.services.ValidateOrderFor(ctx, scope, in.ServiceID, &o); err != nil {
			return err
		}
		if err := a.net.CheckFeasibility(ctx, order(in)); err != nil {
			return err
		}
		_, err := a.services.MoveService(ctx, scope, in.ServiceID, services.ServiceProvisioning, "provisioning", in.RequestID)
		return err
	})
}

// ReserveCapacity makes the order's reserve_capacity allocations (once per
// operation and slot): bandwidth at every site, compute units in every
// region, phone numbers (recorded on the service). Errors:
// INSUFFICIENT_BANDWIDTH, SERVICE_UNAVAILABLE_AT_LOCATION, PROVISIONING_FAILED.
func (a *Provisioning) ReserveCapacity(ctx context.Context, in workflows.ProvisioningInput) error {
	return a.step(ctx, in, operations.StepReserveCapacity, func(scope models.Scope) error {
		o := order(in)
		var numbers []any
		plan := in.Order.Plan()
		for i := 0; i < len(plan); i++ {
			r := plan[i]
			if r.Step != operations.StepReserveCapacity {
				continue
			}
			switch r.Kind {
			case catalog.AllocCapacity:
				if isCompute(r.Pool) {
					if err := a.net.ReserveCompute(ctx, at(o, r)); err != nil {
						return err
					}
					continue
				}
				if _, err := a.net.ReserveCapacity(ctx, at(o, r)); err != nil {
					return err
				}
			case catalog.AllocPhoneNumber:
				// one call per run of numbers of the same type and area code
				slots := []int{r.Slot}
				for i+1 < len(plan) && plan[i+1].Kind == catalog.AllocPhoneNumber && plan[i+1].NumberType == r.NumberType && plan[i+1].AreaCode == r.AreaCode {
					i++
					slots = append(slots, plan[i].Slot)
				}
				got, err := a.net.AssignNumbers(ctx, o, r.NumberType, r.AreaCode, slots)
				if err != nil {
					return err
				}
				for _, n := range got {
					numbers = append(numbers, map[string]any{"number": n, "type": r.NumberType})
				}
			}
		}
		if numbers != nil {
			return a.services.SetServiceResources(ctx, scope, in.ServiceID, map[string]any{"phone_numbers": numbers})
		}
		return nil
	})
}

// Configure makes the order's configure allocations (once per operation
// and slot): a public IP block, a VLAN id at every site (or per device);
// configures the network; deploys what the service runs on (virtual
// machines, environments, endpoints, tenants); and records all of it on
// the service. Errors: DEPENDENCY_UNAVAILABLE (pool exhausted), PROVISIONING_FAILED.
func (a *Provisioning) Configure(ctx context.Context, in workflows.ProvisioningInput) error {
	return a.step(ctx, in, operations.StepConfigure, func(scope models.Scope) error {
		o := order(in)
		var ip simulator.IPAssignment
		var vlans []int
		var vlanSites []string
		for _, r := range in.Order.Plan() {
			switch {
			case r.Step != operations.StepConfigure:
			case r.Kind == catalog.AllocIPBlock:
				got, err := a.net.AllocateIP(ctx, at(o, r))
				if err != nil {
					return err
				}
				ip = got
			case r.Kind == catalog.AllocVLAN:
				v, err := a.net.AllocateVLAN(ctx, at(o, r))
				if err != nil {
					return err
				}
				vlans, vlanSites = append(vlans, v), append(vlanSites, r.LocationID)
			}
		}
		cfg := simulator.DeviceConfig{IP: ip, BandwidthMbps: o.BandwidthMbps}
		if len(vlans) > 0 {
			cfg.VLANID = vlans[0]
		}
		if err := a.net.Configure(ctx, o, cfg); err != nil {
			return err
		}
		resources := map[string]any{}
		if len(in.Order.Deployment) > 0 || o.Kind == services.KindPhoneSystem || o.Kind == services.KindContactCenter || o.Kind == services.KindManagedSecurity {
			built, err := a.net.Deploy(ctx, o, in.Order.Deployment)
			if err != nil {
				return err
			}
			for k, v := range built {
				resources[k] = v
			}
		}
		if len(in.Order.Sites) > 0 {
			sites := make([]any, len(in.Order.Sites))
			for i, st := range in.Order.Sites {
				site := map[string]any{"location_id": st.LocationID, "role": st.Role, "address": st.Address}
				if i < len(vlans) && vlanSites[i] == st.LocationID {
					site["vlan_id"] = vlans[i]
				}
				sites[i] = site
			}
			resources["sites"] = sites
		} else if len(vlans) > 1 {
			resources["vlan_ids"] = vlans
		}
		if len(resources) > 0 {
			if err := a.services.SetServiceResources(ctx, scope, in.ServiceID, resources); err != nil {
				return err
			}
		}
		return a.services.SetServiceNetwork(ctx, scope, in.ServiceID, services.NetworkAssignment{IPBlock: ip.CIDR, Gateway: ip.Gateway, VLANID: cfg.VLANID})
	})
}

// Activate turns the circuit up and records it on the service.
// Errors: PROVISIONING_FAILED.
func (a *Provisioning) Activate(ctx context.Context, in workflows.ProvisioningInput) error {
	return a.step(ctx, in, operations.StepActivate, func(scope models.Scope) error {
		c, err := a.net.Activate(ctx, order(in))
		if err != nil {
			return err
		}
		return a.services.SetServiceNetwork(ctx, scope, in.ServiceID, services.NetworkAssignment{CircuitID: c.ID})
	})
}

// RecordService hands the circuit over and, in one transaction, makes the
// service operational, writes the service.provisioned event and completes
// the operation. Errors: PROVISIONING_FAILED, INVALID_STATE_TRANSITION.
func (a *Provisioning) RecordService(ctx context.Context, in workflows.ProvisioningInput) (*workflows.ProvisioningResult, error) {
	scope := in.Scope()
	op, err := a.operations.OperationIn(ctx, scope, in.RequestID)
	if err != nil {
		return nil, a.temporalError(ctx, in, operations.StepRecordService, err)
	}
	if op.Status != operations.OpCompleted {
		if err := a.startStep(ctx, scope, in.RequestID, operations.StepRecordService); err != nil {
			return nil, a.temporalError(ctx, in, operations.StepRecordService, err)
		}
		if err := a.net.Handover(ctx, order(in)); err != nil {
			return nil, a.temporalError(ctx, in, operations.StepRecordService, err)
		}
	}
	if err := a.flushSteps(ctx, in); err != nil {
		return nil, a.temporalError(ctx, in, operations.StepRecordService, err)
	}
	svc, err := a.services.CompleteProvisioning(ctx, scope, in.RequestID, in.ServiceID)
	if err != nil {
		return nil, a.temporalError(ctx, in, operations.StepRecordService, err)
	}
	return &workflows.ProvisioningResult{ServiceID: svc.ID, Status: string(svc.Status)}, nil
}

// ReleaseCapacity compensates ReserveCapacity: returns the capacity, compute
// units and phone numbers (idempotent).
func (a *Provisioning) ReleaseCapacity(ctx context.Context, in workflows.ProvisioningInput) error {
	return a.temporalError(ctx, in, "release_capacity", a.net.Release(ctx, order(in), catalog.AllocCapacity, catalog.AllocPhoneNumber))
}

// ReleaseNetwork compensates Configure: removes the device configuration,
// releases the IP block and the VLAN, and clears them from the service (idempotent).
func (a *Provisioning) ReleaseNetwork(ctx context.Context, in workflows.ProvisioningInput) error {
	o := order(in)
	if err := a.net.Deconfigure(ctx, o); err != nil {
		return a.temporalError(ctx, in, "release_network", err)
	}
	if err := a.net.Release(ctx, o, catalog.AllocIPBlock, catalog.AllocVLAN); err != nil {
		return a.temporalError(ctx, in, "release_network", err)
	}
	return a.temporalError(ctx, in, "release_network", a.services.ClearServiceNetwork(ctx, in.Scope(), in.ServiceID))
}

// Deactivate compensates Activate: turns the circuit down (idempotent).
func (a *Provisioning) Deactivate(ctx context.Context, in workflows.ProvisioningInput) error {
	return a.temporalError(ctx, in, "deactivate", a.net.Deactivate(ctx, order(in)))
}

// Finish ends an operation that did not complete (failed or cancelled) and
// marks its service failed. Calling it again is harmless.
// Errors: INVALID_STATE_TRANSITION (the operation ended otherwise).
func (a *Provisioning) Finish(ctx context.Context, in workflows.FinishInput) error {
	scope := in.Input.Scope()
	result := map[string]any{"service_id": in.Input.ServiceID, "compensations": in.Compensations}
	if in.Compensations == nil {
		result["compensations"] = []string{}
	}
	if len(in.CompensationErrors) > 0 {
		result["compensation_errors"] = in.CompensationErrors
	}
	// The service first, so that whoever sees the operation ended sees the service failed.
	reason := "provisioning_failed"
	if in.Status == operations.OpCancelled {
		reason = "provisioning_cancelled"
	}
	if err := a.services.FailService(ctx, scope, in.Input.ServiceID, reason, in.Input.RequestID); err != nil {
		return a.temporalError(ctx, in.Input, "finish", err)
	}
	if in.Status == operations.OpFailed && in.Error != nil {
		if err := a.services.NotifyProvisioningFailed(ctx, scope, in.Input.ServiceID, in.Input.RequestID, in.Error.Message); err != nil {
			return a.temporalError(ctx, in.Input, "finish", err)
		}
	}
	_, err := a.operations.FinishOperation(ctx, scope, in.Input.RequestID, operations.FinishInput{
		Status: in.Status, FailedStep: in.FailedStep, Error: in.Error, Compensated: in.Compensated, Result: result,
	})
	return a.temporalError(ctx, in.Input, "finish", err)
}
