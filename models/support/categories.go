package support

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
)

// Priorities of a ticket, lowest first.
const (
	PriorityLow      = "low"
	PriorityMedium   = "medium"
	PriorityHigh     = "high"
	PriorityCritical = "critical"
)

// Priorities returns the ticket priorities, lowest first.
func Priorities() []string {
	return []string{PriorityLow, PriorityMedium, PriorityHigh, PriorityCritical}
}

// priorityRank orders priorities (-1 for an unknown one).
func priorityRank(p string) int { return slices.Index(Priorities(), p) }

// Category is a kind of support request (network, voice...), with the
// priority a ticket of it is given by default and its SLA targets.
type Category struct {
	ID              string    `gorm:"primaryKey;size:40"`
	Name            string    `gorm:"size:200;not null"`
	Description     string    `gorm:"size:1000"`
	DefaultPriority string    `gorm:"size:16;not null"`
	Position        int       `gorm:"not null;default:0"`
	CreatedAt       time.Time `gorm:"not null"`
	UpdatedAt       time.Time `gorm:"not null"`

	Subcategories []Subcategory `gorm:"-"`
	Targets       []SLATarget   `gorm:"-"`
}

// TableName is the categories table.
func (Category) TableName() string { return "support_categories" }

// Subcategory narrows a category (network: connectivity, performance...).
type Subcategory struct {
	CategoryID string `gorm:"primaryKey;size:40"`
	ID         string `gorm:"primaryKey;size:40"`
	Name       string `gorm:"size:200;not null"`
	// AutoAssign and EscalationThreshold are the optional routing hints of
	// the category answer (routing rules, in RoutingRule, do not read them).
	AutoAssign          string `gorm:"size:100"`
	EscalationThreshold string `gorm:"size:20"`
	Position            int    `gorm:"not null;default:0"`
}

// TableName is the subcategories table.
func (Subcategory) TableName() string { return "support_subcategories" }

// SLATarget is how fast a ticket of a category and priority must get its
// first response and be resolved.
type SLATarget struct {
	CategoryID        string `gorm:"primaryKey;size:40"`
	Priority          string `gorm:"primaryKey;size:16"`
	ResponseMinutes   int    `gorm:"not null"`
	ResolutionMinutes int    `gorm:"not null"`
}

// TableName is the SLA targets table.
func (SLATarget) TableName() string { return "support_sla_targets" }

// ResponseTime is the response target as a duration string ("15m", "4h").
func (t SLATarget) ResponseTime() string { return FormatMinutes(t.ResponseMinutes) }

// ResolutionTime is the resolution target as a duration string ("4h", "72h").
func (t SLATarget) ResolutionTime() string { return FormatMinutes(t.ResolutionMinutes) }

// FormatMinutes writes a number of minutes as whole hours ("4h") when it
// is one, else as hours and minutes ("1h30m") or minutes ("15m").
func FormatMinutes(m int) string {
	switch {
	case m%60 == 0:
		return fmt.Sprintf("%dh", m/60)
	case m > 60:
		return fmt.Sprintf("%dh%dm", m/60, m%60)
	default:
		return fmt.Sprintf("%dm", m)
	}
}

// DefaultSLATargets are the targets every seeded category starts with:
// first response / resolution of 15 minutes / 4 hours (critical), 1 hour /
// 8 hours (high), 4 hours / 24 hours (medium), 8 hours / 72 hours (low).
func DefaultSLATargets() map[string][2]int {
	return map[string][2]int{
		PriorityCritical: {15, 4 * 60},
		PriorityHigh:     {60, 8 * 60},
		PriorityMedium:   {4 * 60, 24 * 60},
		PriorityLow:      {8 * 60, 72 * 60},
	}
}

// seedCategory is one category of the seed.
type seedCategory struct {
	id, name, description, priority string
	subcategories                   [][2]string // id, name
}

