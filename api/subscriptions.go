package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.temporal.io/api/serviceerror"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/workflows"
)

// PeriodItem is a billing period.
type PeriodItem struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// SubscriptionWorkflowItem locates a subscription's Temporal workflow.
type SubscriptionWorkflowItem struct {
	ID    string `json:"id" example:"sub_3fK9aZ"`
	UIURL string `json:"ui_url"`
}

// SubscriptionItem is a subscription: the recurring billing of one service.
type SubscriptionItem struct {
	ID                  string                   `json:"id" example:"sub_3fK9aZ"`
	AccountID           string                   `json:"account_id"`
	ServiceID           string                   `json:"service_id"`
	Status              string                   `json:"status" enum:"pending,active,cancelled"`
	Description         string                   `json:"description"`
	BillingCycle        string                   `json:"billing_cycle" example:"monthly"`
	PendingBillingCycle string                   `json:"pending_billing_cycle,omitempty" doc:"Takes effect at the next period"`
	AutoRenew           bool                     `json:"auto_renew"`
	Quantity            int                      `json:"quantity"`
	UnitPrice           models.Money             `json:"unit_price" doc:"Per unit and month"`
	CycleAmount         models.Money             `json:"cycle_amount" doc:"Price of one full period at the current quantity"`
	MonthlyAmount       models.Money             `json:"monthly_amount"`
	Currency            string                   `json:"currency" example:"USD"`
	PaymentMethodID     string                   `json:"payment_method_id,omitempty"`
	StartDate           string                   `json:"start_date"`
	CurrentPeriod       PeriodItem               `json:"current_period"`
	CancelAt            *string                  `json:"cancel_at"`
	CancelAtPeriodEnd   bool                     `json:"cancel_at_period_end"`
	CancelledAt         *string                  `json:"cancelled_at"`
	EndedReason         string                   `json:"ended_reason,omitempty" enum:"cancelled,not_renewed,service_decommissioned"`
	PeriodsBilled       int                      `json:"periods_billed"`
	CreatedAt           string                   `json:"created_at"`
	UpdatedAt           string                   `json:"updated_at"`
	Workflow            SubscriptionWorkflowItem `json:"workflow"`
}

func (s *Server) subscriptionItem(sub *billing.Subscription) SubscriptionItem {
	return SubscriptionItem{
		ID: sub.ID, AccountID: sub.AccountID, ServiceID: sub.ServiceID, Status: string(sub.Status), Description: sub.Description,
		BillingCycle: sub.BillingCycle, PendingBillingCycle: sub.PendingCycle, AutoRenew: sub.AutoRenew, Quantity: sub.Quantity,
		UnitPrice: sub.UnitPrice, CycleAmount: sub.CyclePrice() * models.Money(sub.Quantity), MonthlyAmount: sub.MonthlyRunRate(), Currency: sub.Currency,
		PaymentMethodID: sub.PaymentMethodID, StartDate: models.Timestamp(sub.StartDate),
		CurrentPeriod: PeriodItem{Start: models.Timestamp(sub.CurrentPeriodStart), End: models.Timestamp(sub.CurrentPeriodEnd)},
		CancelAt:      optTimestamp(sub.CancelAt), CancelAtPeriodEnd: sub.CancelAt != nil && sub.CancelAt.Equal(sub.CurrentPeriodEnd) && sub.Status != billing.SubscriptionCancelled,
		CancelledAt: optTimestamp(sub.CancelledAt), EndedReason: sub.EndedReason, PeriodsBilled: sub.PeriodsBilled,
		CreatedAt: models.Timestamp(sub.CreatedAt), UpdatedAt: models.Timestamp(sub.UpdatedAt),
		Workflow: SubscriptionWorkflowItem{ID: sub.ID, UIURL: s.uiURL(sub.ID)},
	}
}

// SubscriptionOutput wraps one subscription.
type SubscriptionOutput struct {
	Body struct {
		Envelope
		Subscription SubscriptionItem `json:"subscription"`
	}
}

// SubscriptionsOutput lists subscriptions.
type SubscriptionsOutput struct {
	Status int
	Body   struct {
		Envelope
		Subscriptions []SubscriptionItem `json:"subscriptions"`
		Pagination    *Pagination        `json:"pagination,omitempty"`
	}
}

// RecurringServiceBody is one service of the recurring billing request.
type RecurringServiceBody struct {
	ServiceID    string `json:"service_id" maxLength:"64" example:"svc_3fK9aZ"`
	BillingCycle string `json:"billing_cycle,omitempty" maxLength:"20" example:"monthly" doc:"monthly, quarterly or annual (default: the account's billing_cycle); sandbox keys also sandbox_<n>s"`
	AutoRenew    *bool  `json:"auto_renew,omitempty" doc:"Default true; false ends the subscription at the end of its first period"`
	Quantity     int    `json:"quantity,omitempty" minimum:"1" maximum:"10000" doc:"Units billed (users, agents, sites...), 1 to 10000, default 1"`
}

