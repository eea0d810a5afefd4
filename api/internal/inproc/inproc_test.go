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
	other := fiber.New()
	other.Use(Adopt)
	other.Get("/x", func(c *fiber.Ctx) error {
		if c.UserContext().Value(valueKey{}) != nil {
			t.Error("an outside request adopted a context")
		}
		return c.SendStatus(fiber.StatusNoContent)
	})
	res, err := other.Test(newRequest(t))
	if err != nil || res.StatusCode != fiber.StatusNoContent {
		t.Fatalf("outside request: %v %v", res, err)
	}
}

func newRequest(t *testing.T) *http.Request {
	t.Helper()
	return httptest.NewRequest(http.MethodGet, "/x", nil)
}
