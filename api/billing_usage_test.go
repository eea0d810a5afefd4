package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/redisconn"
	"github.com/telcoplatform/platform/workflows"
)

func closedPeriod(t testing.TB, h *harness, tn tenant, svc string) *billing.CycleClose {
	t.Helper()
	ctx := context.Background()
	subs, scope, err := billing.NewStore(h.store).CreateSubscriptions(ctx, tenantPrincipal(tn), billing.RecurringInput{AccountID: tn.account.ID, Services: []billing.RecurringItem{{ServiceID: svc}}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := billing.NewStore(h.store).BeginSubscription(ctx, scope, subs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := billing.NewStore(h.store).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: sub.CurrentPeriodStart, CloseAt: sub.CurrentPeriodEnd})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestUsageCostAnalysisAndAnalytics(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	rdb, _, closeRedis, err := redisconn.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeRedis() })
	plain := h.srv
	h.withLimiter(rdb) // counts the organization's API requests (the export group allows 10 reads an hour: few calls)
	svc := mustService(t, h, a)
	closed := closedPeriod(t, h, a, svc)
	manual := newInvoice(t, h, a, svc, 2, 25)
	if closed.InvoiceID == "" || closed.Total != 29900 {
		t.Fatalf("recurring invoice %+v", closed)
	}

	t.Run("usage", func(t *testing.T) {
		var u struct {
			Period     string `json:"period"`
			Currency   string `json:"currency"`
			TotalUsage struct {
				VoiceMinutes   int64 `json:"voice_minutes"`
				DataGB         int64 `json:"data_gb"`
				CloudStorageGB int64 `json:"cloud_storage_gb"`
				APICalls       int64 `json:"api_calls"`
			} `json:"total_usage"`
			Services []struct {
				ServiceID string             `json:"service_id"`
				Usage     float64            `json:"usage"`
				Unit      string             `json:"unit"`
				Cost      float64            `json:"cost"`
				Metrics   map[string]float64 `json:"metrics"`
				Charges   []struct {
					InvoiceID string  `json:"invoice_id"`
					Amount    float64 `json:"amount"`
				} `json:"charges"`
			} `json:"services"`
			EstimatedMonthlyCost float64 `json:"estimated_monthly_cost"`
			Estimate             struct {
				RecurringRunRate float64 `json:"recurring_run_rate"`
				OneTimeCharges   float64 `json:"one_time_charges"`
			} `json:"estimate"`
		}
		h.do("GET", "/api/v1/billing/usage?period=current_month&detailed=true", a.liveKey, nil).decode(200, &u)
		h.srv = plain
		if u.Period != "current_month" || u.Currency != "USD" || u.TotalUsage.APICalls < 1 || u.TotalUsage.DataGB <= 0 {
			t.Fatalf("usage %+v", u)
		}
		var mine, api bool
		for _, s := range u.Services {
			switch s.ServiceID {
			case svc:
				mine = true
				// The month's charges of the service: the closed period and the manual invoice.
				if s.Unit != "GB" || s.Usage <= 0 || s.Cost != 349 || len(s.Charges) != 2 || s.Metrics["data_gb"] <= 0 {
					t.Fatalf("service usage %+v", s)
				}
			case "api":
				api = s.Metrics["api_calls"] >= 1
			}
		}
		if !mine || !api {
			t.Fatalf("services %+v", u.Services)
		}
		// Run-rate of the new period (the subscription stays active) plus this month's manual charges.
		if u.Estimate.RecurringRunRate != 299 || u.Estimate.OneTimeCharges != 50 || u.EstimatedMonthlyCost < 349 {
			t.Fatalf("estimate %+v = %v", u.Estimate, u.EstimatedMonthlyCost)
		}
		var filtered, other struct {
			Services []struct{ ServiceID string } `json:"services"`
		}
		h.do("GET", "/api/v1/billing/usage?service_type=voice", a.liveKey, nil).decode(200, &filtered)
		for _, s := range filtered.Services {
			if s.ServiceID == svc {
				t.Fatalf("service_type=voice lists an internet service")
			}
		}
		h.do("GET", "/api/v1/billing/usage?service_type=internet&period=current_year", a.liveKey, nil).decode(200, nil)
		h.do("GET", "/api/v1/billing/usage", b.liveKey, nil).decode(200, &other)
		for _, s := range other.Services {
			if s.ServiceID == svc {
				t.Fatal("another tenant sees the service's usage")
			}
		}
		h.do("GET", "/api/v1/billing/usage?period=yesterday", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		h.do("GET", "/api/v1/billing/usage?service_type=teleportation", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		h.do("GET", "/api/v1/billing/usage?currency=XXX", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		h.do("GET", "/api/v1/billing/usage", keyWith(t, h, a, "services:read"), nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
	})
	t.Run("cost analysis", func(t *testing.T) {
		var c struct {
			CurrentMonth struct {
				Total     float64            `json:"total"`
				Breakdown map[string]float64 `json:"breakdown"`
			} `json:"current_month"`
			YearToDate float64 `json:"year_to_date"`
			Trends     struct {
				MonthlyGrowth           *float64 `json:"monthly_growth"`
				CostOptimizationSavings float64  `json:"cost_optimization_savings"`
			} `json:"trends"`
			Months []struct {
				Month string
				Total float64
			} `json:"months"`
		}
		h.do("GET", "/api/v1/billing/cost-analysis", a.liveKey, nil).decode(200, &c)
		if c.CurrentMonth.Total != 349 || c.CurrentMonth.Breakdown["connectivity"] != 349 || c.CurrentMonth.Breakdown["voice"] != 0 ||
			c.YearToDate < 349 || c.Trends.MonthlyGrowth != nil || len(c.Months) != 12 || c.Months[11].Total != 349 {
			t.Fatalf("cost analysis %+v", c)
		}
		h.do("POST", "/v1/billing/invoices/"+manual.ID+"/cancel", h.adminKey, nil).decode(200, nil)
		h.do("GET", "/api/v1/billing/cost-analysis", a.liveKey, nil).decode(200, &c)
		if c.CurrentMonth.Total != 299 {
			t.Fatalf("a cancelled invoice still counts: %+v", c.CurrentMonth)
		}
		h.do("GET", "/api/v1/billing/cost-analysis", b.liveKey, nil).decode(200, &c)
		if c.CurrentMonth.Total != 0 {
			t.Fatalf("another tenant's costs: %+v", c.CurrentMonth)
		}
		h.do("GET", "/api/v1/billing/cost-analysis?currency=ZZZ", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
	})
	t.Run("analytics", func(t *testing.T) {
		h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": closed.InvoiceID, "amount": 299, "payment_method": card("tok_visa")}).decode(201, nil)
		h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": closed.InvoiceID, "amount": 1, "payment_method": card("tok_visa")}).wantError(409, "DUPLICATE_PAYMENT")
		var out struct {
			Currency string `json:"currency"`
			Spending struct {
				CurrentMonth float64 `json:"current_month"`
			} `json:"spending"`
			Invoices struct {
				Paid, Cancelled int64
				Outstanding     float64 `json:"outstanding_amount"`
			} `json:"invoices"`
			Payments struct {
				Successful  int64    `json:"successful"`
				SuccessRate *float64 `json:"success_rate"`
				Collected   float64  `json:"collected_amount"`
			} `json:"payments"`
			Subscriptions struct {
				Active  int64   `json:"active"`
				Monthly float64 `json:"monthly_recurring_charges"`
			} `json:"subscriptions"`
			Budgets []any `json:"budgets"`
		}
		h.do("GET", "/v1/billing/analytics", a.liveKey, nil).decode(200, &out)
		if out.Currency != "USD" || out.Spending.CurrentMonth != 299 || out.Invoices.Paid != 1 || out.Invoices.Cancelled != 1 || out.Invoices.Outstanding != 0 ||
			out.Payments.Successful != 1 || out.Payments.SuccessRate == nil || *out.Payments.SuccessRate != 100 || out.Payments.Collected != 299 ||
			out.Subscriptions.Active != 1 || out.Subscriptions.Monthly != 299 || out.Budgets == nil {
			t.Fatalf("analytics %+v", out)
		}
		h.do("GET", "/api/v1/billing/analytics?currency=1", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		h.do("GET", "/api/v1/billing/analytics", "", nil).wantError(401, "UNAUTHENTICATED")
	})
}

func TestBudgetsEndpoint(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svc := mustService(t, h, a)
	newInvoice(t, h, a, svc, 1, 60) // 60% of the budget already spent
	var out struct {
		Budget struct {
			ID                string  `json:"id"`
			Amount            float64 `json:"amount"`
			Period            string  `json:"period"`
			Thresholds        []int   `json:"thresholds"`
			Spent             float64 `json:"spent"`
			PercentUsed       float64 `json:"percent_used"`
			ThresholdsCrossed []int   `json:"thresholds_crossed"`
		} `json:"budget"`
	}
	h.do("POST", "/v1/billing/budgets", a.liveKey, map[string]any{"account_id": a.account.ID, "amount": 100, "period": "monthly", "thresholds": []int{50, 80, 100}}).decode(201, &out)
	bud := out.Budget
	if !strings.HasPrefix(bud.ID, "bud_") || bud.Spent != 60 || bud.PercentUsed != 60 || !slices.Equal(bud.ThresholdsCrossed, []int{50}) || !slices.Equal(bud.Thresholds, []int{50, 80, 100}) {
		t.Fatalf("budget %+v", bud)
	}
	threshold := func() []float64 {
		evs, err := eventlog.NewStore(h.store).EventsFor(context.Background(), models.TenantScope(a.org.ID, models.EnvLive), bud.ID)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, e := range evs {
			if e.Type != "usage.threshold" {
				t.Fatalf("event %s", e.Type)
			}
			raw, _ := json.Marshal(e.Data["threshold"])
			var v float64
			_ = json.Unmarshal(raw, &v)
			out = append(out, v)
		}
		return out
	}
	if got := threshold(); !slices.Equal(got, []float64{50}) {
		t.Fatalf("alerts %v", got)
	}
	newInvoice(t, h, a, svc, 1, 10) // 70%: nothing new
	newInvoice(t, h, a, svc, 1, 40) // 110%: 80 and 100, once each
	newInvoice(t, h, a, svc, 1, 40)
	if got := threshold(); !slices.Equal(got, []float64{50, 80, 100}) {
		t.Fatalf("alerts %v", got)
	}
	var list struct {
		Budgets []struct {
			ID                string `json:"id"`
			ThresholdsCrossed []int  `json:"thresholds_crossed"`
		} `json:"budgets"`
	}
	h.do("GET", "/v1/billing/budgets", a.liveKey, nil).decode(200, &list)
	if len(list.Budgets) != 1 || !slices.Equal(list.Budgets[0].ThresholdsCrossed, []int{50, 80, 100}) {
		t.Fatalf("list %+v", list)
	}
	h.do("GET", "/v1/billing/budgets", b.liveKey, nil).decode(200, &list)
	if len(list.Budgets) != 0 {
		t.Fatalf("another tenant sees budgets: %+v", list)
	}
	for name, body := range map[string]map[string]any{
		"no account":           {"amount": 10},
		"another tenant":       {"account_id": b.account.ID, "amount": 10},
		"zero amount":          {"account_id": a.account.ID, "amount": 0},
		"bad period":           {"account_id": a.account.ID, "amount": 10, "period": "weekly"},
		"threshold too high":   {"account_id": a.account.ID, "amount": 10, "thresholds": []int{5000}},
		"duplicate thresholds": {"account_id": a.account.ID, "amount": 10, "thresholds": []int{50, 50}},
		"empty thresholds":     {"account_id": a.account.ID, "amount": 10, "thresholds": []int{}},
	} {
		t.Run(name, func(t *testing.T) {
			h.do("POST", "/v1/billing/budgets", a.liveKey, body).wantError(400, "VALIDATION_ERROR")
		})
	}
	h.do("POST", "/v1/billing/budgets", keyWith(t, h, a, "billing:read"), map[string]any{"account_id": a.account.ID, "amount": 10}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	var def struct {
		Budget struct{ Thresholds []int } `json:"budget"`
	}
	h.do("POST", "/api/v1/billing/budgets", a.liveKey, map[string]any{"account_id": a.account.ID, "amount": 1000}).decode(201, &def)
	if !slices.Equal(def.Budget.Thresholds, []int{50, 80, 100}) {
		t.Fatalf("default thresholds %v", def.Budget.Thresholds)
	}
}

func TestRecurringBillingEndpoints(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svc1, svc2 := mustService(t, h, a), mustService(t, h, a)
	t.Run("without a workflow engine", func(t *testing.T) {
		h.do("POST", "/api/v1/billing/recurring", a.liveKey, map[string]any{"account_id": a.account.ID, "services": []map[string]any{{"service_id": svc1}}}).wantError(503, "DEPENDENCY_UNAVAILABLE")
	})
	mc := withTemporal(t, h)
	var started []workflows.SubscriptionInput
	var mu sync.Mutex
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.SubscriptionWorkflow, mock.Anything).Run(func(args mock.Arguments) {
		opts := args.Get(1).(client.StartWorkflowOptions)
		in := args.Get(3).(workflows.SubscriptionInput)
		if opts.ID != in.SubscriptionID {
			t.Errorf("workflow id %s for subscription %s", opts.ID, in.SubscriptionID)
		}
		mu.Lock()
		started = append(started, in)
		mu.Unlock()
	}).Return(mocks.NewWorkflowRun(t), nil).Times(2)

	var created struct {
		Subscriptions []subscriptionDoc `json:"subscriptions"`
	}
	t.Run("POST starts one workflow per service", func(t *testing.T) {
		start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
		h.do("POST", "/api/v1/billing/recurring", a.liveKey, map[string]any{"account_id": a.account.ID, "start_date": start.Format(time.RFC3339),
			"services": []map[string]any{{"service_id": svc1, "billing_cycle": "monthly", "auto_renew": true}, {"service_id": svc2, "billing_cycle": "annual", "auto_renew": false}}}).decode(201, &created)
		if len(created.Subscriptions) != 2 || len(started) != 2 {
			t.Fatalf("subscriptions %+v, workflows %+v", created, started)
		}
		s1, s2 := created.Subscriptions[0], created.Subscriptions[1]
		if !models.HasPrefix(s1.ID, "sub") || s1.Status != "pending" || s1.UnitPrice != 299 || s1.CurrentPeriod.Start != start.Format(time.RFC3339) ||
			s1.CurrentPeriod.End != billing.PeriodEnd(start, "monthly", start.Day()).Format(time.RFC3339) || s1.Workflow.ID != s1.ID || s2.BillingCycle != "annual" || s2.AutoRenew {
			t.Fatalf("subscriptions %+v %+v", s1, s2)
		}
	})
	t.Run("POST errors", func(t *testing.T) {
		h.do("POST", "/api/v1/billing/recurring", a.liveKey, map[string]any{"account_id": a.account.ID, "services": []map[string]any{{"service_id": svc1}}}).wantError(409, "ALREADY_EXISTS")
		for name, body := range map[string]map[string]any{
			"no services":         {"account_id": a.account.ID},
			"no account":          {"services": []map[string]any{{"service_id": svc1}}},
			"sandbox cycle live":  {"account_id": a.account.ID, "services": []map[string]any{{"service_id": mustService(t, h, a), "billing_cycle": "sandbox_5s"}}},
			"unknown service":     {"account_id": a.account.ID, "services": []map[string]any{{"service_id": "svc_missing"}}},
			"another tenant":      {"account_id": a.account.ID, "services": []map[string]any{{"service_id": mustService(t, h, b)}}},
			"unknown method":      {"account_id": a.account.ID, "payment_method_id": "pm_nope", "services": []map[string]any{{"service_id": mustService(t, h, a)}}},
			"start in the past":   {"account_id": a.account.ID, "start_date": "2020-01-01T00:00:00Z", "services": []map[string]any{{"service_id": mustService(t, h, a)}}},
			"twice the same":      {"account_id": a.account.ID, "services": []map[string]any{{"service_id": svc1}, {"service_id": svc1}}},
			"negative quantity":   {"account_id": a.account.ID, "services": []map[string]any{{"service_id": mustService(t, h, a), "quantity": -1}}},
			"bad cycle":           {"account_id": a.account.ID, "services": []map[string]any{{"service_id": mustService(t, h, a), "billing_cycle": "weekly"}}},
			"malformed service":   {"account_id": a.account.ID, "services": []map[string]any{{"service_id": "x"}}},
			"other tenant's acct": {"account_id": b.account.ID, "services": []map[string]any{{"service_id": mustService(t, h, a)}}},
		} {
			t.Run(name, func(t *testing.T) {
				h.do("POST", "/api/v1/billing/recurring", a.liveKey, body).wantError(400, "VALIDATION_ERROR")
			})
		}
		h.do("POST", "/api/v1/billing/recurring", keyWith(t, h, a, "billing:read"), map[string]any{"account_id": a.account.ID}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	})
	t.Run("a failed start removes the subscriptions", func(t *testing.T) {
		svc := mustService(t, h, a)
		mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.SubscriptionWorkflow, mock.Anything).Return(nil, errors.New("temporal down")).Once()
		h.do("POST", "/api/v1/billing/recurring", a.liveKey, map[string]any{"account_id": a.account.ID, "services": []map[string]any{{"service_id": svc}}}).wantError(503, "DEPENDENCY_UNAVAILABLE")
		var list struct {
			Subscriptions []subscriptionDoc `json:"subscriptions"`
		}
		h.do("GET", "/api/v1/billing/subscriptions?service_id="+svc, a.liveKey, nil).decode(200, &list)
		if len(list.Subscriptions) != 0 {
			t.Fatalf("left behind: %+v", list)
		}
	})
	s1 := created.Subscriptions[0]
	t.Run("GET list and one", func(t *testing.T) {
		var list struct {
			Subscriptions []subscriptionDoc `json:"subscriptions"`
			Pagination    pageDoc           `json:"pagination"`
		}
		h.do("GET", "/api/v1/billing/subscriptions", a.liveKey, nil).decode(200, &list)
		if list.Pagination.Total != 2 {
			t.Fatalf("list %+v", list)
		}
		h.do("GET", "/api/v1/billing/subscriptions?status=cancelled", a.liveKey, nil).decode(200, &list)
		if list.Pagination.Total != 0 {
			t.Fatalf("cancelled %+v", list)
		}
		h.do("GET", "/api/v1/billing/subscriptions", b.liveKey, nil).decode(200, &list)
		if list.Pagination.Total != 0 {
			t.Fatalf("another tenant sees %+v", list)
		}
		h.do("GET", "/api/v1/billing/subscriptions?status=paused", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		h.do("GET", "/api/v1/billing/subscriptions/"+s1.ID, b.liveKey, nil).wantError(404, "NOT_FOUND")
	})
	t.Run("PUT changes quantity now, the cycle from the next period", func(t *testing.T) {
		var out struct {
			Subscription subscriptionDoc `json:"subscription"`
		}
		h.do("PUT", "/api/v1/billing/subscriptions/"+s1.ID, a.liveKey, map[string]any{"quantity": 3, "billing_cycle": "quarterly", "auto_renew": false}).decode(200, &out)
		if s := out.Subscription; s.Quantity != 3 || s.BillingCycle != "monthly" || s.PendingCycle != "quarterly" || s.AutoRenew {
			t.Fatalf("subscription %+v", s)
		}
		sub, err := billing.NewStore(h.store).SubscriptionIn(context.Background(), models.TenantScope(a.org.ID, models.EnvLive), s1.ID)
		if err != nil || len(sub.Segments) != 1 || sub.Segments[0].Quantity != 3 {
			t.Fatalf("a change before the period starts replaces its quantity: %+v %v", sub.Segments, err)
		}
		h.do("PUT", "/api/v1/billing/subscriptions/"+s1.ID, a.liveKey, map[string]any{"quantity": 0}).wantError(400, "VALIDATION_ERROR")
		h.do("PUT", "/api/v1/billing/subscriptions/"+s1.ID, a.liveKey, map[string]any{"billing_cycle": "weekly"}).wantError(400, "VALIDATION_ERROR")
		h.do("PUT", "/api/v1/billing/subscriptions/"+s1.ID, b.liveKey, map[string]any{"quantity": 2}).wantError(404, "NOT_FOUND")
		h.do("PUT", "/api/v1/billing/subscriptions/sub_missing", a.liveKey, map[string]any{"quantity": 2}).wantError(404, "NOT_FOUND")
	})
	t.Run("DELETE records the cancellation and signals the workflow", func(t *testing.T) {
		var signalled []workflows.CancelSignal
		mc.On("SignalWorkflow", mock.Anything, s1.ID, "", workflows.SignalCancelSubscription, mock.Anything).Run(func(args mock.Arguments) {
			signalled = append(signalled, args.Get(4).(workflows.CancelSignal))
		}).Return(nil).Twice()
		var out struct {
			Subscription subscriptionDoc `json:"subscription"`
		}
		h.do("DELETE", "/api/v1/billing/subscriptions/"+s1.ID, a.liveKey, nil).decode(200, &out)
		// Its first period starts in an hour: cancelled "at period end", it ends before anything is billed.
		if s := out.Subscription; s.CancelAt == nil || *s.CancelAt != s.CurrentPeriod.Start || s.CancelAtPeriodEnd || s.Status != "pending" {
			t.Fatalf("at period end: %+v", s)
		}
		h.do("DELETE", "/api/v1/billing/subscriptions/"+s1.ID+"?at_period_end=false", a.liveKey, nil).decode(200, &out)
		if s := out.Subscription; s.CancelAt == nil || *s.CancelAt == s.CurrentPeriod.Start || s.CancelAtPeriodEnd {
			t.Fatalf("now: %+v", s)
		}
		if len(signalled) != 2 || !signalled[1].At.Before(signalled[0].At) {
			t.Fatalf("signals %+v", signalled)
		}
		h.do("DELETE", "/api/v1/billing/subscriptions/"+s1.ID, b.liveKey, nil).wantError(404, "NOT_FOUND")
		// The workflow ends it; then it can no longer change.
		ctx := context.Background()
		scope := models.TenantScope(a.org.ID, models.EnvLive)
		sub, _ := billing.NewStore(h.store).BeginSubscription(ctx, scope, s1.ID)
		if _, err := billing.NewStore(h.store).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: s1.ID, PeriodStart: sub.CurrentPeriodStart, CloseAt: *sub.CancelAt}); err != nil {
			t.Fatal(err)
		}
		h.do("DELETE", "/api/v1/billing/subscriptions/"+s1.ID, a.liveKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
		h.do("PUT", "/api/v1/billing/subscriptions/"+s1.ID, a.liveKey, map[string]any{"quantity": 2}).wantError(409, "INVALID_STATE_TRANSITION")
		if got := eventTypes(t, h, a, s1.ID); !slices.Equal(got, []string{"subscription.created", "subscription.cancelled"}) {
			t.Fatalf("events %v", got)
		}
	})
}

func TestSensitiveBillingOperationsNeedBillingWrite(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	read := keyWith(t, h, a, "billing:read")
	for _, tc := range []struct{ method, path string }{
		{"POST", "/v1/billing/payments"},
		{"POST", "/v1/billing/accounts/" + a.account.ID + "/payment-methods"},
		{"DELETE", "/v1/billing/accounts/" + a.account.ID + "/payment-methods/pm_x"},
		{"POST", "/v1/billing/invoices"},
		{"POST", "/v1/billing/recurring"},
		{"POST", "/v1/billing/budgets"},
		{"PUT", "/v1/billing/subscriptions/sub_x"},
		{"DELETE", "/v1/billing/subscriptions/sub_x"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var body any
			if tc.method != "DELETE" {
				body = map[string]any{}
			}
			e := h.do(tc.method, tc.path, read, body).wantError(403, "INSUFFICIENT_PERMISSIONS")
			if e.Error.Details["required_permission"] != "billing:write" {
				t.Fatalf("details %+v", e.Error.Details)
			}
		})
	}
	services := keyWith(t, h, a, "services:read")
	for _, path := range []string{"/v1/billing/invoices", "/v1/billing/payments", "/v1/billing/usage", "/v1/billing/cost-analysis", "/v1/billing/analytics", "/v1/billing/budgets", "/v1/billing/subscriptions"} {
		h.do("GET", path, services, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
	}
}
