package services

import (
	"context"
	"fmt"
	"slices"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// PriceLine is one line of a price: what, how many, at which unit price,
// and what it adds per month and once.
type PriceLine struct {
	Description string       `json:"description"`
	Quantity    int          `json:"quantity"`
	Unit        string       `json:"unit"`
	UnitPrice   models.Money `json:"unit_price"`
	Monthly     models.Money `json:"monthly"`
	OneTime     models.Money `json:"one_time"`
}

// Price is the price of an order for a term: its lines, the monthly
// subtotal, the term discount (on recurring charges only), the monthly
// total and the one-time total.
type Price struct {
	Lines           []PriceLine
	MonthlySubtotal models.Money
	DiscountPercent int
	Discount        models.Money
	Monthly         models.Money
	OneTime         models.Money
	TermMonths      int
	Currency        string
}

// TermDiscountPercent returns the discount on recurring charges for a
// commitment of months: 5 % from 12 months, 10 % from 24, 15 % from 36.
func TermDiscountPercent(months int) int {
	switch {
	case months >= 36:
		return 15
	case months >= 24:
		return 10
	case months >= 12:
		return 5
	}
	return 0
}

// qtPercent returns pct percent of m, rounded half up to the cent.
func qtPercent(m models.Money, pct int) models.Money {
	v := int64(m) * int64(pct)
	if v >= 0 {
		return models.Money((v + 50) / 100)
	}
	return models.Money((v - 50) / 100)
}

// qtSLAPercent is what an SLA tier costs relative to standard.
func qtSLAPercent(sla string) int {
	switch sla {
	case "premium":
		return 125
	case "enterprise":
		return 150
	}
	return 100
}

// qtBandwidthFactor doubles the price for every step up the offer's
// bandwidth options (the smallest is 1).
func qtBandwidthFactor(offer *catalog.CatalogService, bandwidth string) int64 {
	i := slices.Index(offer.BandwidthOptions, bandwidth)
	if i <= 0 {
		return 1
	}
	return int64(1) << i
}

// qtFeaturePrice returns the monthly price of a feature of a kind, and
// whether it is charged per unit (user, agent, device) or once per service.
func qtFeaturePrice(kind, feature string) (models.Money, bool) {
	table := map[string]map[string]models.Money{
		catalog.KindInternet:       {"ddos_protection": 9900, "managed_router": 4900, "bgp": 2500, "static_ip": 1500},
		catalog.KindNetwork:        {"encryption": 5000, "application_visibility": 7500, "wan_optimization": 12000},
		KindPhoneSystem:            {"call_recording": 300, "conference_bridge": 150, "call_analytics": 200},
		KindContactCenter:          {"call_recording": 500, "quality_monitoring": 800, "real_time_analytics": 400, "workforce_management": 600},
		KindCloudInfrastructure:    {"backup": 5000, "disaster_recovery": 25000, "monitoring": 2000},
		KindCloudPlatform:          {"ci_cd": 3000, "log_retention": 1500, "managed_database": 6000},
		KindManagedSecurity:        {"threat_hunting": 150000, "dark_web_monitoring": 50000, "phishing_simulation": 40000, "managed_edr": 100000},
		KindSecurityInfrastructure: {"ips": 5000, "url_filtering": 5000, "antivirus": 5000, "sandboxing": 7500, "ssl_inspection": 5000, "application_control": 5000, "geo_blocking": 2500},
		KindAIPlatform:             {"model_monitoring": 20000, "explainability": 15000, "auto_retraining": 30000, "private_endpoints": 10000},
	}
	price := table[kind][feature]
	perUnit := kind == KindPhoneSystem || kind == KindContactCenter || kind == KindSecurityInfrastructure
	return price, perUnit
}

// Number and add-on prices per month.
const (
	priceLocalNumber    models.Money = 100
	priceTollFreeNumber models.Money = 200
	priceThreatIntel    models.Money = 50000
	priceFramework      models.Money = 25000
	priceDatabase       models.Money = 6000
	priceModel          models.Money = 15000
)

func qtLBPrice(tier string) models.Money {
	switch tier {
	case "premium":
		return 9000
	case "standard":
		return 4500
	}
	return 2000
}

func priceLine(desc string, qty int, unit string, unitPrice models.Money) PriceLine {
	return PriceLine{Description: desc, Quantity: qty, Unit: unit, UnitPrice: unitPrice, Monthly: unitPrice * models.Money(qty)}
}

// PriceOrder prices an order from the catalog for a term of termMonths
// (1 to 60): the offer's starting price, doubled for each step up its
// bandwidth options, times the SLA tier (standard 100 %, premium 125 %,
// enterprise 150 %) and the order's units; the kind's add-ons (numbers,
// features, load balancers, models...) and its one-time setup fee; then the
// term discount on recurring charges. Errors: NOT_FOUND (unknown offer).
func (s *Store) PriceOrder(ctx context.Context, o *ProvisioningOrder, termMonths int) (*Price, error) {
	offer, err := s.catalog.CatalogServiceByID(ctx, OrDefault(o.CatalogServiceID, o.Profile().Offers[0]))
	if err != nil {
		return nil, err
	}
	prof := o.Profile()
	var body KindBody
	if len(o.Spec) > 0 {
		spec := map[string]any{}
		for k, v := range o.Spec {
			if k != "_missing" {
				spec[k] = v
			}
		}
		body, _ = DecodeKindBody("spec", prof.Kind, spec)
	}
	unit := qtPercent(models.Money(int64(offer.StartingPrice)*qtBandwidthFactor(offer, o.Bandwidth)), qtSLAPercent(o.SLA))
	qty := max(o.Quantity, 1)
	desc := offer.Name
	if o.Bandwidth != "" {
		desc += " " + o.Bandwidth
	}
	desc += ", " + OrDefault(o.SLA, "standard") + " SLA"
	var lines []PriceLine
	switch b := body.(type) {
	case *CloudInfrastructureBody:
		regions := max(len(b.Regions), 1)
		for i, r := range b.Resources {
			switch r.Type {
			case "virtual_machine":
				cpu := 1
				if r.Specifications != nil {
					cpu = max(r.Specifications.CPU, 1)
				}
				n := max(r.Quantity, 1) * regions
				lines = append(lines, priceLine(fmt.Sprintf("Virtual machines %d (%d vCPU)", i+1, cpu), n, "vm/month", unit*models.Money(max(1, (cpu+1)/2))))
			case "load_balancer":
				lines = append(lines, priceLine(fmt.Sprintf("Load balancer %d (%s)", i+1, r.Tier), regions, "month", qtPercent(qtLBPrice(r.Tier), qtSLAPercent(o.SLA))))
			}
		}
		if len(lines) == 0 {
			lines = append(lines, priceLine(desc, qty, offer.Unit, unit))
		}
	case *CloudPlatformBody:
		size := max(InstanceSizeVCPUs(b.InstanceSize), 1)
		lines = append(lines, priceLine(fmt.Sprintf("%s, %s instances", desc, OrDefault(b.InstanceSize, "small")), qty, offer.Unit, unit*models.Money(size)))
		if b.Database != nil {
			lines = append(lines, priceLine("Managed "+b.Database.Engine+" database", 1, "month", priceDatabase))
		}
	case *ManagedSecurityBody:
		if b.Coverage == "business_hours" {
			unit = qtPercent(unit, 60)
			desc += ", business hours"
		}
		lines = append(lines, priceLine(desc, 1, offer.Unit, unit))
		if b.ThreatIntelligence {
			lines = append(lines, priceLine("Threat intelligence", 1, "month", priceThreatIntel))
		}
		if n := len(b.ComplianceFrameworks); n > 0 {
			lines = append(lines, priceLine("Compliance frameworks", n, "framework/month", priceFramework))
		}
	case *AIPlatformBody:
		lines = append(lines, priceLine(desc, 1, offer.Unit, unit))
		if n := len(b.Models); n > 0 {
			factor := models.Money(1)
			switch b.ComputeTier {
			case "gpu_optimized":
				factor = 3
			case "gpu_high_memory":
				factor = 5
			}
			lines = append(lines, priceLine("Model endpoints ("+OrDefault(b.ComputeTier, "cpu_standard")+")", n, "model/month", priceModel*factor))
		}
	default:
		lines = append(lines, priceLine(desc, qty, offer.Unit, unit))
	}
	if prof.Kind == catalog.KindNetwork && o.Redundancy == "dual_path" {
		lines = append(lines, priceLine("Dual-path access", qty, "site/month", qtPercent(unit, 25)))
	}
	locals, tollFree := 0, 0
	for _, n := range o.Numbers {
		if n.Type == "toll_free" {
			tollFree += n.Quantity
		} else {
			locals += n.Quantity
		}
	}
	if locals > 0 {
		lines = append(lines, priceLine("Local numbers", locals, "number/month", priceLocalNumber))
	}
	if tollFree > 0 {
		lines = append(lines, priceLine("Toll-free numbers", tollFree, "number/month", priceTollFreeNumber))
	}
	if cc, ok := body.(*ContactCenterBody); ok && cc.AIFeatures != nil {
		for _, f := range []struct {
			on    bool
			name  string
			price models.Money
		}{{cc.AIFeatures.SentimentAnalysis, "Sentiment analysis", 1000}, {cc.AIFeatures.AutoTranscription, "Auto transcription", 600}, {cc.AIFeatures.PredictiveDialing, "Predictive dialing", 1200}} {
			if f.on {
				lines = append(lines, priceLine(f.name, qty, "agent/month", f.price))
			}
		}
	}
	for _, f := range o.Features {
		price, perUnit := qtFeaturePrice(prof.Kind, f)
		if price == 0 {
			continue
		}
		n := 1
		if perUnit {
			n = qty
		}
		lines = append(lines, priceLine("Feature "+f, n, "month", price))
	}
	if prof.SetupFee > 0 {
		n := 1
		if prof.SetupPerUnit {
			n = qty
		}
		lines = append(lines, PriceLine{Description: "Setup", Quantity: n, Unit: "one-time", UnitPrice: prof.SetupFee, OneTime: prof.SetupFee * models.Money(n)})
	}
	termMonths = min(max(termMonths, 1), 60)
	p := &Price{Lines: lines, TermMonths: termMonths, Currency: offer.Currency, DiscountPercent: TermDiscountPercent(termMonths)}
	for _, l := range lines {
		p.MonthlySubtotal += l.Monthly
		p.OneTime += l.OneTime
	}
	p.Discount = qtPercent(p.MonthlySubtotal, p.DiscountPercent)
	p.Monthly = p.MonthlySubtotal - p.Discount
	return p, nil
}

// PriceService prices a service as it would be after the update u (on the
// service's own term).
func (s *Store) PriceService(ctx context.Context, svc *Service, u *ServiceUpdate) (*Price, error) {
	o := &ProvisioningOrder{Kind: svc.Kind, ServiceType: svc.ServiceType, CatalogServiceID: svc.CatalogServiceID, Bandwidth: svc.Bandwidth,
		SLA: svc.SLA, Quantity: svc.Quantity, Features: svc.Features, Spec: svc.Spec, Redundancy: svc.Redundancy}
	if u != nil {
		if u.Bandwidth != "" {
			o.Bandwidth = u.Bandwidth
		}
		if u.SLA != nil {
			o.SLA = *u.SLA
		}
		if u.Quantity > 0 {
			o.Quantity = u.Quantity
		}
		if u.Features != nil {
			o.Features = *u.Features
		}
		if u.Redundancy != nil {
			o.Redundancy = *u.Redundancy
		}
	}
	if body, err := DecodeKindBody("spec", svc.Kind, svc.Spec); err == nil && len(svc.Spec) > 0 {
		switch b := body.(type) {
		case *PhoneSystemBody:
			for _, n := range b.PhoneNumbers {
				o.Numbers = append(o.Numbers, NumberRequest(n))
			}
		case *ContactCenterBody:
			if slices.Contains(b.Channels, "voice") {
				o.Numbers = append(o.Numbers, NumberRequest{Type: "toll_free", Quantity: 1})
			}
		}
	}
	return s.PriceOrder(ctx, o, max(svc.TermMonths, 1))
}
