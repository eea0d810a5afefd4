// Compute regions (their vCPU and GPU pools) and the blocks of telephone
// numbers the network assigns: the inventory beyond bandwidth, VLANs and IP
// blocks (inventory.go).

package catalog

import (
	"context"
	"fmt"
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
)

// Compute pools of the regions: virtual CPUs and GPUs.
const (
	PoolVCPU = "vcpu"
	PoolGPU  = "gpu"
)

// computeRegion is a region of the compute inventory (seeded reference data).
type computeRegion struct {
	ID          string
	VCPU, GPU   int
	SandboxOnly bool
}

// computeRegions returns the regions, with their capacity per pool.
func computeRegions() []computeRegion {
	return []computeRegion{
		{ID: "us-east-1", VCPU: 20000, GPU: 256},
		{ID: "us-west-2", VCPU: 20000, GPU: 128},
		{ID: "us-central-1", VCPU: 10000, GPU: 64},
		{ID: "eu-west-1", VCPU: 10000, GPU: 64},
		{ID: "eu-central-1", VCPU: 8000, GPU: 32},
		{ID: "ap-southeast-1", VCPU: 8000, GPU: 32},
		// sandbox magic value: a region with one vCPU and no GPU (docs/sandbox.md)
		{ID: "sandbox-exhausted-1", VCPU: 1, SandboxOnly: true},
	}
}

// ComputeRegions returns the ids of the regions that exist in env.
func (s *Store) ComputeRegions(ctx context.Context, env models.Environment) ([]string, error) {
	var out []string
	err := s.In(ctx, models.SystemScope()).Model(&LocationCapacity{}).
		Where("environment = ? AND service_type IN ?", env, []string{PoolVCPU, PoolGPU}).
		Distinct("location_id").Order("location_id").Pluck("location_id", &out).Error
	return out, models.DBErr(err)
}

