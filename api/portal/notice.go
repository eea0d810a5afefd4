package portal

import (
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
// and a reload or a bookmark does not show it again.

// noticeCookie is the cookie that carries a notice to the next page.
const noticeCookie = "platform_notice"

// Bounds of a notice: its length, and how long it waits for its page.
const (
	noticeMaxBytes = 400
	noticeMaxAge   = time.Minute
)

// redirectNotice redirects to the portal page to (303) with notice for it.
func (p *Portal) redirectNotice(c *fiber.Ctx, to, notice string) error {
	if len(notice) > noticeMaxBytes {
		notice = strings.ToValidUTF8(notice[:noticeMaxBytes], "")
	}
	c.Cookie(&fiber.Cookie{Name: noticeCookie, Value: base64.RawURLEncoding.EncodeToString([]byte(notice)), Path: Path,
		MaxAge: int(noticeMaxAge.Seconds()), HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: p.cfg.Secure})
	return c.Redirect(to, http.StatusSeeOther)
}

// takeNotice returns the notice the request carries ("" for none) and
// clears it, so it is shown once.
func (p *Portal) takeNotice(c *fiber.Ctx) string {
	v := c.Cookies(noticeCookie)
	if v == "" {
		return ""
	}
	c.Cookie(&fiber.Cookie{Name: noticeCookie, Path: Path, MaxAge: -1, Expires: time.Unix(0, 0), HTTPOnly: true,
		SameSite: fiber.CookieSameSiteLaxMode, Secure: p.cfg.Secure})
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) > noticeMaxBytes || !utf8.Valid(b) {
		return ""
	}
	return string(b)
}
