package services

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/filter"
)

// ---------------------------------------------------------------------------
// Lists.

// ServiceFilter selects services in a list (DECISIONS 2's plain filters).
type ServiceFilter struct {
	Kind        string   // fixed by a category collection
	Statuses    []string // status=operational,degraded
	Types       []string // type: kinds or service types
	Location    string   // a location id, a ZIP code, a state code or a city
	AccountID   string
	Search      string
	Fields      []string // the fields search looks in (default: name, id, service_type, address, city)
	CreatedFrom *time.Time
	CreatedTo   *time.Time
	// Expr is a filter expression over ServiceFilterSchema's fields
	// (docs/filtering.md); empty: no such filter.
	Expr string
}

var serviceSorts = models.SortFields{
	"created_at": "created_at", "updated_at": "updated_at", "name": "name", "status": "status", "type": "kind",
	"service_type": "service_type", "monthly_charge": "monthly_charge", "status_changed_at": "status_changed_at",
}

// serviceSearchFields maps the names `fields` accepts to columns.
func serviceSearchFields() map[string]string {
	return map[string]string{"name": "name", "id": "id", "service_type": "service_type", "type": "kind", "address": "address",
		"city": "city", "state": "state", "zip": "zip", "location_id": "location_id", "account_id": "account_id", "circuit_id": "circuit_id"}
}

// svcLikePattern escapes s for a LIKE ... ESCAPE '\' pattern that contains it.
func svcLikePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// ListServices returns a page of the services visible to p that match f.
// Errors: VALIDATION_ERROR (unknown status, type, search field or sort).
func (s *Store) ListServices(ctx context.Context, p *models.Principal, f ServiceFilter, page models.PageRequest) ([]Service, int64, error) {
	var v models.Validator
	q := s.In(ctx, p.Scope()).Model(&Service{})
	if f.Kind != "" {
		q = q.Where("kind = ?", f.Kind)
	}
	if len(f.Statuses) > 0 {
		for i, st := range f.Statuses {
			v.Check(ServiceStatus(st).Valid(), fmt.Sprintf("status[%d]", i), "must be a service status (pending, provisioning, operational, degraded, down, maintenance, decommissioning, decommissioned, failed)")
		}
		q = q.Where("status IN ?", f.Statuses)
	}
	if len(f.Types) > 0 {
		for i, t := range f.Types {
			_, isKind := LookupKind(t)
			v.Check(isKind || (len(t) <= 40 && svcIdentPattern.MatchString(t)), fmt.Sprintf("type[%d]", i), "must be a kind ("+strings.Join(KindNames(), ", ")+") or a service type")
		}
		q = q.Where("kind IN ? OR service_type IN ?", f.Types, f.Types)
	}
	if loc := strings.TrimSpace(f.Location); loc != "" {
		switch {
		case strings.HasPrefix(loc, catalog.PrefixLocation+"_"):
			q = q.Where("location_id = ?", loc)
		case catalog.ZipPattern.MatchString(loc):
			q = q.Where("zip = ?", loc)
		case len(loc) == 2 && slices.Contains(catalog.USStates, strings.ToUpper(loc)):
			q = q.Where("state = ?", strings.ToUpper(loc))
		default:
			v.Check(len(loc) <= 100, "location", "must be at most 100 characters")
			q = q.Where("LOWER(city) = ?", strings.ToLower(loc))
		}
	}
	if f.AccountID != "" {
		q = q.Where("account_id = ?", f.AccountID)
	}
	if term := strings.TrimSpace(f.Search); term != "" {
		v.Check(len(term) <= 100, "search", "must be at most 100 characters")
		cols := serviceSearchFields()
		fields := f.Fields
		if len(fields) == 0 {
			fields = []string{"name", "id", "service_type", "address", "city"}
		}
		var conds []string
		var args []any
		for i, name := range fields {
			col, ok := cols[name]
			if !ok {
				names := make([]string, 0, len(cols))
				for k := range cols {
					names = append(names, k)
				}
				slices.Sort(names)
				v.Add(fmt.Sprintf("fields[%d]", i), "must be one of "+strings.Join(names, ", "))
				continue
			}
			conds = append(conds, "LOWER("+col+`) LIKE ? ESCAPE '\'`)
			args = append(args, svcLikePattern(term))
		}
		if len(conds) > 0 {
			q = q.Where("("+strings.Join(conds, " OR ")+")", args...)
		}
	} else if len(f.Fields) > 0 {
		v.Add("fields", "needs search")
	}
	if f.CreatedFrom != nil {
		q = q.Where("created_at >= ?", f.CreatedFrom.UTC())
	}
	if f.CreatedTo != nil {
		q = q.Where("created_at <= ?", f.CreatedTo.UTC())
	}
	if err := v.Err(); err != nil {
		return nil, 0, err
	}
	if strings.TrimSpace(f.Expr) != "" {
		expr, err := filter.Compile(ServiceFilterSchema(), f.Expr)
		if err != nil {
			return nil, 0, err
		}
		q = q.Where(expr.SQL, expr.Args...)
	}
	var out []Service
	total, err := models.Paginate(q, page, serviceSorts, &out)
	return out, total, err
}

// ServiceOfKind returns one service of a kind visible to p; a service of
// another kind is NOT_FOUND (a category path names its kind). Errors: NOT_FOUND.
func (s *Store) ServiceOfKind(ctx context.Context, p *models.Principal, kind, id string) (*Service, error) {
	svc, err := s.GetService(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if svc.Kind != kind {
		prof, _ := LookupKind(kind)
		return nil, models.NotFound(OrDefault(prof.Title, "service"))
	}
	return svc, nil
}
