package catalog

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// LocationCapacity is the bandwidth a location has for one service type in
// one environment, and (live) how much of it is allocated. It belongs to the
// provider, not to a tenant. Live capacity is shared by every organization;
// in the sandbox each organization has the whole capacity to itself (what it
// holds is summed from its own allocations), so one tenant's tests never
// change another's results.
type LocationCapacity struct {
	LocationID    string             `gorm:"primaryKey;size:60"`
	ServiceType   string             `gorm:"primaryKey;size:40"`
	Environment   models.Environment `gorm:"primaryKey;size:8"`
	CapacityMbps  int                `gorm:"not null"`
	AllocatedMbps int                `gorm:"not null;default:0"`
	UpdatedAt     time.Time
}

// AllocationKind is what an inventory allocation holds.
type AllocationKind string

// Allocation kinds: capacity (bandwidth at a location, or compute units in a
// region), a public IP block, a VLAN id, a phone number.
const (
	AllocCapacity    AllocationKind = "capacity"
	AllocIPBlock     AllocationKind = "ip_block"
	AllocVLAN        AllocationKind = "vlan"
	AllocPhoneNumber AllocationKind = "phone_number"
)

// InventoryAllocation is one resource held for an operation. An operation
// holds at most one allocation of each kind in each slot (unique
// operation_id + kind + slot: a network takes one capacity slot per site, a
// phone system one phone_number slot per number), so a retried activity
// finds the allocation it already made instead of making a second one. A
// resource (IP block, VLAN at a location, phone number) is held by at most
// one active allocation (unique resource_key among unreleased rows).
// AmountMbps is the amount in the capacity's unit: Mbit/s at a location,
// vCPUs or GPUs in a region.
type InventoryAllocation struct {
	ID uint64 `gorm:"primaryKey;autoIncrement"`
	// The tenant (as models.Tenant, spelt out so that the active
	// allocations' indexes can hold it: the inventory queries filter on it).
	OrganizationID string             `gorm:"size:40;not null;index;index:idx_allocation_active_pool,priority:4,where:released_at IS NULL;index:idx_allocation_active_index,priority:3,where:released_at IS NULL" json:"-"`
	Environment    models.Environment `gorm:"size:8;not null;index;index:idx_allocation_active_pool,priority:5,where:released_at IS NULL;index:idx_allocation_active_index,priority:2,where:released_at IS NULL" json:"-"`
	OperationID    string             `gorm:"size:64;not null;uniqueIndex:idx_allocation_op_kind_slot"`
	Kind           AllocationKind     `gorm:"size:20;not null;uniqueIndex:idx_allocation_op_kind_slot;index:idx_allocation_active_pool,priority:1,where:released_at IS NULL;index:idx_allocation_active_index,priority:1,where:released_at IS NULL"`
	Slot           int                `gorm:"not null;default:0;uniqueIndex:idx_allocation_op_kind_slot"`
	Reference      string             `gorm:"size:60"`
	ServiceID      string             `gorm:"size:40;not null;index"`
	LocationID     string             `gorm:"size:60;index:idx_allocation_active_pool,priority:2,where:released_at IS NULL;index:idx_allocation_active_index,priority:4,where:released_at IS NULL"`
	ServiceType    string             `gorm:"size:40;index:idx_allocation_active_pool,priority:3,where:released_at IS NULL"`
	AmountMbps     int                `gorm:"not null;default:0;index:idx_allocation_active_pool,priority:6,where:released_at IS NULL"`
	ResourceKey    *string            `gorm:"size:160;uniqueIndex:idx_allocation_active_resource,where:released_at IS NULL"`
	ResourceIndex  int                `gorm:"not null;default:0;index:idx_allocation_active_index,priority:5,where:released_at IS NULL"`
	CIDR           string             `gorm:"size:43"`
	Gateway        string             `gorm:"size:39"`
	VLANID         int                `gorm:"not null;default:0"`
	ReleasedAt     *time.Time         `gorm:"index:idx_allocation_active_pool,priority:7,where:released_at IS NULL;index:idx_allocation_active_index,priority:6,where:released_at IS NULL"` // last in the indexes: they then hold every column the queries read
	CreatedAt      time.Time
}

// AllocationRequest names the operation (and service) an allocation is for,
// its slot, where it is made and how much. ServiceType is the capacity pool
// (a service type at a location, vcpu or gpu in a region); Mbps the amount
// in the pool's unit. Replaces (scaling) counts what the service already
// holds in the pool, under other operations, as free: the new allocation
// replaces it.
type AllocationRequest struct {
	OperationID string
	ServiceID   string
	LocationID  string
	ServiceType string
	Mbps        int
	Slot        int
	Replaces    bool
}

