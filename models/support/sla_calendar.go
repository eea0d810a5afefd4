package support

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/businesstime"
)

// Id prefixes of business calendars and their holidays.
const (
	PrefixCalendar = "cal"
	PrefixHoliday  = "hol"
)

// Bounds of a business calendar.
const (
	MaxCalendarName    = 200
	MaxHolidayName     = 200
	MaxHolidays        = 1000 // per calendar
	MaxIntervalsPerDay = 12
	MaxImportYearSpan  = 10 // an iCalendar import covers at most this many years
)

const (
	holidayDateLayout   = time.DateOnly
	calendarUsedMessage = "calendar %s is used by SLA policies: %s; move them to another calendar first"
)

// Weekdays are the wire names of the days of a calendar's week, indexed by
// time.Weekday (sunday first).
func Weekdays() [7]string {
	return [7]string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
}

// Calendar is a business calendar: the working hours of each weekday in an
// IANA time zone, and its holidays. SLA policies count business-hours
// targets in it. Calendars are the provider's: the same for every tenant
// and environment.
type Calendar struct {
	ID        string                     `gorm:"primaryKey;size:40"`
	Name      string                     `gorm:"size:200;not null"`
	Timezone  string                     `gorm:"size:64;not null"`
	Week      [7][]businesstime.Interval `gorm:"serializer:json;type:text;not null"` // indexed by time.Weekday
	CreatedAt time.Time                  `gorm:"not null;index"`
	UpdatedAt time.Time                  `gorm:"not null"`
	Holidays  []Holiday                  `gorm:"-"` // by date
}

// TableName is the calendars table.
func (Calendar) TableName() string { return "support_calendars" }

// Holiday is a date of a calendar on which nobody works; one per date.
type Holiday struct {
	ID         string `gorm:"primaryKey;size:40"`
	CalendarID string `gorm:"size:40;not null;uniqueIndex:idx_support_calendar_holidays_date,priority:1"`
	Date       string `gorm:"size:10;not null;uniqueIndex:idx_support_calendar_holidays_date,priority:2"` // YYYY-MM-DD
	Name       string `gorm:"size:200;not null"`
}

// TableName is the calendar holidays table.
func (Holiday) TableName() string { return "support_calendar_holidays" }

// BusinessTime returns the calendar in the form of the business-time
// engine.
func (c *Calendar) BusinessTime() *businesstime.Calendar {
	bc := &businesstime.Calendar{Zone: c.Timezone}
	for d := range c.Week {
		bc.Week[d] = slices.Clone(c.Week[d])
	}
	for _, h := range c.Holidays {
		bc.Holidays = append(bc.Holidays, businesstime.Holiday{Date: h.Date, Name: h.Name})
	}
	return bc
}

// ClockInterval is a working period of a day as sent: HH:MM clocks, from
// 00:00 to 24:00.
type ClockInterval struct {
	Start string
	End   string
}

// HolidayInput is a holiday as sent.
type HolidayInput struct {
	Date string // YYYY-MM-DD
	Name string
}

// CalendarInput is a calendar's fields as sent; nil fields are absent (on
// creation: defaults; on an update: unchanged). WorkingHours, when sent,
// replaces the week: a weekday missing from it (keys: Weekdays) is closed;
// on creation the default week is Monday to Friday, 09:00 to 17:00.
// Holidays, when sent, replace the calendar's holidays.
type CalendarInput struct {
	Name         *string
	Timezone     *string
	WorkingHours *map[string][]ClockInterval
	Holidays     *[]HolidayInput
}

// CanReadSLA reports whether p may read SLA policies and calendars:
// provider staff holding support:read.
func CanReadSLA(p *models.Principal) bool { return p.IsStaff() && p.Can(PermissionRead) }

func slaReadForbidden() error {
	return models.Errorf(models.CodeInsufficientPermissions, "SLA policies and calendars are read by provider staff with %s", PermissionRead).
		WithDetail("required_permission", PermissionRead)
}

func slaAdminForbidden() error {
	return models.Errorf(models.CodeInsufficientPermissions, "SLA policies and calendars are managed by provider staff with %s", PermissionAdmin).
		WithDetail("required_permission", PermissionAdmin)
}