// AvailableUnits returns the units of a compute pool left in a region as
// scope sees it (0 when the region does not offer the pool).
func (s *Store) AvailableUnits(ctx context.Context, scope models.Scope, region, pool string) (int, error) {
	c, err := s.Capacity(ctx, scope.Environment, region, pool)
	if models.ErrorCode(err) == models.CodeNotFound {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return s.availableOf(ctx, scope, c)
}

// ComputeAlternatives returns the regions other than region that offer the
// pool, as alternatives of a shortage: available when they have units left
// for the request, with the units they have left (Free).
func (s *Store) ComputeAlternatives(ctx context.Context, scope models.Scope, pool, region string, units int) ([]Alternative, error) {
	regions, err := s.ComputeRegions(ctx, scope.Environment)
	if err != nil {
		return nil, err
	}
	out := []Alternative{}
	for _, r := range regions {
		if r == region {
			continue
		}
		c, err := s.Capacity(ctx, scope.Environment, r, pool)
		if models.ErrorCode(err) == models.CodeNotFound {
			continue // the region has no such pool
		}
		if err != nil {
			return nil, err
		}
		left, err := s.availableOf(ctx, scope, c)
		if err != nil {
			return nil, err
		}
		out = append(out, Alternative{ServiceType: pool, Available: left >= units, Region: r, Free: &left})
	}
	return out, nil
}

// NumberBlock is a block of telephone numbers the network can assign:
// reference data shared by every tenant. A block's numbers are its prefix
// followed by four digits, 0000 up to Size-1.
type NumberBlock struct {
	ID          string `gorm:"primaryKey;size:40"`
	Type        string `gorm:"size:10;not null;index"`
	AreaCode    string `gorm:"size:3;not null;index"`
	Prefix      string `gorm:"size:12;not null"`
	Size        int    `gorm:"not null"`
	SandboxOnly bool   `gorm:"not null;default:false"`
	Position    int    `gorm:"not null"`
}

// numberBlockSeed returns the number blocks: one per area code of the
// serviceable cities, in the fictional 555 exchange, and toll-free blocks.
func numberBlockSeed() []NumberBlock {
	var out []NumberBlock
	for _, ac := range []string{"512", "737", "214", "212", "415", "312", "206", "303", "208"} {
		out = append(out, NumberBlock{ID: "nb_local_" + ac, Type: "local", AreaCode: ac, Prefix: "+1" + ac + "555", Size: 10000})
	}
	for _, ac := range []string{"800", "888", "877"} {
		out = append(out, NumberBlock{ID: "nb_tollfree_" + ac, Type: "toll_free", AreaCode: ac, Prefix: "+1" + ac + "555", Size: 10000})
	}
	// sandbox magic value: area code 999 has two numbers (docs/sandbox.md)
	out = append(out, NumberBlock{ID: "nb_sandbox_999", Type: "local", AreaCode: "999", Prefix: "+1999555", Size: 2, SandboxOnly: true})
	for i := range out {
		out[i].Position = i
	}
	return out
}

// SeedServiceInventory inserts or updates the compute regions (as capacity
// rows of pools vcpu and gpu, live and sandbox) and the number blocks.
// Capacity already allocated is kept. It is idempotent.
func SeedServiceInventory(ctx context.Context, db *gorm.DB) error {
	tx := models.Scoped(ctx, db, models.SystemScope())
	return tx.Transaction(func(tx *gorm.DB) error {
		for _, r := range computeRegions() {
			envs := []models.Environment{models.EnvLive, models.EnvTest}
			if r.SandboxOnly {
				envs = []models.Environment{models.EnvTest}
			}
			for _, pool := range []struct {
				name  string
				units int
			}{{PoolVCPU, r.VCPU}, {PoolGPU, r.GPU}} {
				if pool.units <= 0 {
					continue
				}
				for _, env := range envs {
					c := LocationCapacity{LocationID: r.ID, ServiceType: pool.name, Environment: env, CapacityMbps: pool.units}
					if err := tx.Clauses(clause.OnConflict{
						Columns:   []clause.Column{{Name: "location_id"}, {Name: "service_type"}, {Name: "environment"}},
						DoUpdates: clause.AssignmentColumns([]string{"capacity_mbps", "updated_at"}),
					}).Create(&c).Error; err != nil {
						return err
					}
				}
			}
		}
		for _, b := range numberBlockSeed() {
			if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&b).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// numberBlocks returns the blocks of numbers of a type (and area code, for
// local numbers) that exist in env.
func (s *Store) numberBlocks(ctx context.Context, env models.Environment, typ, areaCode string) ([]NumberBlock, error) {
	q := s.In(ctx, models.SystemScope()).Where("type = ?", typ)
	if typ == "local" {
		q = q.Where("area_code = ?", areaCode)
	}
	if env != models.EnvTest {
		q = q.Where("sandbox_only = ?", false)
	}
	var out []NumberBlock
	err := q.Order("position").Find(&out).Error
	return out, models.DBErr(err)
}

// numbersUsed counts the active number allocations in the blocks, as scope
// sees the network (every tenant live, the organization in the sandbox).
func (s *Store) numbersUsed(ctx context.Context, db *gorm.DB, scope models.Scope, blockIDs []string) (int, error) {
	q := models.Scoped(ctx, db, models.SystemScope()).Model(&InventoryAllocation{}).
		Where("environment = ? AND kind = ? AND released_at IS NULL AND location_id IN ?", scope.Environment, AllocPhoneNumber, blockIDs)
	if scope.Environment == models.EnvTest {
		q = q.Where("organization_id = ?", scope.OrganizationID)
	}
	var n int64
	err := q.Count(&n).Error
	return int(n), err
}

// CheckNumbersAvailable requires qty numbers of a type (in an area code) to
// be free. Errors: SERVICE_UNAVAILABLE_AT_LOCATION with spec 7's details
// (service_type: local_numbers or toll_free_numbers; location: {area_code};
// alternatives: the other area codes served, each with the numbers it has
// free) and number_type, area_code, requested, available.
func (s *Store) CheckNumbersAvailable(ctx context.Context, scope models.Scope, typ, areaCode string, qty int) error {
	blocks, err := s.numberBlocks(ctx, scope.Environment, typ, areaCode)
	if err != nil {
		return err
	}
	left, err := s.numbersFree(ctx, scope, blocks)
	if err != nil {
		return err
	}
	if qty <= left {
		return nil
	}
	what := "toll-free numbers"
	if typ == "local" {
		what = "local numbers in area code " + areaCode
	}
	e := models.Errorf(models.CodeUnavailableAtLocation, "%d %s requested; %d available", qty, what, left)
	if len(blocks) == 0 {
		e = models.Errorf(models.CodeUnavailableAtLocation, "no %s are offered", what)
	}
	alts := []Alternative{}
	if typ == "local" {
		var codes []string
		err := s.In(ctx, models.SystemScope()).Model(&NumberBlock{}).Where("type = ? AND area_code <> ? AND (sandbox_only = ? OR ? = ?)", typ, areaCode, false, string(scope.Environment), string(models.EnvTest)).
			Distinct("area_code").Order("area_code").Pluck("area_code", &codes).Error
		if err != nil {
			return models.DBErr(err)
		}
		for _, code := range codes {
			bs, err := s.numberBlocks(ctx, scope.Environment, typ, code)
			if err != nil {
				return err
			}
			free, err := s.numbersFree(ctx, scope, bs)
			if err != nil {
				return err
			}
			alts = append(alts, Alternative{ServiceType: typ + "_numbers", Available: free >= qty, AreaCode: code, Free: &free})
		}
	}
	return numbersUnavailable(e, typ, areaCode, alts).WithDetail("requested", qty).WithDetail("available", left)
}

// numbersUnavailable gives e, a SERVICE_UNAVAILABLE_AT_LOCATION for numbers
// of typ (in areaCode), spec 7's details (service_type, location,
// alternatives) and its own (number_type, area_code).
func numbersUnavailable(e *models.Error, typ, areaCode string, alts []Alternative) *models.Error {
	location := map[string]string{}
	if typ == "local" {
		location["area_code"] = areaCode
	}
	if alts == nil {
		alts = []Alternative{}
	}
	return e.WithDetail("service_type", typ+"_numbers").WithDetail("location", location).WithDetail("alternatives", alts).
		WithDetail("number_type", typ).WithDetail("area_code", areaCode)
}

// numbersFree counts the numbers of the blocks that no allocation holds,
// as scope sees the network.
func (s *Store) numbersFree(ctx context.Context, scope models.Scope, blocks []NumberBlock) (int, error) {
	size, ids := 0, []string{}
	for _, b := range blocks {
		size += b.Size
		ids = append(ids, b.ID)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	used, err := s.numbersUsed(ctx, s.DB, scope, ids)
	if err != nil {
		return 0, models.DBErr(err)
	}
	return max(size-used, 0), nil
}

// AllocateNumbers assigns one phone number to each of the slots of the
// operation's service, from the blocks of a type (and area code): the lowest
// free numbers. It is idempotent per operation and slot: slots already
// assigned keep their numbers. It returns the allocations of the slots, in
// slot order. Errors: SERVICE_UNAVAILABLE_AT_LOCATION (not enough numbers),
// INVALID_STATE_TRANSITION (a slot was already released).
func (s *Store) AllocateNumbers(ctx context.Context, scope models.Scope, req AllocationRequest, typ, areaCode string, slots []int) ([]InventoryAllocation, error) {
	if scope.System || scope.AllOrganizations || !scope.Environment.Valid() {
		return nil, models.Internal(fmt.Errorf("allocations need a tenant scope"))
	}
	if len(slots) == 0 {
		return nil, nil
	}
	blocks, err := s.numberBlocks(ctx, scope.Environment, typ, areaCode)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		var out []InventoryAllocation
		err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
			var existing []InventoryAllocation
			if err := tx.Where("operation_id = ? AND kind = ? AND slot IN ?", req.OperationID, AllocPhoneNumber, slots).Find(&existing).Error; err != nil {
				return err
			}
			have := map[int]InventoryAllocation{}
			for _, a := range existing {
				if a.ReleasedAt != nil {
					return models.Errorf(models.CodeInvalidStateTransition, "the phone numbers of operation %s were already released", req.OperationID)
				}
				have[a.Slot] = a
			}
			var todo []int
			for _, sl := range slots {
				if _, ok := have[sl]; !ok {
					todo = append(todo, sl)
				}
			}
			for _, b := range blocks {
				if len(todo) == 0 {
					break
				}
				used, err := activeIndexes(ctx, tx, scope, AllocPhoneNumber, b.ID)
				if err != nil {
					return err
				}
				next := 0
				for len(todo) > 0 {
					line := lowestFree(used, next)
					if line >= b.Size {
						break
					}
					used = append(used, line)
					slices.Sort(used)
					next = line + 1
					number := fmt.Sprintf("%s%04d", b.Prefix, line)
					key := resourceKeyPrefix(scope) + "/number/" + number
					a := InventoryAllocation{
						OperationID: req.OperationID, Kind: AllocPhoneNumber, Slot: todo[0], ServiceID: req.ServiceID, LocationID: b.ID,
						ServiceType: typ, ResourceKey: &key, ResourceIndex: line, Reference: number,
					}
					if err := tx.Create(&a).Error; err != nil {
						return err
					}
					have[a.Slot] = a
					todo = todo[1:]
				}
			}
			if len(todo) > 0 {
				// Why, with the alternatives: read on the transaction's own
				// connection (a transaction never waits for a second one).
				bound := NewStore(s.Bound(tx))
				if err := bound.CheckNumbersAvailable(ctx, scope, typ, areaCode, len(slots)); err != nil {
					return err
				}
				return numbersUnavailable(models.Errorf(models.CodeUnavailableAtLocation, "not enough %s numbers are left", typ), typ, areaCode, nil)
			}
			for _, sl := range slots {
				out = append(out, have[sl])
			}
			return nil
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
