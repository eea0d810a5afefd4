// Package simulator is the platform's southbound side: the interface through
// which activities act on the network (Southbound), and a simulator of it
// that keeps its inventory (capacity per location, IP blocks, VLAN ids) in the
// database through models, takes a configurable time per step, fails on
// demand in the sandbox (docs/sandbox.md), and produces the telemetry that
// service status is computed from.
package simulator

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
)

// Order is what the network needs to know about one operation on a
// service: provisioning, change or decommission. For an allocation in a
// pool, LocationID is the location (or region), ServiceType the pool and
// BandwidthMbps the amount (Mbit/s, or units of a compute pool); Slot tells
// the allocations of one operation apart (one per site, region or number).
type Order struct {
	OperationID    string
	ServiceID      string
	OrganizationID string
	Environment    models.Environment
	Kind           string
	Name           string
	LocationID     string
	ServiceType    string
	TemplateID     string
	BandwidthMbps  int
	SLA            string
	Quantity       int
	Slot           int
	Replaces       bool   // scaling: the service's current capacity counts as free
	Reason         string // decommission: the reason given (a sandbox magic value may be one)
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
	Release(ctx context.Context, o Order, kinds ...catalog.AllocationKind) error

	// ReserveCompute holds units of a compute pool in a region. Errors:
	// SERVICE_UNAVAILABLE_AT_LOCATION, PROVISIONING_FAILED.
	ReserveCompute(ctx context.Context, o Order) error
	// AssignNumbers assigns phone numbers of a type (and area code) to the
	// slots of the order, and returns them in slot order. Errors:
	// SERVICE_UNAVAILABLE_AT_LOCATION (not enough numbers), PROVISIONING_FAILED.
	AssignNumbers(ctx context.Context, o Order, typ, areaCode string, slots []int) ([]string, error)
	// Deploy builds what a service runs on (virtual machines, application
	// environments, model endpoints, a PBX tenant...) and describes it.
	// Errors: PROVISIONING_FAILED.
	Deploy(ctx context.Context, o Order, items []services.DeployItem) (map[string]any, error)
	// ReleaseService returns every allocation of the order's service, of any
	// operation (a decommission).
	ReleaseService(ctx context.Context, o Order) error
	// MigrateData copies the data of the order's service to the destination
	// service and records what it copied. Errors: PROVISIONING_FAILED.
	MigrateData(ctx context.Context, o Order, destination string) (*services.DataMigration, error)
	// VerifyMigration compares what the destination received with the
	// source. Errors: PROVISIONING_FAILED (mismatch).
	VerifyMigration(ctx context.Context, o Order) error
	// RollbackMigration removes the migrated data from the destination.
	RollbackMigration(ctx context.Context, o Order) error
}

// DefaultIncidentRate is the chance, per live service and measurement of
// RunTelemetry, that the service degrades (a quarter of such incidents take
// it down instead).
const DefaultIncidentRate = 1.0 / 5000

// Options configure the simulator.
type Options struct {
	StepDelay time.Duration // time each network call takes (SIMULATOR_STEP_DELAY)
	Logger    *slog.Logger
	// IncidentRate is the chance of a random incident per live service and
	// measurement in RunTelemetry: 0 means DefaultIncidentRate, a negative
	// value none. RecordTelemetry alone raises only the sandbox's magic ones.
	IncidentRate float64
}

// Simulator is the Southbound of the platform: a simulated network whose
// inventory lives in the database.
type Simulator struct {
	store        *models.Store
	telemetry    *telemetry.Store
	catalog      *catalog.Store
	services     *services.Store
	delay        time.Duration
	log          *slog.Logger
	incidentRate float64
}

// New returns a simulator over store.
func New(store *models.Store, opts Options) *Simulator {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	rate := opts.IncidentRate
	switch {
	case rate == 0:
		rate = DefaultIncidentRate
	case rate < 0:
		rate = 0
	}
	return &Simulator{store: store, telemetry: telemetry.NewStore(store), catalog: catalog.NewStore(store), services: services.NewStore(store), delay: opts.StepDelay, log: log, incidentRate: rate}
}

var _ Southbound = (*Simulator)(nil)

