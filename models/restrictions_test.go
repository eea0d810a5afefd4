package models_test

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
)

// countries is a fixed GeoIP table for the tests.
type countries map[string]string // CIDR -> country

func (c countries) Country(a netip.Addr) string {
	for cidr, country := range c {
		if netip.MustParsePrefix(cidr).Contains(a) {
			return country
		}
	}
	return ""
}

var testCountries = countries{"192.0.2.0/24": "US", "198.51.100.0/24": "DE", "203.0.113.0/24": "JP"}

func origin(ip string) models.RequestOrigin {
	return models.RequestOrigin{IP: netip.MustParseAddr(ip), Countries: testCountries}
}

// at parses a wall-clock time in a zone.
func at(t *testing.T, zone, clock string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := time.ParseInLocation("2006-01-02 15:04", clock, loc)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// wantCode checks the code of err ("" means no error).
func wantCode(t *testing.T, err error, code models.Code) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if models.ErrorCode(err) != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

func TestAccessPolicyTimeWindows(t *testing.T) {
	office := models.TimeRestrictions{Timezone: "America/New_York", Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "08:00", End: "18:00"}
	night := models.TimeRestrictions{Timezone: "Europe/Berlin", Days: []string{"fri"}, Start: "22:00", End: "06:00"}
	everyNight := models.TimeRestrictions{Timezone: "Asia/Kolkata", Start: "20:30", End: "02:15"}
	wholeDay := models.TimeRestrictions{Timezone: "UTC", Days: []string{"sat", "sun"}, Start: "00:00", End: "24:00"}
	untilMidnight := models.TimeRestrictions{Timezone: "UTC", Start: "18:00", End: "00:00"}
	// 2026-11-23 is a Monday; 2026-11-27 a Friday.
	tests := []struct {
		name   string
		window models.TimeRestrictions
		when   time.Time
		allow  bool
	}{
		{"office: start is inside", office, at(t, "America/New_York", "2026-11-23 08:00"), true},
		{"office: one minute before", office, at(t, "America/New_York", "2026-11-23 07:59"), false},
		{"office: last minute", office, at(t, "America/New_York", "2026-11-23 17:59"), true},
		{"office: end is outside", office, at(t, "America/New_York", "2026-11-23 18:00"), false},
		{"office: saturday", office, at(t, "America/New_York", "2026-11-28 10:00"), false},
		{"office: evaluated in its own zone (13:00 UTC is 08:00 EST)", office, at(t, "UTC", "2026-11-23 13:00"), true},
		{"office: 12:59 UTC is 07:59 EST", office, at(t, "UTC", "2026-11-23 12:59"), false},
		{"office: summer time (12:00 UTC is 08:00 EDT)", office, at(t, "UTC", "2026-07-06 12:00"), true},
		{"office: monday morning in Tokyo is sunday in New York", office, at(t, "Asia/Tokyo", "2026-11-23 09:00"), false},
		{"overnight: friday 23:00", night, at(t, "Europe/Berlin", "2026-11-27 23:00"), true},
		{"overnight: saturday 05:59 belongs to friday", night, at(t, "Europe/Berlin", "2026-11-28 05:59"), true},
		{"overnight: saturday 06:00 is closed", night, at(t, "Europe/Berlin", "2026-11-28 06:00"), false},
		{"overnight: saturday 23:00 (not a listed day)", night, at(t, "Europe/Berlin", "2026-11-28 23:00"), false},
		{"overnight: friday 05:00 belongs to thursday", night, at(t, "Europe/Berlin", "2026-11-27 05:00"), false},
		{"overnight: friday 21:59", night, at(t, "Europe/Berlin", "2026-11-27 21:59"), false},
		{"every night: half-hour zone, 20:30", everyNight, at(t, "Asia/Kolkata", "2026-11-24 20:30"), true},
		{"every night: 02:14", everyNight, at(t, "Asia/Kolkata", "2026-11-24 02:14"), true},
		{"every night: 02:15", everyNight, at(t, "Asia/Kolkata", "2026-11-24 02:15"), false},
		{"every night: 15:00 UTC is 20:30 IST", everyNight, at(t, "UTC", "2026-11-24 15:00"), true},
		{"whole day: sunday 23:59", wholeDay, at(t, "UTC", "2026-11-29 23:59"), true},
		{"whole day: monday 00:00", wholeDay, at(t, "UTC", "2026-11-30 00:00"), false},
		{"until midnight: 23:59", untilMidnight, at(t, "UTC", "2026-11-24 23:59"), true},
		{"until midnight: 00:00", untilMidnight, at(t, "UTC", "2026-11-25 00:00"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.window
			p, err := models.ValidateAccessPolicy(models.AccessPolicy{TimeRestrictions: &w})
			if err != nil {
				t.Fatal(err)
			}
			err = p.Check(tc.when, origin("192.0.2.1"))
			if tc.allow {
				wantCode(t, err, "")
				return
			}
			wantCode(t, err, models.CodeAccessRestricted)
			d := models.AsError(err).Details
			if d["restriction"] != "time" || d["allowed"] == nil || d["local_time"] == nil || d["next_allowed_at"] == nil {
				t.Fatalf("details %v", d)
			}
		})
	}
}

func TestAccessPolicyTimeDetails(t *testing.T) {
	p, err := models.ValidateAccessPolicy(models.AccessPolicy{TimeRestrictions: &models.TimeRestrictions{
		Timezone: "America/New_York", Days: []string{"FRI", "mon", "mon"}, Start: "08:00", End: "18:00"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.TimeRestrictions.Days; !slices.Equal(got, []string{"mon", "fri"}) {
		t.Fatalf("days normalised to %v", got)
	}
	// Friday 18:30 New York: closed until Monday 08:00 EST (13:00 UTC).
	err = p.Check(at(t, "America/New_York", "2026-11-27 18:30"), origin("192.0.2.1"))
	d := models.AsError(err).Details
	if d["next_allowed_at"] != "2026-11-30T13:00:00Z" || d["local_time"] != "fri 18:30" {
		t.Fatalf("details %v", d)
	}
	allowed, _ := d["allowed"].(map[string]any)
	if allowed["timezone"] != "America/New_York" || allowed["start"] != "08:00" || allowed["end"] != "18:00" {
		t.Fatalf("allowed %v", allowed)
	}
	// Without a zone the window is in UTC.
	p, err = models.ValidateAccessPolicy(models.AccessPolicy{TimeRestrictions: &models.TimeRestrictions{Start: "09:00", End: "10:00"}})
	if err != nil || p.TimeRestrictions.Timezone != "UTC" {
		t.Fatalf("default zone: %+v %v", p, err)
	}
}

func TestAccessPolicyCountries(t *testing.T) {
	tests := []struct {
		name      string
		policy    models.AccessPolicy
		ip        string
		wantCode  models.Code
		wantRule  string
		wantCntry any
	}{
		{"allowed country", models.AccessPolicy{AllowedCountries: []string{"us", "DE"}}, "198.51.100.9", "", "", nil},
		{"country not in the allow list", models.AccessPolicy{AllowedCountries: []string{"US"}}, "203.0.113.9", models.CodeAccessRestricted, "allowed_countries", "JP"},
		{"unknown country fails an allow list", models.AccessPolicy{AllowedCountries: []string{"US"}}, "10.0.0.1", models.CodeAccessRestricted, "allowed_countries", nil},
		{"denied country", models.AccessPolicy{DeniedCountries: []string{"JP"}}, "203.0.113.9", models.CodeAccessRestricted, "denied_countries", "JP"},
		{"other country passes a deny list", models.AccessPolicy{DeniedCountries: []string{"JP"}}, "192.0.2.9", "", "", nil},
		{"unknown country passes a deny list", models.AccessPolicy{DeniedCountries: []string{"JP"}}, "10.0.0.1", "", "", nil},
		{"IPv4-mapped address", models.AccessPolicy{AllowedCountries: []string{"US"}}, "::ffff:192.0.2.9", "", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := models.ValidateAccessPolicy(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Check(time.Now(), origin(tc.ip))
			wantCode(t, err, tc.wantCode)
			if err != nil {
				d := models.AsError(err).Details
				if d["restriction"] != "country" || d["rule"] != tc.wantRule || d["country"] != tc.wantCntry {
					t.Fatalf("details %v", d)
				}
			}
		})
	}
}

func TestAccessPolicyIPAllowList(t *testing.T) {
	p, err := models.ValidateAccessPolicy(models.AccessPolicy{IPAllowList: []string{"192.0.2.0/25", "2001:db8::1", "198.51.100.77/24"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.IPAllowList, []string{"192.0.2.0/25", "2001:db8::1/128", "198.51.100.0/24"}) {
		t.Fatalf("normalised to %v", p.IPAllowList)
	}
	for ip, code := range map[string]models.Code{
		"192.0.2.1": "", "::ffff:192.0.2.100": "", "2001:db8::1": "", "198.51.100.200": "",
		"192.0.2.200": models.CodeIPNotAllowed, "2001:db8::2": models.CodeIPNotAllowed,
	} {
		err := p.Check(time.Now(), origin(ip))
		if models.ErrorCode(err) != code && !(code == "" && err == nil) {
			t.Errorf("%s: %v, want %q", ip, err, code)
		}
		if err != nil {
			if d := models.AsError(err).Details; d["restriction"] != "ip" || d["scope"] != "organization" || d["ip_address"] == nil {
				t.Errorf("details %v", d)
			}
		}
	}
	// An address that cannot be told passes no allow-list, but an empty policy.
	wantCode(t, p.Check(time.Now(), models.RequestOrigin{}), models.CodeIPNotAllowed)
	var none *models.AccessPolicy
	wantCode(t, none.Check(time.Now(), models.RequestOrigin{}), "")
	// Order: the IP allow-list is reported before a country or a time rule.
	all, err := models.ValidateAccessPolicy(models.AccessPolicy{IPAllowList: []string{"192.0.2.0/24"}, AllowedCountries: []string{"DE"},
		TimeRestrictions: &models.TimeRestrictions{Start: "00:00", End: "00:01"}})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, all.Check(at(t, "UTC", "2026-11-23 12:00"), origin("203.0.113.1")), models.CodeIPNotAllowed)
	err = all.Check(at(t, "UTC", "2026-11-23 12:00"), origin("192.0.2.1"))
	if models.AsError(err).Details["restriction"] != "country" {
		t.Fatalf("want the country rule, got %v", err)
	}
}

func TestValidateAccessPolicy(t *testing.T) {
	tests := []struct {
		name   string
		policy models.AccessPolicy
		fields []string
	}{
		{"bad CIDRs", models.AccessPolicy{IPAllowList: []string{"192.0.2.0/24", "192.0.2.0/33", "not-an-ip", "10.0.0.1/8/8", "fe80::1%eth0"}},
			[]string{"access_policy.ip_allowlist[1]", "access_policy.ip_allowlist[2]", "access_policy.ip_allowlist[3]", "access_policy.ip_allowlist[4]"}},
		{"too many addresses", models.AccessPolicy{IPAllowList: slices.Repeat([]string{"192.0.2.1"}, 101)}, []string{"access_policy.ip_allowlist"}},
		{"bad countries", models.AccessPolicy{AllowedCountries: []string{"US", "USA", "UK", "1A"}, DeniedCountries: []string{"", "EU"}},
			[]string{"access_policy.allowed_countries[1]", "access_policy.allowed_countries[2]", "access_policy.allowed_countries[3]", "access_policy.denied_countries[0]", "access_policy.denied_countries[1]"}},
		{"a country both allowed and denied", models.AccessPolicy{AllowedCountries: []string{"US", "DE"}, DeniedCountries: []string{"de"}}, []string{"access_policy.denied_countries"}},
		{"bad window", models.AccessPolicy{TimeRestrictions: &models.TimeRestrictions{Timezone: "Mars/Olympus", Days: []string{"mon", "funday"}, Start: "8:00", End: "25:00"}},
			[]string{"access_policy.time_restrictions.timezone", "access_policy.time_restrictions.days[1]", "access_policy.time_restrictions.start", "access_policy.time_restrictions.end"}},
		{"start equals end", models.AccessPolicy{TimeRestrictions: &models.TimeRestrictions{Start: "09:00", End: "09:00"}}, []string{"access_policy.time_restrictions.end"}},
		{"start at 24:00", models.AccessPolicy{TimeRestrictions: &models.TimeRestrictions{Start: "24:00", End: "09:00"}}, []string{"access_policy.time_restrictions.start"}},
		{"signed clock", models.AccessPolicy{TimeRestrictions: &models.TimeRestrictions{Start: "+9:00", End: "10:-1"}}, []string{"access_policy.time_restrictions.start", "access_policy.time_restrictions.end"}},
		{"server-local zone", models.AccessPolicy{TimeRestrictions: &models.TimeRestrictions{Timezone: "Local", Start: "09:00", End: "10:00"}}, []string{"access_policy.time_restrictions.timezone"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := models.ValidateAccessPolicy(tc.policy)
			wantCode(t, err, models.CodeValidation)
			issues, _ := models.AsError(err).Details["fields"].([]models.FieldIssue)
			var got []string
			for _, is := range issues {
				if !slices.Contains(got, is.Field) {
					got = append(got, is.Field)
				}
			}
			if !slices.Equal(got, tc.fields) {
				t.Fatalf("fields %v, want %v (%v)", got, tc.fields, issues)
			}
		})
	}
	if _, err := models.ValidateIPAllowList("ip_allowlist", []string{"203.0.113.0/24", "nope"}); models.ErrorCode(err) != models.CodeValidation ||
		models.AsError(err).Details["fields"].([]models.FieldIssue)[0].Field != "ip_allowlist[1]" {
		t.Fatalf("ValidateIPAllowList: %v", err)
	}
	empty, err := models.ValidateAccessPolicy(models.AccessPolicy{})
	if err != nil || empty == nil || !empty.Empty() {
		t.Fatalf("empty policy: %+v %v", empty, err)
	}
}

func TestValidCountry(t *testing.T) {
	for _, c := range []string{"US", "DE", "JP", "GB", "AD", "ZW", "SS", "XK", "XL", "QM", "AA", "ZZ"} {
		if !models.ValidCountry(c) {
			t.Errorf("%s should be valid", c)
		}
	}
	for _, c := range []string{"", "U", "USA", "us", "UK", "EU", "QA1", "DA", "D ", " A", "QL"} {
		if models.ValidCountry(c) {
			t.Errorf("%q should be invalid", c)
		}
	}
}

// TestAccessRestrictionsStored checks the policy, the user and client
// allow-lists and CheckAccess against the database (SQLite and PostgreSQL).
func TestAccessRestrictionsStored(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	adm := admin(t, s)
	now := at(t, "UTC", "2026-11-23 12:00") // a Monday
	s.Now = func() time.Time { return now }

	// A policy given on creation is stored normalised; errors name fields.
	_, err := identity.NewStore(s).CreateOrganization(ctx, adm, identity.OrganizationInput{Name: "Bad", Plan: models.PlanBusiness,
		AccessPolicy: &models.AccessPolicy{IPAllowList: []string{"300.1.1.1"}}})
	wantCode(t, err, models.CodeValidation)
	org, err := identity.NewStore(s).CreateOrganization(ctx, adm, identity.OrganizationInput{Name: "Restricted", Plan: models.PlanBusiness,
		AccessPolicy: &models.AccessPolicy{AllowedCountries: []string{"us"}, TimeRestrictions: &models.TimeRestrictions{Timezone: "UTC", Days: []string{"mon"}, Start: "09:00", End: "17:00"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := identity.NewStore(s).GetOrganization(ctx, adm, org.ID)
	if err != nil || got.AccessPolicy == nil || !slices.Equal(got.AccessPolicy.AllowedCountries, []string{"US"}) || got.AccessPolicy.TimeRestrictions.Start != "09:00" {
		t.Fatalf("stored policy %+v %v", got.AccessPolicy, err)
	}
	sub := identity.AccessSubject{OrganizationID: org.ID}
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, sub, origin("192.0.2.1")), "")
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, sub, origin("198.51.100.1")), models.CodeAccessRestricted)
	now = at(t, "UTC", "2026-11-23 17:00")
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, sub, origin("192.0.2.1")), models.CodeAccessRestricted)

	// An update without access_policy keeps it; an empty one removes it.
	if _, err := identity.NewStore(s).UpdateOrganization(ctx, adm, org.ID, identity.OrganizationInput{Name: "Renamed"}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, sub, origin("192.0.2.1")), models.CodeAccessRestricted)
	if got, err = identity.NewStore(s).UpdateOrganization(ctx, adm, org.ID, identity.OrganizationInput{AccessPolicy: &models.AccessPolicy{}}); err != nil || got.AccessPolicy != nil {
		t.Fatalf("cleared policy %+v %v", got, err)
	}
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, sub, origin("198.51.100.1")), "")

	// Administrators cannot lock themselves out of their own organization,
	// but may restrict a tenant from anywhere.
	from := origin("198.51.100.7")
	_, err = identity.NewStore(s).UpdateOrganization(ctx, adm, adm.OrganizationID, identity.OrganizationInput{Origin: from,
		AccessPolicy: &models.AccessPolicy{IPAllowList: []string{"192.0.2.0/24"}, DeniedCountries: []string{"DE"}}})
	wantCode(t, err, models.CodeValidation)
	if msg := models.AsError(err).Message; !strings.Contains(msg, "invalid fields") {
		t.Fatalf("want both rules reported: %v", err)
	}
	if _, err := identity.NewStore(s).UpdateOrganization(ctx, adm, adm.OrganizationID, identity.OrganizationInput{Origin: from,
		AccessPolicy: &models.AccessPolicy{IPAllowList: []string{"198.51.100.0/24"}, TimeRestrictions: &models.TimeRestrictions{Start: "01:00", End: "02:00"}}}); err != nil {
		t.Fatalf("a policy that keeps the caller in (time windows reopen by themselves): %v", err)
	}
	if _, err := identity.NewStore(s).UpdateOrganization(ctx, adm, org.ID, identity.OrganizationInput{Origin: from, AccessPolicy: &models.AccessPolicy{IPAllowList: []string{"192.0.2.0/24"}}}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, sub, from), models.CodeIPNotAllowed)

	// User and client allow-lists.
	if _, err := identity.NewStore(s).UpdateOrganization(ctx, adm, org.ID, identity.OrganizationInput{AccessPolicy: &models.AccessPolicy{}}); err != nil {
		t.Fatal(err)
	}
	_, err = identity.NewStore(s).CreateUser(ctx, adm, identity.UserInput{Email: "bad@example.com", Name: "Bad", OrganizationID: org.ID, IPAllowList: []string{"x"}})
	wantCode(t, err, models.CodeValidation)
	u, err := identity.NewStore(s).CreateUser(ctx, adm, identity.UserInput{Email: "ada@example.com", Name: "Ada", OrganizationID: org.ID, IPAllowList: []string{"192.0.2.7"}})
	if err != nil || !slices.Equal(u.IPAllowList, []string{"192.0.2.7/32"}) {
		t.Fatalf("user %+v %v", u, err)
	}
	tenant := &models.Principal{Kind: models.PrincipalAPIKey, ID: "ak_t", OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	c, _, err := identity.NewStore(s).CreateOAuthClient(ctx, tenant, identity.OAuthClientInput{Name: "Robot", GrantTypes: []string{identity.GrantClientCredentials}, Scopes: []string{"services.read"}, IPAllowList: []string{"203.0.113.0/24"}})
	if err != nil || !slices.Equal(c.IPAllowList, []string{"203.0.113.0/24"}) {
		t.Fatalf("client %+v %v", c, err)
	}
	_, _, err = identity.NewStore(s).CreateOAuthClient(ctx, tenant, identity.OAuthClientInput{Name: "Bad", GrantTypes: []string{identity.GrantClientCredentials}, Scopes: []string{"services.read"}, IPAllowList: []string{"203.0.113.0/99"}})
	wantCode(t, err, models.CodeValidation)

	wantCode(t, identity.NewStore(s).CheckAccess(ctx, identity.AccessSubject{OrganizationID: org.ID, UserID: u.ID}, origin("192.0.2.7")), "")
	err = identity.NewStore(s).CheckAccess(ctx, identity.AccessSubject{OrganizationID: org.ID, UserID: u.ID}, origin("192.0.2.8"))
	if wantCode(t, err, models.CodeIPNotAllowed); models.AsError(err).Details["scope"] != "user" {
		t.Fatalf("details %v", models.AsError(err).Details)
	}
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, identity.AccessSubject{OrganizationID: org.ID, ClientID: c.ID}, origin("203.0.113.5")), "")
	err = identity.NewStore(s).CheckAccess(ctx, identity.AccessSubject{OrganizationID: org.ID, ClientID: c.ID, UserID: u.ID}, origin("192.0.2.7"))
	if wantCode(t, err, models.CodeIPNotAllowed); models.AsError(err).Details["scope"] != "client" {
		t.Fatalf("details %v", models.AsError(err).Details)
	}
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, identity.AccessSubject{OrganizationID: org.ID, ClientID: "cli_gone"}, origin("203.0.113.5")), models.CodeInvalidToken)
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, identity.AccessSubject{OrganizationID: org.ID, UserID: "usr_gone"}, origin("203.0.113.5")), models.CodeInvalidToken)
	wantCode(t, identity.NewStore(s).CheckAccess(ctx, identity.AccessSubject{OrganizationID: "org_gone"}, origin("203.0.113.5")), models.CodeUnauthenticated)
	wantCode(t, identity.NewStore(s).CheckClientAccess(ctx, c.ID, origin("203.0.113.5")), "")
	wantCode(t, identity.NewStore(s).CheckClientAccess(ctx, c.ID, origin("192.0.2.7")), models.CodeIPNotAllowed)
	wantCode(t, identity.NewStore(s).CheckClientAccess(ctx, "cli_unknown", origin("192.0.2.7")), "")

	// Updating users: a live credential, the caller's own organization, and
	// no allow-list that shuts out the user setting it.
	list := []string{"198.51.100.0/24"}
	_, err = identity.NewStore(s).UpdateUser(ctx, &models.Principal{OrganizationID: org.ID, Environment: models.EnvTest, Role: models.RoleCustomer, Permissions: []string{"*"}}, u.ID, identity.UserUpdate{IPAllowList: &list})
	wantCode(t, err, models.CodeInsufficientPermissions)
	other := &models.Principal{OrganizationID: adm.OrganizationID + "x", Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	_, err = identity.NewStore(s).UpdateUser(ctx, other, u.ID, identity.UserUpdate{IPAllowList: &list})
	wantCode(t, err, models.CodeNotFound)
	self := &models.Principal{Kind: models.PrincipalUser, ID: u.ID, UserID: u.ID, OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	_, err = identity.NewStore(s).UpdateUser(ctx, self, u.ID, identity.UserUpdate{IPAllowList: &list, Origin: origin("192.0.2.7")})
	wantCode(t, err, models.CodeValidation)
	bad := []string{"192.0.2.0/24", "::/129"}
	_, err = identity.NewStore(s).UpdateUser(ctx, tenant, u.ID, identity.UserUpdate{IPAllowList: &bad})
	wantCode(t, err, models.CodeValidation)
	name := "Ada L."
	u2, err := identity.NewStore(s).UpdateUser(ctx, tenant, u.ID, identity.UserUpdate{Name: &name, IPAllowList: &list, Origin: origin("192.0.2.7")})
	if err != nil || u2.Name != "Ada L." || !slices.Equal(u2.IPAllowList, list) {
		t.Fatalf("updated user %+v %v", u2, err)
	}
	none := []string{}
	if u2, err = identity.NewStore(s).UpdateUser(ctx, tenant, u.ID, identity.UserUpdate{IPAllowList: &none}); err != nil || len(u2.IPAllowList) != 0 || u2.Name != "Ada L." {
		t.Fatalf("cleared allow-list %+v %v", u2, err)
	}
	staff, err := identity.NewStore(s).CreateUser(ctx, adm, identity.UserInput{Email: "agent@example.com", Name: "Agent", Role: models.RoleAgent, OrganizationID: adm.OrganizationID})
	if err != nil {
		t.Fatal(err)
	}
	provCustomer := &models.Principal{OrganizationID: adm.OrganizationID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"auth:manage"}}
	_, err = identity.NewStore(s).UpdateUser(ctx, provCustomer, staff.ID, identity.UserUpdate{IPAllowList: &list})
	wantCode(t, err, models.CodeInsufficientPermissions)
	if _, err := identity.NewStore(s).UpdateUser(ctx, adm, staff.ID, identity.UserUpdate{IPAllowList: &list}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkCheckAccess measures the per-request cost of the restrictions of
// a user token issued through a client: one read, and the evaluation of a
// policy with every kind of rule.
func BenchmarkCheckAccess(b *testing.B) {
	ctx := context.Background()
	s := testenv.Store(b)
	s.Sealer = nil // no SECRETS_KEY
	prov, err := identity.NewStore(s).EnsureProviderOrganization(ctx)
	if err != nil {
		b.Fatal(err)
	}
	adm := &models.Principal{OrganizationID: prov.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	org, err := identity.NewStore(s).CreateOrganization(ctx, adm, identity.OrganizationInput{Name: "Bench", Plan: models.PlanBusiness, AccessPolicy: &models.AccessPolicy{
		IPAllowList: []string{"192.0.2.0/24"}, AllowedCountries: []string{"US"},
		TimeRestrictions: &models.TimeRestrictions{Timezone: "America/New_York", Start: "00:00", End: "24:00"}}})
	if err != nil {
		b.Fatal(err)
	}
	u, err := identity.NewStore(s).CreateUser(ctx, adm, identity.UserInput{Email: "bench@example.com", Name: "Bench", OrganizationID: org.ID, IPAllowList: []string{"192.0.2.0/24"}})
	if err != nil {
		b.Fatal(err)
	}
	tenant := &models.Principal{OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	c, _, err := identity.NewStore(s).CreateOAuthClient(ctx, tenant, identity.OAuthClientInput{Name: "Bench", GrantTypes: []string{identity.GrantClientCredentials}, Scopes: []string{"services.read"}, IPAllowList: []string{"192.0.2.0/24"}})
	if err != nil {
		b.Fatal(err)
	}
	sub, from := identity.AccessSubject{OrganizationID: org.ID, ClientID: c.ID, UserID: u.ID}, origin("192.0.2.1")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := identity.NewStore(s).CheckAccess(ctx, sub, from); err != nil {
			b.Fatal(err)
		}
	}
}
