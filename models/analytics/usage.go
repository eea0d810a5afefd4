package analytics

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
)

// UsageFigures are the usage of a bucket, a service, a category or the
// whole period. Data and calls come from the services' telemetry samples
// (taken in the bucket); voice minutes and storage from the metered usage
// records (whose period starts in the bucket).
type UsageFigures struct {
	DataGB       float64 // data transferred, GB (10^9 bytes): the samples' data_mb / 1000
	VoiceCalls   int64   // calls handled, from the samples
	VoiceMinutes float64 // voice_minutes usage records
	StorageGB    float64 // cloud_storage_gb usage records
	Samples      int64   // telemetry samples counted
}

// add adds o to f.
func (f *UsageFigures) add(o UsageFigures) {
	f.DataGB += o.DataGB
	f.VoiceCalls += o.VoiceCalls
	f.VoiceMinutes += o.VoiceMinutes
	f.StorageGB += o.StorageGB
	f.Samples += o.Samples
}

// round rounds the quantities to three decimals.
func (f UsageFigures) round() UsageFigures {
	f.DataGB, f.VoiceMinutes, f.StorageGB = round3(f.DataGB), round3(f.VoiceMinutes), round3(f.StorageGB)
	return f
}

// UsageBucket is the usage of one bucket.
type UsageBucket struct {
	Bucket
	UsageFigures
}

// ServiceUsage is the usage of one service over the period.
type ServiceUsage struct {
	ServiceID string
	Name      string
	Kind      string // the service's kind (its service_type in answers)
	Category  string
	UsageFigures
}

// GroupUsage is the usage of one category or one service kind.
type GroupUsage struct {
	Key string
	UsageFigures
}

// Usage is the answer of GET /analytics/usage.
type Usage struct {
	Query        *Query
	Totals       UsageFigures
	Buckets      []UsageBucket  // every bucket, zero-filled
	Services     []ServiceUsage // services with usage in the period, by id
	Categories   []GroupUsage   // every catalog category (filtered ones too), by name
	ServiceTypes []GroupUsage   // kinds with usage in the period, by name
}

// usageRow is one aggregate row of the usage queries.
type usageRow struct {
	Bucket    int64
	ServiceID string
	DataMB    float64
	Calls     int64
	Samples   int64
	Metric    string
	Quantity  float64
}