// HeartbeatInterval is how often a network call made by a Temporal activity
// records a heartbeat while it waits (the SDK batches them to its heartbeat
// timeout), so that a step whose worker stopped is retried elsewhere soon.
const HeartbeatInterval = time.Second

// wait takes the configured step time, or returns early with ctx's error.
// Called from an activity, it heartbeats every HeartbeatInterval meanwhile
// (unless ctx is WithoutHeartbeats).
func (s *Simulator) wait(ctx context.Context) error {
	if s.delay <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	var beat <-chan time.Time
	if activity.IsActivity(ctx) && ctx.Value(noHeartbeatsKey{}) == nil {
		activity.RecordHeartbeat(ctx)
		tick := time.NewTicker(HeartbeatInterval)
		defer tick.Stop()
		beat = tick.C
	}
	for {
		select {
		case <-t.C:
			return nil
		case <-beat:
			activity.RecordHeartbeat(ctx)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Simulator) request(o Order) catalog.AllocationRequest {
	return catalog.AllocationRequest{OperationID: o.OperationID, ServiceID: o.ServiceID, LocationID: o.LocationID, ServiceType: o.ServiceType,
		Mbps: o.BandwidthMbps, Slot: o.Slot, Replaces: o.Replaces}
}

// CheckFeasibility simulates the network's feasibility check.
func (s *Simulator) CheckFeasibility(ctx context.Context, o Order) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.InjectedFault(ctx, o, operations.StepValidate)
}

// ReserveCapacity holds the order's bandwidth in the location's inventory.
func (s *Simulator) ReserveCapacity(ctx context.Context, o Order) (Reservation, error) {
	if err := s.wait(ctx); err != nil {
		return Reservation{}, err
	}
	if err := s.InjectedFault(ctx, o, operations.StepReserveCapacity); err != nil {
		return Reservation{}, err
	}
	a, err := s.catalog.ReserveCapacity(ctx, o.Scope(), s.request(o))
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
	a, err := s.catalog.AllocateIPBlock(ctx, o.Scope(), s.request(o))
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
	a, err := s.catalog.AllocateVLAN(ctx, o.Scope(), s.request(o))
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
	if err := s.InjectedFault(ctx, o, operations.StepConfigure); err != nil {
		return err
	}
	s.log.DebugContext(ctx, "simulator: device configured", "operation", o.OperationID, "ip_block", c.IP.CIDR, "vlan", c.VLANID)
	return nil
}

// circuitID derives the service's reference (a circuit for connectivity)
// from the operation, so that activating twice yields the same one; its
// prefix is the kind's (CKT, NET, PBX, ...).
func circuitID(o Order) string {
	prefix := "CKT"
	if p, ok := services.LookupKind(o.Kind); ok && p.Reference != "" {
		prefix = p.Reference
	}
	return fmt.Sprintf("%s-%012X", prefix, hashOf(o.OperationID)&0xFFFFFFFFFFFF)
}

func hashOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// Activate turns the circuit up and records its turn-up test as the
// service's first telemetry sample.
func (s *Simulator) Activate(ctx context.Context, o Order) (Circuit, error) {
	if err := s.wait(ctx); err != nil {
		return Circuit{}, err
	}
	if err := s.InjectedFault(ctx, o, operations.StepActivate); err != nil {
		return Circuit{}, err
	}
	has, err := s.telemetry.HasTelemetry(ctx, o.Scope(), o.ServiceID)
	if err != nil {
		return Circuit{}, err
	}
	if !has {
		sample := Sample(o.ServiceID, o.SLA, services.ServiceOperational, s.store.Now())
		sample.SecurityAlerts = 0
		sample.ThroughputMbps = round2(float64(o.BandwidthMbps) * sample.UtilizationPct / 100)
		if err := s.telemetry.RecordTelemetry(ctx, o.Scope(), sample); err != nil {
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
	return s.InjectedFault(ctx, o, operations.StepRecordService)
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
func (s *Simulator) Release(ctx context.Context, o Order, kinds ...catalog.AllocationKind) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	_, err := s.catalog.ReleaseAllocations(ctx, o.Scope(), o.OperationID, kinds...)
	return err
}

// Sample returns a plausible measurement of a service in status at time at.
// The values depend only on the service, its SLA, its status and the time
// (a seeded generator), so the same inputs give the same sample.
func Sample(serviceID, sla string, status services.ServiceStatus, at time.Time) *telemetry.TelemetrySample {
	h := fnv.New64a()
	_, _ = h.Write([]byte(serviceID))
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(at.Unix())))
	target := telemetry.SLATargets(sla)
	hour := float64(at.UTC().Hour()) + float64(at.UTC().Minute())/60
	daily := (math.Sin((hour-9)/24*2*math.Pi) + 1) / 2 // busiest mid-afternoon
	smp := &telemetry.TelemetrySample{
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
	case services.ServiceDown:
		smp.Up, smp.LatencyMs, smp.JitterMs, smp.PacketLossPct, smp.UtilizationPct = false, 0, 0, 100, 0
	case services.ServiceDegraded:
		smp.LatencyMs = round2(target.LatencyMs * (1.2 + rng.Float64()))
		smp.JitterMs = round2(target.JitterMs * (1.2 + rng.Float64()))
		smp.PacketLossPct = round3(target.PacketLossPct * (1.5 + 2*rng.Float64()))
	case services.ServiceMaintenance:
		smp.UtilizationPct = round2(smp.UtilizationPct / 4)
	}
	return smp
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// ReserveCompute holds the order's units of a compute pool in its region.
func (s *Simulator) ReserveCompute(ctx context.Context, o Order) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	if err := s.InjectedFault(ctx, o, operations.StepReserveCapacity); err != nil {
		return err
	}
	_, err := s.catalog.ReserveUnits(ctx, o.Scope(), s.request(o))
	return err
}

// AssignNumbers assigns the lowest free numbers of the blocks to the slots.
func (s *Simulator) AssignNumbers(ctx context.Context, o Order, typ, areaCode string, slots []int) ([]string, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	if err := s.InjectedFault(ctx, o, operations.StepReserveCapacity); err != nil {
		return nil, err
	}
	allocs, err := s.catalog.AllocateNumbers(ctx, o.Scope(), s.request(o), typ, areaCode, slots)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(allocs))
	for i, a := range allocs {
		out[i] = a.Reference
	}
	return out, nil
}