// defaultCategories are the seeded categories and subcategories.
var defaultCategories = []seedCategory{
	{"network", "Network", "Connectivity services: internet access, MPLS, SD-WAN, circuits.", PriorityHigh,
		[][2]string{{"connectivity", "Connectivity"}, {"performance", "Performance"}, {"configuration", "Configuration"}}},
	{"voice", "Voice", "Voice services: SIP trunks, hosted PBX, numbers.", PriorityHigh,
		[][2]string{{"call_quality", "Call quality"}, {"features", "Features"}, {"numbers", "Numbers and porting"}}},
	{"cloud", "Cloud", "Cloud infrastructure: virtual machines, storage, networking.", PriorityMedium,
		[][2]string{{"compute", "Compute"}, {"storage", "Storage"}, {"access", "Access and networking"}}},
	{"security", "Security", "Security services: firewalls, DDoS protection, incidents.", PriorityHigh,
		[][2]string{{"firewall", "Firewall"}, {"ddos", "DDoS protection"}, {"incident", "Security incident"}}},
	{"billing", "Billing", "Invoices, payments and prices.", PriorityLow,
		[][2]string{{"invoice", "Invoice"}, {"payment", "Payment"}, {"pricing", "Pricing"}}},
	{"ai", "AI", "AI services: model training, inference, deployment.", PriorityMedium,
		[][2]string{{"training", "Model training"}, {"inference", "Inference"}, {"deployment", "Deployment"}}},
	{"general", "General", "Questions and requests that fit no other category.", PriorityLow,
		[][2]string{{"question", "Question"}, {"account", "Account"}, {"feedback", "Feedback"}}},
}

// Seed ensures the default categories, their subcategories and SLA targets
// exist, and the default SLA policies and calendar (see seedSLA). It is idempotent and keeps rows that already exist unchanged.
func (s *Store) Seed(ctx context.Context) error {
	db := s.core.In(ctx, models.SystemScope())
	now := s.now()
	targets := DefaultSLATargets()
	for i, c := range defaultCategories {
		cat := Category{ID: c.id, Name: c.name, Description: c.description, DefaultPriority: c.priority, Position: i, CreatedAt: now, UpdatedAt: now}
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&cat).Error; err != nil {
			return fmt.Errorf("support seed: %w", err)
		}
		for j, sc := range c.subcategories {
			sub := Subcategory{CategoryID: c.id, ID: sc[0], Name: sc[1], Position: j}
			if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&sub).Error; err != nil {
				return fmt.Errorf("support seed: %w", err)
			}
		}
		for _, p := range Priorities() {
			t := SLATarget{CategoryID: c.id, Priority: p, ResponseMinutes: targets[p][0], ResolutionMinutes: targets[p][1]}
			if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&t).Error; err != nil {
				return fmt.Errorf("support seed: %w", err)
			}
		}
	}
	return s.seedSLA(ctx)
}

// ListCategories returns every category, in their order, with its
// subcategories and SLA targets.
func (s *Store) ListCategories(ctx context.Context) ([]Category, error) {
	db := s.core.In(ctx, models.SystemScope())
	var cats []Category
	if err := db.Order("position, id").Find(&cats).Error; err != nil {
		return nil, dbErr(err)
	}
	var subs []Subcategory
	if err := db.Order("category_id, position, id").Find(&subs).Error; err != nil {
		return nil, dbErr(err)
	}
	var targets []SLATarget
	if err := db.Find(&targets).Error; err != nil {
		return nil, dbErr(err)
	}
	for i := range cats {
		for _, sc := range subs {
			if sc.CategoryID == cats[i].ID {
				cats[i].Subcategories = append(cats[i].Subcategories, sc)
			}
		}
		for _, t := range targets {
			if t.CategoryID == cats[i].ID {
				cats[i].Targets = append(cats[i].Targets, t)
			}
		}
		slices.SortFunc(cats[i].Targets, func(a, b SLATarget) int { return priorityRank(b.Priority) - priorityRank(a.Priority) })
	}
	return cats, nil
}

// Target returns the category's SLA target for priority (ok false when the
// category has none).
func (c *Category) Target(priority string) (SLATarget, bool) {
	for _, t := range c.Targets {
		if t.Priority == priority {
			return t, true
		}
	}
	return SLATarget{}, false
}

// HasSubcategory reports whether id is one of the category's subcategories.
func (c *Category) HasSubcategory(id string) bool {
	return slices.ContainsFunc(c.Subcategories, func(sc Subcategory) bool { return sc.ID == id })
}

// categoryByID returns one category from a list (nil when absent).
func categoryByID(cats []Category, id string) *Category {
	for i := range cats {
		if cats[i].ID == id {
			return &cats[i]
		}
	}
	return nil
}

// categoryIDs lists the ids of cats.
func categoryIDs(cats []Category) []string {
	out := make([]string, len(cats))
	for i, c := range cats {
		out[i] = c.ID
	}
	return out
}
