package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/telcoplatform/platform/models"
)

// A request that fails because the database cannot be reached is a 503
// DEPENDENCY_UNAVAILABLE with Retry-After; other internal errors stay 500.
func TestDatabaseOutageAnswers503(t *testing.T) {
	down := models.Internal(fmt.Errorf("load ticket: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}))
	body := newErrorBody(context.Background(), nil, down)
	if body.status != http.StatusServiceUnavailable || body.Error.Code != models.CodeDependencyUnavailable ||
		body.headers["Retry-After"] != "2" || body.Error.Details["retry_after"] != models.DatabaseUnavailableRetry {
		t.Fatalf("database outage answered %d %s, headers %v, details %v", body.status, body.Error.Code, body.headers, body.Error.Details)
	}
	other := newErrorBody(context.Background(), nil, errors.New("boom"))
	if other.status != http.StatusInternalServerError || other.Error.Code != models.CodeInternal {
		t.Fatalf("internal error answered %d %s", other.status, other.Error.Code)
	}
	conflict := newErrorBody(context.Background(), nil, models.Errorf(models.CodeServiceConflict, "busy"))
	if conflict.status != http.StatusConflict {
		t.Fatalf("a platform error changed: %d", conflict.status)
	}
}
