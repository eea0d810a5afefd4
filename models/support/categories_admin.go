package support

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
)

// Bounds of a category.
const (
	MaxCategoryName        = 200
	MaxCategoryDescription = 1000
	MaxSubcategories       = 50
	MaxAutoAssign          = 100
	MaxEscalationThreshold = 20
)

var categoryIDPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{1,39}$`)

// SubcategoryInput is a subcategory as sent.
type SubcategoryInput struct {
	ID                  string
	Name                string
	AutoAssign          string
	EscalationThreshold string
}

// SLATargetInput is the SLA target of one priority as sent: durations of
// whole minutes (15m, 4h, 1h30m).
type SLATargetInput struct {
	Priority       string
	ResponseTime   string
	ResolutionTime string
}

// CategoryInput is a category's fields as sent; nil fields are absent (on
// creation: defaults; on an update: unchanged). Subcategories, when sent,
// replace the list; SLA targets, when sent, replace the targets of the
// priorities they name (on creation the others take DefaultSLATargets).
type CategoryInput struct {
	ID              string // creation only
	Name            *string
	Description     *string
	DefaultPriority *string
	Position        *int
	Subcategories   *[]SubcategoryInput
	SLATargets      []SLATargetInput
}

// CanAdminister reports whether p may manage the support area's provider
// settings (categories, routing rules, knowledge): provider staff holding
// support:admin.
func CanAdminister(p *models.Principal) bool { return p.IsStaff() && p.Can(PermissionAdmin) }

func categoriesForbidden() error {
	return models.Errorf(models.CodeInsufficientPermissions, "categories are managed by provider staff with %s", PermissionAdmin).
		WithDetail("required_permission", PermissionAdmin)
}

// CreateCategory validates in and stores a new category with its
// subcategories and its SLA targets (every priority: those sent, the
// defaults for the others), and the category's team (team_<id>, no members
// yet). Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR, ALREADY_EXISTS.
func (s *Store) CreateCategory(ctx context.Context, p *models.Principal, in CategoryInput) (*Category, error) {
	if !CanAdminister(p) {
		return nil, categoriesForbidden()
	}
	cats, err := s.ListCategories(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	in.ID = strings.TrimSpace(in.ID)
	c := &Category{ID: in.ID, Position: len(cats), CreatedAt: now, UpdatedAt: now}
	for _, cat := range cats {
		c.Position = max(c.Position, cat.Position+1)
	}
	defaults := DefaultSLATargets()
	for _, pr := range Priorities() {
		c.Targets = append(c.Targets, SLATarget{CategoryID: c.ID, Priority: pr, ResponseMinutes: defaults[pr][0], ResolutionMinutes: defaults[pr][1]})
	}
	var v models.Validator
	switch {
	case in.ID == "":
		v.Add("id", "is required")
	case !categoryIDPattern.MatchString(in.ID):
		v.Add("id", "must be 2 to 40 lowercase letters, digits or underscores, starting with a letter (e.g. iot)")
	}
	v.Check(in.Name != nil, "name", "is required")
	v.Check(in.DefaultPriority != nil, "default_priority", "is required: one of "+joinList(Priorities()))
	applyCategory(&v, c, in)
	if err := v.Err(); err != nil {
		return nil, err
	}
	if categoryByID(cats, c.ID) != nil {
		return nil, models.Errorf(models.CodeAlreadyExists, "category %s already exists", c.ID).WithDetail("id", c.ID)
	}
	err = s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if err := tx.Create(c).Error; err != nil {
			if models.IsUniqueViolation(err) {
				return models.Errorf(models.CodeAlreadyExists, "category %s already exists", c.ID).WithDetail("id", c.ID)
			}
			return dbErr(err)
		}
		if err := writeCategoryChildren(tx, c, true); err != nil {
			return err
		}
		team := Team{ID: CategoryTeamID(c.ID), Name: c.Name + " team", Category: c.ID, CreatedAt: now, UpdatedAt: now}
		return dbErr(tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&team).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.category(ctx, c.ID)
}

// UpdateCategory applies the fields of in that are present to a category.
// Tickets keep the SLA targets they were opened with.
// Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND, VALIDATION_ERROR.
func (s *Store) UpdateCategory(ctx context.Context, p *models.Principal, id string, in CategoryInput) (*Category, error) {
	if !CanAdminister(p) {
		return nil, categoriesForbidden()
	}
	c, err := s.category(ctx, id)
	if err != nil {
		return nil, err
	}
	var v models.Validator
	applyCategory(&v, c, in)
	if err := v.Err(); err != nil {
		return nil, err
	}
	c.UpdatedAt = s.now()
	err = s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if err := tx.Model(&Category{}).Where("id = ?", c.ID).Updates(map[string]any{"name": c.Name, "description": c.Description,
			"default_priority": c.DefaultPriority, "position": c.Position, "updated_at": c.UpdatedAt}).Error; err != nil {
			return dbErr(err)
		}
		return writeCategoryChildren(tx, c, in.Subcategories != nil)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.category(ctx, c.ID)
}

// category returns one category with its subcategories and targets.
// Errors: NOT_FOUND.
func (s *Store) category(ctx context.Context, id string) (*Category, error) {
	cats, err := s.ListCategories(ctx)
	if err != nil {
		return nil, err
	}
	c := categoryByID(cats, id)
	if c == nil {
		return nil, models.NotFound("category")
	}
	return c, nil
}

// writeCategoryChildren stores c's SLA targets (insert or replace) and,
// when subs is true, replaces its subcategories.
func writeCategoryChildren(tx *gorm.DB, c *Category, subs bool) error {
	for _, t := range c.Targets {
		t.CategoryID = c.ID
		err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "category_id"}, {Name: "priority"}},
			DoUpdates: clause.AssignmentColumns([]string{"response_minutes", "resolution_minutes"})}).Create(&t).Error
		if err != nil {
			return dbErr(err)
		}
	}
	if !subs {
		return nil
	}
	if err := tx.Where("category_id = ?", c.ID).Delete(&Subcategory{}).Error; err != nil {
		return dbErr(err)
	}
	for i, sc := range c.Subcategories {
		sc.CategoryID, sc.Position = c.ID, i
		if err := tx.Create(&sc).Error; err != nil {
			return dbErr(err)
		}
	}
	return nil
}

// applyCategory sets the present fields of in on c and validates the
// result (issues in v).
func applyCategory(v *models.Validator, c *Category, in CategoryInput) {
	if in.Name != nil {
		c.Name = strings.TrimSpace(*in.Name)
		v.Check(c.Name != "", "name", "must not be empty")
	}
	checkLen(v, "name", c.Name, MaxCategoryName)
	if in.Description != nil {
		c.Description = strings.TrimSpace(*in.Description)
	}
	checkLen(v, "description", c.Description, MaxCategoryDescription)
	if in.DefaultPriority != nil {
		c.DefaultPriority = strings.TrimSpace(*in.DefaultPriority)
		v.Check(priorityRank(c.DefaultPriority) >= 0, "default_priority", "must be one of "+joinList(Priorities()))
	}
	if in.Position != nil {
		c.Position = *in.Position
		v.Check(c.Position >= 0 && c.Position <= 10000, "position", "must be between 0 and 10000")
	}
	if in.Subcategories != nil {
		subs := *in.Subcategories
		v.Check(len(subs) <= MaxSubcategories, "subcategories", "must have at most "+itoa(MaxSubcategories)+" items")
		c.Subcategories = []Subcategory{}
		for i, sc := range subs {
			field := "subcategories[" + itoa(i) + "]"
			sc.ID, sc.Name = strings.TrimSpace(sc.ID), strings.TrimSpace(sc.Name)
			v.Check(categoryIDPattern.MatchString(sc.ID), field+".id", "must be 2 to 40 lowercase letters, digits or underscores, starting with a letter")
			v.Check(!slices.ContainsFunc(c.Subcategories, func(o Subcategory) bool { return o.ID == sc.ID }), field+".id", "is listed twice")
			v.Check(sc.Name != "", field+".name", "is required")
			checkLen(v, field+".name", sc.Name, MaxCategoryName)
			checkLen(v, field+".routing_rules.auto_assign", sc.AutoAssign, MaxAutoAssign)
			checkLen(v, field+".routing_rules.escalation_threshold", sc.EscalationThreshold, MaxEscalationThreshold)
			c.Subcategories = append(c.Subcategories, Subcategory{ID: sc.ID, Name: sc.Name, AutoAssign: strings.TrimSpace(sc.AutoAssign),
				EscalationThreshold: strings.TrimSpace(sc.EscalationThreshold)})
		}
	}
	seen := map[string]bool{}
	for i, t := range in.SLATargets {
		field := "sla_targets[" + itoa(i) + "]"
		pr := strings.TrimSpace(t.Priority)
		if priorityRank(pr) < 0 {
			v.Add(field+".priority", "must be one of "+joinList(Priorities()))
			continue
		}
		v.Check(!seen[pr], field+".priority", "is listed twice")
		seen[pr] = true
		resp := parseRuleDuration(v, field+".response_time", strings.TrimSpace(t.ResponseTime))
		res := parseRuleDuration(v, field+".resolution_time", strings.TrimSpace(t.ResolutionTime))
		v.Check(strings.TrimSpace(t.ResponseTime) != "", field+".response_time", "is required")
		v.Check(strings.TrimSpace(t.ResolutionTime) != "", field+".resolution_time", "is required")
		if resp <= 0 || res <= 0 {
			continue
		}
		v.Check(resp <= res, field+".response_time", "must not be longer than resolution_time")
		j := slices.IndexFunc(c.Targets, func(o SLATarget) bool { return o.Priority == pr })
		nt := SLATarget{CategoryID: c.ID, Priority: pr, ResponseMinutes: resp, ResolutionMinutes: res}
		if j < 0 {
			c.Targets = append(c.Targets, nt)
		} else {
			c.Targets[j] = nt
		}
	}
}
