// Package builder is a temporary stand-in (removed when the engine lands).
package builder

import (
	"context"
	"io"
	"time"

	"github.com/telcoplatform/platform/models"
)

type Definition struct {
	Dataset    string   `json:"dataset"`
	Metrics    []string `json:"metrics"`
	Dimensions []string `json:"dimensions,omitempty"`
	Filter     string   `json:"filter,omitempty"`
	Sort       []Sort   `json:"sort,omitempty"`
	Limit      int      `json:"limit,omitempty"`
	Period     string   `json:"period,omitempty"`
	From       string   `json:"from,omitempty"`
	To         string   `json:"to,omitempty"`
	Timezone   string   `json:"timezone,omitempty"`
}
type Sort struct {
	Field     string `json:"field"`
	Direction string `json:"direction,omitempty"`
}
type Column struct{ Name, Type, Description string }
type Dataset struct {
	Name, Description string
	TimeField         string
	Metrics           []Column
	Dimensions        []Column
	Filters           []Column
}

func Datasets() []Dataset     { return nil }
func DatasetNames() []string  { return nil }

type Plan struct {
	Definition Definition
	From, To   time.Time
	Location   *time.Location
	Columns    []Column
}

func Validate(def Definition, now time.Time) (*Plan, error) { return nil, nil }

type Scope struct {
	OrganizationID string
	Environment    models.Environment
}
type Store struct{}

func NewStore(core *models.Store) *Store { return nil }

type Stats struct {
	Rows   int64
	Newest *time.Time
}

func (s *Store) Write(ctx context.Context, w io.Writer, id string, plan *Plan, scope Scope, format string, generatedAt time.Time) (Stats, error) {
	return Stats{}, nil
}
func (s *Store) Rows(ctx context.Context, plan *Plan, scope Scope) ([][]any, Stats, error) { return nil, Stats{}, nil }