// parseClock reads an HH:MM clock as minutes after midnight, 00:00 to
// 24:00 (ok false otherwise).
func parseClock(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	digits := func(a, b byte) (int, bool) {
		if a < '0' || a > '9' || b < '0' || b > '9' {
			return 0, false
		}
		return int(a-'0')*10 + int(b-'0'), true
	}
	h, ok1 := digits(s[0], s[1])
	m, ok2 := digits(s[3], s[4])
	if !ok1 || !ok2 || m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, false
	}
	return h*60 + m, true
}

// formatClock writes minutes after midnight as an HH:MM clock.
func formatClock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// WorkingHours returns the calendar's week as HH:MM clocks, keyed by the
// names of Weekdays (every day present; a closed day is an empty list).
func (c *Calendar) WorkingHours() map[string][]ClockInterval {
	out := map[string][]ClockInterval{}
	for d, name := range Weekdays() {
		out[name] = []ClockInterval{}
		for _, iv := range c.Week[d] {
			out[name] = append(out[name], ClockInterval{Start: formatClock(iv.Start), End: formatClock(iv.End)})
		}
	}
	return out
}

// defaultWeek is Monday to Friday, 09:00 to 17:00.
func defaultWeek() [7][]businesstime.Interval {
	var w [7][]businesstime.Interval
	for d := time.Monday; d <= time.Friday; d++ {
		w[d] = []businesstime.Interval{{Start: 9 * 60, End: 17 * 60}}
	}
	return w
}

// parseWeek reads the working hours of the days sent (issues in v, under
// working_hours.<day>[i]).
func parseWeek(v *models.Validator, hours map[string][]ClockInterval) [7][]businesstime.Interval {
	var w [7][]businesstime.Interval
	days := Weekdays()
	clean := true // no issue so far: the week total is meaningful
	issue := func(field, msg string) { v.Add(field, msg); clean = false }
	for name := range hours {
		if !slices.Contains(days[:], name) {
			issue("working_hours."+name, "is not a day: use "+joinList(days[:]))
		}
	}
	total := 0
	for d, name := range days {
		list := hours[name]
		field := "working_hours." + name
		w[d] = []businesstime.Interval{}
		if len(list) > MaxIntervalsPerDay {
			issue(field, "must have at most "+itoa(MaxIntervalsPerDay)+" intervals")
			continue
		}
		ok := true
		for i, iv := range list {
			f := field + "[" + itoa(i) + "]"
			start, okS := parseClock(strings.TrimSpace(iv.Start))
			end, okE := parseClock(strings.TrimSpace(iv.End))
			if !okS {
				issue(f+".start", "must be a clock HH:MM from 00:00 to 24:00")
			}
			if !okE {
				issue(f+".end", "must be a clock HH:MM from 00:00 to 24:00")
			}
			if !okS || !okE {
				ok = false
				continue
			}
			if start >= end {
				issue(f+".end", "must be after start")
				ok = false
				continue
			}
			w[d] = append(w[d], businesstime.Interval{Start: start, End: end})
		}
		if !ok {
			continue
		}
		slices.SortFunc(w[d], func(a, b businesstime.Interval) int { return a.Start - b.Start })
		for i := 1; i < len(w[d]); i++ {
			if w[d][i].Start <= w[d][i-1].End {
				issue(field, "intervals must not overlap or touch: "+formatClock(w[d][i-1].Start)+"-"+formatClock(w[d][i-1].End)+
					" and "+formatClock(w[d][i].Start)+"-"+formatClock(w[d][i].End))
				break
			}
		}
		for _, iv := range w[d] {
			total += iv.End - iv.Start
		}
	}
	if clean && total == 0 {
		v.Add("working_hours", "must have at least one working minute in the week")
	}
	return w
}

// validHolidayDate reports whether s is a calendar date YYYY-MM-DD.
func validHolidayDate(s string) bool {
	t, err := time.Parse(holidayDateLayout, s)
	return err == nil && t.Format(holidayDateLayout) == s
}

