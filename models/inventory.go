package models

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// LocationCapacity is the bandwidth a location has for one service type in
// one environment, and (live) how much of it is allocated. It belongs to the
// provider, not to a tenant. Live capacity is shared by every organization;
// in the sandbox each organization has the whole capacity to itself (what it
// holds is summed from its own allocations), so one tenant's tests never
// change another's results.
type LocationCapacity struct {
	LocationID    string      `gorm:"primaryKey;size:60"`
	ServiceType   string      `gorm:"primaryKey;size:40"`
	Environment   Environment `gorm:"primaryKey;size:8"`
	CapacityMbps  int         `gorm:"not null"`
	AllocatedMbps int         `gorm:"not null;default:0"`
	UpdatedAt     time.Time
}

// AllocationKind is what an inventory allocation holds.
type AllocationKind string

// Allocation kinds: bandwidth at a location, a public IP block, a VLAN id.
const (
	AllocCapacity AllocationKind = "capacity"
	AllocIPBlock  AllocationKind = "ip_block"
	AllocVLAN     AllocationKind = "vlan"
)

// InventoryAllocation is one resource held for an operation. An operation
// holds at most one allocation of each kind (unique operation_id + kind), so
// a retried activity finds the allocation it already made instead of making
// a second one. A resource (IP block, VLAN at a location) is held by at most
// one active allocation (unique resource_key among unreleased rows).
type InventoryAllocation struct {
	ID uint64 `gorm:"primaryKey;autoIncrement"`
	Tenant
	OperationID   string         `gorm:"size:64;not null;uniqueIndex:idx_allocation_op_kind"`
	Kind          AllocationKind `gorm:"size:20;not null;uniqueIndex:idx_allocation_op_kind"`
	ServiceID     string         `gorm:"size:40;not null;index"`
	LocationID    string         `gorm:"size:60"`
	ServiceType   string         `gorm:"size:40"`
	AmountMbps    int            `gorm:"not null;default:0"`
	ResourceKey   *string        `gorm:"size:160;uniqueIndex:idx_allocation_active_resource,where:released_at IS NULL"`
	ResourceIndex int            `gorm:"not null;default:0"`
	CIDR          string         `gorm:"size:43"`
	Gateway       string         `gorm:"size:39"`
	VLANID        int            `gorm:"not null;default:0"`
	ReleasedAt    *time.Time
	CreatedAt     time.Time
}

// AllocationRequest names the operation (and service) an allocation is for.
type AllocationRequest struct {
	OperationID string
	ServiceID   string
	LocationID  string
	ServiceType string
	Mbps        int
}

// VLAN ids handed out per location, and the IP pools per environment
// (RFC 6598 shared space for live, RFC 2544 benchmark space for the sandbox):
// each service gets a /29.
const (
	vlanFirst   = 100
	vlanLast    = 4000
	ipBlockBits = 29
)

