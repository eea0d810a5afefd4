package catalog

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/telcoplatform/platform/models"
)

// CatalogCategory is one of the catalog's categories (connectivity, voice, cloud, security, ai).
type CatalogCategory struct {
	Name        string `gorm:"primaryKey;size:40" json:"name"`
	Title       string `gorm:"size:200;not null" json:"title"`
	Description string `gorm:"size:2000" json:"description"`
	Position    int    `gorm:"not null" json:"position"`
}

// CatalogService is an offer of the catalog: what can be provisioned, with
// which bandwidth and SLA options, from which price.
type CatalogService struct {
	ID               string       `gorm:"primaryKey;size:60" json:"id"`
	Category         string       `gorm:"size:40;not null;index" json:"category"`
	Kind             string       `gorm:"size:40;not null" json:"kind"`
	Name             string       `gorm:"size:200;not null" json:"name"`
	Description      string       `gorm:"size:2000" json:"description"`
	BandwidthOptions []string     `gorm:"serializer:json;type:text" json:"bandwidth_options"`
	SLAOptions       []string     `gorm:"serializer:json;type:text" json:"sla_options"`
	StartingPrice    models.Money `gorm:"not null" json:"starting_price"`
	Unit             string       `gorm:"size:40;not null" json:"unit"`
	Currency         string       `gorm:"size:3;not null" json:"currency"`
	Position         int          `gorm:"not null" json:"position"`
}

// CatalogEntry is a category with its services, in catalog order.
type CatalogEntry struct {
	Category CatalogCategory
	Services []CatalogService
}

// Catalog returns every category with its services. It is the same for every tenant.
func (s *Store) Catalog(ctx context.Context) ([]CatalogEntry, error) {
	db := s.In(ctx, models.SystemScope())
	var cats []CatalogCategory
	if err := db.Order("position").Find(&cats).Error; err != nil {
		return nil, models.DBErr(err)
	}
	var svcs []CatalogService
	if err := db.Order("position").Find(&svcs).Error; err != nil {
		return nil, models.DBErr(err)
	}
	out := make([]CatalogEntry, len(cats))
	idx := map[string]int{}
	for i, c := range cats {
		out[i] = CatalogEntry{Category: c, Services: []CatalogService{}}
		idx[c.Name] = i
	}
	for _, svc := range svcs {
		if i, ok := idx[svc.Category]; ok {
			out[i].Services = append(out[i].Services, svc)
		}
	}
	return out, nil
}

// CatalogCategoryEntry returns one category with its services. Errors: NOT_FOUND.
func (s *Store) CatalogCategoryEntry(ctx context.Context, name string) (*CatalogEntry, error) {
	db := s.In(ctx, models.SystemScope())
	var cat CatalogCategory
	if err := db.Where("name = ?", name).Take(&cat).Error; err != nil {
		return nil, models.NotFoundOr(err, fmt.Sprintf("catalog category %q", name))
	}
	entry := &CatalogEntry{Category: cat, Services: []CatalogService{}}
	if err := db.Where("category = ?", name).Order("position").Find(&entry.Services).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return entry, nil
}

// CatalogServiceByID returns one catalog offer. Errors: NOT_FOUND.
// It reads the reference data kept in memory (ReferenceTTL).
func (s *Store) CatalogServiceByID(ctx context.Context, id string) (*CatalogService, error) {
	ref, err := s.reference(ctx)
	if err != nil {
		return nil, err
	}
	svc, ok := ref.offer(id)
	if !ok {
		return nil, models.NotFound(fmt.Sprintf("catalog service %q", id))
	}
	return &svc, nil
}