// Deploy builds the service's platform: every id, address and host name is
// derived from the operation, so deploying twice describes the same things.
func (s *Simulator) Deploy(ctx context.Context, o Order, items []services.DeployItem) (map[string]any, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	if err := s.InjectedFault(ctx, o, operations.StepConfigure); err != nil {
		return nil, err
	}
	short := fmt.Sprintf("%08x", hashOf(o.OperationID)&0xFFFFFFFF)
	out := map[string]any{}
	var instances, lbs, envs, endpoints []any
	for _, it := range items {
		for _, region := range strings.Split(orDefault(it.Region, "default"), ",") {
			for n := range max(it.Count, 1) {
				id := fmt.Sprintf("%s-%08x", deployPrefix(it.Type), hashOf(o.OperationID, it.Name, region, fmt.Sprint(n))&0xFFFFFFFF)
				switch it.Type {
				case "virtual_machine":
					h := hashOf(id)
					instances = append(instances, map[string]any{"id": id, "name": fmt.Sprintf("%s-%d", it.Name, n+1), "region": region,
						"private_ip": fmt.Sprintf("10.%d.%d.%d", h>>16&0xFF, h>>8&0xFF, 4+h&0xF7), "spec": it.Spec, "status": "running"})
				case "load_balancer":
					lbs = append(lbs, map[string]any{"id": id, "region": region, "hostname": fmt.Sprintf("%s.%s.lb.platform.example", id, region), "spec": it.Spec})
				case "application_environment":
					envs = append(envs, map[string]any{"id": id, "name": it.Name, "region": region, "url": fmt.Sprintf("https://%s-%s.apps.platform.example", it.Name, short), "spec": it.Spec})
				default:
					endpoints = append(endpoints, map[string]any{"id": id, "name": it.Name, "type": it.Type, "region": region,
						"url": fmt.Sprintf("https://%s.%s.ai.platform.example/v1/%s", short, region, it.Name), "spec": it.Spec})
				}
			}
		}
	}
	if instances != nil {
		out["instances"] = instances
	}
	if lbs != nil {
		out["load_balancers"] = lbs
	}
	if envs != nil {
		out["environments"] = envs
	}
	if endpoints != nil {
		out["endpoints"] = endpoints
	}
	switch o.Kind {
	case services.KindPhoneSystem:
		out["pbx"] = map[string]any{"tenant_id": "pbx-" + short, "sip_domain": short + ".voice.platform.example",
			"extensions": fmt.Sprintf("1000-%d", 1000+max(o.Quantity, 1)-1)}
	case services.KindContactCenter:
		out["contact_center"] = map[string]any{"tenant_id": "ccx-" + short, "agent_seats": max(o.Quantity, 1),
			"agent_portal": fmt.Sprintf("https://%s.cc.platform.example", short)}
	case services.KindManagedSecurity:
		out["soc"] = map[string]any{"tenant_id": "soc-" + short, "log_ingestion_endpoint": fmt.Sprintf("https://ingest-%s.soc.platform.example", short)}
	}
	return out, nil
}

