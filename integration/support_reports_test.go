package integration

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/notify"
	"github.com/telcoplatform/platform/testenv"
)

// reportDoc is the report resource as a client reads it.
type reportDoc struct {
	ID                  string  `json:"id"`
	RequestID           string  `json:"request_id"`
	Status              string  `json:"status"`
	StatusURL           string  `json:"status_url"`
	EstimatedCompletion *string `json:"estimated_completion"`
	DownloadURL         *string `json:"download_url"`
	RowCount            *int64  `json:"row_count"`
	DataFreshness       *string `json:"data_freshness"`
	Columns             []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"columns"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// TestSupportReportRuns runs report runs through the HTTP API on the real
// stack (API, Temporal, the background worker, the blob store, SMTP): a
// CSV report grouped by category and priority is checked row by row
// through its signed link, which works without a credential and not once
// tampered with; a JSON ticket export delivered by e-mail arrives with a
// link to the same file; another organization sees neither.
func TestSupportReportRuns(t *testing.T) {
	smtpURL, mailbox := testenv.SMTPServer(t)
	p := startPlatform(t, platformOptions{queuePrefix: "support-reports", background: true, keys: demoLiveKey | otherLiveKey})
	mailer, err := notify.NewSMTP(smtpURL, "Telco Platform <no-reply@example.test>")
	if err != nil {
		t.Fatal(err)
	}
	startNotifier(t, notify.NewDispatcher(p.store, notify.Options{Email: mailer, PollInterval: 100 * time.Millisecond}))

	open := func(title, category, priority string) string {
		var created struct {
			Ticket supportTicket `json:"ticket"`
		}
		if st := p.do("POST", "/v1/support/tickets", p.liveKey, map[string]any{"title": title, "description": "Seen from the NOC",
			"category": category, "priority": priority}, &created); st != http.StatusCreated {
			t.Fatalf("create a ticket: %d", st)
		}
		return created.Ticket.ID
	}
	link := open("Fiber link down", "network", "critical")
	open("Jitter on calls", "voice", "high")
	open("Slow DNS answers", "network", "high")
	staff := &models.Principal{ID: "ak_agent", OrganizationID: p.admin.OrganizationID, Environment: models.EnvLive, Role: models.RoleAgent, Permissions: []string{"*"}}
	resolved := support.StatusResolved
	if _, err := support.NewStore(p.store).UpdateTicket(context.Background(), staff, link, support.UpdateInput{Status: &resolved}); err != nil {
		t.Fatal(err)
	}

	generate := func(body map[string]any) reportDoc {
		t.Helper()
		var out struct {
			Report reportDoc `json:"report"`
		}
		if st := p.do("POST", "/v1/support/reports/generate", p.liveKey, body, &out); st != http.StatusAccepted {
			t.Fatalf("generate: %d %+v", st, out)
		}
		r := out.Report
		if !strings.HasPrefix(r.ID, "rpt_") || r.RequestID != r.ID || r.Status != "generating" || r.DownloadURL != nil || r.EstimatedCompletion == nil {
			t.Fatalf("accepted report %+v", r)
		}
		return r
	}
	await := func(id string) reportDoc {
		t.Helper()
		var out struct {
			Report reportDoc `json:"report"`
		}
		waitFor(t, "report "+id, func() bool {
			p.do("GET", "/v1/support/reports/"+id, p.liveKey, nil, &out)
			return out.Report.Status != "generating"
		})
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

	// A CSV report by category and priority.
	today := time.Now().UTC()
	byCategory := generate(map[string]any{"report_type": "detailed_analytics", "parameters": map[string]any{
		"date_range": map[string]any{"start": today.AddDate(0, 0, -1).Format(time.DateOnly), "end": today.AddDate(0, 0, 1).Format(time.DateOnly)},
		"metrics":    []string{"resolution_time", "escalation_rate"}, "grouping": []string{"category", "priority"}, "format": "csv"},
		"delivery": map[string]any{"method": "download"}})
	done := await(byCategory.ID)
	if *done.RowCount != 3 || done.DataFreshness == nil || len(done.Columns) != 7 || done.Columns[0].Name != "category" || done.Columns[2].Type != "integer" {
		t.Fatalf("completed report %+v", done)
	}
	var op operation
	if st := p.do("GET", done.StatusURL, p.liveKey, nil, &op); st != http.StatusOK || op.Status != "completed" || len(op.Steps) != 2 {
		t.Fatalf("the report's operation: %d %+v", st, op)
	}
	st, ctype, raw := fetch(*done.DownloadURL)
	if st != http.StatusOK || !strings.HasPrefix(ctype, "text/csv") {
		t.Fatalf("download: %d %s %s", st, ctype, raw)
	}
	recs, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"category", "priority", "tickets", "resolved", "avg_resolution_hours", "escalated", "escalation_rate_pct"},
		{"network", "critical", "1", "1", recs[1][4], "0", "0"},
		{"network", "high", "1", "0", "", "0", "0"},
		{"voice", "high", "1", "0", "", "0", "0"},
	}
	if !slices.EqualFunc(recs, want, slices.Equal[[]string]) || recs[1][4] == "" {
		t.Fatalf("csv:\n got %v\nwant %v", recs, want)
	}
	tampered := strings.Replace(*done.DownloadURL, "signature=", "signature=00", 1)
	if st, _, _ := fetch(tampered); st != http.StatusUnauthorized {
		t.Fatalf("tampered link: %d", st)
	}

	// A JSON ticket export delivered by e-mail.
	export := generate(map[string]any{"report_type": "ticket_export", "parameters": map[string]any{"format": "json",
		"metrics": []string{"resolution_time", "sla_compliance"}, "filters": map[string]any{"categories": []string{"network"}}},
		"delivery": map[string]any{"method": "email", "notification_email": "noc@demo.example"}})
	await(export.ID)
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
	if !strings.Contains(mailed, export.ID) {
		t.Fatalf("the e-mail has no link to %s: %q", export.ID, body)
	}
	st, ctype, raw = fetch(mailed)
	var doc struct {
		ReportID string           `json:"report_id"`
		Rows     []map[string]any `json:"rows"`
		RowCount int              `json:"row_count"`
	}
	if st != http.StatusOK || ctype != "application/json" || json.Unmarshal(raw, &doc) != nil || doc.ReportID != export.ID || doc.RowCount != 2 || len(doc.Rows) != 2 {
		t.Fatalf("mailed download: %d %s %s", st, ctype, raw)
	}
	for _, r := range doc.Rows {
		if r["category"] != "network" || (r["ticket_id"] == link) != (r["status"] == "resolved") || (r["ticket_id"] == link) != (r["resolution_hours"] != nil) {
			t.Fatalf("export row %v", r)
		}
	}

	// Reports are their organization's; a finished one cannot be cancelled.
	if st := p.do("GET", "/v1/support/reports/"+export.ID, p.otherKey, nil, nil); st != http.StatusNotFound {
		t.Fatalf("another organization's report: %d", st)
	}
	var list struct {
		Reports []reportDoc `json:"reports"`
	}
	if st := p.do("GET", "/v1/support/reports?status=completed", p.liveKey, nil, &list); st != http.StatusOK || len(list.Reports) != 2 || list.Reports[0].ID != export.ID {
		t.Fatalf("list: %d %+v", st, list)
	}
	if st := p.do("POST", "/v1/support/reports/"+export.ID+"/cancel", p.liveKey, nil, nil); st != http.StatusConflict {
		t.Fatalf("cancel a completed report: %d", st)
	}
	empty := generate(map[string]any{"parameters": map[string]any{"grouping": []string{"category"}}})
	var out struct {
		Report reportDoc `json:"report"`
	}
	if st := p.do("POST", "/v1/support/reports/generate", p.otherKey, map[string]any{}, &out); st != http.StatusAccepted {
		t.Fatalf("the other organization's report: %d", st)
	}
	await(empty.ID)
	waitFor(t, "the other organization's report", func() bool {
		p.do("GET", "/v1/support/reports/"+out.Report.ID, p.otherKey, nil, &out)
		return out.Report.Status == "completed"
	})
	if *out.Report.RowCount != 1 { // one row of zeros: none of the demo tenant's tickets
		t.Fatalf("the other organization's report %+v", out.Report)
	}
	_, _, raw = fetch(*out.Report.DownloadURL)
	if !strings.Contains(string(raw), `"rows":[{"tickets":0,`) {
		t.Fatalf("the other organization's file: %s", raw)
	}
}
