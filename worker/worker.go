// Package worker is the single place that lists the platform's workflows and
// activities and registers them on a Temporal worker.
package worker

import (
	"log/slog"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/telcoplatform/platform/models"
)

// Deps are what the activities need, passed in by main.
type Deps struct {
	Store  *models.Store
	Logger *slog.Logger
}

// Register registers every workflow and activity of the platform on w.
func Register(w sdkworker.Registry, deps Deps) {
	_ = w
	_ = deps
}

// New returns a worker polling taskQueue with everything registered.
func New(c client.Client, taskQueue string, deps Deps) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{})
	Register(w, deps)
	return w
}
