// Package simulator is the platform's southbound side: the interface through
// which activities act on the network (Southbound), and a simulator of it
// that keeps its inventory (capacity per location, IP blocks, VLAN ids) in the
// database through models, takes a configurable time per step, fails on
// demand in the sandbox (docs/sandbox.md), and produces the telemetry that
// service status is computed from.
package simulator

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// Order is what the network needs to know about one provisioning.
type Order struct {
	OperationID    string
	ServiceID      string
	OrganizationID string
	Environment    models.Environment
	LocationID     string
	ServiceType    string
	TemplateID     string
	BandwidthMbps  int
	SLA            string
}

// Scope returns the tenant scope of the order.
func (o Order) Scope() models.Scope { return models.TenantScope(o.OrganizationID, o.Environment) }

// Reservation is bandwidth held at a location.
type Reservation struct {
	LocationID  string
	ServiceType string
	Mbps        int
}

// IPAssignment is a public IP block and its gateway.
type IPAssignment struct {
	CIDR    string
	Gateway string
}

// DeviceConfig is what the access device of a service is configured with.
type DeviceConfig struct {
	IP            IPAssignment
	VLANID        int
	BandwidthMbps int
}

// Circuit is an activated access circuit.
type Circuit struct {
	ID string
}

// Southbound is the network as activities see it. Every method is keyed by
// the order's operation: calling it again for the same operation (a retried
// activity) returns the first result and never allocates twice; releases and
// teardowns of something already released or never made succeed.
type Southbound interface {
	// CheckFeasibility asks the network whether the order can be built.
	// Errors: PROVISIONING_FAILED.
	CheckFeasibility(ctx context.Context, o Order) error
	// ReserveCapacity holds the order's bandwidth at its location. Errors:
	// INSUFFICIENT_BANDWIDTH, SERVICE_UNAVAILABLE_AT_LOCATION, PROVISIONING_FAILED.
	ReserveCapacity(ctx context.Context, o Order) (Reservation, error)
	// AllocateIP assigns a public IP block. Errors: DEPENDENCY_UNAVAILABLE (pool exhausted).
	AllocateIP(ctx context.Context, o Order) (IPAssignment, error)
	// AllocateVLAN assigns a VLAN id at the location. Errors: DEPENDENCY_UNAVAILABLE.
	AllocateVLAN(ctx context.Context, o Order) (int, error)
	// Configure pushes the configuration to the access device. Errors: PROVISIONING_FAILED.
	Configure(ctx context.Context, o Order, c DeviceConfig) error
	// Activate turns the circuit up. Errors: PROVISIONING_FAILED.
	Activate(ctx context.Context, o Order) (Circuit, error)
	// Handover confirms the circuit in service with the network inventory.
	// Errors: PROVISIONING_FAILED.
	Handover(ctx context.Context, o Order) error
	// Deactivate turns the circuit down.
	Deactivate(ctx context.Context, o Order) error
	// Deconfigure removes the device configuration.
	Deconfigure(ctx context.Context, o Order) error
	// Release returns the order's allocations of the given kinds (all when none).
	Release(ctx context.Context, o Order, kinds ...models.AllocationKind) error
}

// Options configure the simulator.
type Options struct {
	StepDelay time.Duration // time each network call takes (SIMULATOR_STEP_DELAY)
	Logger    *slog.Logger
}

// Simulator is the Southbound of the platform: a simulated network whose
// inventory lives in the database.
type Simulator struct {
	store *models.Store
	delay time.Duration
	log   *slog.Logger
}

// New returns a simulator over store.
func New(store *models.Store, opts Options) *Simulator {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Simulator{store: store, delay: opts.StepDelay, log: log}
}

var _ Southbound = (*Simulator)(nil)

