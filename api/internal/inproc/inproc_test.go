package inproc

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

type valueKey struct{}

// TestServe sends a request through an app in process: the handler sees
// the context it was sent with (Detached: the caller's cancellation, none
// of its values), the caller's address, and its answer is the response.
func TestServe(t *testing.T) {
	app := fiber.New()
	app.Use(Adopt)
	type seen struct {
		err    error
		value  any
		remote string
	}
	got := make(chan seen, 1)
	app.Get("/x", func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		got <- seen{err: ctx.Err(), value: ctx.Value(valueKey{}), remote: c.Context().RemoteAddr().String()}
		return c.Status(fiber.StatusAccepted).SendString("answer")
	})
	d := New(app)

	parent, cancel := context.WithCancel(context.WithValue(context.Background(), valueKey{}, "caller's"))
	var req fasthttp.Request
	req.SetRequestURI("/x")
	remote := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 4000}
	rc := d.Serve(Detached(parent), &req, remote, nil)
	if rc.Response.StatusCode() != fiber.StatusAccepted || string(rc.Response.Body()) != "answer" {
		t.Fatalf("answer: %d %q", rc.Response.StatusCode(), rc.Response.Body())
	}
	s := <-got
	if s.err != nil || s.value != nil || s.remote != remote.String() {
		t.Fatalf("live request: %+v", s)
	}

	cancel()
	d.Serve(Detached(parent), &req, nil, nil)
	if s := <-got; !errors.Is(s.err, context.Canceled) || s.remote != (&net.TCPAddr{}).String() {
		t.Fatalf("after the caller's cancellation: %+v", s)
	}

	// A request from outside keeps its own context: no client can mark it.
	// It names the mark in a header, a query parameter and a cookie, and
	// carries look-alike marks (under the mark's name as a string, under a
	// key of another type, as a local): none is adopted. The same app
	// adopts the real mark, so the check can see an adoption.
	forged := context.WithValue(context.Background(), valueKey{}, "forged")
	other := fiber.New()
	other.Use(func(c *fiber.Ctx) error {
		c.Context().SetUserValue("ctxKey", forged)
		c.Context().SetUserValue("inproc.ctxKey", forged)
		c.Context().SetUserValue(struct{}{}, forged)
		c.Context().SetUserValue(valueKey{}, forged)
		c.Locals("ctx", forged)
		return c.Next()
	}, Adopt)
	adopted := make(chan any, 1)
	other.Get("/x", func(c *fiber.Ctx) error {
		adopted <- c.UserContext().Value(valueKey{})
		return c.SendStatus(fiber.StatusNoContent)
	})
	outside := newRequest(t)
	outside.URL.RawQuery = "ctxKey=forged&ctx=forged"
	outside.Header.Set("ctxKey", "forged")
	outside.Header.Set("X-Inproc-Context", "forged")
	outside.AddCookie(&http.Cookie{Name: "ctxKey", Value: "forged"})
	res, err := other.Test(outside)
	if err != nil || res.StatusCode != fiber.StatusNoContent {
		t.Fatalf("outside request: %v %v", res, err)
	}
	if v := <-adopted; v != nil {
		t.Fatalf("an outside request adopted a forged context: %v", v)
	}
	New(other).Serve(context.WithValue(context.Background(), valueKey{}, "dispatched"), &req, nil, nil)
	if v := <-adopted; v != "dispatched" {
		t.Fatalf("a dispatched request's context was not adopted: %v", v)
	}
}

func newRequest(t *testing.T) *http.Request {
	t.Helper()
	return httptest.NewRequest(http.MethodGet, "/x", nil)
}