// VLAN ids handed out per location, and the IP pools per environment
// (RFC 6598 shared space for live, RFC 2544 benchmark space for the sandbox):
// each service gets a /29.
const (
	vlanFirst   = 100
	vlanLast    = 4000
	ipBlockBits = 29
)

func ipPool(env models.Environment) netip.Prefix {
	if env == models.EnvTest {
		return netip.MustParsePrefix("198.18.0.0/15")
	}
	return netip.MustParsePrefix("100.64.0.0/10")
}

func addToAddr(a netip.Addr, n uint32) netip.Addr {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += n
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// ipBlock returns the index-th /29 of env's pool and its gateway (first host).
func ipBlock(env models.Environment, index int) (cidr, gateway string, ok bool) {
	pool := ipPool(env)
	blocks := 1 << (ipBlockBits - pool.Bits())
	if index < 0 || index >= blocks {
		return "", "", false
	}
	base := addToAddr(pool.Addr(), uint32(index)<<(32-ipBlockBits))
	return netip.PrefixFrom(base, ipBlockBits).String(), addToAddr(base, 1).String(), true
}

// maxAllocationAttempts bounds the retries when a concurrent allocation took
// the same resource first.
const maxAllocationAttempts = 8

// allocate runs fn in a transaction of scope, unless the operation already
// holds an allocation of kind, which it returns instead (idempotency). A
// unique violation (a concurrent allocation of the same operation or
// resource) is retried. Errors: fn's errors, INVALID_STATE_TRANSITION when
// the allocation was already released.
func (s *Store) allocate(ctx context.Context, scope models.Scope, opID string, kind AllocationKind, slot int, fn func(tx *gorm.DB) (*InventoryAllocation, error)) (*InventoryAllocation, error) {
	if scope.System || scope.AllOrganizations || !scope.Environment.Valid() {
		return nil, models.Internal(fmt.Errorf("allocations need a tenant scope"))
	}
	for attempt := 0; ; attempt++ {
		var out *InventoryAllocation
		err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
			var existing InventoryAllocation
			err := tx.Where("operation_id = ? AND kind = ? AND slot = ?", opID, kind, slot).Take(&existing).Error
			if err == nil {
				if existing.ReleasedAt != nil {
					return models.Errorf(models.CodeInvalidStateTransition, "the %s of operation %s was already released", kind, opID)
				}
				out = &existing
				return nil
			}
			if !errors.Is(err, gorm.ErrRecordNotFound) {
				return err
			}
			out, err = fn(tx)
			if err != nil {
				return err
			}
			out.Slot = slot
			return tx.Create(out).Error
		})
		if err != nil && models.IsUniqueViolation(err) && attempt < maxAllocationAttempts {
			continue
		}
		if err != nil {
			return nil, models.DBErr(err)
		}
		return out, nil
	}
}

// ReserveCapacity holds req.Mbps of the location's capacity for the service
// type, once per operation and slot: calling it again for the same
// operation and slot returns the first reservation. Errors:
// SERVICE_UNAVAILABLE_AT_LOCATION (the location does not offer the type),
// INSUFFICIENT_BANDWIDTH, INVALID_STATE_TRANSITION (already released).
func (s *Store) ReserveCapacity(ctx context.Context, scope models.Scope, req AllocationRequest) (*InventoryAllocation, error) {
	if req.Mbps <= 0 {
		return nil, models.Invalid(models.FieldIssue{Field: "bandwidth", Issue: "must be positive"})
	}
	return s.reserve(ctx, scope, req,
		func() *models.Error {
			return models.Errorf(models.CodeUnavailableAtLocation, "%s is not offered at location %s", req.ServiceType, req.LocationID).
				WithDetail("service_type", req.ServiceType).WithDetail("location", map[string]string{"location_id": req.LocationID}).
				WithDetail("location_id", req.LocationID).WithDetail("alternatives", []Alternative{})
		},
		func(left int) *models.Error {
			return models.Errorf(models.CodeInsufficientBandwidth, "%s at location %s has %s left; %s was requested", req.ServiceType, req.LocationID,
				FormatBandwidth(left), FormatBandwidth(req.Mbps)).
				WithDetail("requested", FormatBandwidth(req.Mbps)).WithDetail("available", FormatBandwidth(left))
		})
}

