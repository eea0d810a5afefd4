package reports_test

import (
	"context"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/builder"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/testenv"
)

func TestDefinitionLifecycle(t *testing.T) {
	ctx := context.Background()
	store, seeded := testenv.SeededStore(t)
	s := reports.NewStore(store, testenv.Blobs(t))
	p := &models.Principal{ID: "ak_1", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	d, err := s.CreateDefinition(ctx, p, reports.DefinitionInput{Name: "a", Request: reports.Request{Query: builder.Definition{Dataset: "tickets", Metrics: []string{"count"}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, u, err := s.UpdateDefinition(ctx, p, d.ID, reports.DefinitionInput{Name: "b", Request: reports.Request{Query: builder.Definition{Dataset: "tickets", Metrics: []string{"count"}, From: "2026-01-01", To: "2026-02-01"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetDefinition(ctx, p, d.ID)
	if err != nil {
		var all []reports.Definition
		store.DB.Find(&all)
		t.Fatalf("%v %+v %+v", err, u, all)
	}
	if got.Name != "b" {
		t.Fatal(got)
	}
}
