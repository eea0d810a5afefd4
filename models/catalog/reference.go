package catalog

import (
	"context"
	"slices"
	"time"

	"github.com/telcoplatform/platform/models"
)

// ReferenceTTL is how long the catalog stores on one core keep the
// catalog's reference data (its offers, provisioning templates and
// serviceable locations) in memory (the core's models.Memo): the
// longest a change of those tables goes unseen by orders, quotes and
// availability checks. Only seeding and migrations write them; no API
// operation does. What changes with orders (capacity, allocations) is never
// kept: it is read on every check.
const ReferenceTTL = time.Second

// reference is one read of the reference tables, shared by every caller
// until it expires: never modified, and handed out as copies.
type reference struct {
	offers    map[string]CatalogService
	templates map[string]ProvisioningTemplate
	locations map[string]ServiceableLocation // by id
	byMatch   map[string]string              // location match key → id
}

// reference returns the reference data, read from the database at most
// once per ReferenceTTL by the stores on the same core (models.Kept).
func (s *Store) reference(ctx context.Context) (*reference, error) {
	return models.Kept(ctx, s.Memo, "catalog.reference", ReferenceTTL, s.readReference)
}

// readReference reads the reference tables (three statements).
func (s *Store) readReference(ctx context.Context) (*reference, error) {
	db := s.In(ctx, models.SystemScope())
	var offers []CatalogService
	if err := db.Find(&offers).Error; err != nil {
		return nil, models.DBErr(err)
	}
	var templates []ProvisioningTemplate
	if err := db.Find(&templates).Error; err != nil {
		return nil, models.DBErr(err)
	}
	var locations []ServiceableLocation
	if err := db.Find(&locations).Error; err != nil {
		return nil, models.DBErr(err)
	}
	ref := &reference{offers: make(map[string]CatalogService, len(offers)), templates: make(map[string]ProvisioningTemplate, len(templates)),
		locations: make(map[string]ServiceableLocation, len(locations)), byMatch: make(map[string]string, len(locations))}
	for _, o := range offers {
		ref.offers[o.ID] = o
	}
	for _, t := range templates {
		ref.templates[t.ID] = t
	}
	for _, l := range locations {
		ref.locations[l.ID] = l
		ref.byMatch[l.MatchKey] = l.ID
	}
	return ref, nil
}

// offer returns a copy of the offer id (its option lists copied too).
func (r *reference) offer(id string) (CatalogService, bool) {
	o, ok := r.offers[id]
	o.BandwidthOptions, o.SLAOptions = slices.Clone(o.BandwidthOptions), slices.Clone(o.SLAOptions)
	return o, ok
}

// FailAtSteps returns the fail_at_step of the location locationID and of
// the template templateID (sandbox magic values; "" for an empty or unknown
// id), from the reference data kept in memory (ReferenceTTL).
func (s *Store) FailAtSteps(ctx context.Context, locationID, templateID string) (atLocation, atTemplate string, err error) {
	ref, err := s.reference(ctx)
	if err != nil {
		return "", "", err
	}
	return ref.locations[locationID].FailAtStep, ref.templates[templateID].FailAtStep, nil
}