// ReserveUnits holds req.Mbps units of a compute pool (req.ServiceType: vcpu
// or gpu) in a region (req.LocationID), once per operation and slot.
// Errors: SERVICE_UNAVAILABLE_AT_LOCATION (the region does not offer the
// pool, or has too little left; see ComputeShortage), INVALID_STATE_TRANSITION
// (already released).
func (s *Store) ReserveUnits(ctx context.Context, scope models.Scope, req AllocationRequest) (*InventoryAllocation, error) {
	if req.Mbps <= 0 {
		return nil, models.Invalid(models.FieldIssue{Field: "units", Issue: "must be positive"})
	}
	alloc, err := s.reserve(ctx, scope, req,
		func() *models.Error { return ComputeShortage(req.LocationID, req.ServiceType, req.Mbps, 0, nil) },
		func(left int) *models.Error {
			return ComputeShortage(req.LocationID, req.ServiceType, req.Mbps, left, nil)
		})
	var e *models.Error
	if errors.As(err, &e) && e.Code == models.CodeUnavailableAtLocation {
		// Read once the reservation's transaction has ended: a transaction
		// never waits for a second connection of the pool.
		if alts, aerr := s.ComputeAlternatives(ctx, scope, req.ServiceType, req.LocationID, req.Mbps); aerr == nil {
			e.WithDetail("alternatives", alts)
		}
	}
	return alloc, err
}

// ComputeShortage is the error of a region without enough units of a pool:
// SERVICE_UNAVAILABLE_AT_LOCATION with spec 7's details (service_type: the
// pool; location: {region}; alternatives: the other regions offering the
// pool, see ComputeAlternatives; nil is written as none) and region,
// resource, requested, available.
func ComputeShortage(region, pool string, requested, available int, alts []Alternative) *models.Error {
	if alts == nil {
		alts = []Alternative{}
	}
	e := models.Errorf(models.CodeUnavailableAtLocation, "region %s has %d %s left; %d were requested", region, available, pool, requested)
	if available <= 0 {
		available = 0
		e = models.Errorf(models.CodeUnavailableAtLocation, "region %s has no %s capacity left", region, pool)
	}
	return e.WithDetail("service_type", pool).WithDetail("location", map[string]string{"region": region}).WithDetail("alternatives", alts).
		WithDetail("region", region).WithDetail("resource", pool).WithDetail("requested", requested).WithDetail("available", available)
}

// reserve holds capacity in a pool (see ReserveCapacity), with the errors
// missing (the pool does not exist) and short (too little left). Live
// capacity is shared by every organization; in the sandbox each
// organization has the whole capacity to itself.
func (s *Store) reserve(ctx context.Context, scope models.Scope, req AllocationRequest, missing func() *models.Error, short func(left int) *models.Error) (*InventoryAllocation, error) {
	return s.allocate(ctx, scope, req.OperationID, AllocCapacity, req.Slot, func(tx *gorm.DB) (*InventoryAllocation, error) {
		credit := 0
		if req.Replaces {
			held, err := HeldByService(tx, req.ServiceID, req.OperationID, req.LocationID, req.ServiceType)
			if err != nil {
				return nil, err
			}
			credit = held
		}
		alloc := &InventoryAllocation{
			OperationID: req.OperationID, Kind: AllocCapacity, ServiceID: req.ServiceID, LocationID: req.LocationID,
			ServiceType: req.ServiceType, AmountMbps: req.Mbps,
		}
		if scope.Environment == models.EnvTest {
			var c LocationCapacity
			err := models.Scoped(ctx, tx, models.SystemScope()).Where("location_id = ? AND service_type = ? AND environment = ?", req.LocationID, req.ServiceType, scope.Environment).Take(&c).Error
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return nil, missing()
			}
			if err != nil {
				return nil, err
			}
			held, err := heldMbps(tx, req.LocationID, req.ServiceType)
			if err != nil {
				return nil, err
			}
			if left := max(c.CapacityMbps-held+credit, 0); req.Mbps > left {
				return nil, short(left)
			}
			return alloc, nil
		}
		res := tx.Model(&LocationCapacity{}).
			Where("location_id = ? AND service_type = ? AND environment = ? AND allocated_mbps + ? <= capacity_mbps + ?", req.LocationID, req.ServiceType, scope.Environment, req.Mbps, credit).
			Update("allocated_mbps", gorm.Expr("allocated_mbps + ?", req.Mbps))
		if res.Error != nil {
			return nil, res.Error
		}
		if res.RowsAffected == 0 {
			var c LocationCapacity
			err := tx.Where("location_id = ? AND service_type = ? AND environment = ?", req.LocationID, req.ServiceType, scope.Environment).Take(&c).Error
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return nil, missing()
			}
			if err != nil {
				return nil, err
			}
			return nil, short(max(c.CapacityMbps-c.AllocatedMbps+credit, 0))
		}
		return alloc, nil
	})
}

