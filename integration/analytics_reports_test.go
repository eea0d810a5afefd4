package integration

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/telcoplatform/platform/notify"
	"github.com/telcoplatform/platform/testenv"
)

// analyticsReportDoc is an analytics report run as a client reads it.
type analyticsReportDoc struct {
	ID           string  `json:"id"`
	Status       string  `json:"status"`
	StatusURL    string  `json:"status_url"`
	DefinitionID *string `json:"definition_id"`
	Scheduled    bool    `json:"scheduled"`
	DownloadURL  *string `json:"download_url"`
	RowCount     *int64  `json:"row_count"`
	PeriodFrom   string  `json:"period_from"`
	PeriodTo     string  `json:"period_to"`
}

// TestAnalyticsReportBuilder runs the report builder through the HTTP API
// on the real stack (API, Temporal and its schedules, the background
// worker, the blob store, SMTP): an ad-hoc CSV report is checked row by
// row through its signed link; a saved definition gets a Temporal
// schedule whose calendar the engine reports, and a firing of that
// schedule (triggered now instead of waiting for 06:00) runs it and
// mails the link to a JSON file checked row by row; deleting the
// definition deletes its schedule; another organization sees nothing.
func TestAnalyticsReportBuilder(t *testing.T) {
	smtpURL, mailbox := testenv.SMTPServer(t)
	p := startPlatform(t, platformOptions{queuePrefix: "analytics-reports", background: true, keys: demoLiveKey | otherLiveKey})
	mailer, err := notify.NewSMTP(smtpURL, "Telco Platform <no-reply@example.test>")
	if err != nil {
		t.Fatal(err)
	}
	startNotifier(t, notify.NewDispatcher(p.store, notify.Options{Email: mailer, PollInterval: 100 * time.Millisecond}))
	for _, pr := range []string{"critical", "high", "high", "low"} {
		if st := p.do("POST", "/v1/support/tickets", p.liveKey, map[string]any{"title": "Ticket " + pr, "description": "Seen from the NOC",
			"category": "network", "priority": pr}, nil); st != http.StatusCreated {
			t.Fatalf("create a ticket: %d", st)
		}
	}
	if st := p.do("POST", "/v1/support/tickets", p.otherKey, map[string]any{"title": "Other", "description": "d", "category": "network", "priority": "low"}, nil); st != http.StatusCreated {
		t.Fatalf("create another organization's ticket: %d", st)
	}
	await := func(id string) analyticsReportDoc {
		t.Helper()
		var out struct {
			Report analyticsReportDoc `json:"report"`
		}
		// Poll the operation (not in the exports rate-limit group), then read the report once.
		waitFor(t, "report "+id, func() bool {
			var op operation
			p.do("GET", "/v1/operations/"+id, p.liveKey, nil, &op)
			return op.Status == "completed" || op.Status == "failed" || op.Status == "cancelled"
		})
		p.do("GET", "/v1/analytics/reports/"+id, p.liveKey, nil, &out)
		if out.Report.Status != "completed" || out.Report.DownloadURL == nil {
			t.Fatalf("report %+v", out.Report)
		}
		return out.Report
	}
	fetch := func(url string) (int, string, []byte) {
		t.Helper()
		res, err := http.Get(url) // no credential: the link is the authorisation
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Content-Type"), raw
	}

	// An ad-hoc CSV report: tickets per priority, most first.
	var started struct {
		Report analyticsReportDoc `json:"report"`
	}
	if st := p.do("POST", "/v1/analytics/reports", p.liveKey, map[string]any{"dataset": "tickets", "metrics": []string{"count", "open"},
		"dimensions": []string{"priority"}, "sort": []map[string]any{{"field": "count", "direction": "desc"}, {"field": "priority"}}, "format": "csv"}, &started); st != http.StatusAccepted ||
		!strings.HasPrefix(started.Report.ID, "rpt_") || started.Report.Status != "generating" {
		t.Fatalf("run: %d %+v", st, started)
	}
	done := await(started.Report.ID)
	st, ctype, raw := fetch(*done.DownloadURL)
	recs, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil || st != http.StatusOK || !strings.HasPrefix(ctype, "text/csv") {
		t.Fatalf("download: %d %s %v %s", st, ctype, err, raw)
	}
	want := [][]string{{"priority", "count", "open"}, {"high", "2", "2"}, {"critical", "1", "1"}, {"low", "1", "1"}}
	if !slices.EqualFunc(recs, want, slices.Equal[[]string]) {
		t.Fatalf("csv %v, want %v", recs, want)
	}

	// A saved definition on a daily schedule at 06:00 in Paris, delivered by e-mail.
	var saved struct {
		Definition struct {
			ID       string `json:"id"`
			Schedule struct {
				ScheduleID string   `json:"schedule_id"`
				Timezone   string   `json:"timezone"`
				NextRuns   []string `json:"next_runs"`
			} `json:"schedule"`
		} `json:"definition"`
	}
	if st := p.do("POST", "/v1/analytics/report-definitions", p.liveKey, map[string]any{"name": "Open tickets by priority", "dataset": "tickets",
		"metrics": []string{"open"}, "dimensions": []string{"priority"}, "filter": "priority >= high", "period": "last_7_days", "format": "json",
		"delivery": map[string]any{"method": "email", "notification_email": "noc@demo.example"},
		"schedule": map[string]any{"frequency": "daily", "timezone": "Europe/Paris"}}, &saved); st != http.StatusCreated {
		t.Fatalf("save: %d %+v", st, saved)
	}
	def := saved.Definition
	if st := p.do("GET", "/v1/analytics/report-definitions/"+def.ID, p.liveKey, nil, &saved); st != http.StatusOK || len(saved.Definition.Schedule.NextRuns) == 0 {
		t.Fatalf("get: %d %+v", st, saved)
	}
	paris, _ := time.LoadLocation("Europe/Paris")
	for _, r := range saved.Definition.Schedule.NextRuns {
		at, err := time.Parse(time.RFC3339, r)
		if err != nil || !at.After(time.Now()) || at.In(paris).Hour() != 6 || at.In(paris).Minute() != 0 {
			t.Fatalf("next run %s (%v)", r, err)
		}
	}
	ctx := context.Background()
	handle := p.temporal.ScheduleClient().GetHandle(ctx, def.Schedule.ScheduleID)
	desc, err := handle.Describe(ctx)
	if err != nil || desc.Schedule.Spec.TimeZoneName != "Europe/Paris" {
		t.Fatalf("the engine's schedule: %v %+v", err, desc)
	}
	// The firing, now: the schedule starts its workflow, which runs the report.
	if err := handle.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	var runs struct {
		Reports []analyticsReportDoc `json:"reports"`
	}
	waitFor(t, "the scheduled run", func() bool {
		var d struct {
			Definition struct {
				LastRunID *string `json:"last_run_id"`
			} `json:"definition"`
		}
		p.do("GET", "/v1/analytics/report-definitions/"+def.ID, p.liveKey, nil, &d)
		return d.Definition.LastRunID != nil
	})
	p.do("GET", "/v1/analytics/reports?definition_id="+def.ID, p.liveKey, nil, &runs)
	if len(runs.Reports) != 1 || !runs.Reports[0].Scheduled || *runs.Reports[0].DefinitionID != def.ID {
		t.Fatalf("runs %+v", runs)
	}
	scheduled := await(runs.Reports[0].ID)
	var body string
	if !mailbox.WaitFor(60*time.Second, func(b *testenv.Mailbox) bool {
		for _, m := range b.Mails() {
			if slices.Contains(m.To, "noc@demo.example") {
				msg, err := mail.ReadMessage(strings.NewReader(m.Data))
				if err != nil {
					t.Fatal(err)
				}
				text, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
				body = string(text)
				return true
			}
		}
		return false
	}) {
		t.Fatal("no e-mail with the report's link")
	}
	mailed := regexp.MustCompile(`https?://\S+/download\?\S+`).FindString(body)
	if !strings.Contains(mailed, scheduled.ID) {
		t.Fatalf("the e-mail has no link to %s: %q", scheduled.ID, body)
	}
	st, ctype, raw = fetch(mailed)
	var doc struct {
		Report struct {
			ID   string           `json:"id"`
			Rows []map[string]any `json:"rows"`
		} `json:"report"`
	}
	if st != http.StatusOK || ctype != "application/json" || json.Unmarshal(raw, &doc) != nil || doc.Report.ID != scheduled.ID {
		t.Fatalf("mailed download: %d %s %s", st, ctype, raw)
	}
	if len(doc.Report.Rows) != 2 || doc.Report.Rows[0]["priority"] != "critical" || doc.Report.Rows[0]["open"] != 1.0 ||
		doc.Report.Rows[1]["priority"] != "high" || doc.Report.Rows[1]["open"] != 2.0 {
		t.Fatalf("rows %+v", doc.Report.Rows)
	}

	// Another organization sees neither; deleting the definition deletes its schedule.
	if st := p.do("GET", "/v1/analytics/reports/"+scheduled.ID, p.otherKey, nil, nil); st != http.StatusNotFound {
		t.Fatalf("another organization's report: %d", st)
	}
	if st := p.do("DELETE", "/v1/analytics/report-definitions/"+def.ID, p.otherKey, nil, nil); st != http.StatusNotFound {
		t.Fatalf("another organization deletes it: %d", st)
	}
	if st := p.do("DELETE", "/v1/analytics/report-definitions/"+def.ID, p.liveKey, nil, nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d", st)
	}
	var nf *serviceerror.NotFound
	if _, err := handle.Describe(ctx); !errors.As(err, &nf) {
		t.Fatalf("the schedule outlived its definition: %v", err)
	}
	recordHistories(t, p.temporal)
}
