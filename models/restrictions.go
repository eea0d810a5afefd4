package models

import (
	"encoding/json"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // IANA time zones even on hosts without a zoneinfo database
)

// Bounds of access restrictions (docs/authentication.md, "Access restrictions").
const (
	MaxIPAllowList = 100 // entries of any IP allow-list
	maxCountries   = 300 // entries of a country list
)

// AccessPolicy is an organization's secondary access controls (spec 5): an
// IP allow-list, country allow and deny lists and a weekly time window. It
// binds every credential of the organization (API keys, access tokens,
// client certificates), whatever tenant data the credential acts on; an
// empty or nil policy restricts nothing. Stored as JSON on the organization.
type AccessPolicy struct {
	IPAllowList      []string          `json:"ip_allowlist,omitempty"`
	AllowedCountries []string          `json:"allowed_countries,omitempty"`
	DeniedCountries  []string          `json:"denied_countries,omitempty"`
	TimeRestrictions *TimeRestrictions `json:"time_restrictions,omitempty"`
}

// TimeRestrictions is a weekly window: requests are allowed on Days from
// Start (inclusive) to End (exclusive), wall-clock time in Timezone. An End
// before Start is an overnight window that closes the next day; Days name
// the day a window opens (empty: every day). End may be "24:00".
type TimeRestrictions struct {
	Timezone string   `json:"timezone"`
	Days     []string `json:"days,omitempty"`
	Start    string   `json:"start"`
	End      string   `json:"end"`
}

// Empty reports whether the policy restricts nothing.
func (p *AccessPolicy) Empty() bool {
	return p == nil || (len(p.IPAllowList) == 0 && len(p.AllowedCountries) == 0 && len(p.DeniedCountries) == 0 && p.TimeRestrictions == nil)
}

// CountryResolver locates an address: it returns its ISO 3166-1 alpha-2
// country code, or "" when unknown (config.GeoIP is one).
type CountryResolver interface {
	Country(addr netip.Addr) string
}

// RequestOrigin is where a request comes from: the client address (the
// invalid address when it cannot be told, which no allow-list accepts) and
// how to find its country.
type RequestOrigin struct {
	IP        netip.Addr
	Countries CountryResolver // nil: every country is unknown
}

func (o RequestOrigin) country() string {
	if o.Countries == nil || !o.IP.IsValid() {
		return ""
	}
	return o.Countries.Country(o.IP.Unmap())
}

func (o RequestOrigin) ipDetail() any {
	if !o.IP.IsValid() {
		return nil
	}
	return o.IP.Unmap().String()
}

// weekdays are the day names of time restrictions, in time.Weekday order.
var weekdays = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// isoCountries are the officially assigned ISO 3166-1 alpha-2 codes.
const isoCountries = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT " +
	"MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG " +
	"UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW"

// ValidCountry reports whether code is an ISO 3166-1 alpha-2 code: an
// officially assigned one, or a user-assigned one (AA, QM to QZ, XA to XZ,
// ZZ), which private GeoIP tables use (the built-in table maps loopback to XL).
func ValidCountry(code string) bool {
	if len(code) != 2 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' {
		return false
	}
	if code == "AA" || code == "ZZ" || code[0] == 'X' || (code[0] == 'Q' && code[1] >= 'M') {
		return true
	}
	i := strings.Index(isoCountries, code)
	return i >= 0 && i%3 == 0
}

