package support

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// PrefixTeam starts team ids. The team of a category has the id
// team_<category> (see CategoryTeamID).
const PrefixTeam = "team"

// Team is a group of provider agents. Each category has one (its
// specialists), which takes the category's tickets that no routing rule
// assigns; a routing rule may also assign to a team.
type Team struct {
	ID        string    `gorm:"primaryKey;size:40"`
	Name      string    `gorm:"size:200;not null"`
	Category  string    `gorm:"size:40;index"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

// TableName is the teams table.
func (Team) TableName() string { return "support_teams" }

// TeamMember makes a provider agent a member of a team.
type TeamMember struct {
	TeamID    string    `gorm:"primaryKey;size:40"`
	UserID    string    `gorm:"primaryKey;size:40;index"`
	CreatedAt time.Time `gorm:"not null"`
}

// TableName is the team members table.
func (TeamMember) TableName() string { return "support_team_members" }

// CategoryTeamID is the id of a category's team.
func CategoryTeamID(category string) string { return PrefixTeam + "_" + category }

// isTeamID reports whether an assign_to names a team rather than an agent.
func isTeamID(id string) bool { return strings.HasPrefix(id, PrefixTeam+"_") }

// openStatuses are the statuses that count as an agent's load.
func openStatuses() []string { return []string{StatusOpen, StatusInProgress, StatusEscalated} }

// EnsureTeam creates the team t unless a team with its id exists (which is
// kept unchanged), and returns the stored team.
func (s *Store) EnsureTeam(ctx context.Context, t Team) (*Team, error) {
	db := s.core.In(ctx, models.SystemScope())
	now := s.now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt, t.UpdatedAt = now, now
	}
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&t).Error; err != nil {
		return nil, dbErr(err)
	}
	var out Team
	if err := db.Where("id = ?", t.ID).Take(&out).Error; err != nil {
		return nil, notFoundOr(err, "team")
	}
	return &out, nil
}

// AddTeamMember makes the provider agent userID a member of team teamID
// (again: nothing changes). Errors: NOT_FOUND (team or agent).
func (s *Store) AddTeamMember(ctx context.Context, teamID, userID string) error {
	db := s.core.In(ctx, models.SystemScope())
	if err := db.Where("id = ?", teamID).Take(&Team{}).Error; err != nil {
		return notFoundOr(err, "team")
	}
	if _, err := s.agent(ctx, userID); err != nil {
		return err
	}
	m := TeamMember{TeamID: teamID, UserID: userID, CreatedAt: s.now()}
	return dbErr(db.Clauses(clause.OnConflict{DoNothing: true}).Create(&m).Error)
}

// team returns one team. Errors: NOT_FOUND.
func (s *Store) team(ctx context.Context, id string) (*Team, error) {
	var t Team
	if err := s.core.In(ctx, models.SystemScope()).Where("id = ?", id).Take(&t).Error; err != nil {
		return nil, notFoundOr(err, "team")
	}
	return &t, nil
}

// categoryTeam returns the team of a category: the oldest team whose
// category it is (nil when there is none).
func (s *Store) categoryTeam(ctx context.Context, category string) (*Team, error) {
	var ts []Team
	if err := s.core.In(ctx, models.SystemScope()).Where("category = ?", category).Order("created_at, id").Limit(1).Find(&ts).Error; err != nil {
		return nil, dbErr(err)
	}
	if len(ts) == 0 {
		return nil, nil
	}
	return &ts[0], nil
}

// leastLoaded returns the member of team teamID with the fewest open,
// in_progress and escalated tickets assigned (every organization and
// environment counts); ties go to the member who joined first, then to the
// smaller user id. Members who are no longer provider agents are passed
// over; nil when none is left.
func (s *Store) leastLoaded(ctx context.Context, teamID string) (*identity.User, error) {
	db := s.core.In(ctx, models.SystemScope())
	var members []TeamMember
	if err := db.Where("team_id = ?", teamID).Order("created_at, user_id").Find(&members).Error; err != nil {
		return nil, dbErr(err)
	}
	if len(members) == 0 {
		return nil, nil
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.UserID
	}
	var users []identity.User
	if err := db.Where("id IN ? AND role IN ?", ids, []models.Role{models.RoleAgent, models.RoleAdmin}).Find(&users).Error; err != nil {
		return nil, dbErr(err)
	}
	var loads []struct {
		AssignedTo string
		N          int64
	}
	if err := db.Model(&Ticket{}).Select("assigned_to, COUNT(*) AS n").Where("assigned_to IN ? AND status IN ?", ids, openStatuses()).
		Group("assigned_to").Scan(&loads).Error; err != nil {
		return nil, dbErr(err)
	}
	load := map[string]int64{}
	for _, l := range loads {
		load[l.AssignedTo] = l.N
	}
	var best *identity.User
	var bestLoad int64
	for _, id := range ids { // membership order: the tie-break
		i := slices.IndexFunc(users, func(u identity.User) bool { return u.ID == id })
		if i < 0 {
			continue
		}
		if best == nil || load[id] < bestLoad {
			best, bestLoad = &users[i], load[id]
		}
	}
	return best, nil
}

// specializations returns the categories of the teams of each user in ids
// (in category order).
func (s *Store) specializations(ctx context.Context, ids []string) map[string][]string {
	out := map[string][]string{}
	var rows []struct {
		UserID   string
		Category string
	}
	err := s.core.In(ctx, models.SystemScope()).Table("support_team_members AS m").
		Select("m.user_id, t.category").Joins("JOIN support_teams t ON t.id = m.team_id").
		Where("m.user_id IN ? AND t.category <> ?", ids, "").Order("t.category").Scan(&rows).Error
	if err != nil {
		return out
	}
	for _, r := range rows {
		out[r.UserID] = append(out[r.UserID], r.Category)
	}
	return out
}

// seedAgent is one seeded provider agent: its e-mail's local part, name
// and the categories whose teams it joins.
type seedAgent struct {
	local, name string
	categories  []string
}

// SeedAgentsDomain is the e-mail domain of the seeded provider agents.
const SeedAgentsDomain = "support.provider.example"

// demoAgents are the seeded agents: two specialists per category, so the
// least-loaded assignment has a choice.
func demoAgents() []seedAgent {
	names := map[string][2]string{
		"network": {"Nadia Network", "Noah Network"}, "voice": {"Vera Voice", "Victor Voice"},
		"cloud": {"Clara Cloud", "Carl Cloud"}, "security": {"Sam Security", "Sofia Security"},
		"billing": {"Bella Billing", "Ben Billing"}, "ai": {"Ada AI", "Alan AI"}, "general": {"Gina General", "Greg General"},
	}
	var out []seedAgent
	for _, c := range defaultCategories {
		for i, n := range names[c.id] {
			out = append(out, seedAgent{local: fmt.Sprintf("%s.agent%d", c.id, i+1), name: n, categories: []string{c.id}})
		}
	}
	return out
}

// SeedAgents ensures a team per category (team_<category>, "<Category>
// team") and the demo provider agents (role agent, in the provider's
// organization, e-mail <category>.agent<n>@support.provider.example) as
// members of their categories' teams. It is idempotent: existing teams,
// users and memberships are kept unchanged. It returns the seeded agents.
func (s *Store) SeedAgents(ctx context.Context) ([]identity.User, error) {
	prov, err := s.identity.EnsureProviderOrganization(ctx)
	if err != nil {
		return nil, err
	}
	cats, err := s.ListCategories(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range cats {
		if _, err := s.EnsureTeam(ctx, Team{ID: CategoryTeamID(c.ID), Name: c.Name + " team", Category: c.ID}); err != nil {
			return nil, fmt.Errorf("support seed: team of %s: %w", c.ID, err)
		}
	}
	db := s.core.In(ctx, models.SystemScope())
	var out []identity.User
	for _, a := range demoAgents() {
		email := a.local + "@" + SeedAgentsDomain
		now := s.now()
		u := identity.User{ID: models.NewID(models.PrefixUser), OrganizationID: prov.ID, Email: email, Name: a.name, Role: models.RoleAgent,
			CreatedAt: now, UpdatedAt: now}
		if err := db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "email"}}, DoNothing: true}).Create(&u).Error; err != nil {
			return nil, fmt.Errorf("support seed: agent %s: %w", email, err)
		}
		u = identity.User{} // the stored user, whether just created or not
		if err := db.Where("email = ?", email).Take(&u).Error; err != nil {
			return nil, fmt.Errorf("support seed: agent %s: %w", email, err)
		}
		for _, c := range a.categories {
			if categoryByID(cats, c) == nil {
				continue
			}
			if err := s.AddTeamMember(ctx, CategoryTeamID(c), u.ID); err != nil {
				return nil, fmt.Errorf("support seed: agent %s: %w", email, err)
			}
		}
		out = append(out, u)
	}
	return out, nil
}
