package seed

import (
	"context"
	"math"
	"math/rand/v2"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
)

// DemoTelemetryDays is how many days of hourly telemetry SeedDemoData gives
// each demo service.
const DemoTelemetryDays = 7

// demoService is one service that SeedDemoData puts in the demo sandbox.
type demoService struct {
	ID, Name, Kind, ServiceType, CatalogID, Bandwidth, SLA, LocationID string
	Address, City, State, Zip                                          string
	BandwidthMbps                                                      int
	Monthly, OneTime                                                   models.Money
	ActiveDays                                                         int
	BaseLatencyMs                                                      float64
}

// demoServices are the demo sandbox's running services.
func demoServices() []demoService {
	return []demoService{
		{ID: "svc_demoFiberAustin", Name: "Austin HQ dedicated fiber", Kind: catalog.KindInternet, ServiceType: "fiber_dedicated",
			CatalogID: "internet-fiber-dedicated", Bandwidth: "1gbps", BandwidthMbps: 1000, SLA: "premium", LocationID: "loc_austin_congress",
			Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701", Monthly: 1299_00, OneTime: 500_00, ActiveDays: 75, BaseLatencyMs: 6},
		{ID: "svc_demoFiberDallas", Name: "Dallas branch business fiber", Kind: catalog.KindInternet, ServiceType: "fiber_business",
			CatalogID: "internet-fiber-business", Bandwidth: "500mbps", BandwidthMbps: 500, SLA: "standard", LocationID: "loc_dallas_main",
			Address: "1500 Main St", City: "Dallas", State: "TX", Zip: "75201", Monthly: 399_00, OneTime: 0, ActiveDays: 45, BaseLatencyMs: 11},
		{ID: "svc_demoSdwanDallas", Name: "Dallas branch SD-WAN", Kind: catalog.KindNetwork, ServiceType: "sdwan",
			CatalogID: "network-sdwan", Bandwidth: "200mbps", BandwidthMbps: 200, SLA: "standard", LocationID: "loc_dallas_main",
			Address: "1500 Main St", City: "Dallas", State: "TX", Zip: "75201", Monthly: 249_00, OneTime: 150_00, ActiveDays: 40, BaseLatencyMs: 18},
	}
}

// Fixed identifiers of the demo sandbox's invoices: the first is paid, the
// second open.
const (
	DemoInvoicePaid   = "inv_demoPaidLastMonth"
	DemoInvoiceUnpaid = "inv_demoOpenThisMonth"
	demoPaymentID     = "pay_demoLastMonth"
	// DemoPaymentMethod is the card DemoInvoicePaid was paid with (sent
	// with the payment, not saved on the account).
	DemoPaymentMethod = "pm_demoLastMonth"
)

// DemoPaidTimes returns when SeedDemoData, seeding at now, issues and pays
// DemoInvoicePaid: five and two days before the start of now's calendar
// month (UTC), so both fall in the previous month, after every demo
// service was activated.
func DemoPaidTimes(now time.Time) (issued, paid time.Time) {
	month := billing.MonthStart(now.UTC())
	return month.Add(-5 * 24 * time.Hour), month.Add(-2 * 24 * time.Hour)
}

// billingAt returns the billing store on a clock stopped at at, to write
// the rows of a past month as they were written then.
func (s *Store) billingAt(at time.Time) *billing.Store {
	core := *s.Store
	core.Now = func() time.Time { return at }
	return billing.NewStore(&core)
}

// DemoData says what SeedDemoData ensured in the demo tenant's sandbox.
type DemoData struct {
	Services []string
	Invoices []string
}

// SeedDemoData gives the demo tenant's sandbox (test environment) a living
// platform: running services with DemoTelemetryDays of hourly telemetry, and
// two invoices of them: DemoInvoicePaid, issued and paid by card in the
// previous calendar month (DemoPaidTimes), and DemoInvoiceUnpaid, issued
// now and open. It is idempotent: running it
// again adds nothing (services, telemetry, invoices and the payment have
// fixed identifiers, and telemetry is written only for a service that has
// none). Run it after Seed, with what Seed returned.
func (s *Store) SeedDemoData(ctx context.Context, seeded *SeedResult) (*DemoData, error) {
	scope := models.TenantScope(seeded.Demo.ID, models.EnvTest)
	db := s.In(ctx, scope)
	var acct models.BillingAccount
	if err := db.Order("created_at").Take(&acct).Error; err != nil {
		return nil, models.NotFoundOr(err, "demo sandbox billing account")
	}
	now := s.Now().UTC().Truncate(time.Hour)
	out := &DemoData{}
	for _, d := range demoServices() {
		activated := now.Add(-time.Duration(d.ActiveDays) * 24 * time.Hour)
		svc := &services.Service{ID: d.ID, AccountID: acct.ID, Name: d.Name, Kind: d.Kind, ServiceType: d.ServiceType, CatalogServiceID: d.CatalogID,
			Status: services.ServiceOperational, Bandwidth: d.Bandwidth, BandwidthMbps: d.BandwidthMbps, SLA: d.SLA, BillingCycle: "monthly",
			LocationID: d.LocationID, Address: d.Address, City: d.City, State: d.State, Zip: d.Zip, Redundancy: "none", Monitoring: "standard",
			ActivatedAt: &activated, StatusChangedAt: activated, Spec: map[string]any{"bandwidth": d.Bandwidth, "service_type": d.ServiceType, "sla": d.SLA},
			Features: []string{}, Configuration: map[string]any{}, Resources: map[string]any{}, Quantity: 1,
			MonthlyCharge: d.Monthly, OneTimeCharge: d.OneTime, Currency: acct.Currency, TermMonths: 12}
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(svc).Error; err != nil {
			return nil, models.DBErr(err)
		}
		has, err := s.telemetry.HasTelemetry(ctx, scope, d.ID)
		if err != nil {
			return nil, err
		}
		if !has {
			if err := s.telemetry.RecordTelemetry(ctx, scope, demoTelemetry(d, now)...); err != nil {
				return nil, err
			}
		}
		out.Services = append(out.Services, d.ID)
	}
	p := &models.Principal{ID: "seed", OrganizationID: seeded.Demo.ID, Environment: models.EnvTest, Role: models.RoleCustomer, Permissions: []string{"*"}}
	var lines []billing.InvoiceLineInput
	for _, d := range demoServices() {
		lines = append(lines, billing.InvoiceLineInput{ServiceID: d.ID, Quantity: 1, UnitPrice: d.Monthly})
	}
	issued, paid := DemoPaidTimes(s.Now())
	for _, inv := range []struct {
		id     string
		issuer *billing.Store
	}{{DemoInvoicePaid, s.billingAt(issued)}, {DemoInvoiceUnpaid, s.billing}} {
		_, err := s.billing.InvoiceIn(ctx, scope, inv.id)
		if models.ErrorCode(err) == models.CodeNotFound {
			_, err = inv.issuer.CreateInvoice(ctx, p, billing.InvoiceInput{ID: inv.id, AccountID: acct.ID, Lines: lines, Notes: "Demo invoice: monthly charges of the demo services"})
		}
		if err != nil {
			return nil, err
		}
		out.Invoices = append(out.Invoices, inv.id)
	}
	if err := s.payDemoInvoice(ctx, scope, &acct, paid); err != nil {
		return nil, err
	}
	return out, nil
}

// payDemoInvoice pays DemoInvoicePaid in full at paid, once, with a visa
// card (DemoPaymentMethod), and dates the rows of the invoice and the
// payment as written when they happened (created_at is the issue and the
// payment time): reports and payment lists read them in that month.
func (s *Store) payDemoInvoice(ctx context.Context, scope models.Scope, acct *models.BillingAccount, paid time.Time) error {
	inv, err := s.billing.InvoiceIn(ctx, scope, DemoInvoicePaid)
	if err != nil {
		return err
	}
	if inv.Status == billing.InvoicePending {
		if err := s.payDemoInvoiceAt(ctx, scope, acct, inv, paid); err != nil {
			return err
		}
	}
	db := s.In(ctx, scope)
	if err := db.Model(&billing.Invoice{}).Where("id = ? AND paid_at IS NOT NULL", DemoInvoicePaid).
		Updates(map[string]any{"created_at": gorm.Expr("issued_at"), "updated_at": gorm.Expr("paid_at")}).Error; err != nil {
		return models.DBErr(err)
	}
	return models.DBErr(db.Model(&billing.Payment{}).Where("id = ? AND processed_at IS NOT NULL", demoPaymentID).
		Updates(map[string]any{"created_at": gorm.Expr("processed_at"), "updated_at": gorm.Expr("processed_at")}).Error)
}

// payDemoInvoiceAt charges inv (pending) in full with the demo card, on a
// clock stopped at paid.
func (s *Store) payDemoInvoiceAt(ctx context.Context, scope models.Scope, acct *models.BillingAccount, inv *billing.Invoice, paid time.Time) error {
	pm := billing.NewPaymentMethod(acct, billing.PaymentMethodInput{Type: "credit_card", CardToken: "tok_visa",
		BillingAddress: &billing.BillingAddress{Street: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701", Country: "US"}},
		billing.Card{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: paid.Year() + 3}, false)
	pm.ID, pm.CreatedAt, pm.UpdatedAt = DemoPaymentMethod, paid, paid
	if err := s.In(ctx, scope).Clauses(clause.OnConflict{DoNothing: true}).Create(pm).Error; err != nil {
		return models.DBErr(err)
	}
	if err := s.In(ctx, scope).Where("id = ?", DemoPaymentMethod).Take(pm).Error; err != nil {
		return models.DBErr(err)
	}
	at := s.billingAt(paid)
	pay, err := at.PaymentIn(ctx, scope, demoPaymentID)
	if models.ErrorCode(err) == models.CodeNotFound {
		pay, err = at.BeginPayment(ctx, scope, billing.PaymentStart{ID: demoPaymentID, Invoice: inv.ID, Amount: inv.AmountDue(), Source: billing.PaymentSourceAPI, Method: pm})
	}
	if err != nil {
		return err
	}
	_, _, err = at.FinishPayment(ctx, scope, pay.ID, billing.PaymentOutcome{Succeeded: true, TransactionID: "txn_demo_seed"})
	return err
}

// demoTelemetry returns hourly samples of d over the DemoTelemetryDays
// before now: a daily traffic curve with a little noise, the same for every
// seeding of the same hour (a generator seeded by the service id).
func demoTelemetry(d demoService, now time.Time) []*telemetry.TelemetrySample {
	var seed uint64
	for _, c := range d.ID {
		seed = seed*31 + uint64(c)
	}
	rng := rand.New(rand.NewPCG(seed, 2026))
	hours := DemoTelemetryDays * 24
	out := make([]*telemetry.TelemetrySample, 0, hours)
	for h := hours; h > 0; h-- {
		at := now.Add(-time.Duration(h) * time.Hour)
		daily := 0.5 - 0.5*math.Cos(2*math.Pi*float64(at.Hour()-4)/24) // 0 at 04:00, 1 at 16:00
		util := 15 + 55*daily + rng.Float64()*8
		throughput := float64(d.BandwidthMbps) * util / 100
		out = append(out, &telemetry.TelemetrySample{ServiceID: d.ID, At: at, Up: true,
			LatencyMs: telemetry.Round2(d.BaseLatencyMs + 2*daily + rng.Float64()*1.5), JitterMs: telemetry.Round2(0.6 + rng.Float64()*0.8),
			PacketLossPct: telemetry.Round2(rng.Float64() * 0.03), UtilizationPct: telemetry.Round2(util), ThroughputMbps: telemetry.Round2(throughput),
			DataMB: telemetry.Round2(throughput * 3600 / 8)})
	}
	return out
}

// DemoDataCounts returns how many services, telemetry samples, invoices and
// payments the demo tenant's sandbox holds (to check that seeding is
// idempotent).
func (s *Store) DemoDataCounts(ctx context.Context) (map[string]int64, error) {
	demo, err := s.DemoOrganization(ctx)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(demo.ID, models.EnvTest)
	out := map[string]int64{}
	for name, m := range map[string]any{"services": &services.Service{}, "telemetry": &telemetry.TelemetrySample{}, "invoices": &billing.Invoice{}, "payments": &billing.Payment{}, "events": &eventlog.Event{}} {
		var n int64
		if err := s.In(ctx, scope).Model(m).Count(&n).Error; err != nil {
			return nil, models.DBErr(err)
		}
		out[name] = n
	}
	return out, nil
}
