// Package notify sends the notification outbox: e-mail through SMTP and SMS
// through an HTTP provider. Messages are written to the outbox
// (models.ContactNotification) in the transaction of the change they report;
// the Dispatcher sends each at least once and records the outcome.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// Message is one notification to send.
type Message struct {
	ID      string // outbox id: the e-mail Message-ID and the SMS idempotency id
	To      string
	Subject string
	Body    string
}

// Sender hands a message to one channel.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// SMTP sends e-mail through an SMTP server (go-mail): STARTTLS when the
// server offers it on smtp://, implicit TLS on smtps://, PLAIN/LOGIN
// authentication when the URL has credentials.
type SMTP struct {
	from string
	opts []mail.Option
	host string
}

// NewSMTP returns the sender for an smtp:// or smtps:// URL.
// Errors: a URL that is not smtp(s)://host:port.
func NewSMTP(rawURL, from string) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return nil, errors.New("SMTP_URL must be smtp://[user:password@]host:port or smtps://host:port")
	}
	opts := []mail.Option{mail.WithTimeout(15 * time.Second), mail.WithHELO("localhost")}
	if p := u.Port(); p != "" {
		port, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("SMTP_URL port: %w", err)
		}
		opts = append(opts, mail.WithPort(port))
	}
	if u.Scheme == "smtps" {
		opts = append(opts, mail.WithSSL())
	} else {
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	}
	if u.User != nil {
		pass, _ := u.User.Password()
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(u.User.Username()), mail.WithPassword(pass))
	}
	return &SMTP{from: from, opts: opts, host: u.Hostname()}, nil
}

// Send delivers one e-mail. Errors: the SMTP server's refusal or a network error.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg := mail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return fmt.Errorf("SMTP_FROM: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("recipient: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(m.ID + "@telco-platform")
	msg.SetDate()
	kind := mail.TypeTextPlain
	if strings.HasPrefix(m.Body, eventlog.HTMLBodyPrefix) {
		kind = mail.TypeTextHTML // a body rendered from an HTML template
	}
	msg.SetBodyString(kind, m.Body)
	c, err := mail.NewClient(s.host, s.opts...)
	if err != nil {
		return err
	}
	return c.DialAndSendWithContext(ctx, msg)
}

// SMSHTTP sends SMS through an HTTP provider: a POST of
// {"id", "to", "body"} as JSON; any 2xx is success. The id lets the provider
// drop a repeated delivery.
type SMSHTTP struct {
	url    string
	client *http.Client
}

// NewSMSHTTP returns the SMS sender posting to rawURL. wrap, when given
// (tracing.Provider.WrapTransport), wraps its transport (Go's default one).
func NewSMSHTTP(rawURL string, wrap ...func(http.RoundTripper) http.RoundTripper) *SMSHTTP {
	var rt http.RoundTripper = http.DefaultTransport
	for _, w := range wrap {
		if w != nil {
			rt = w(rt)
		}
	}
	return &SMSHTTP{url: rawURL, client: &http.Client{Timeout: 10 * time.Second, Transport: rt}}
}

// Send posts one SMS. Errors: a network error or a non-2xx answer.
func (s *SMSHTTP) Send(ctx context.Context, m Message) error {
	body, _ := json.Marshal(map[string]string{"id": m.ID, "to": m.To, "body": m.Body})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", m.ID)
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("SMS provider answered %d", res.StatusCode)
	}
	return nil
}

// Options configure a Dispatcher.
type Options struct {
	Email        Sender // nil: e-mail waits in the outbox
	SMS          Sender // nil: SMS waits in the outbox
	BatchSize    int    // default 50
	PollInterval time.Duration
	Logger       *slog.Logger
}

// Dispatcher sends due outbox messages on the channels it has; a message of
// a channel without a sender stays queued (and the portal shows it).
type Dispatcher struct {
	store    *models.Store
	eventlog *eventlog.Store
	opts     Options
	log      *slog.Logger
}

// NewDispatcher returns a Dispatcher over store.
func NewDispatcher(store *models.Store, opts Options) *Dispatcher {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 50
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Dispatcher{store: store, eventlog: eventlog.NewStore(store), opts: opts, log: log}
}

// Enabled reports whether the dispatcher has any channel to send on.
func (d *Dispatcher) Enabled() bool { return d.opts.Email != nil || d.opts.SMS != nil }

// SendDue sends the due messages once and returns how many were sent.
// A failure is recorded on the message (retried with backoff), not returned.
// Errors: the store's, when the outbox cannot be read.
func (d *Dispatcher) SendDue(ctx context.Context) (int, error) {
	due, err := d.eventlog.PendingNotifications(ctx, d.opts.BatchSize)
	if err != nil {
		return 0, err
	}
	sent := 0
	for i := range due {
		n := &due[i]
		sender := d.opts.Email
		if n.Channel == eventlog.ChannelSMS {
			sender = d.opts.SMS
		}
		if sender == nil {
			continue
		}
		subject, body, err := d.eventlog.NotificationText(n)
		if err == nil {
			sendCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
			err = sender.Send(sendCtx, Message{ID: n.ID, To: n.Recipient, Subject: subject, Body: body})
			cancel()
		}
		if err != nil {
			d.log.Warn("notification not sent; will retry", "id", n.ID, "channel", n.Channel, "attempt", n.Attempts+1, "error", err)
			if merr := d.eventlog.MarkNotificationFailed(ctx, n, err); merr != nil {
				return sent, merr
			}
			continue
		}
		if err := d.eventlog.MarkNotificationSent(ctx, n.ID); err != nil {
			return sent, err
		}
		sent++
	}
	return sent, nil
}

// Run sends due messages until ctx ends, pausing PollInterval between rounds.
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.Enabled() {
		return nil
	}
	t := time.NewTicker(d.opts.PollInterval)
	defer t.Stop()
	for {
		if _, err := d.SendDue(ctx); err != nil && ctx.Err() == nil {
			d.log.Error("notification outbox round failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