func deployPrefix(typ string) string {
	switch typ {
	case "virtual_machine":
		return "vm"
	case "load_balancer":
		return "lb"
	case "application_environment":
		return "env"
	case "model_endpoint":
		return "mdl"
	}
	return "res"
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// ReleaseService returns every allocation of the service to the inventory.
func (s *Simulator) ReleaseService(ctx context.Context, o Order) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	_, err := s.catalog.ReleaseServiceAllocations(ctx, o.Scope(), o.ServiceID, "")
	return err
}

// MagicFailVerification is the decommission reason that makes the
// verification of its data migration fail, in the sandbox (docs/sandbox.md).
const MagicFailVerification = "sandbox-fail-verification"

// MigrateData copies the service's data to destination: its settings, its
// features and resources, and what it stored (1 KB per MB it carried).
// The copy is recorded once per operation.
func (s *Simulator) MigrateData(ctx context.Context, o Order, destination string) (*services.DataMigration, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	if err := s.InjectedFault(ctx, o, services.StepMigrateData); err != nil {
		return nil, err
	}
	scope := o.Scope()
	p := &models.Principal{OrganizationID: o.OrganizationID, Environment: o.Environment, Permissions: []string{"*"}}
	svc, err := s.services.GetService(ctx, p, o.ServiceID)
	if err != nil {
		return nil, err
	}
	var stored float64
	if err := s.store.In(ctx, scope).Model(&telemetry.TelemetrySample{}).Where("service_id = ?", o.ServiceID).
		Select("COALESCE(SUM(data_mb), 0)").Scan(&stored).Error; err != nil {
		return nil, models.Internal(err)
	}
	allocs, err := s.catalog.ServiceAllocations(ctx, scope, o.ServiceID)
	if err != nil {
		return nil, err
	}
	items := len(svc.Configuration) + len(svc.Features) + len(allocs) + len(svc.Resources) + 1
	bytes := int64(math.Round(stored*1024)) + int64(items)*4096
	sum := fmt.Sprintf("%016x%016x", hashOf(svc.ID, fmt.Sprint(items), fmt.Sprint(bytes)), hashOf(destination, svc.ID))
	dest := sum
	if o.Environment == models.EnvTest && o.Reason == MagicFailVerification {
		dest = fmt.Sprintf("%016x%016x", hashOf("corrupted", sum), hashOf(destination))
	}
	return s.services.RecordMigration(ctx, scope, &services.DataMigration{OperationID: o.OperationID, SourceServiceID: o.ServiceID,
		DestinationServiceID: destination, Items: items, Bytes: bytes, SourceChecksum: sum, DestinationChecksum: dest, Status: services.MigrationCopied})
}

// VerifyMigration compares the checksums of the copy.
func (s *Simulator) VerifyMigration(ctx context.Context, o Order) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	m, err := s.services.DataMigrationOf(ctx, o.Scope(), o.OperationID)
	if err != nil {
		return err
	}
	if m.SourceChecksum != m.DestinationChecksum {
		if err := s.services.SetMigrationStatus(ctx, o.Scope(), o.OperationID, services.MigrationMismatch); err != nil {
			return err
		}
		e := models.Errorf(models.CodeProvisioningFailed, "the data received by %s does not match the source (checksum %s, expected %s)",
			m.DestinationServiceID, m.DestinationChecksum[:12], m.SourceChecksum[:12]).WithDetail("destination", m.DestinationServiceID)
		if o.Environment == models.EnvTest && o.Reason == MagicFailVerification {
			e.WithDetail("sandbox", true).WithDetail("magic_value", "reason "+MagicFailVerification)
		}
		return e
	}
	return s.services.SetMigrationStatus(ctx, o.Scope(), o.OperationID, services.MigrationVerified)
}

