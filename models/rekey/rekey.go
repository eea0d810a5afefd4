package rekey

import (
	"context"
	"errors"
	"fmt"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
)

// sealedColumn is one column of sealed values: its table (a model), the
// column that identifies a row, and how a row's values are bound.
type sealedColumn struct {
	model  any
	idCol  string
	col    string
	bindTo func(id string) string
}

// sealedColumns lists every column that holds sealed values.
func sealedColumns() []sealedColumn {
	return []sealedColumn{
		{&identity.APIKey{}, "id", "signing_secret", models.BindAPIKey},
		{&eventlog.WebhookSubscription{}, "id", "secret", models.BindWebhook},
		{&eventlog.WebhookSubscription{}, "id", "previous_secret", models.BindWebhook},
		{&identity.MFAEnrollment{}, "user_id", "secret_sealed", models.BindMFA},
		{&eventlog.ContactNotification{}, "id", "body_sealed", models.BindNotification},
		{&identity.ServerSecret{}, "name", "sealed", models.BindServerSecret},
		{&identity.SigningKey{}, "id", "private_sealed", models.BindSigningKey},
		{&models.IdempotencyRecord{}, "scope_key", "body_sealed", models.BindIdempotency},
		{&support.TrackerIntegration{}, "id", "api_token_sealed", support.BindTrackerToken},
	}
}

// RekeySecrets re-seals, under the current secrets key and bound to its
// row, every stored value that is not already (values of a previous key or
// of the format without key ids). It returns how many it re-sealed; run it
// after rotating SECRETS_KEY (the old key in SECRETS_KEY_PREVIOUS), then
// drop the old key. A value changed meanwhile by another process is left
// to it. Errors: INTERNAL_ERROR (a value no configured key opens).
func (s *Store) RekeySecrets(ctx context.Context) (int, error) {
	if s.Sealer == nil {
		return 0, models.Internal(errors.New("rekey needs SECRETS_KEY (no sealer configured)"))
	}
	db := s.In(ctx, models.SystemScope())
	total := 0
	for _, c := range sealedColumns() {
		last := ""
		for {
			var rows []struct {
				ID     string
				Sealed string
			}
			err := db.Model(c.model).Select(c.idCol+" AS id", c.col+" AS sealed").
				Where(c.idCol+" > ? AND "+c.col+" IS NOT NULL AND "+c.col+" <> ''", last).
				Order(c.idCol).Limit(500).Scan(&rows).Error
			if err != nil {
				return total, models.DBErr(err)
			}
			if len(rows) == 0 {
				break
			}
			for _, r := range rows {
				last = r.ID
				if s.Sealer.Current(r.Sealed) {
					continue
				}
				plain, err := s.Sealer.Open(c.bindTo(r.ID), r.Sealed)
				if err != nil {
					return total, models.Internal(fmt.Errorf("%s of %s: %w", c.col, r.ID, err))
				}
				res := db.Model(c.model).Where(c.idCol+" = ? AND "+c.col+" = ?", r.ID, r.Sealed).
					Update(c.col, s.Sealer.Seal(c.bindTo(r.ID), plain))
				if res.Error != nil {
					return total, models.DBErr(res.Error)
				}
				total += int(res.RowsAffected)
			}
		}
	}
	return total, nil
}