// parseHolidays validates holidays as sent (issues in v under field).
func parseHolidays(v *models.Validator, field string, in []HolidayInput, calendarID string) []Holiday {
	v.Check(len(in) <= MaxHolidays, field, "must have at most "+itoa(MaxHolidays)+" holidays")
	out := []Holiday{}
	for i, h := range in {
		f := field + "[" + itoa(i) + "]"
		date, name := strings.TrimSpace(h.Date), strings.TrimSpace(h.Name)
		if !validHolidayDate(date) {
			v.Add(f+".date", "must be a date YYYY-MM-DD, such as 2026-12-25")
			continue
		}
		checkLen(v, f+".name", name, MaxHolidayName)
		if slices.ContainsFunc(out, func(o Holiday) bool { return o.Date == date }) {
			v.Add(f+".date", "is listed twice")
			continue
		}
		out = append(out, Holiday{ID: models.NewID(PrefixHoliday), CalendarID: calendarID, Date: date, Name: name})
	}
	sortHolidays(out)
	return out
}

func sortHolidays(hs []Holiday) {
	slices.SortFunc(hs, func(a, b Holiday) int { return strings.Compare(a.Date, b.Date) })
}

// applyCalendar sets the present fields of in on c and validates the
// result.
func applyCalendar(c *Calendar, in CalendarInput) error {
	var v models.Validator
	if in.Name != nil {
		c.Name = strings.TrimSpace(*in.Name)
	}
	v.Check(c.Name != "", "name", "is required")
	checkLen(&v, "name", c.Name, MaxCalendarName)
	if in.Timezone != nil {
		c.Timezone = strings.TrimSpace(*in.Timezone)
	}
	v.Check(ValidTimezone(c.Timezone), "timezone", "must be an IANA time zone name, such as Europe/London or UTC")
	if in.WorkingHours != nil {
		c.Week = parseWeek(&v, *in.WorkingHours)
	}
	if in.Holidays != nil {
		c.Holidays = parseHolidays(&v, "holidays", *in.Holidays, c.ID)
	}
	return v.Err()
}

// CreateCalendar validates in and stores a new calendar with its holidays.
// Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR.
func (s *Store) CreateCalendar(ctx context.Context, p *models.Principal, in CalendarInput) (*Calendar, error) {
	if !CanAdminister(p) {
		return nil, slaAdminForbidden()
	}
	now := s.now()
	c := &Calendar{ID: models.NewID(PrefixCalendar), Week: defaultWeek(), Holidays: []Holiday{}, CreatedAt: now, UpdatedAt: now}
	if err := applyCalendar(c, in); err != nil {
		return nil, err
	}
	err := s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if err := tx.Create(c).Error; err != nil {
			return dbErr(err)
		}
		return writeHolidays(tx, c.ID, c.Holidays, true)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return c, nil
}

// writeHolidays stores holidays of a calendar; with replace, the calendar's
// other holidays are removed first.
func writeHolidays(tx *gorm.DB, calendarID string, hs []Holiday, replace bool) error {
	if replace {
		if err := tx.Where("calendar_id = ?", calendarID).Delete(&Holiday{}).Error; err != nil {
			return dbErr(err)
		}
	}
	for _, h := range hs {
		h.CalendarID = calendarID
		if err := tx.Create(&h).Error; err != nil {
			if models.IsUniqueViolation(err) {
				return models.Errorf(models.CodeAlreadyExists, "the calendar already has a holiday on %s", h.Date).WithDetail("date", h.Date)
			}
			return dbErr(err)
		}
	}
	return nil
}

// GetCalendar returns one calendar with its holidays.
// Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND.
func (s *Store) GetCalendar(ctx context.Context, p *models.Principal, id string) (*Calendar, error) {
	if !CanReadSLA(p) {
		return nil, slaReadForbidden()
	}
	return s.calendar(ctx, id)
}

// calendar returns one calendar with its holidays. Errors: NOT_FOUND.
func (s *Store) calendar(ctx context.Context, id string) (*Calendar, error) {
	db := s.core.In(ctx, models.SystemScope())
	var c Calendar
	if err := db.Where("id = ?", id).Take(&c).Error; err != nil {
		return nil, notFoundOr(err, "calendar")
	}
	if err := s.loadHolidays(ctx, []*Calendar{&c}); err != nil {
		return nil, err
	}
	return &c, nil
}