// RollbackMigration removes the copied data from the destination.
func (s *Simulator) RollbackMigration(ctx context.Context, o Order) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	err := s.services.SetMigrationStatus(ctx, o.Scope(), o.OperationID, services.MigrationRolledBack)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil
	}
	return err
}

// nominalMbps is the traffic a service carries at full utilisation.
func nominalMbps(svc *services.Service) float64 {
	switch svc.Kind {
	case services.KindPhoneSystem:
		return 0.1 * float64(max(svc.Quantity, 1))
	case services.KindContactCenter:
		return 0.2 * float64(max(svc.Quantity, 1))
	case services.KindCloudInfrastructure:
		return 1000
	case services.KindCloudPlatform:
		return 500
	case services.KindAIPlatform:
		return 200
	case services.KindManagedSecurity:
		return 50
	}
	return float64(svc.BandwidthMbps)
}

// dailyCurve is 0 at night and 1 in mid-afternoon.
func dailyCurve(at time.Time) float64 {
	hour := float64(at.UTC().Hour()) + float64(at.UTC().Minute())/60
	return (math.Sin((hour-9)/24*2*math.Pi) + 1) / 2
}

// SampleFor returns a measurement of svc at time at covering the interval
// since the previous one: Sample's values, plus the traffic (throughput and
// data transferred, from its nominal rate and utilisation) and, for voice,
// the calls and their quality. Like Sample it depends only on its inputs.
func SampleFor(svc *services.Service, at time.Time, interval time.Duration) *telemetry.TelemetrySample {
	smp := Sample(svc.ID, svc.SLA, svc.Status, at)
	smp.Tenant = svc.Tenant
	rng := rand.New(rand.NewPCG(hashOf(svc.ID, "traffic"), uint64(at.Unix())))
	if smp.Up {
		smp.ThroughputMbps = round2(nominalMbps(svc) * smp.UtilizationPct / 100)
		smp.DataMB = round2(smp.ThroughputMbps * interval.Seconds() / 8)
	}
	if (svc.Kind == services.KindPhoneSystem || svc.Kind == services.KindContactCenter) && smp.Up {
		perMinute := 0.05
		if svc.Kind == services.KindContactCenter {
			perMinute = 0.4
		}
		smp.Calls = int(math.Round(float64(max(svc.Quantity, 1)) * perMinute * interval.Minutes() * (0.2 + dailyCurve(at)) * (0.5 + rng.Float64())))
		if smp.Calls > 0 {
			smp.CallQuality = round2(4.1 + 0.3*rng.Float64())
			if svc.Status == services.ServiceDegraded {
				smp.CallQuality = round2(3.0 + 0.5*rng.Float64())
			}
		}
	}
	return smp
}

// Magic service names of the sandbox that make the network report
// incidents at every measurement: the service goes down (or degrades) and
// comes back at the next one, in turn (docs/sandbox.md).
const (
	MagicIncidentDown     = "sandbox-incident-down"
	MagicIncidentDegraded = "sandbox-incident-degraded"
)

// RecordTelemetry measures every monitored service of every tenant once, at
// time at, covering the minute before, and returns how many samples it
// wrote. In the sandbox, services with a magic incident name change state
// first (see MagicIncidentDown).
func (s *Simulator) RecordTelemetry(ctx context.Context, at time.Time) (int, error) {
	return s.measure(ctx, at, time.Minute, false)
}

