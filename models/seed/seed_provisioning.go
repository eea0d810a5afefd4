package seed

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
)

//go:embed locations.json
var locationsSeed []byte

//go:embed templates.json
var templatesSeed []byte

type locationSeedFile struct {
	Locations []struct {
		catalog.ServiceableLocation
		CapacityMbps map[string]int `json:"capacity_mbps"`
	} `json:"locations"`
}

type templateSeedFile struct {
	Templates []catalog.ProvisioningTemplate `json:"templates"`
}

// SeedProvisioning inserts or updates the serviceable locations with their
// capacity per service type (for live and the sandbox) from
// seed/locations.json, and the provisioning templates from
// seed/templates.json. Capacity already allocated is kept. It checks that
// every service type and catalog service named exists, so run it after
// SeedCatalog.
func SeedProvisioning(ctx context.Context, db *gorm.DB) error {
	var locs locationSeedFile
	if err := json.Unmarshal(locationsSeed, &locs); err != nil {
		return fmt.Errorf("locations seed: %w", err)
	}
	var tpls templateSeedFile
	if err := json.Unmarshal(templatesSeed, &tpls); err != nil {
		return fmt.Errorf("templates seed: %w", err)
	}
	tx := models.Scoped(ctx, db, models.SystemScope())
	return tx.Transaction(func(tx *gorm.DB) error {
		for _, l := range locs.Locations {
			loc := l.ServiceableLocation
			if !models.HasPrefix(loc.ID, catalog.PrefixLocation) {
				return fmt.Errorf("locations seed: id %q must start with %s_", loc.ID, catalog.PrefixLocation)
			}
			in := loc.Input().Normalize()
			var v models.Validator
			in.Validate(&v, loc.ID)
			if err := v.Err(); err != nil {
				return fmt.Errorf("locations seed: %w", err)
			}
			if loc.FailAtStep != "" && !slices.Contains(operations.ProvisioningSteps(false), loc.FailAtStep) {
				return fmt.Errorf("locations seed: %s: unknown fail_at_step %q", loc.ID, loc.FailAtStep)
			}
			loc.Address, loc.City, loc.State, loc.Zip = in.Address, in.City, in.State, in.Zip
			loc.MatchKey = catalog.LocationMatchKey(in)
			if err := tx.Clauses(clause.OnConflict{
				Columns:   []clause.Column{{Name: "id"}},
				DoUpdates: clause.AssignmentColumns([]string{"address", "city", "state", "zip", "match_key", "sandbox_only", "fail_at_step", "updated_at"}),
			}).Create(&loc).Error; err != nil {
				return err
			}
			envs := []models.Environment{models.EnvLive, models.EnvTest}
			if loc.SandboxOnly {
				envs = []models.Environment{models.EnvTest}
			}
			for st, mbps := range l.CapacityMbps {
				if _, ok := catalog.LookupServiceType(st); !ok || mbps <= 0 {
					return fmt.Errorf("locations seed: %s: bad capacity %q: %d", loc.ID, st, mbps)
				}
				for _, env := range envs {
					c := catalog.LocationCapacity{LocationID: loc.ID, ServiceType: st, Environment: env, CapacityMbps: mbps}
					if err := tx.Clauses(clause.OnConflict{
						Columns:   []clause.Column{{Name: "location_id"}, {Name: "service_type"}, {Name: "environment"}},
						DoUpdates: clause.AssignmentColumns([]string{"capacity_mbps", "updated_at"}),
					}).Create(&c).Error; err != nil {
						return err
					}
				}
			}
		}
		for i, t := range tpls.Templates {
			st, ok := catalog.LookupServiceType(t.ServiceType)
			if !ok || st.CatalogServiceID != t.CatalogServiceID {
				return fmt.Errorf("templates seed: %s: service type %q does not sell catalog service %q", t.ID, t.ServiceType, t.CatalogServiceID)
			}
			var offer catalog.CatalogService
			if err := tx.Where("id = ?", t.CatalogServiceID).Take(&offer).Error; err != nil {
				return fmt.Errorf("templates seed: %s: catalog service %q: %w", t.ID, t.CatalogServiceID, err)
			}
			if !slices.Contains(offer.BandwidthOptions, t.DefaultBandwidth) || !slices.Contains(offer.SLAOptions, t.DefaultSLA) {
				return fmt.Errorf("templates seed: %s: default bandwidth or SLA not offered by %s", t.ID, offer.ID)
			}
			if t.FailAtStep != "" && !slices.Contains(operations.ProvisioningSteps(false), t.FailAtStep) {
				return fmt.Errorf("templates seed: %s: unknown fail_at_step %q", t.ID, t.FailAtStep)
			}
			t.Position = i
			if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&t).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

//go:embed catalog.json
var catalogSeed []byte

type catalogSeedFile struct {
	Categories []struct {
		catalog.CatalogCategory
		Services []catalog.CatalogService `json:"services"`
	} `json:"categories"`
}

// SeedCatalog inserts or updates the catalog from seed/catalog.json.
func SeedCatalog(ctx context.Context, db *gorm.DB) error {
	var file catalogSeedFile
	if err := json.Unmarshal(catalogSeed, &file); err != nil {
		return fmt.Errorf("catalog seed: %w", err)
	}
	tx := models.Scoped(ctx, db, models.SystemScope())
	for i, c := range file.Categories {
		cat := c.CatalogCategory
		cat.Position = i
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&cat).Error; err != nil {
			return err
		}
		for j, svc := range c.Services {
			svc.Category, svc.Position = cat.Name, j
			if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&svc).Error; err != nil {
				return err
			}
		}
	}
	return nil
}
