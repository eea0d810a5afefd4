package notify_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/notify"
	"github.com/telcoplatform/platform/testenv"
)

var scope = models.TenantScope("org_notify", models.EnvLive)

// TestDispatcherSendsEmailAndSMS sends a queued e-mail through a real SMTP
// server and an SMS through an HTTP provider that fails once, then checks
// that the outbox records both as sent and wiped their sealed bodies.
func TestDispatcherSendsEmailAndSMS(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	smtpURL, mailbox := testenv.SMTPServer(t)
	smsURL, phone := testenv.SMSServer(t, 1)
	email, err := notify.NewSMTP(smtpURL, "Telco Platform <no-reply@example.test>")
	if err != nil {
		t.Fatal(err)
	}
	d := notify.NewDispatcher(store, notify.Options{Email: email, SMS: notify.NewSMSHTTP(smsURL)})

	mail, err := eventlog.NewStore(store).QueueMessage(ctx, scope, eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: "ada@example.test", Template: "mfa_code", Subject: "Your verification code", Body: "code 123456"})
	if err != nil {
		t.Fatal(err)
	}
	sms, err := eventlog.NewStore(store).QueueMessage(ctx, scope, eventlog.Message{Channel: eventlog.ChannelSMS, Recipient: "+14155550123", Template: "mfa_code", Subject: "code", Body: "code 654321"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.SendDue(ctx); err != nil || n != 1 {
		t.Fatalf("first round sent %d (%v), want the e-mail only (the SMS provider fails once)", n, err)
	}
	if !mailbox.WaitFor(5*time.Second, func(b *testenv.Mailbox) bool { return len(b.Mails()) == 1 }) {
		t.Fatal("the SMTP server received nothing")
	}
	got := mailbox.Mails()[0]
	if got.To[0] != "ada@example.test" || !strings.Contains(got.Data, "Subject: Your verification code") || !strings.Contains(got.Data, "code 123456") ||
		!strings.Contains(got.Data, "Message-ID: <"+mail.ID+"@telco-platform>") {
		t.Fatalf("e-mail received: %+v", got)
	}
	// The SMS failed once: it waits for its backoff, then goes.
	store.Now = func() time.Time { return time.Now().UTC().Add(time.Minute) }
	if n, err := d.SendDue(ctx); err != nil || n != 1 {
		t.Fatalf("second round sent %d (%v), want the SMS", n, err)
	}
	if s := phone.SMS(); len(s) != 1 || s[0]["to"] != "+14155550123" || s[0]["body"] != "code 654321" || s[0]["id"] != sms.ID {
		t.Fatalf("SMS received: %v", s)
	}
	if n, _ := d.SendDue(ctx); n != 0 {
		t.Fatalf("a third round sent %d messages again", n)
	}
	box, err := eventlog.NewStore(store).UserInbox(ctx, scope.OrganizationID, []string{"ada@example.test", "+14155550123"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range box {
		if m.Status != "sent" || m.Body != "" {
			t.Fatalf("outbox after sending: %+v (want sent, body wiped)", m)
		}
	}
}

type failing struct{}

func (failing) Send(context.Context, notify.Message) error { return errors.New("connection refused") }

// TestFailedMessagesBackOffAndStop shows the retry schedule: a message whose
// channel keeps failing is retried after a growing delay and abandoned after
// NotificationMaxAttempts; a channel without a sender leaves it queued.
func TestFailedMessagesBackOffAndStop(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	store.Now = func() time.Time { return now }
	if _, err := eventlog.NewStore(store).QueueMessage(ctx, scope, eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: "bob@example.test", Subject: "s", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.NewStore(store).QueueMessage(ctx, scope, eventlog.Message{Channel: eventlog.ChannelSMS, Recipient: "+14155550100", Subject: "s", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	d := notify.NewDispatcher(store, notify.Options{Email: failing{}})
	for attempt := 1; attempt <= eventlog.NotificationMaxAttempts; attempt++ {
		if n, err := d.SendDue(ctx); err != nil || n != 0 {
			t.Fatalf("attempt %d: sent %d, %v", attempt, n, err)
		}
		if due, _ := eventlog.NewStore(store).PendingNotifications(ctx, 10); len(due) != 1 || due[0].Channel != eventlog.ChannelSMS {
			t.Fatalf("attempt %d: due right after a failure: %+v (want only the unsendable SMS)", attempt, due)
		}
		now = now.Add(eventlog.NotificationRetryMax)
	}
	box, _ := eventlog.NewStore(store).UserInbox(ctx, scope.OrganizationID, []string{"bob@example.test", "+14155550100"}, 10)
	statuses := map[string]string{}
	for _, m := range box {
		statuses[m.Channel] = m.Status
	}
	if statuses["email"] != "failed" || statuses["sms"] != "queued" {
		t.Fatalf("statuses %v, want the e-mail failed after %d attempts and the SMS queued", statuses, eventlog.NotificationMaxAttempts)
	}
}

func TestSMTPURLIsValidated(t *testing.T) {
	for _, u := range []string{"http://localhost:25", "smtp://", "smtp://host:port"} {
		if _, err := notify.NewSMTP(u, "a@b.c"); err == nil {
			t.Errorf("NewSMTP(%q) accepted", u)
		}
	}
}

// TestHTMLBodiesAreSentAsHTML sends a body rendered from an HTML template
// (it starts with models.HTMLBodyPrefix) as text/html, any other as text/plain.
func TestHTMLBodiesAreSentAsHTML(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	smtpURL, mailbox := testenv.SMTPServer(t)
	email, err := notify.NewSMTP(smtpURL, "Telco Platform <no-reply@example.test>")
	if err != nil {
		t.Fatal(err)
	}
	d := notify.NewDispatcher(store, notify.Options{Email: email})
	for _, body := range []string{eventlog.HTMLBodyPrefix + "\n<html><body><p>TKT-000001</p></body></html>", "plain text"} {
		if _, err := eventlog.NewStore(store).QueueMessage(ctx, scope, eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: "ada@example.test", Template: "support_ticket_update", Subject: "s", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := d.SendDue(ctx); err != nil || n != 2 {
		t.Fatalf("sent %d (%v)", n, err)
	}
	if !mailbox.WaitFor(5*time.Second, func(b *testenv.Mailbox) bool { return len(b.Mails()) == 2 }) {
		t.Fatal("the SMTP server did not receive both")
	}
	html, plain := 0, 0
	for _, m := range mailbox.Mails() {
		switch {
		case strings.Contains(m.Data, "text/html") && strings.Contains(m.Data, "TKT-000001"):
			html++
		case strings.Contains(m.Data, "text/plain") && strings.Contains(m.Data, "plain text"):
			plain++
		}
	}
	if html != 1 || plain != 1 {
		t.Fatalf("content types: %d html, %d plain: %+v", html, plain, mailbox.Mails())
	}
}
