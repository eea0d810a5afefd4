package testenv

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Mail is one message a test SMTP server received.
type Mail struct {
	From string
	To   []string
	Data string // the whole message: headers and body
}

// Mailbox collects what a test SMTP or SMS server received.
type Mailbox struct {
	mu    sync.Mutex
	mails []Mail
	sms   []map[string]string
	added chan struct{}
}

func newMailbox() *Mailbox { return &Mailbox{added: make(chan struct{}, 1000)} }

// Mails returns the e-mails received so far.
func (b *Mailbox) Mails() []Mail {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Mail(nil), b.mails...)
}

// SMS returns the SMS received so far ({id, to, body}).
func (b *Mailbox) SMS() []map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]map[string]string(nil), b.sms...)
}

// WaitFor waits up to timeout until ok holds for the mailbox, and reports whether it did.
func (b *Mailbox) WaitFor(timeout time.Duration, ok func(*Mailbox) bool) bool {
	deadline := time.After(timeout)
	for !ok(b) {
		select {
		case <-b.added:
		case <-deadline:
			return ok(b)
		}
	}
	return true
}

// SMTPServer starts a real SMTP server (github.com/emersion/go-smtp) on
// loopback for the test and returns its smtp:// URL and its mailbox.
func SMTPServer(t testing.TB) (string, *Mailbox) {
	t.Helper()
	box := newMailbox()
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{box: box}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "smtp://" + ln.Addr().String(), box
}

type smtpSession struct {
	box  *Mailbox
	from string
	to   []string
}

func (s *smtpSession) Reset()        { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error { return nil }
func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}
func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}
func (s *smtpSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.box.mu.Lock()
	s.box.mails = append(s.box.mails, Mail{From: s.from, To: s.to, Data: strings.ReplaceAll(string(raw), "\r\n", "\n")})
	s.box.mu.Unlock()
	s.box.added <- struct{}{}
	return nil
}

// SMSServer starts an HTTP SMS provider on loopback that accepts the
// platform's JSON posts ({id, to, body}); failFirst answers 503 to that many
// posts first. It returns the URL and the mailbox.
func SMSServer(t testing.TB, failFirst int) (string, *Mailbox) {
	t.Helper()
	box := newMailbox()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fail := failFirst > 0
		failFirst--
		mu.Unlock()
		if fail {
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		var m map[string]string
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || m["to"] == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		box.mu.Lock()
		box.sms = append(box.sms, m)
		box.mu.Unlock()
		box.added <- struct{}{}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, box
}