// Usage answers the usage of what p sees (see docs/analytics.md) over q.
// Errors: NOT_FOUND (a filter naming what p cannot see).
func (s *Store) Usage(ctx context.Context, p *models.Principal, q *Query) (*Usage, error) {
	t, err := s.resolve(ctx, p, q)
	if err != nil {
		return nil, err
	}
	u := &Usage{Query: q, Buckets: make([]UsageBucket, len(q.Buckets))}
	for i, b := range q.Buckets {
		u.Buckets[i].Bucket = b
	}
	from, to := q.From.UTC(), q.To.UTC()
	samples := func() *gorm.DB {
		return t.onServices(s.In(ctx, t.scope).Model(&telemetry.TelemetrySample{}), "service_id").Where("at >= ? AND at < ?", from, to)
	}
	records := func() *gorm.DB {
		return t.onServices(s.In(ctx, t.scope).Model(&billing.UsageRecord{}), "service_id").
			Where("metric IN ? AND period_start >= ? AND period_start < ?", []string{billing.MetricVoiceMinutes, billing.MetricCloudStorageGB}, from, to)
	}

	// Per bucket.
	var rows []usageRow
	b := t.bucket("at")
	if err := samples().Select(b + " AS bucket, COALESCE(SUM(data_mb), 0) AS data_mb, COALESCE(SUM(calls), 0) AS calls, COUNT(*) AS samples").
		Group(b).Scan(&rows).Error; err != nil {
		return nil, models.DBErr(err)
	}
	for _, r := range rows {
		u.Buckets[q.bucketIndex(r.Bucket)].add(UsageFigures{DataGB: r.DataMB / 1000, VoiceCalls: r.Calls, Samples: r.Samples})
	}
	rows = nil
	b = t.bucket("period_start")
	if err := records().Select(b + " AS bucket, metric, COALESCE(SUM(quantity), 0) AS quantity").Group(b + ", metric").Scan(&rows).Error; err != nil {
		return nil, models.DBErr(err)
	}
	for _, r := range rows {
		u.Buckets[q.bucketIndex(r.Bucket)].add(recordFigures(r))
	}

	// Per service.
	per := map[string]*ServiceUsage{}
	svc := func(id string) *ServiceUsage {
		if per[id] == nil {
			per[id] = &ServiceUsage{ServiceID: id}
		}
		return per[id]
	}
	rows = nil
	if err := samples().Select("service_id, COALESCE(SUM(data_mb), 0) AS data_mb, COALESCE(SUM(calls), 0) AS calls, COUNT(*) AS samples").
		Group("service_id").Scan(&rows).Error; err != nil {
		return nil, models.DBErr(err)
	}
	for _, r := range rows {
		svc(r.ServiceID).add(UsageFigures{DataGB: r.DataMB / 1000, VoiceCalls: r.Calls, Samples: r.Samples})
	}
	rows = nil
	if err := records().Select("service_id, metric, COALESCE(SUM(quantity), 0) AS quantity").Group("service_id, metric").Scan(&rows).Error; err != nil {
		return nil, models.DBErr(err)
	}
	for _, r := range rows {
		svc(r.ServiceID).add(recordFigures(r))
	}
	if err := s.describe(ctx, t, per); err != nil {
		return nil, err
	}

	cats, kinds := map[string]*GroupUsage{}, map[string]*GroupUsage{}
	for _, c := range Categories() {
		cats[c] = &GroupUsage{Key: c}
	}
	for _, id := range sortedKeys(per) {
		su := per[id]
		u.Services = append(u.Services, ServiceUsage{ServiceID: su.ServiceID, Name: su.Name, Kind: su.Kind, Category: su.Category, UsageFigures: su.round()})
		if cats[su.Category] == nil {
			cats[su.Category] = &GroupUsage{Key: su.Category}
		}
		cats[su.Category].add(su.UsageFigures)
		if kinds[su.Kind] == nil {
			kinds[su.Kind] = &GroupUsage{Key: su.Kind}
		}
		kinds[su.Kind].add(su.UsageFigures)
	}
	for _, k := range sortedKeys(cats) {
		u.Categories = append(u.Categories, GroupUsage{Key: k, UsageFigures: cats[k].round()})
	}
	u.ServiceTypes = []GroupUsage{}
	for _, k := range sortedKeys(kinds) {
		u.ServiceTypes = append(u.ServiceTypes, GroupUsage{Key: k, UsageFigures: kinds[k].round()})
	}
	for i := range u.Buckets {
		u.Totals.add(u.Buckets[i].UsageFigures)
		u.Buckets[i].UsageFigures = u.Buckets[i].round()
	}
	u.Totals = u.Totals.round()
	if u.Services == nil {
		u.Services = []ServiceUsage{}
	}
	return u, nil
}

// recordFigures are the figures of a usage record aggregate row.
func recordFigures(r usageRow) UsageFigures {
	if r.Metric == billing.MetricVoiceMinutes {
		return UsageFigures{VoiceMinutes: r.Quantity}
	}
	return UsageFigures{StorageGB: r.Quantity}
}

// describe fills the name, kind and category of the services of per.
func (s *Store) describe(ctx context.Context, t *target, per map[string]*ServiceUsage) error {
	ids := sortedKeys(per)
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		var rows []services.Service
		if err := s.In(ctx, t.scope).Select("id, name, kind").Where("id IN ?", chunk).Find(&rows).Error; err != nil {
			return models.DBErr(err)
		}
		for _, r := range rows {
			per[r.ID].Name, per[r.ID].Kind = r.Name, r.Kind
		}
	}
	for _, su := range per {
		su.Category = categoryOf(su.Kind)
	}
	return nil
}

// Categories returns the catalog categories of services, by name.
func Categories() []string {
	var out []string
	for _, p := range services.KindProfiles() {
		if !slices.Contains(out, p.Category) {
			out = append(out, p.Category)
		}
	}
	sort.Strings(out)
	return out
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, strings.Compare)
	return out
}

// round3 rounds v to three decimals.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// Label is how answers write a bucket's bounds: RFC 3339 in the query's zone.
func Label(t time.Time) string { return t.Format(time.RFC3339) }