// measure applies the incidents of this measurement (magic ones, and random
// ones when random is set), then records a sample of every monitored service.
func (s *Simulator) measure(ctx context.Context, at time.Time, interval time.Duration, random bool) (int, error) {
	svcs, err := s.telemetry.MonitoredServices(ctx)
	if err != nil {
		return 0, err
	}
	for i := range svcs {
		svc := &svcs[i]
		moved, err := s.incidents(ctx, svc, at, random)
		if err != nil {
			s.log.ErrorContext(ctx, "simulator: incident handling failed", "service", svc.ID, "error", err)
			continue
		}
		if moved != "" {
			svc.Status = moved
		}
	}
	written := 0
	for start := 0; start < len(svcs); start += 200 {
		batch := svcs[start:min(start+200, len(svcs))]
		samples := make([]*telemetry.TelemetrySample, len(batch))
		for i := range batch {
			samples[i] = SampleFor(&batch[i], at, interval)
		}
		if err := s.telemetry.RecordTelemetry(ctx, models.SystemScope(), samples...); err != nil {
			return written, err
		}
		written += len(samples)
	}
	return written, nil
}

// incidents decides whether svc goes down, degrades or recovers at this
// measurement, records it, and returns its new status ("" when unchanged).
func (s *Simulator) incidents(ctx context.Context, svc *services.Service, at time.Time, random bool) (services.ServiceStatus, error) {
	scope := models.TenantScope(svc.OrganizationID, svc.Environment)
	magic := ""
	if svc.Environment == models.EnvTest {
		switch svc.Name {
		case MagicIncidentDown:
			magic = telemetry.IncidentDown
		case MagicIncidentDegraded:
			magic = telemetry.IncidentDegraded
		}
	}
	rng := rand.New(rand.NewPCG(hashOf(svc.ID, "incident"), uint64(at.Unix())))
	switch {
	case svc.Status == services.ServiceDown || svc.Status == services.ServiceDegraded:
		if magic == "" && !(random && svc.Environment == models.EnvLive && rng.IntN(3) == 0) {
			return "", nil
		}
		inc, err := s.telemetry.ResolveIncident(ctx, scope, svc.ID, at)
		if err != nil || inc == nil {
			return "", err
		}
		return services.ServiceOperational, nil
	case svc.Status != services.ServiceOperational:
		return "", nil
	}
	kind := magic
	if kind == "" && random && svc.Environment == models.EnvLive && rng.Float64() < s.incidentRate {
		kind = telemetry.IncidentDegraded
		if rng.IntN(4) == 0 {
			kind = telemetry.IncidentDown
		}
	}
	if kind == "" {
		return "", nil
	}
	status := services.ServiceDegraded
	cause := "latency and packet loss above the SLA's targets"
	if kind == telemetry.IncidentDown {
		status, cause = services.ServiceDown, "loss of signal on the access circuit"
	}
	if magic != "" {
		cause += " (sandbox magic value: name " + svc.Name + ")"
	}
	smp := Sample(svc.ID, svc.SLA, status, at)
	metrics := map[string]any{"latency_ms": smp.LatencyMs, "jitter_ms": smp.JitterMs, "packet_loss": smp.PacketLossPct, "up": smp.Up}
	inc, err := s.telemetry.RaiseIncident(ctx, scope, svc.ID, kind, cause, metrics, at)
	if err != nil || inc == nil {
		return "", err
	}
	return status, nil
}

// Tick is one measurement of RunTelemetry at time at covering interval:
// random incidents on live services (at the simulator's incident rate),
// the sandbox's magic ones, then a sample of every monitored service. It
// returns how many samples it wrote.
func (s *Simulator) Tick(ctx context.Context, at time.Time, interval time.Duration) (int, error) {
	return s.measure(ctx, at, interval, s.incidentRate > 0)
}

// RunTelemetry records telemetry every interval until ctx ends (the worker
// process runs it), with random incidents on live services (see Tick).
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
			if n, err := s.Tick(ctx, now.UTC(), interval); err != nil {
				s.log.ErrorContext(ctx, "simulator: recording telemetry failed", "error", err)
			} else {
				s.log.DebugContext(ctx, "simulator: telemetry recorded", "samples", n)
			}
		}
	}
}

type noHeartbeatsKey struct{}

// WithoutHeartbeats returns ctx marked so that the simulator's network
// calls do not heartbeat: for a caller that heartbeats itself, with details
// (a bulk batch's progress) that an empty heartbeat would replace.
func WithoutHeartbeats(ctx context.Context) context.Context {
	return context.WithValue(ctx, noHeartbeatsKey{}, true)
}