// wait takes the configured step time, or returns early with ctx's error.
func (s *Simulator) wait(ctx context.Context) error {
	if s.delay <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// InjectedFault returns the sandbox failure configured for step, if any: in
// the test environment, an order at a location or from a template whose
// fail_at_step is step fails there with PROVISIONING_FAILED (docs/sandbox.md).
func (s *Simulator) InjectedFault(ctx context.Context, o Order, step string) error {
	if o.Environment != models.EnvTest {
		return nil
	}
	db := s.store.In(ctx, models.SystemScope())
	var magic []string
	if o.LocationID != "" {
		var loc models.ServiceableLocation
		if err := db.Where("id = ?", o.LocationID).Take(&loc).Error; err == nil && loc.FailAtStep == step {
			magic = append(magic, "location "+loc.ID)
		} else if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return models.Internal(err)
		}
	}
	if o.TemplateID != "" {
		var tpl models.ProvisioningTemplate
		if err := db.Where("id = ?", o.TemplateID).Take(&tpl).Error; err == nil && tpl.FailAtStep == step {
			magic = append(magic, "template "+tpl.ID)
		} else if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return models.Internal(err)
		}
	}
	if len(magic) == 0 {
		return nil
	}
	return models.Errorf(models.CodeProvisioningFailed, "the network rejected the %s step (sandbox magic value: %s)", step, strings.Join(magic, ", ")).
		WithDetail("sandbox", true).WithDetail("magic_value", strings.Join(magic, ", "))
}

func (s *Simulator) request(o Order) models.AllocationRequest {
	return models.AllocationRequest{OperationID: o.OperationID, ServiceID: o.ServiceID, LocationID: o.LocationID, ServiceType: o.ServiceType, Mbps: o.BandwidthMbps}
}

// CheckFeasibility simulates the network's feasibility check.
func (s *Simulator) CheckFeasibility(ctx context.Context, o Order) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.InjectedFault(ctx, o, models.StepValidate)
}

// ReserveCapacity holds the order's bandwidth in the location's inventory.
func (s *Simulator) ReserveCapacity(ctx context.Context, o Order) (Reservation, error) {
	if err := s.wait(ctx); err != nil {
		return Reservation{}, err
	}
	if err := s.InjectedFault(ctx, o, models.StepReserveCapacity); err != nil {
		return Reservation{}, err
	}
	a, err := s.store.ReserveCapacity(ctx, o.Scope(), s.request(o))
	if err != nil {
		return Reservation{}, err
	}
	return Reservation{LocationID: a.LocationID, ServiceType: a.ServiceType, Mbps: a.AmountMbps}, nil
}

// AllocateIP assigns a /29 from the environment's pool.
func (s *Simulator) AllocateIP(ctx context.Context, o Order) (IPAssignment, error) {
	if err := s.wait(ctx); err != nil {
		return IPAssignment{}, err
	}
	a, err := s.store.AllocateIPBlock(ctx, o.Scope(), s.request(o))
	if err != nil {
		return IPAssignment{}, err
	}
	return IPAssignment{CIDR: a.CIDR, Gateway: a.Gateway}, nil
}

// AllocateVLAN assigns the lowest free VLAN id at the location.
func (s *Simulator) AllocateVLAN(ctx context.Context, o Order) (int, error) {
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	a, err := s.store.AllocateVLAN(ctx, o.Scope(), s.request(o))
	if err != nil {
		return 0, err
	}
	return a.VLANID, nil
}

// Configure simulates pushing the device configuration.
func (s *Simulator) Configure(ctx context.Context, o Order, c DeviceConfig) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	if err := s.InjectedFault(ctx, o, models.StepConfigure); err != nil {
		return err
	}
	s.log.DebugContext(ctx, "simulator: device configured", "operation", o.OperationID, "ip_block", c.IP.CIDR, "vlan", c.VLANID)
	return nil
}

// circuitID derives the circuit id from the operation, so that activating
// twice yields the same circuit.
func circuitID(o Order) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(o.OperationID))
	return fmt.Sprintf("CKT-%012X", h.Sum64()&0xFFFFFFFFFFFF)
}

// Activate turns the circuit up and records its turn-up test as the
// service's first telemetry sample.
func (s *Simulator) Activate(ctx context.Context, o Order) (Circuit, error) {
	if err := s.wait(ctx); err != nil {
		return Circuit{}, err
	}
	if err := s.InjectedFault(ctx, o, models.StepActivate); err != nil {
		return Circuit{}, err
	}
	has, err := s.store.HasTelemetry(ctx, o.Scope(), o.ServiceID)
	if err != nil {
		return Circuit{}, err
	}
	if !has {
		sample := Sample(o.ServiceID, o.SLA, models.ServiceOperational, s.store.Now())
		sample.SecurityAlerts = 0
		if err := s.store.RecordTelemetry(ctx, o.Scope(), sample); err != nil {
			return Circuit{}, err
		}
	}
	return Circuit{ID: circuitID(o)}, nil
}

