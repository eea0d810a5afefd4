//go:build faults

package faults

import (
	"encoding/json"
	"time"
)

// consistencyReport is what the consistency check counted.
type consistencyReport struct {
	services int64 // created since the check's baseline
	events   int64 // service.* events since the baseline time
}

// consistency checks the database after a run in which wantServices
// services were ordered (servicesBefore existed before, events since
// since; the checks look at what was made since then, not at the seeded
// data): no operation is left unfinished; each operation made at most one
// service; no inventory is allocated twice or left to a service that does
// not exist; each service has one service.provisioned event.
func (s *stack) consistency(servicesBefore int64, wantServices int, since time.Time) consistencyReport {
	s.t.Helper()
	count := func(what string, q string, args ...any) int64 {
		var n int64
		if err := s.store.DB.Raw(q, args...).Scan(&n).Error; err != nil {
			s.t.Fatalf("%s: %v", what, err)
		}
		return n
	}
	org := s.org
	checks := []struct {
		what string
		q    string
	}{
		{"operations not finished", `SELECT count(*) FROM operations WHERE organization_id = ? AND created_at >= ? AND status NOT IN ('completed','partial','failed','rolled_back','cancelled')`},
		{"operations with more than one service", `SELECT count(*) FROM (SELECT operation_id FROM services WHERE organization_id = ? AND created_at >= ? GROUP BY operation_id HAVING count(*) > 1) d`},
		{"services allocated the same kind of inventory twice", `SELECT count(*) FROM (SELECT service_id, kind FROM inventory_allocations WHERE organization_id = ? AND created_at >= ? AND released_at IS NULL GROUP BY service_id, kind HAVING count(*) > 1) d`},
		{"resources allocated twice", `SELECT count(*) FROM (SELECT resource_key FROM inventory_allocations WHERE organization_id = ? AND created_at >= ? AND released_at IS NULL AND resource_key IS NOT NULL GROUP BY resource_key HAVING count(*) > 1) d`},
		{"allocations held for no service", `SELECT count(*) FROM inventory_allocations a WHERE a.organization_id = ? AND a.created_at >= ? AND a.released_at IS NULL AND NOT EXISTS (SELECT 1 FROM services s WHERE s.id = a.service_id)`},
		{"services with more than one service.provisioned event", `SELECT count(*) FROM (SELECT resource_id FROM events WHERE organization_id = ? AND created_at >= ? AND type = 'service.provisioned' GROUP BY resource_id HAVING count(*) > 1) d`},
		{"active services without a service.provisioned event", `SELECT count(*) FROM services s WHERE s.organization_id = ? AND s.created_at >= ? AND s.status = 'operational' AND NOT EXISTS (SELECT 1 FROM events e WHERE e.type = 'service.provisioned' AND e.resource_id = s.id)`},
	}
	for _, c := range checks {
		if n := count(c.what, c.q, org, since); n != 0 {
			s.t.Fatalf("inconsistent: %d %s", n, c.what)
		}
	}
	r := consistencyReport{
		services: count("services", `SELECT count(*) FROM services WHERE organization_id = ?`, org) - servicesBefore,
		events:   count("events", `SELECT count(*) FROM events WHERE organization_id = ? AND environment = 'test' AND type LIKE 'service.%' AND created_at >= ?`, org, since),
	}
	if wantServices >= 0 && r.services != int64(wantServices) {
		s.t.Fatalf("inconsistent: %d services created for %d ordered", r.services, wantServices)
	}
	return r
}

func jsonDecode(raw []byte, out any) error { return json.Unmarshal(raw, out) }
