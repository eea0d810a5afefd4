package filter_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/filter"
	"github.com/telcoplatform/platform/testenv"
)

// filterRow is a row of the table the database test filters.
type filterRow struct {
	ID         string `gorm:"primaryKey;size:8"`
	Status     string `gorm:"size:16;not null"`
	Priority   string `gorm:"size:16;not null"`
	Category   string `gorm:"size:40;not null"`
	Title      string `gorm:"size:200;not null"`
	AssignedTo string `gorm:"size:40"`
	Amount     int64  `gorm:"not null"`
	Ratio      float64
	Currency   string `gorm:"size:3;not null"`
	Level      int    `gorm:"not null"`
	VIP        bool   `gorm:"column:vip;not null"`
	CreatedAt  time.Time
	PaidAt     *time.Time
}

// TableName is the test's own table.
func (filterRow) TableName() string { return "filter_test_rows" }

// TestFilterDatabase runs compiled filters on the test database (SQLite,
// or PostgreSQL under scripts/with-postgres.sh) and checks the rows each
// selects.
func TestFilterDatabase(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	db := store.In(ctx, models.SystemScope())
	if err := db.AutoMigrate(&filterRow{}); err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UTC()
	}
	paid := at("2026-01-02T08:00:00Z")
	rows := []filterRow{
		{ID: "a", Status: "open", Priority: "high", Category: "voice", Title: "Fiber cut on Main St", AssignedTo: "u1",
			Amount: 10050, Ratio: 0.5, Currency: "USD", Level: 0, CreatedAt: at("2026-01-01T00:00:00Z")},
		{ID: "b", Status: "escalated", Priority: "critical", Category: "network", Title: "50% packet_loss", AssignedTo: "",
			Amount: 9999, Ratio: 1.25, Currency: "EUR", Level: 2, VIP: true, CreatedAt: at("2026-01-01T23:59:59Z"), PaidAt: &paid},
		{ID: "c", Status: "closed", Priority: "low", Category: "voice", Title: "Echo on calls", AssignedTo: "u2",
			Amount: 100, Ratio: -1, Currency: "USD", Level: 1, CreatedAt: at("2026-01-02T00:00:00Z")},
		{ID: "d", Status: "open", Priority: "medium", Category: "billing", Title: `Quote "FIBER" upgrade \ 50`, AssignedTo: "",
			Amount: 20000, Ratio: 3, Currency: "GBP", Level: 3, VIP: true, CreatedAt: at("2025-12-31T23:00:00Z"), PaidAt: &paid},
	}
	if err := db.Create(&rows).Error; err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		expr string
		want []string
	}{
		{"status in (open, escalated) and priority >= high and created_at > 2025-12-31", []string{"a", "b"}},
		{`not (category = "voice") or title ~ "fiber"`, []string{"a", "b", "d"}},
		{"amount >= 100.50 and currency = USD and paid_at is null", []string{"a"}},
		{"priority >= high", []string{"a", "b"}},
		{"priority < medium", []string{"c"}},
		{"priority < low", nil},
		{"title ~ FIBER", []string{"a", "d"}},
		{`title ~ "50%"`, []string{"b"}},
		{`title ~ "%"`, []string{"b"}},
		{`title ~ "_"`, []string{"b"}},
		{`title ~ "\\"`, []string{"d"}},
		{`title ~ "\"fiber\""`, []string{"d"}},
		{"created_at = 2026-01-01", []string{"a", "b"}},
		{"created_at != 2026-01-01", []string{"c", "d"}},
		{"created_at >= 2026-01-01T00:00:00+01:00", []string{"a", "b", "c", "d"}},
		{"created_at > 2025-12-31T23:00:00Z", []string{"a", "b", "c"}},
		{"created_at < 2026-01-01", []string{"d"}},
		{"paid_at = 2026-01-02", []string{"b", "d"}},
		{"paid_at != 2026-01-02", []string{"a", "c"}},
		{"not paid_at = 2026-01-02", []string{"a", "c"}},
		{"paid_at is not null", []string{"b", "d"}},
		{"assigned_to is null", []string{"b", "d"}},
		{"assigned_to != u1", []string{"b", "c", "d"}},
		{"not assigned_to = u1", []string{"b", "c", "d"}},
		{"assigned_to not in (u1, u2)", []string{"b", "d"}},
		{"assigned_to in (u1, u2)", []string{"a", "c"}},
		{"vip = true", []string{"b", "d"}},
		{"vip != true", []string{"a", "c"}},
		{"level > 1 or level = 0", []string{"a", "b", "d"}},
		{"level not in (0, 3)", []string{"b", "c"}},
		{"ratio < 0.75", []string{"a", "c"}},
		{"ratio >= 1.25", []string{"b", "d"}},
		{"amount < 100.01", []string{"b", "c"}},
		{"amount <= 1", []string{"c"}},
		{"amount in (99.99, 1)", []string{"b", "c"}},
		{"status = open and (priority = medium or category = voice)", []string{"a", "d"}},
		{"status = OPEN and not priority = high", []string{"d"}},
	}
	for _, c := range cases {
		q, err := filter.Compile(testSchema(), c.expr)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		var got []string
		if err := db.Model(&filterRow{}).Where(q.SQL, q.Args...).Order("id").Pluck("id", &got).Error; err != nil {
			t.Errorf("%q: %s: %v", c.expr, q.SQL, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q (%s %v) selects %v, want %v", c.expr, q.SQL, q.Args, got, c.want)
		}
	}
}
