package portal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
)

// A notice is the one-line result of an action ("Key revoked.", "Payment
// pay_… of 25.00 USD: succeeded.") shown once by the page the action
// redirects to. It travels in a short-lived cookie, not in the URL: a link
// someone else made cannot put their own words in the page's success box,
// and a reload or a bookmark does not show it again. The cookie is sealed
// for the session and the page it is meant for (an HMAC keyed by the
// session's CSRF token over the page's path and the text): a cookie set by
// anyone else, left by another session in the same browser, or read by
// another page is not shown.

// noticeCookie is the cookie that carries a notice to the next page.
const noticeCookie = "platform_notice"

// Bounds of a notice: its length, and how long it waits for its page.
const (
	noticeMaxBytes = 400
	noticeMaxAge   = time.Minute
	noticeMACBytes = 16
)

// noticeMAC seals notice for the page at path in the session whose CSRF
// token is key.
func noticeMAC(key, path, notice string) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(path))
	m.Write([]byte{0})
	m.Write([]byte(notice))
	return m.Sum(nil)[:noticeMACBytes]
}

// pagePath is the path of a redirect target: without its query and
// fragment.
func pagePath(to string) string {
	if i := strings.IndexAny(to, "?#"); i >= 0 {
		return to[:i]
	}
	return to
}

// redirectNotice redirects to the portal page to (303) with notice for it,
// in the request's environment (a sandbox action goes back to the sandbox).
func (p *Portal) redirectNotice(c *fiber.Ctx, r *Request, to, notice string) error {
	to = withEnv(r.Env, to)
	if len(notice) > noticeMaxBytes {
		notice = strings.ToValidUTF8(notice[:noticeMaxBytes], "")
	}
	sealed := append(noticeMAC(r.Session.CSRFToken, pagePath(to), notice), notice...)
	c.Cookie(&fiber.Cookie{Name: noticeCookie, Value: base64.RawURLEncoding.EncodeToString(sealed), Path: Path,
		MaxAge: int(noticeMaxAge.Seconds()), HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: p.cfg.Secure})
	return c.Redirect(to, http.StatusSeeOther)
}

// takeNotice returns the notice the request carries for this page and
// session ("" for none) and clears it, so it is shown once. A notice
// sealed for another page or another session is not shown, and is left
// to lapse after noticeMaxAge (the page it is meant for may come next);
// one that cannot be read is cleared.
func (p *Portal) takeNotice(c *fiber.Ctx, r *Request) string {
	v := c.Cookies(noticeCookie)
	if v == "" {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) < noticeMACBytes || len(b) > noticeMACBytes+noticeMaxBytes || !utf8.Valid(b[noticeMACBytes:]) {
		p.clearNotice(c)
		return ""
	}
	mac, notice := b[:noticeMACBytes], string(b[noticeMACBytes:])
	if !hmac.Equal(mac, noticeMAC(r.Session.CSRFToken, c.Path(), notice)) {
		return ""
	}
	p.clearNotice(c)
	return notice
}

// clearNotice deletes the notice cookie.
func (p *Portal) clearNotice(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{Name: noticeCookie, Path: Path, MaxAge: -1, Expires: time.Unix(0, 0), HTTPOnly: true,
		SameSite: fiber.CookieSameSiteLaxMode, Secure: p.cfg.Secure})
}