// RecurringBody is the recurring billing request.
type RecurringBody struct {
	AccountID       string                 `json:"account_id" required:"true" minLength:"1" maxLength:"64" example:"acct_3fK9aZ" doc:"Required"`
	Services        []RecurringServiceBody `json:"services" required:"true" minItems:"1" maxItems:"100" doc:"Required: one subscription is created per service"`
	PaymentMethodID string                 `json:"payment_method_id,omitempty" maxLength:"64" doc:"Charged by auto-pay instead of the account's payment method"`
	StartDate       *time.Time             `json:"start_date,omitempty" doc:"Start of the first period (default now; at most a day in the past, within 365 days)"`
}

type subscriptionPath struct {
	ID string `path:"subscription_id" maxLength:"64" example:"sub_3fK9aZ"`
}

// startSubscriptions starts one workflow per subscription. If one cannot
// be started, those already started are terminated, every row is removed
// and the answer is DEPENDENCY_UNAVAILABLE.
func (s *Server) startSubscriptions(ctx context.Context, scope models.Scope, subs []billing.Subscription) error {
	var started []string
	fail := func(cause error) error {
		bg := context.WithoutCancel(ctx)
		for _, id := range started {
			if err := s.temporal.TerminateWorkflow(bg, id, "", "subscription request failed"); err != nil {
				s.log.ErrorContext(ctx, "terminating a subscription workflow failed", "subscription_id", id, "error", err)
			}
		}
		ids := make([]string, len(subs))
		for i := range subs {
			ids[i] = subs[i].ID
		}
		if err := s.billing.DeletePendingSubscriptions(bg, scope, ids); err != nil {
			s.log.ErrorContext(ctx, "removing subscriptions that did not start failed", "error", err)
		}
		e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable; retry later").WithDetail("retry_after", 5)
		e.Cause = cause
		return e
	}
	for _, sub := range subs {
		opts := workflows.StartOptions(s.taskQueues(), workflows.Start{ID: sub.ID, Priority: workflows.Interactive,
			OrganizationID: scope.OrganizationID, Environment: scope.Environment, OperationType: workflows.OperationTypeSubscription, ResourceID: sub.ServiceID,
			Summary: fmt.Sprintf("Subscription %s of %s for %s (%s)", sub.ID, sub.ServiceID, scope.OrganizationID, scope.Environment),
			Link:    s.cfg.PublicBaseURL + "/v1/billing/subscriptions/" + sub.ID})
		in := workflows.SubscriptionInput{SubscriptionID: sub.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment}
		startCtx, cancel := context.WithTimeout(ctx, workflowStartTimeout)
		_, err := s.temporal.ExecuteWorkflow(startCtx, opts, workflows.SubscriptionWorkflow, in)
		cancel()
		if err != nil {
			return fail(err)
		}
		started = append(started, sub.ID)
	}
	return nil
}