// HeldByService sums what a service holds in a capacity pool under
// operations other than exceptOp.
func HeldByService(db *gorm.DB, serviceID, exceptOp, locationID, pool string) (int, error) {
	var held int64
	err := db.Model(&InventoryAllocation{}).
		Where("kind = ? AND service_id = ? AND operation_id <> ? AND location_id = ? AND service_type = ? AND released_at IS NULL", AllocCapacity, serviceID, exceptOp, locationID, pool).
		Select("COALESCE(SUM(amount_mbps), 0)").Scan(&held).Error
	return int(held), err
}

// heldMbps sums the active capacity allocations at a location for a service
// type that db's scope sees (in a tenant scope: the organization's).
func heldMbps(db *gorm.DB, locationID, serviceType string) (int, error) {
	var held int64
	err := db.Model(&InventoryAllocation{}).
		Where("kind = ? AND location_id = ? AND service_type = ? AND released_at IS NULL", AllocCapacity, locationID, serviceType).
		Select("COALESCE(SUM(amount_mbps), 0)").Scan(&held).Error
	return int(held), err
}

// activeQuery selects the active allocations of kind (at location, for
// VLANs and numbers) in scope's environment: of every tenant live, of the
// scope's organization in the sandbox.
func activeQuery(ctx context.Context, tx *gorm.DB, scope models.Scope, kind AllocationKind, location string) *gorm.DB {
	q := models.Scoped(ctx, tx, models.SystemScope()).Model(&InventoryAllocation{}).
		Where("environment = ? AND kind = ? AND released_at IS NULL", scope.Environment, kind)
	if scope.Environment == models.EnvTest {
		q = q.Where("organization_id = ?", scope.OrganizationID)
	}
	if location != "" {
		q = q.Where("location_id = ?", location)
	}
	return q
}

// activeIndexes returns the resource indexes of the active allocations of
// kind (at location), in order.
func activeIndexes(ctx context.Context, tx *gorm.DB, scope models.Scope, kind AllocationKind, location string) ([]int, error) {
	var used []int
	if err := activeQuery(ctx, tx, scope, kind, location).Order("resource_index").Pluck("resource_index", &used).Error; err != nil {
		return nil, err
	}
	return used, nil
}

// lowestFreeIndex returns the smallest resource index >= first that no
// active allocation of kind (at location) holds. When the indexes in use
// from first on have no gap (the usual case: they are handed out lowest
// first), one aggregate row answers; otherwise the indexes are read.
func lowestFreeIndex(ctx context.Context, tx *gorm.DB, scope models.Scope, kind AllocationKind, location string, first int) (int, error) {
	var agg struct {
		N        int64
		Low, Top *int
	}
	err := activeQuery(ctx, tx, scope, kind, location).Where("resource_index >= ?", first).
		Select("COUNT(DISTINCT resource_index) AS n, MIN(resource_index) AS low, MAX(resource_index) AS top").Scan(&agg).Error
	if err != nil {
		return 0, err
	}
	switch {
	case agg.N == 0 || *agg.Low > first: // with rows, Low and Top are set
		return first, nil
	case int64(*agg.Top-first+1) == agg.N:
		return *agg.Top + 1, nil
	}
	used, err := activeIndexes(ctx, tx, scope, kind, location)
	if err != nil {
		return 0, err
	}
	return lowestFree(used, first), nil
}

// lowestFree returns the smallest value >= first not in sorted used.
func lowestFree(used []int, first int) int {
	next := first
	for _, u := range used {
		if u < next {
			continue
		}
		if u > next {
			break
		}
		next++
	}
	return next
}

// resourceKeyPrefix is the namespace of unique resources: the environment,
// and in the sandbox also the organization (each has its own sandbox network).
func resourceKeyPrefix(scope models.Scope) string {
	if scope.Environment == models.EnvTest {
		return string(models.EnvTest) + "/" + scope.OrganizationID
	}
	return string(scope.Environment)
}