// Handover simulates confirming the circuit in service.
func (s *Simulator) Handover(ctx context.Context, o Order) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.InjectedFault(ctx, o, models.StepRecordService)
}

// Deactivate simulates turning the circuit down.
func (s *Simulator) Deactivate(ctx context.Context, o Order) error {
	return s.wait(ctx)
}

// Deconfigure simulates removing the device configuration.
func (s *Simulator) Deconfigure(ctx context.Context, o Order) error {
	return s.wait(ctx)
}

// Release returns the order's allocations to the inventory.
func (s *Simulator) Release(ctx context.Context, o Order, kinds ...models.AllocationKind) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	_, err := s.store.ReleaseAllocations(ctx, o.Scope(), o.OperationID, kinds...)
	return err
}

// Sample returns a plausible measurement of a service in status at time at.
// The values depend only on the service, its SLA, its status and the time
// (a seeded generator), so the same inputs give the same sample.
func Sample(serviceID, sla string, status models.ServiceStatus, at time.Time) *models.TelemetrySample {
	h := fnv.New64a()
	_, _ = h.Write([]byte(serviceID))
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(at.Unix())))
	target := models.SLATargets(sla)
	hour := float64(at.UTC().Hour()) + float64(at.UTC().Minute())/60
	daily := (math.Sin((hour-9)/24*2*math.Pi) + 1) / 2 // busiest mid-afternoon
	smp := &models.TelemetrySample{
		ServiceID:      serviceID,
		At:             at.UTC(),
		Up:             true,
		LatencyMs:      round2(target.LatencyMs * (0.25 + 0.25*rng.Float64())),
		JitterMs:       round2(target.JitterMs * (0.1 + 0.2*rng.Float64())),
		PacketLossPct:  round3(target.PacketLossPct * 0.1 * rng.Float64()),
		UtilizationPct: round2(15 + 55*daily + 10*rng.Float64()),
	}
	if rng.IntN(1000) == 0 {
		smp.SecurityAlerts = 1
	}
	switch status {
	case models.ServiceDown:
		smp.Up, smp.LatencyMs, smp.JitterMs, smp.PacketLossPct, smp.UtilizationPct = false, 0, 0, 100, 0
	case models.ServiceDegraded:
		smp.LatencyMs = round2(target.LatencyMs * (1.2 + rng.Float64()))
		smp.JitterMs = round2(target.JitterMs * (1.2 + rng.Float64()))
		smp.PacketLossPct = round3(target.PacketLossPct * (1.5 + 2*rng.Float64()))
	case models.ServiceMaintenance:
		smp.UtilizationPct = round2(smp.UtilizationPct / 4)
	}
	return smp
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// monitoredStatuses returns the statuses of services the network measures.
func monitoredStatuses() []models.ServiceStatus {
	return []models.ServiceStatus{models.ServiceOperational, models.ServiceDegraded, models.ServiceDown, models.ServiceMaintenance}
}

// RecordTelemetry measures every monitored service of every tenant once, at
// time at, and returns how many samples it wrote.
func (s *Simulator) RecordTelemetry(ctx context.Context, at time.Time) (int, error) {
	db := s.store.In(ctx, models.SystemScope())
	var services []models.Service
	if err := db.Where("status IN ?", monitoredStatuses()).Order("id").Find(&services).Error; err != nil {
		return 0, models.Internal(err)
	}
	written := 0
	for start := 0; start < len(services); start += 200 {
		batch := services[start:min(start+200, len(services))]
		samples := make([]*models.TelemetrySample, len(batch))
		for i, svc := range batch {
			samples[i] = Sample(svc.ID, svc.SLA, svc.Status, at)
			samples[i].Tenant = svc.Tenant
		}
		if err := s.store.RecordTelemetry(ctx, models.SystemScope(), samples...); err != nil {
			return written, err
		}
		written += len(samples)
	}
	return written, nil
}

// RunTelemetry records telemetry every interval until ctx ends (the worker
// process runs it).
func (s *Simulator) RunTelemetry(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if n, err := s.RecordTelemetry(ctx, now.UTC()); err != nil {
				s.log.ErrorContext(ctx, "simulator: recording telemetry failed", "error", err)
			} else {
				s.log.DebugContext(ctx, "simulator: telemetry recorded", "samples", n)
			}
		}
	}
}