// ValidateAccessPolicy checks a policy and returns it in stored form: IP
// addresses as CIDR ranges, country codes upper case without duplicates,
// days in week order starting on Monday, timezone UTC when empty. The
// result is never nil (an empty policy clears the restrictions). Issues name
// the fields under access_policy (access_policy.ip_allowlist[0], ...).
// Errors: VALIDATION_ERROR.
func ValidateAccessPolicy(in AccessPolicy) (*AccessPolicy, error) {
	var v Validator
	out := NormalizeAccessPolicy(&v, "access_policy", in)
	if err := v.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// NormalizeAccessPolicy checks in, reporting issues under field, and returns
// it normalised (trimmed, deduplicated, sorted).
func NormalizeAccessPolicy(v *Validator, field string, in AccessPolicy) *AccessPolicy {
	out := &AccessPolicy{
		IPAllowList:      NormalizeIPAllowList(v, field+".ip_allowlist", in.IPAllowList),
		AllowedCountries: normalizeCountries(v, field+".allowed_countries", in.AllowedCountries),
		DeniedCountries:  normalizeCountries(v, field+".denied_countries", in.DeniedCountries),
	}
	for _, c := range out.DeniedCountries {
		v.Check(!slices.Contains(out.AllowedCountries, c), field+".denied_countries", c+" is also in allowed_countries")
	}
	if in.TimeRestrictions != nil {
		out.TimeRestrictions = normalizeTimeRestrictions(v, field+".time_restrictions", *in.TimeRestrictions)
	}
	return out
}

// ValidateIPAllowList checks an IP allow-list (IP addresses or CIDR ranges,
// IPv4 or IPv6, at most MaxIPAllowList) and returns it as masked CIDR
// ranges without duplicates (nil when empty). Issues name field[i].
// Errors: VALIDATION_ERROR.
func ValidateIPAllowList(field string, entries []string) ([]string, error) {
	var v Validator
	out := NormalizeIPAllowList(&v, field, entries)
	if err := v.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// NormalizeIPAllowList checks an IP allow-list (addresses or CIDR ranges),
// reporting issues under field, and returns it normalised.
func NormalizeIPAllowList(v *Validator, field string, entries []string) []string {
	v.Check(len(entries) <= MaxIPAllowList, field, "must have at most "+strconv.Itoa(MaxIPAllowList)+" entries")
	var out []string
	for i, e := range entries {
		pfx, ok := parseCIDR(strings.TrimSpace(e))
		if !ok {
			v.Add(field+"["+strconv.Itoa(i)+"]", strconv.Quote(clipString(e, 60))+" is not an IP address or CIDR range (e.g. 203.0.113.0/24)")
			continue
		}
		if s := pfx.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// parseCIDR reads an address or a CIDR range as a masked prefix; IPv4-mapped
// IPv6 forms become IPv4.
func parseCIDR(s string) (netip.Prefix, bool) {
	if pfx, err := netip.ParsePrefix(s); err == nil {
		if a := pfx.Addr(); a.Is4In6() {
			if pfx.Bits() < 96 {
				return netip.Prefix{}, false
			}
			pfx = netip.PrefixFrom(a.Unmap(), pfx.Bits()-96)
		}
		return pfx.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

func clipString(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func normalizeCountries(v *Validator, field string, codes []string) []string {
	v.Check(len(codes) <= maxCountries, field, "must have at most "+strconv.Itoa(maxCountries)+" entries")
	var out []string
	for i, c := range codes {
		c = strings.ToUpper(strings.TrimSpace(c))
		if !ValidCountry(c) {
			v.Add(field+"["+strconv.Itoa(i)+"]", strconv.Quote(clipString(codes[i], 20))+" is not an ISO 3166-1 alpha-2 country code (e.g. US, DE)")
			continue
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func normalizeTimeRestrictions(v *Validator, field string, in TimeRestrictions) *TimeRestrictions {
	out := &TimeRestrictions{Timezone: strings.TrimSpace(in.Timezone), Start: strings.TrimSpace(in.Start), End: strings.TrimSpace(in.End)}
	if out.Timezone == "" {
		out.Timezone = "UTC"
	}
	if _, err := time.LoadLocation(out.Timezone); err != nil || out.Timezone == "Local" {
		v.Add(field+".timezone", strconv.Quote(clipString(in.Timezone, 64))+" is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)")
	}
	var listed [7]bool
	for i, d := range in.Days {
		d = strings.ToLower(strings.TrimSpace(d))
		idx := slices.Index(weekdays[:], d)
		if idx < 0 {
			v.Add(field+".days["+strconv.Itoa(i)+"]", strconv.Quote(clipString(in.Days[i], 20))+" is not a day: use mon, tue, wed, thu, fri, sat or sun")
			continue
		}
		listed[idx] = true
	}
	for i := 1; i <= 7; i++ { // Monday first
		if listed[i%7] {
			out.Days = append(out.Days, weekdays[i%7])
		}
	}
	start, okStart := parseClock(out.Start, false)
	end, okEnd := parseClock(out.End, true)
	v.Check(okStart, field+".start", "must be HH:MM from 00:00 to 23:59")
	v.Check(okEnd, field+".end", "must be HH:MM from 00:00 to 24:00")
	v.Check(!okStart || !okEnd || start != end, field+".end", "must differ from start (00:00 to 24:00 is the whole day)")
	return out
}

// parseClock reads HH:MM as minutes after midnight; "24:00" only when endOfDay.
func parseClock(s string, endOfDay bool) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	h, err1 := strconv.Atoi(s[:2])
	m, err2 := strconv.Atoi(s[3:])
	if err1 != nil || err2 != nil || h < 0 || m < 0 || m > 59 || s[0] == '+' || s[3] == '+' {
		return 0, false
	}
	if h == 24 && m == 0 && endOfDay {
		return 24 * 60, true
	}
	if h > 23 {
		return 0, false
	}
	return h*60 + m, true
}

// Check returns nil when a request from origin at time at satisfies the
// policy (a nil or empty policy allows everything). The IP allow-list is
// checked first, then the countries, then the time window; the first rule
// that refuses is reported. An address with no known country passes the
// deny list but never the allow list.
// Errors: IP_NOT_ALLOWED (details: restriction "ip", scope "organization",
// ip_address), ACCESS_RESTRICTED (details: restriction "country" with
// country, rule and allowed; or restriction "time" with allowed, local_time
// and next_allowed_at), INTERNAL_ERROR (a stored time zone that no longer exists).
func (p *AccessPolicy) Check(at time.Time, origin RequestOrigin) error {
	if p == nil {
		return nil
	}
	if err := CheckIPAllowList(p.IPAllowList, origin, "organization"); err != nil {
		return err
	}
	if err := p.checkCountry(origin); err != nil {
		return err
	}
	return p.TimeRestrictions.check(at)
}

// CheckIPAllowList refuses an address outside a non-empty allow-list of the
// scope (organization, client or user).
func CheckIPAllowList(list []string, origin RequestOrigin, scope string) error {
	if len(list) == 0 {
		return nil
	}
	if ip := origin.IP.Unmap(); ip.IsValid() {
		for _, cidr := range list {
			if pfx, err := netip.ParsePrefix(cidr); err == nil && pfx.Contains(ip) {
				return nil
			}
		}
	}
	what := map[string]string{"organization": "this organization", "client": "this OAuth client", "user": "this user"}[scope]
	return Errorf(CodeIPNotAllowed, "requests from this IP address are not allowed for %s", what).
		WithDetail("restriction", "ip").WithDetail("scope", scope).WithDetail("ip_address", origin.ipDetail())
}

func (p *AccessPolicy) checkCountry(origin RequestOrigin) error {
	if len(p.AllowedCountries) == 0 && len(p.DeniedCountries) == 0 {
		return nil
	}
	country := origin.country()
	var countryDetail any
	if country != "" {
		countryDetail = country
	}
	if len(p.AllowedCountries) > 0 && !slices.Contains(p.AllowedCountries, country) {
		msg := "requests from this country are not allowed for this organization"
		if country == "" {
			msg = "the country of this IP address is unknown, and this organization allows listed countries only"
		}
		return Errorf(CodeAccessRestricted, "%s", msg).WithDetail("restriction", "country").WithDetail("rule", "allowed_countries").
			WithDetail("country", countryDetail).WithDetail("allowed", slices.Clone(p.AllowedCountries))
	}
	if country != "" && slices.Contains(p.DeniedCountries, country) {
		return Errorf(CodeAccessRestricted, "requests from this country are not allowed for this organization").
			WithDetail("restriction", "country").WithDetail("rule", "denied_countries").WithDetail("country", country)
	}
	return nil
}

// onDay reports whether a window opens on day.
func (tr *TimeRestrictions) onDay(day time.Weekday) bool {
	return len(tr.Days) == 0 || slices.Contains(tr.Days, weekdays[day])
}

// allows reports whether the wall-clock time local falls in the window.
func (tr *TimeRestrictions) allows(local time.Time) bool {
	start, _ := parseClock(tr.Start, false)
	end, _ := parseClock(tr.End, true)
	m, day := local.Hour()*60+local.Minute(), local.Weekday()
	if start < end {
		return m >= start && m < end && tr.onDay(day)
	}
	// Overnight: from start to midnight on a listed day, or from midnight
	// to end on the day after one.
	return (m >= start && tr.onDay(day)) || (m < end && tr.onDay((day+6)%7))
}

// nextOpening returns when the window next opens after local (zero when never).
func (tr *TimeRestrictions) nextOpening(local time.Time) time.Time {
	start, _ := parseClock(tr.Start, false)
	y, mo, d := local.Date()
	for i := 0; i <= 7; i++ {
		if !tr.onDay(time.Date(y, mo, d+i, 12, 0, 0, 0, local.Location()).Weekday()) {
			continue
		}
		if at := time.Date(y, mo, d+i, start/60, start%60, 0, 0, local.Location()); at.After(local) {
			return at
		}
	}
	return time.Time{}
}

func (tr *TimeRestrictions) check(at time.Time) error {
	if tr == nil {
		return nil
	}
	loc, err := time.LoadLocation(tr.Timezone)
	if err != nil {
		return Internal(err)
	}
	local := at.In(loc)
	if tr.allows(local) {
		return nil
	}
	allowed := map[string]any{"timezone": tr.Timezone, "days": tr.dayList(), "start": tr.Start, "end": tr.End}
	e := Errorf(CodeAccessRestricted, "this organization allows requests only from %s to %s (%s)%s", tr.Start, tr.End, tr.Timezone, tr.daysText()).
		WithDetail("restriction", "time").WithDetail("allowed", allowed).
		WithDetail("local_time", weekdays[local.Weekday()]+" "+local.Format("15:04"))
	if next := tr.nextOpening(local); !next.IsZero() {
		e.WithDetail("next_allowed_at", Timestamp(next))
	}
	return e
}

func (tr *TimeRestrictions) dayList() []string {
	if len(tr.Days) == 0 {
		return []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	}
	return slices.Clone(tr.Days)
}

func (tr *TimeRestrictions) daysText() string {
	if len(tr.Days) == 0 || len(tr.Days) == 7 {
		return ""
	}
	return " on " + strings.Join(tr.Days, ", ")
}

// CheckLockout records an issue for each rule of a new policy that would
// refuse the very request that sets it (its address or its country): saving
// it would lock the caller out. Time windows are not checked: they reopen
// by themselves.
func CheckLockout(v *Validator, field string, p *AccessPolicy, origin RequestOrigin) {
	if p == nil {
		return
	}
	ip := "unknown"
	if origin.IP.IsValid() {
		ip = origin.IP.Unmap().String()
	}
	if CheckIPAllowList(p.IPAllowList, origin, "organization") != nil {
		v.Add(field+".ip_allowlist", "does not include the address of this request ("+ip+"): saving it would lock you out")
	}
	if err := p.checkCountry(origin); err != nil {
		rule, _ := AsError(err).Details["rule"].(string)
		country := origin.country()
		if country == "" {
			country = "unknown"
		}
		v.Add(field+"."+rule, "would refuse the country of this request ("+country+"): saving it would lock you out")
	}
}

// StoredPolicy returns the column value of a policy: NULL when it restricts nothing.
func StoredPolicy(p *AccessPolicy) any {
	if p.Empty() {
		return nil
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// StoredList returns the column value of a JSON list: NULL when empty.
func StoredList(list []string) any {
	if len(list) == 0 {
		return nil
	}
	b, _ := json.Marshal(list)
	return string(b)
}