// AllocateIPBlock assigns a /29 public IP block to the operation's service,
// once per operation. Errors: DEPENDENCY_UNAVAILABLE (pool exhausted),
// INVALID_STATE_TRANSITION (already released).
func (s *Store) AllocateIPBlock(ctx context.Context, scope models.Scope, req AllocationRequest) (*InventoryAllocation, error) {
	return s.allocate(ctx, scope, req.OperationID, AllocIPBlock, req.Slot, func(tx *gorm.DB) (*InventoryAllocation, error) {
		index, err := lowestFreeIndex(ctx, tx, scope, AllocIPBlock, "", 0)
		if err != nil {
			return nil, err
		}
		cidr, gateway, ok := ipBlock(scope.Environment, index)
		if !ok {
			return nil, models.Errorf(models.CodeDependencyUnavailable, "the IP address pool is exhausted")
		}
		key := resourceKeyPrefix(scope) + "/ip/" + cidr
		return &InventoryAllocation{
			OperationID: req.OperationID, Kind: AllocIPBlock, ServiceID: req.ServiceID, LocationID: req.LocationID,
			ResourceKey: &key, ResourceIndex: index, CIDR: cidr, Gateway: gateway,
		}, nil
	})
}

// AllocateVLAN assigns a VLAN id at the operation's location, once per
// operation and slot. Errors: DEPENDENCY_UNAVAILABLE (no VLAN id left at the location),
// INVALID_STATE_TRANSITION (already released).
func (s *Store) AllocateVLAN(ctx context.Context, scope models.Scope, req AllocationRequest) (*InventoryAllocation, error) {
	return s.allocate(ctx, scope, req.OperationID, AllocVLAN, req.Slot, func(tx *gorm.DB) (*InventoryAllocation, error) {
		vlan, err := lowestFreeIndex(ctx, tx, scope, AllocVLAN, req.LocationID, vlanFirst)
		if err != nil {
			return nil, err
		}
		if vlan > vlanLast {
			return nil, models.Errorf(models.CodeDependencyUnavailable, "no VLAN id is left at location %s", req.LocationID)
		}
		key := resourceKeyPrefix(scope) + "/vlan/" + req.LocationID + "/" + strconv.Itoa(vlan)
		return &InventoryAllocation{
			OperationID: req.OperationID, Kind: AllocVLAN, ServiceID: req.ServiceID, LocationID: req.LocationID,
			ResourceKey: &key, ResourceIndex: vlan, VLANID: vlan,
		}, nil
	})
}

// ReleaseAllocations releases the operation's active allocations of the
// given kinds (every kind when none is given) and returns how many it
// released. Releasing twice releases nothing the second time.
func (s *Store) ReleaseAllocations(ctx context.Context, scope models.Scope, opID string, kinds ...AllocationKind) (int, error) {
	return s.releaseWhere(ctx, scope, kinds, "operation_id = ?", opID)
}

// ReleaseServiceAllocations releases every active allocation of a service,
// whichever operation made it, except those of exceptOp ("" for none), of
// the given kinds (all when none): what a decommission returns to the
// inventory, or a scaling's old capacity. It returns how many it released.
func (s *Store) ReleaseServiceAllocations(ctx context.Context, scope models.Scope, serviceID, exceptOp string, kinds ...AllocationKind) (int, error) {
	return s.releaseWhere(ctx, scope, kinds, "service_id = ? AND operation_id <> ?", serviceID, exceptOp)
}

func (s *Store) releaseWhere(ctx context.Context, scope models.Scope, kinds []AllocationKind, where string, args ...any) (int, error) {
	released := 0
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		n, err := s.ReleaseWhereTx(tx, kinds, where, args...)
		released = n
		return err
	})
	return released, models.DBErr(err)
}

