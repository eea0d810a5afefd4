package analytics

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/services"
)

// Store is the analytics domain's store: the core store (database,
// tenancy scopes) with the analytics answers as methods. It only reads.
type Store struct {
	*models.Store
}

// NewStore returns the analytics store on core.
func NewStore(core *models.Store) *Store {
	return &Store{Store: core}
}

// target is what a query covers once its filters are resolved: the scope
// (the caller's, or one organization's for staff), and the services the
// service filters select (nil when no service filter is given).
type target struct {
	scope    models.Scope
	sqlite   bool
	services []string          // nil: every service
	kinds    map[string]string // service id → kind, of the services looked up
}

// resolve checks the filters of q against what p may see and returns the
// target. A service, account or organization p cannot see answers
// NOT_FOUND, as everywhere. Errors: NOT_FOUND.
func (s *Store) resolve(ctx context.Context, p *models.Principal, q *Query) (*target, error) {
	t := &target{scope: p.Scope(), sqlite: models.IsSQLite(s.DB), kinds: map[string]string{}}
	f := q.Filters
	if f.OrganizationID != "" {
		var n int64
		if err := s.In(ctx, models.SystemScope()).Model(&models.Organization{}).Where("id = ?", f.OrganizationID).Count(&n).Error; err != nil {
			return nil, models.DBErr(err)
		}
		if n == 0 {
			return nil, models.NotFound("organization")
		}
		t.scope = models.TenantScope(f.OrganizationID, p.Environment)
	}
	db := s.In(ctx, t.scope)
	if f.AccountID != "" {
		var n int64
		if err := db.Model(&models.BillingAccount{}).Where("id = ?", f.AccountID).Count(&n).Error; err != nil {
			return nil, models.DBErr(err)
		}
		if n == 0 {
			return nil, models.NotFound("billing account")
		}
	}
	if f.ServiceID != "" {
		var n int64
		if err := db.Model(&services.Service{}).Where("id = ?", f.ServiceID).Count(&n).Error; err != nil {
			return nil, models.DBErr(err)
		}
		if n == 0 {
			return nil, models.NotFound("service")
		}
	}
	if !f.serviceFilter() && f.AccountID == "" {
		return t, nil
	}
	sq := s.In(ctx, t.scope).Model(&services.Service{})
	if f.ServiceID != "" {
		sq = sq.Where("id = ?", f.ServiceID)
	}
	if f.ServiceType != "" {
		if kinds := kindsOfCategory(f.ServiceType); len(kinds) > 0 {
			sq = sq.Where("kind IN ?", kinds)
		} else {
			sq = sq.Where("kind = ? OR service_type = ?", f.ServiceType, f.ServiceType)
		}
	}
	if loc := f.Location; loc != "" {
		switch {
		case strings.HasPrefix(loc, catalog.PrefixLocation+"_"):
			sq = sq.Where("location_id = ?", loc)
		case catalog.ZipPattern.MatchString(loc):
			sq = sq.Where("zip = ?", loc)
		case len(loc) == 2 && slices.Contains(catalog.USStates, strings.ToUpper(loc)):
			sq = sq.Where("state = ?", strings.ToUpper(loc))
		default:
			sq = sq.Where("LOWER(city) = ?", strings.ToLower(loc))
		}
	}
	if f.AccountID != "" {
		sq = sq.Where("account_id = ?", f.AccountID)
	}
	var rows []struct {
		ID   string
		Kind string
	}
	if err := sq.Select("id, kind").Order("id").Scan(&rows).Error; err != nil {
		return nil, models.DBErr(err)
	}
	t.services = make([]string, 0, len(rows))
	for _, r := range rows {
		t.services = append(t.services, r.ID)
		t.kinds[r.ID] = r.Kind
	}
	return t, nil
}

// onServices restricts db to the target's services (by column col) when a
// filter selected them; an empty selection matches nothing.
func (t *target) onServices(db *gorm.DB, col string) *gorm.DB {
	if t.services == nil {
		return db
	}
	if len(t.services) == 0 {
		return db.Where("1 = 0")
	}
	return db.Where(col+" IN ?", t.services)
}

// bucket is the SQL expression of the 15-minute bucket (seconds since the
// epoch / 900) of the timestamp column col.
func (t *target) bucket(col string) string {
	if t.sqlite {
		return fmt.Sprintf("(CAST(strftime('%%s', %s) AS INTEGER) / %d)", col, bucketSeconds)
	}
	return fmt.Sprintf("CAST(FLOOR(EXTRACT(EPOCH FROM %s) / %d) AS BIGINT)", col, bucketSeconds)
}

// kindsOfCategory returns the service kinds of a catalog category (none
// when name is not a category).
func kindsOfCategory(name string) []string {
	var out []string
	for _, p := range services.KindProfiles() {
		if p.Category == name {
			out = append(out, p.Kind)
		}
	}
	return out
}

// categoryOf returns the catalog category of a service kind ("other" when
// the kind is unknown).
func categoryOf(kind string) string {
	if p, ok := services.LookupKind(kind); ok {
		return p.Category
	}
	return "other"
}

// serviceKinds returns the kinds of the services ids (in scope), using and
// filling t.kinds.
func (s *Store) serviceKinds(ctx context.Context, t *target, ids []string) (map[string]string, error) {
	var missing []string
	for _, id := range ids {
		if _, ok := t.kinds[id]; !ok && id != "" {
			missing = append(missing, id)
		}
	}
	for len(missing) > 0 {
		chunk := missing[:min(len(missing), 500)]
		missing = missing[len(chunk):]
		var rows []struct {
			ID   string
			Kind string
		}
		if err := s.In(ctx, t.scope).Model(&services.Service{}).Select("id, kind").Where("id IN ?", chunk).Scan(&rows).Error; err != nil {
			return nil, models.DBErr(err)
		}
		for _, r := range rows {
			t.kinds[r.ID] = r.Kind
		}
	}
	return t.kinds, nil
}