func ipPool(env Environment) netip.Prefix {
	if env == EnvTest {
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
func ipBlock(env Environment, index int) (cidr, gateway string, ok bool) {
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
func (s *Store) allocate(ctx context.Context, scope Scope, opID string, kind AllocationKind, fn func(tx *gorm.DB) (*InventoryAllocation, error)) (*InventoryAllocation, error) {
	if scope.System || scope.AllOrganizations || !scope.Environment.Valid() {
		return nil, Internal(fmt.Errorf("allocations need a tenant scope"))
	}
	for attempt := 0; ; attempt++ {
		var out *InventoryAllocation
		err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
			var existing InventoryAllocation
			err := tx.Where("operation_id = ? AND kind = ?", opID, kind).Take(&existing).Error
			if err == nil {
				if existing.ReleasedAt != nil {
					return Errorf(CodeInvalidStateTransition, "the %s of operation %s was already released", kind, opID)
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
			return tx.Create(out).Error
		})
		if err != nil && isUniqueViolation(err) && attempt < maxAllocationAttempts {
			continue
		}
		if err != nil {
			return nil, dbErr(err)
		}
		return out, nil
	}
}

// ReserveCapacity holds req.Mbps of the location's capacity for the service
// type, once per operation: calling it again for the same operation returns
// the first reservation. Errors: SERVICE_UNAVAILABLE_AT_LOCATION (the
// location does not offer the type), INSUFFICIENT_BANDWIDTH,
// INVALID_STATE_TRANSITION (already released).
func (s *Store) ReserveCapacity(ctx context.Context, scope Scope, req AllocationRequest) (*InventoryAllocation, error) {
	if req.Mbps <= 0 {
		return nil, Invalid(FieldIssue{Field: "bandwidth", Issue: "must be positive"})
	}
	return s.allocate(ctx, scope, req.OperationID, AllocCapacity, func(tx *gorm.DB) (*InventoryAllocation, error) {
		if scope.Environment == EnvTest {
			return s.reserveSandboxCapacity(ctx, tx, scope, req)
		}
		res := tx.Model(&LocationCapacity{}).
			Where("location_id = ? AND service_type = ? AND environment = ? AND allocated_mbps + ? <= capacity_mbps", req.LocationID, req.ServiceType, scope.Environment, req.Mbps).
			Update("allocated_mbps", gorm.Expr("allocated_mbps + ?", req.Mbps))
		if res.Error != nil {
			return nil, res.Error
		}
		if res.RowsAffected == 0 {
			var c LocationCapacity
			err := tx.Where("location_id = ? AND service_type = ? AND environment = ?", req.LocationID, req.ServiceType, scope.Environment).Take(&c).Error
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return nil, Errorf(CodeUnavailableAtLocation, "%s is not offered at location %s", req.ServiceType, req.LocationID).
					WithDetail("service_type", req.ServiceType).WithDetail("location_id", req.LocationID)
			}
			if err != nil {
				return nil, err
			}
			return nil, Errorf(CodeInsufficientBandwidth, "%s at location %s has %s left; %s was requested", req.ServiceType, req.LocationID,
				FormatBandwidth(max(c.CapacityMbps-c.AllocatedMbps, 0)), FormatBandwidth(req.Mbps)).
				WithDetail("requested", FormatBandwidth(req.Mbps)).WithDetail("available", FormatBandwidth(max(c.CapacityMbps-c.AllocatedMbps, 0)))
		}
		return &InventoryAllocation{
			OperationID: req.OperationID, Kind: AllocCapacity, ServiceID: req.ServiceID, LocationID: req.LocationID,
			ServiceType: req.ServiceType, AmountMbps: req.Mbps,
		}, nil
	})
}

// reserveSandboxCapacity checks the request against the location's capacity
// minus what the organization itself holds there (tx is in its tenant scope).
func (s *Store) reserveSandboxCapacity(ctx context.Context, tx *gorm.DB, scope Scope, req AllocationRequest) (*InventoryAllocation, error) {
	var c LocationCapacity
	err := Scoped(ctx, tx, SystemScope()).Where("location_id = ? AND service_type = ? AND environment = ?", req.LocationID, req.ServiceType, scope.Environment).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, Errorf(CodeUnavailableAtLocation, "%s is not offered at location %s", req.ServiceType, req.LocationID).
			WithDetail("service_type", req.ServiceType).WithDetail("location_id", req.LocationID)
	}
	if err != nil {
		return nil, err
	}
	held, err := heldMbps(tx, req.LocationID, req.ServiceType)
	if err != nil {
		return nil, err
	}
	if left := max(c.CapacityMbps-held, 0); req.Mbps > left {
		return nil, Errorf(CodeInsufficientBandwidth, "%s at location %s has %s left; %s was requested", req.ServiceType, req.LocationID,
			FormatBandwidth(left), FormatBandwidth(req.Mbps)).
			WithDetail("requested", FormatBandwidth(req.Mbps)).WithDetail("available", FormatBandwidth(left))
	}
	return &InventoryAllocation{
		OperationID: req.OperationID, Kind: AllocCapacity, ServiceID: req.ServiceID, LocationID: req.LocationID,
		ServiceType: req.ServiceType, AmountMbps: req.Mbps,
	}, nil
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

// activeIndexes returns the resource indexes of the active allocations of
// kind (at location, for VLANs) in scope's environment: of every tenant live,
// of the scope's organization in the sandbox.
func activeIndexes(ctx context.Context, tx *gorm.DB, scope Scope, kind AllocationKind, location string) ([]int, error) {
	q := Scoped(ctx, tx, SystemScope()).Model(&InventoryAllocation{}).
		Where("environment = ? AND kind = ? AND released_at IS NULL", scope.Environment, kind)
	if scope.Environment == EnvTest {
		q = q.Where("organization_id = ?", scope.OrganizationID)
	}
	if location != "" {
		q = q.Where("location_id = ?", location)
	}
	var used []int
	if err := q.Order("resource_index").Pluck("resource_index", &used).Error; err != nil {
		return nil, err
	}
	return used, nil
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
func resourceKeyPrefix(scope Scope) string {
	if scope.Environment == EnvTest {
		return string(EnvTest) + "/" + scope.OrganizationID
	}
	return string(scope.Environment)
}

// AllocateIPBlock assigns a /29 public IP block to the operation's service,
// once per operation. Errors: DEPENDENCY_UNAVAILABLE (pool exhausted),
// INVALID_STATE_TRANSITION (already released).
func (s *Store) AllocateIPBlock(ctx context.Context, scope Scope, req AllocationRequest) (*InventoryAllocation, error) {
	return s.allocate(ctx, scope, req.OperationID, AllocIPBlock, func(tx *gorm.DB) (*InventoryAllocation, error) {
		used, err := activeIndexes(ctx, tx, scope, AllocIPBlock, "")
		if err != nil {
			return nil, err
		}
		index := lowestFree(used, 0)
		cidr, gateway, ok := ipBlock(scope.Environment, index)
		if !ok {
			return nil, Errorf(CodeDependencyUnavailable, "the IP address pool is exhausted")
		}
		key := resourceKeyPrefix(scope) + "/ip/" + cidr
		return &InventoryAllocation{
			OperationID: req.OperationID, Kind: AllocIPBlock, ServiceID: req.ServiceID, LocationID: req.LocationID,
			ResourceKey: &key, ResourceIndex: index, CIDR: cidr, Gateway: gateway,
		}, nil
	})
}

// AllocateVLAN assigns a VLAN id at the operation's location, once per
// operation. Errors: DEPENDENCY_UNAVAILABLE (no VLAN id left at the location),
// INVALID_STATE_TRANSITION (already released).
func (s *Store) AllocateVLAN(ctx context.Context, scope Scope, req AllocationRequest) (*InventoryAllocation, error) {
	return s.allocate(ctx, scope, req.OperationID, AllocVLAN, func(tx *gorm.DB) (*InventoryAllocation, error) {
		used, err := activeIndexes(ctx, tx, scope, AllocVLAN, req.LocationID)
		if err != nil {
			return nil, err
		}
		vlan := lowestFree(used, vlanFirst)
		if vlan > vlanLast {
			return nil, Errorf(CodeDependencyUnavailable, "no VLAN id is left at location %s", req.LocationID)
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
func (s *Store) ReleaseAllocations(ctx context.Context, scope Scope, opID string, kinds ...AllocationKind) (int, error) {
	released := 0
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		var rows []InventoryAllocation
		if err := tx.Where("operation_id = ? AND released_at IS NULL", opID).Order("id").Find(&rows).Error; err != nil {
			return err
		}
		now := s.Now()
		for _, a := range rows {
			if len(kinds) > 0 && !slices.Contains(kinds, a.Kind) {
				continue
			}
			res := tx.Model(&InventoryAllocation{}).Where("id = ? AND released_at IS NULL", a.ID).Update("released_at", now)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				continue
			}
			released++
			if a.Kind == AllocCapacity && a.Environment != EnvTest {
				err := tx.Model(&LocationCapacity{}).
					Where("location_id = ? AND service_type = ? AND environment = ?", a.LocationID, a.ServiceType, a.Environment).
					Update("allocated_mbps", gorm.Expr("CASE WHEN allocated_mbps >= ? THEN allocated_mbps - ? ELSE 0 END", a.AmountMbps, a.AmountMbps)).Error
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	return released, dbErr(err)
}

// Allocations returns every allocation (active or released) of an operation.
func (s *Store) Allocations(ctx context.Context, scope Scope, opID string) ([]InventoryAllocation, error) {
	var out []InventoryAllocation
	err := s.In(ctx, scope).Where("operation_id = ?", opID).Order("id").Find(&out).Error
	return out, dbErr(err)
}

// Capacity returns a location's capacity row for a service type in env (in
// the sandbox, AllocatedMbps stays 0: see AvailableMbps).
// Errors: NOT_FOUND.
func (s *Store) Capacity(ctx context.Context, env Environment, locationID, serviceType string) (*LocationCapacity, error) {
	var c LocationCapacity
	err := s.In(ctx, SystemScope()).Where("location_id = ? AND service_type = ? AND environment = ?", locationID, serviceType, env).Take(&c).Error
	return &c, notFoundOr(err, "location capacity")
}

// AvailableMbps returns the bandwidth left at a location for a service type
// as scope sees it: live, what no organization holds; in the sandbox, what
// the scope's organization does not hold. Errors: NOT_FOUND.
func (s *Store) AvailableMbps(ctx context.Context, scope Scope, locationID, serviceType string) (int, error) {
	c, err := s.Capacity(ctx, scope.Environment, locationID, serviceType)
	if err != nil {
		return 0, err
	}
	return s.availableOf(ctx, scope, c)
}

func (s *Store) availableOf(ctx context.Context, scope Scope, c *LocationCapacity) (int, error) {
	if scope.Environment != EnvTest {
		return max(c.CapacityMbps-c.AllocatedMbps, 0), nil
	}
	if scope.OrganizationID == "" || scope.AllOrganizations || scope.System {
		return c.CapacityMbps, nil
	}
	held, err := heldMbps(s.In(ctx, TenantScope(scope.OrganizationID, EnvTest)), c.LocationID, c.ServiceType)
	if err != nil {
		return 0, dbErr(err)
	}
	return max(c.CapacityMbps-held, 0), nil
}