// loadHolidays fills the holidays of cals, by date.
func (s *Store) loadHolidays(ctx context.Context, cals []*Calendar) error {
	if len(cals) == 0 {
		return nil
	}
	ids := make([]string, len(cals))
	for i, c := range cals {
		ids[i], c.Holidays = c.ID, []Holiday{}
	}
	var hs []Holiday
	if err := s.core.In(ctx, models.SystemScope()).Where("calendar_id IN ?", ids).Order("date").Find(&hs).Error; err != nil {
		return dbErr(err)
	}
	for _, h := range hs {
		for _, c := range cals {
			if c.ID == h.CalendarID {
				c.Holidays = append(c.Holidays, h)
			}
		}
	}
	return nil
}

// calendarSorts are the fields a calendar list sorts by.
var calendarSorts = models.SortFields{"created_at": "created_at", "updated_at": "updated_at", "name": "name"}

// ListCalendars returns a page of the calendars with their holidays, newest
// first by default. Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR (sort).
func (s *Store) ListCalendars(ctx context.Context, p *models.Principal, page models.PageRequest) ([]Calendar, int64, error) {
	if !CanReadSLA(p) {
		return nil, 0, slaReadForbidden()
	}
	var out []Calendar
	total, err := models.Paginate(s.core.In(ctx, models.SystemScope()).Model(&Calendar{}), page, calendarSorts, &out)
	if err != nil {
		return nil, 0, err
	}
	ptrs := make([]*Calendar, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, total, s.loadHolidays(ctx, ptrs)
}

// UpdateCalendar applies the fields of in that are present to a calendar.
// Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND, VALIDATION_ERROR.
func (s *Store) UpdateCalendar(ctx context.Context, p *models.Principal, id string, in CalendarInput) (*Calendar, error) {
	if !CanAdminister(p) {
		return nil, slaAdminForbidden()
	}
	c, err := s.calendar(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := applyCalendar(c, in); err != nil {
		return nil, err
	}
	c.UpdatedAt = s.now()
	err = s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if err := tx.Model(c).Select("name", "timezone", "week", "updated_at").Updates(c).Error; err != nil {
			return dbErr(err)
		}
		if in.Holidays == nil {
			return nil
		}
		return writeHolidays(tx, c.ID, c.Holidays, true)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return c, nil
}

// DeleteCalendar removes a calendar and its holidays. A calendar that an
// SLA policy uses is not removed (INVALID_STATE_TRANSITION, 409, with the
// policies in details.used_by). Errors: INSUFFICIENT_PERMISSIONS,
// NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) DeleteCalendar(ctx context.Context, p *models.Principal, id string) error {
	if !CanAdminister(p) {
		return slaAdminForbidden()
	}
	err := s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		var used []string
		if err := tx.Model(&SLAPolicy{}).Where("calendar_id = ?", id).Order("id").Pluck("id", &used).Error; err != nil {
			return dbErr(err)
		}
		if len(used) > 0 {
			return models.Errorf(models.CodeInvalidStateTransition, calendarUsedMessage, id, strings.Join(used, ", ")).WithDetail("used_by", used)
		}
		res := tx.Where("id = ?", id).Delete(&Calendar{})
		if res.Error != nil {
			return dbErr(res.Error)
		}
		if res.RowsAffected == 0 {
			return models.NotFound("calendar")
		}
		return dbErr(tx.Where("calendar_id = ?", id).Delete(&Holiday{}).Error)
	})
	if err != nil {
		return models.AsError(err)
	}
	return nil
}