// ReleaseWhereTx releases, inside tx, the active allocations that match
// where and are of kinds (all when none), returning live capacity to its
// location or region.
func (s *Store) ReleaseWhereTx(tx *gorm.DB, kinds []AllocationKind, where string, args ...any) (int, error) {
	released := 0
	var rows []InventoryAllocation
	if err := tx.Where(where, args...).Where("released_at IS NULL").Order("id").Find(&rows).Error; err != nil {
		return 0, err
	}
	now := s.Now()
	for _, a := range rows {
		if len(kinds) > 0 && !slices.Contains(kinds, a.Kind) {
			continue
		}
		res := tx.Model(&InventoryAllocation{}).Where("id = ? AND released_at IS NULL", a.ID).Update("released_at", now)
		if res.Error != nil {
			return released, res.Error
		}
		if res.RowsAffected == 0 {
			continue
		}
		released++
		if a.Kind == AllocCapacity && a.Environment != models.EnvTest {
			err := tx.Model(&LocationCapacity{}).
				Where("location_id = ? AND service_type = ? AND environment = ?", a.LocationID, a.ServiceType, a.Environment).
				Update("allocated_mbps", gorm.Expr("CASE WHEN allocated_mbps >= ? THEN allocated_mbps - ? ELSE 0 END", a.AmountMbps, a.AmountMbps)).Error
			if err != nil {
				return released, err
			}
		}
	}
	return released, nil
}

// ServiceAllocations returns the active allocations of a service, oldest first.
func (s *Store) ServiceAllocations(ctx context.Context, scope models.Scope, serviceID string) ([]InventoryAllocation, error) {
	var out []InventoryAllocation
	err := s.In(ctx, scope).Where("service_id = ? AND released_at IS NULL", serviceID).Order("id").Find(&out).Error
	return out, models.DBErr(err)
}

// Allocations returns every allocation (active or released) of an operation.
func (s *Store) Allocations(ctx context.Context, scope models.Scope, opID string) ([]InventoryAllocation, error) {
	var out []InventoryAllocation
	err := s.In(ctx, scope).Where("operation_id = ?", opID).Order("id").Find(&out).Error
	return out, models.DBErr(err)
}

// Capacity returns a location's capacity row for a service type in env (in
// the sandbox, AllocatedMbps stays 0: see AvailableMbps).
// Errors: NOT_FOUND.
func (s *Store) Capacity(ctx context.Context, env models.Environment, locationID, serviceType string) (*LocationCapacity, error) {
	var c LocationCapacity
	err := s.In(ctx, models.SystemScope()).Where("location_id = ? AND service_type = ? AND environment = ?", locationID, serviceType, env).Take(&c).Error
	return &c, models.NotFoundOr(err, "location capacity")
}

// AvailableMbps returns the bandwidth left at a location for a service type
// as scope sees it: live, what no organization holds; in the sandbox, what
// the scope's organization does not hold. Errors: NOT_FOUND.
func (s *Store) AvailableMbps(ctx context.Context, scope models.Scope, locationID, serviceType string) (int, error) {
	c, err := s.Capacity(ctx, scope.Environment, locationID, serviceType)
	if err != nil {
		return 0, err
	}
	return s.availableOf(ctx, scope, c)
}

func (s *Store) availableOf(ctx context.Context, scope models.Scope, c *LocationCapacity) (int, error) {
	if !sandboxTenant(scope) {
		return capacityLeft(scope, c, 0), nil
	}
	held, err := heldMbps(s.In(ctx, models.TenantScope(scope.OrganizationID, models.EnvTest)), c.LocationID, c.ServiceType)
	if err != nil {
		return 0, models.DBErr(err)
	}
	return capacityLeft(scope, c, held), nil
}

// sandboxTenant reports whether scope is one organization's sandbox, where
// what is left of a capacity is what that organization does not hold.
func sandboxTenant(scope models.Scope) bool {
	return scope.Environment == models.EnvTest && scope.OrganizationID != "" && !scope.AllOrganizations && !scope.System
}

// capacityLeft is what scope sees left of c: live, what no organization
// holds; in one organization's sandbox, what it does not hold (held); in
// the sandbox otherwise, the whole capacity.
func capacityLeft(scope models.Scope, c *LocationCapacity, held int) int {
	switch {
	case scope.Environment != models.EnvTest:
		return max(c.CapacityMbps-c.AllocatedMbps, 0)
	case !sandboxTenant(scope):
		return c.CapacityMbps
	}
	return max(c.CapacityMbps-held, 0)
}

// heldMbpsByType sums, by service type, the active capacity allocations at
// a location that db's scope sees: heldMbps for every type in one read.
func heldMbpsByType(db *gorm.DB, locationID string) (map[string]int, error) {
	var rows []struct {
		ServiceType string
		Held        int64
	}
	err := db.Model(&InventoryAllocation{}).
		Where("kind = ? AND location_id = ? AND released_at IS NULL", AllocCapacity, locationID).
		Select("service_type, COALESCE(SUM(amount_mbps), 0) AS held").Group("service_type").Scan(&rows).Error
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.ServiceType] = int(r.Held)
	}
	return out, err
}