func (s *Server) registerSubscriptions() {
	tags := []string{"Billing: subscriptions"}
	register(s, huma.Operation{OperationID: "create-recurring-billing", Method: http.MethodPost, Path: "/billing/recurring", Summary: "Start recurring billing", Tags: tags,
		DefaultStatus: http.StatusCreated,
		Description: "Creates one subscription per service, priced from the catalog, each billed by its own Temporal workflow (id = the subscription id): " +
			"at the end of every period it rates the period, issues the invoice (invoice.created) and, with auto_pay, charges it, retrying failures " +
			"1, 3 and 7 days later before the invoice becomes overdue. Subscriptions start pending and become active (subscription.created) once their " +
			"workflow runs. See docs/billing.md."},
		access{permission: "billing:write", mfa: true}, func(ctx context.Context, in *struct{ Body RecurringBody }) (*SubscriptionsOutput, error) {
			if s.temporal == nil {
				return nil, models.Errorf(models.CodeDependencyUnavailable, "recurring billing is unavailable: no workflow engine is configured")
			}
			b := in.Body
			mi := billing.RecurringInput{AccountID: b.AccountID, PaymentMethodID: b.PaymentMethodID, StartDate: b.StartDate}
			for _, it := range b.Services {
				mi.Services = append(mi.Services, billing.RecurringItem{ServiceID: it.ServiceID, BillingCycle: it.BillingCycle, AutoRenew: it.AutoRenew, Quantity: it.Quantity})
			}
			subs, scope, err := s.billing.CreateSubscriptions(ctx, principal(ctx), mi)
			if err != nil {
				return nil, err
			}
			if err := s.startSubscriptions(ctx, scope, subs); err != nil {
				return nil, err
			}
			out := &SubscriptionsOutput{Status: http.StatusCreated}
			out.Body.Subscriptions = mapSlice(subs, s.subscriptionItem)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-subscriptions", Method: http.MethodGet, Path: "/billing/subscriptions", Summary: "List subscriptions", Tags: tags},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			ListParams
			AccountID string `query:"account_id" maxLength:"64"`
			ServiceID string `query:"service_id" maxLength:"64"`
			Status    string `query:"status" enum:"pending,active,cancelled"`
		}) (*SubscriptionsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			subs, total, err := s.billing.ListSubscriptions(ctx, principal(ctx), billing.SubscriptionFilter{AccountID: in.AccountID, ServiceID: in.ServiceID, Status: in.Status}, pr)
			if err != nil {
				return nil, err
			}
			out := &SubscriptionsOutput{Status: http.StatusOK}
			out.Body.Subscriptions = mapSlice(subs, s.subscriptionItem)
			pg := newPagination(pr, total)
			out.Body.Pagination = &pg
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-subscription", Method: http.MethodGet, Path: "/billing/subscriptions/{subscription_id}", Summary: "Get a subscription", Tags: tags},
		access{permission: "billing:read"}, func(ctx context.Context, in *subscriptionPath) (*SubscriptionOutput, error) {
			sub, err := s.billing.GetSubscription(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			out := &SubscriptionOutput{}
			out.Body.Subscription = s.subscriptionItem(sub)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "update-subscription", Method: http.MethodPut, Path: "/billing/subscriptions/{subscription_id}", Summary: "Change a subscription", Tags: tags,
		Description: "quantity applies from now: the current period is prorated between the old and the new quantity. billing_cycle applies from the next " +
			"period. auto_renew false ends the subscription at the end of the current period. A subscription that has ended is 409 INVALID_STATE_TRANSITION."},
		access{permission: "billing:write"}, func(ctx context.Context, in *struct {
			ID   string `path:"subscription_id" maxLength:"64" example:"sub_3fK9aZ"`
			Body struct {
				BillingCycle *string `json:"billing_cycle,omitempty" maxLength:"20"`
				AutoRenew    *bool   `json:"auto_renew,omitempty"`
				Quantity     *int    `json:"quantity,omitempty" minimum:"1" maximum:"10000" doc:"1 to 10000; applies now, prorated"`
			}
		}) (*SubscriptionOutput, error) {
			sub, err := s.billing.UpdateSubscription(ctx, principal(ctx), in.ID, billing.SubscriptionPatch{BillingCycle: in.Body.BillingCycle, AutoRenew: in.Body.AutoRenew, Quantity: in.Body.Quantity})
			if err != nil {
				return nil, err
			}
			out := &SubscriptionOutput{}
			out.Body.Subscription = s.subscriptionItem(sub)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "cancel-subscription", Method: http.MethodDelete, Path: "/billing/subscriptions/{subscription_id}", Summary: "Cancel a subscription", Tags: tags,
		Description: "Cancels at the end of the current period (default), or now with at_period_end=false: the period is then billed up to now (prorated). " +
			"The subscription becomes cancelled (subscription.cancelled) when its workflow closes the period. Cancelling an ended subscription is 409."},
		access{permission: "billing:write"}, func(ctx context.Context, in *struct {
			ID          string `path:"subscription_id" maxLength:"64" example:"sub_3fK9aZ"`
			AtPeriodEnd bool   `query:"at_period_end" default:"true" doc:"false cancels now"`
		}) (*SubscriptionOutput, error) {
			sub, err := s.billing.CancelSubscription(ctx, principal(ctx), in.ID, in.AtPeriodEnd)
			if err != nil {
				return nil, err
			}
			s.signalCancel(ctx, sub)
			out := &SubscriptionOutput{}
			out.Body.Subscription = s.subscriptionItem(sub)
			return out, nil
		})
}

// signalCancel wakes the subscription's workflow so that a cancellation
// takes effect now. The row already holds the cancellation: if the signal
// cannot be sent, the workflow applies it at the latest when the period
// ends (billing only up to cancel_at), so a failure is only logged.
func (s *Server) signalCancel(ctx context.Context, sub *billing.Subscription) {
	if s.temporal == nil || sub.CancelAt == nil {
		return
	}
	sigCtx, cancel := context.WithTimeout(ctx, workflowStartTimeout)
	defer cancel()
	err := s.temporal.SignalWorkflow(sigCtx, sub.ID, "", workflows.SignalCancelSubscription, workflows.CancelSignal{At: *sub.CancelAt})
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) {
		s.log.WarnContext(ctx, "could not signal a subscription's cancellation; it applies at the end of the period", "subscription_id", sub.ID, "error", err)
	}
}