// AddHoliday adds one holiday to a calendar.
// Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND, VALIDATION_ERROR,
// ALREADY_EXISTS (the date is already a holiday of the calendar).
func (s *Store) AddHoliday(ctx context.Context, p *models.Principal, calendarID string, in HolidayInput) (*Holiday, error) {
	if !CanAdminister(p) {
		return nil, slaAdminForbidden()
	}
	c, err := s.calendar(ctx, calendarID)
	if err != nil {
		return nil, err
	}
	h := Holiday{ID: models.NewID(PrefixHoliday), CalendarID: c.ID, Date: strings.TrimSpace(in.Date), Name: strings.TrimSpace(in.Name)}
	var v models.Validator
	v.Check(validHolidayDate(h.Date), "date", "must be a date YYYY-MM-DD, such as 2026-12-25")
	checkLen(&v, "name", h.Name, MaxHolidayName)
	v.Check(len(c.Holidays) < MaxHolidays, "date", "cannot be added: the calendar has "+itoa(MaxHolidays)+" holidays already")
	if err := v.Err(); err != nil {
		return nil, err
	}
	hs := []Holiday{h}
	err = s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if err := writeHolidays(tx, c.ID, hs, false); err != nil {
			return err
		}
		return dbErr(tx.Model(&Calendar{}).Where("id = ?", c.ID).Update("updated_at", s.now()).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return &hs[0], nil
}

// DeleteHoliday removes the holiday of a calendar on date (YYYY-MM-DD).
// Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND.
func (s *Store) DeleteHoliday(ctx context.Context, p *models.Principal, calendarID, date string) error {
	if !CanAdminister(p) {
		return slaAdminForbidden()
	}
	if _, err := s.calendar(ctx, calendarID); err != nil {
		return err
	}
	err := s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		res := tx.Where("calendar_id = ? AND date = ?", calendarID, date).Delete(&Holiday{})
		if res.Error != nil {
			return dbErr(res.Error)
		}
		if res.RowsAffected == 0 {
			return models.NotFound("holiday")
		}
		return dbErr(tx.Model(&Calendar{}).Where("id = ?", calendarID).Update("updated_at", s.now()).Error)
	})
	if err != nil {
		return models.AsError(err)
	}
	return nil
}

// HolidayImport is the outcome of an iCalendar import: the holidays added
// (by date) and how many dates were passed over because the calendar
// already had a holiday on them (or the file named them twice).
type HolidayImport struct {
	Imported []Holiday
	Skipped  int
}

// ImportHolidays reads the holidays of an iCalendar file (the all-day
// events between fromYear and toYear, see businesstime.ParseICal) and adds
// those on dates the calendar has no holiday yet. Names are trimmed and cut
// to MaxHolidayName characters. Errors: INSUFFICIENT_PERMISSIONS,
// NOT_FOUND, VALIDATION_ERROR (years, a file that does not parse, too many
// holidays).
func (s *Store) ImportHolidays(ctx context.Context, p *models.Principal, calendarID string, r io.Reader, fromYear, toYear int) (*HolidayImport, error) {
	if !CanAdminister(p) {
		return nil, slaAdminForbidden()
	}
	var v models.Validator
	v.Check(fromYear >= 1900 && fromYear <= 2200, "from_year", "must be between 1900 and 2200")
	v.Check(toYear >= fromYear && toYear-fromYear < MaxImportYearSpan, "to_year", "must be from from_year to from_year+"+itoa(MaxImportYearSpan-1))
	if err := v.Err(); err != nil {
		return nil, err
	}
	c, err := s.calendar(ctx, calendarID)
	if err != nil {
		return nil, err
	}
	parsed, err := businesstime.ParseICal(r, fromYear, toYear)
	if err != nil {
		var me *models.Error
		if errors.As(err, &me) {
			return nil, me
		}
		return nil, models.Invalid(models.FieldIssue{Field: "body", Issue: "is not an iCalendar file this platform reads: " + err.Error()})
	}
	out := &HolidayImport{Imported: []Holiday{}}
	have := map[string]bool{}
	for _, h := range c.Holidays {
		have[h.Date] = true
	}
	for _, h := range parsed {
		date := strings.TrimSpace(h.Date)
		if !validHolidayDate(date) {
			return nil, models.Invalid(models.FieldIssue{Field: "body", Issue: "has an event on an invalid date: " + date})
		}
		if have[date] {
			out.Skipped++
			continue
		}
		have[date] = true
		name := strings.TrimSpace(h.Name)
		if utf8.RuneCountInString(name) > MaxHolidayName {
			name = strings.TrimSpace(string([]rune(name)[:MaxHolidayName]))
		}
		out.Imported = append(out.Imported, Holiday{ID: models.NewID(PrefixHoliday), CalendarID: c.ID, Date: date, Name: name})
	}
	if len(c.Holidays)+len(out.Imported) > MaxHolidays {
		return nil, models.Invalid(models.FieldIssue{Field: "body", Issue: "would give the calendar more than " + itoa(MaxHolidays) + " holidays"})
	}
	sortHolidays(out.Imported)
	err = s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if len(out.Imported) > 0 {
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(out.Imported, 100).Error; err != nil {
				return dbErr(err)
			}
		}
		return dbErr(tx.Model(&Calendar{}).Where("id = ?", c.ID).Update("updated_at", s.now()).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}
