package services_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/testenv"
)

// clientError fails unless err is an *models.Error with a code the client
// can act on (never INTERNAL_ERROR).
func clientError(t *testing.T, what string, err error) {
	t.Helper()
	var e *models.Error
	if !errors.As(err, &e) || e.Code == "" || e.Code == models.CodeInternal {
		t.Fatalf("%s: error %v is not a client error of the platform", what, err)
	}
	if e.Code == models.CodeValidation {
		if issues, _ := e.Details["fields"].([]models.FieldIssue); len(issues) == 0 {
			t.Fatalf("%s: VALIDATION_ERROR without a field issue: %v", what, e)
		}
	}
}

// kindSeeds are one plausible body of each of the nine service kinds.
var kindSeeds = map[string]string{
	catalog.KindInternet: `{"account_id":"acct_x","service_type":"fiber_dedicated","bandwidth":"1gbps","sla":"premium",
		"location":{"address":"100 Congress Ave","city":"Austin","state":"TX","zip":"78701"}}`,
	catalog.KindNetwork: `{"network_type":"sdwan","topology":"hub_and_spoke","bandwidth":"100mbps",
		"locations":[{"id":"loc_austin_congress","role":"hub"},{"id":"loc_dallas_main","role":"spoke"}]}`,
	services.KindPhoneSystem:   `{"system_type":"cloud_pbx","users":50,"features":["voicemail"],"phone_numbers":[{"area_code":"512","quantity":5}]}`,
	services.KindContactCenter: `{"center_type":"omnichannel","channels":["voice","chat"],"agent_count":25,"ai_features":{"sentiment_analysis":true}}`,
	services.KindCloudInfrastructure: `{"deployment_type":"multi_cloud","providers":["aws","azure"],"regions":["us-east-1"],
		"resources":[{"type":"virtual_machine","specifications":{"cpu":4,"memory":"16GB","storage":"500GB","os":"ubuntu-22.04"}}],
		"auto_scaling":{"enabled":true,"min_instances":1,"max_instances":4}}`,
	services.KindCloudPlatform: `{"runtime":"nodejs20","region":"us-east-1","environments":["production"],"instance_size":"medium",
		"custom_domains":["app.example.com"],"database":{"engine":"postgresql","size":"small"}}`,
	services.KindManagedSecurity: `{"service_type":"managed_soc","coverage":"24x7x365","services":["threat_monitoring"],
		"response_time":{"critical":"15_minutes","high":"1_hour"}}`,
	services.KindSecurityInfrastructure: `{"infrastructure_type":"next_gen_firewall","throughput":"1gbps","location_id":"loc_austin_congress",
		"protected_networks":["10.20.0.0/16"]}`,
	services.KindAIPlatform: `{"platform_type":"enterprise_ai","capabilities":["natural_language_processing"],"compute_tier":"gpu_optimized",
		"models":[{"name":"llama-3","deployment":"dedicated"}]}`,
}

// FuzzServiceBody: the nine service bodies (DecodeKindBody, then the
// order's validation against a seeded catalog, as an order and as a
// quote) never panic and refuse a body only with a client error of the
// platform (VALIDATION_ERROR naming a field, or a catalog answer such as
// NOT_FOUND), never INTERNAL_ERROR.
func FuzzServiceBody(f *testing.F) {
	kinds := services.KindNames()
	for i, k := range kinds {
		f.Add(uint8(i), []byte(kindSeeds[k]))
		f.Add(uint8(i), []byte(`{}`))
	}
	f.Add(uint8(0), []byte(`{"bandwidth":"999999gbps","sla":"premium","service_type":"fiber_business","location":{"zip":"7870"}}`))
	f.Add(uint8(2), []byte(`{"system_type":"cloud_pbx","users":1e300,"phone_numbers":[{"area_code":"012","quantity":-1}]}`))
	f.Add(uint8(4), []byte(`{"resources":[{"type":"virtual_machine","specifications":{"memory":"999999TB"}}],"regions":[""]}`))
	f.Add(uint8(7), []byte(`{"protected_networks":["::ffff:10.0.0.0/8","300.1.1.1"],"throughput":"0mbps","location":{}}`))
	store, _ := testenv.SeededStore(f)
	st := services.NewStore(store)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, kindIndex uint8, raw []byte) {
		kind := kinds[int(kindIndex)%len(kinds)]
		var spec map[string]any
		if json.Unmarshal(raw, &spec) != nil {
			return // not a JSON object: refused by the API's decoder before
		}
		body, err := services.DecodeKindBody("body", kind, spec)
		if err != nil {
			clientError(t, "DecodeKindBody", err)
			return
		}
		if body.ServiceKind() != kind {
			t.Fatalf("a %s body decoded as %s", kind, body.ServiceKind())
		}
		for _, quote := range []bool{false, true} {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			o, err := st.OrderFromBody(cctx, models.EnvLive, body, quote)
			cancel()
			if err != nil {
				clientError(t, "OrderFromBody", err)
				continue
			}
			if o.Kind != kind || o.Quantity < 1 {
				t.Fatalf("a valid %s body gave the order %+v", kind, o)
			}
		}
	})
}

// FuzzServiceDurations: the size (ParseSizeGB), response time
// (ParseResponseTime) and maintenance window (ParseWindowDuration)
// parsers never panic; each answers a positive value within its range
// that its own text form parses back to, or a VALIDATION_ERROR naming the
// field.
func FuzzServiceDurations(f *testing.F) {
	for _, s := range []string{"16GB", "2TB", "2 tb", "999999TB", "0GB", "15_minutes", "1_minute", "4_hours", "9999_hours", "1_hour", "24_hours",
		"25_hours", "0_hours", " 2_hours ", "", "1e3GB", "١٦GB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if gb, err := services.ParseSizeGB("size", s); err != nil {
			clientError(t, "ParseSizeGB", err)
		} else if gb < 1 || gb > 999_999_000 {
			t.Fatalf("%q: %d GB", s, gb)
		} else if back, err := services.ParseSizeGB("size", itoa(gb)+"GB"); err == nil && back != gb {
			t.Fatalf("%q: %d GB parses back as %d", s, gb, back)
		}
		if d, err := services.ParseResponseTime("response_time", s); err != nil {
			clientError(t, "ParseResponseTime", err)
		} else if d < time.Minute || d > 9999*time.Hour || d%time.Minute != 0 {
			t.Fatalf("%q: response time %v", s, d)
		} else if back, err := services.ParseResponseTime("response_time", itoa(int(d/time.Minute))+"_minutes"); err == nil && back != d {
			t.Fatalf("%q: %v parses back as %v", s, d, back)
		}
		if d, err := services.ParseWindowDuration("window", s); err != nil {
			clientError(t, "ParseWindowDuration", err)
		} else if d < time.Hour || d > 24*time.Hour || d%time.Hour != 0 {
			t.Fatalf("%q: window %v", s, d)
		} else if back, err := services.ParseWindowDuration("window", itoa(int(d/time.Hour))+"_hours"); err != nil || back != d {
			t.Fatalf("%q: %v parses back as %v (%v)", s, d, back, err)
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
