// Package inproc sends requests through a Fiber app in process: the
// sub-requests of a batch and the portal's calls of the API go through the
// app's whole pipeline (authentication, restrictions, rate limits,
// authorization, the handler) without a network round trip. The caller
// chooses the request's context (Detached: the caller's cancellation and
// trace, none of its other values); the app's first middleware (Adopt)
// makes it the request's.
package inproc

import (
	"context"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"
)

// ctxKey marks, among a request's user values, the context it was sent with.
type ctxKey struct{}

// Adopt gives a request sent by a Dispatcher the context it was sent
// with; other requests continue as they are. Only the server's own code
// can mark a request so: clients cannot. It must be the app's first
// middleware.
func Adopt(c *fiber.Ctx) error {
	if ctx, ok := c.Context().UserValue(ctxKey{}).(context.Context); ok {
		c.SetUserContext(ctx)
	}
	return c.Next()
}

// detached is a context that ends with its parent but carries none of
// its values.
type detached struct{ parent context.Context }

// Deadline returns the parent's deadline.
func (c detached) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done returns the parent's done channel.
func (c detached) Done() <-chan struct{} { return c.parent.Done() }

// Err returns the parent's error.
func (c detached) Err() error { return c.parent.Err() }

// Value returns nothing: values are not inherited.
func (c detached) Value(any) any { return nil }

// Detached returns a context that ends with parent (its cancellation and
// deadline) and carries its trace span, but none of its other values: an
// in-process request starts without the caller's principal, request id or
// client information, and establishes its own.
func Detached(parent context.Context) context.Context {
	return trace.ContextWithSpan(detached{parent: parent}, trace.SpanFromContext(parent))
}

// Dispatcher sends requests through an app's handler in process.
type Dispatcher struct {
	app     *fiber.App
	once    sync.Once
	handler fasthttp.RequestHandler
}

// New returns a dispatcher for app; the app's handler is taken at the first
// request, once every route exists.
func New(app *fiber.App) *Dispatcher { return &Dispatcher{app: app} }

// Serve sends req through the app with ctx as its context (see Adopt),
// as if from remote to local (nil: the unspecified address), and returns
// the request's context, whose Response is the answer (its body stream,
// if any, is the caller's to read and close).
func (d *Dispatcher) Serve(ctx context.Context, req *fasthttp.Request, remote, local net.Addr) *fasthttp.RequestCtx {
	d.once.Do(func() { d.handler = d.app.Handler() })
	rc := &fasthttp.RequestCtx{}
	rc.Init2(conn{remote: remote, local: local}, nil, false)
	req.CopyTo(&rc.Request)
	rc.SetUserValue(ctxKey{}, ctx)
	d.handler(rc)
	return rc
}

// conn is the connection of an in-process request: it carries the
// caller's addresses and has nothing to read or write (the handler reads
// the request and writes the answer in memory).
type conn struct{ remote, local net.Addr }

// Read has nothing to read: the request is already in memory.
func (conn) Read([]byte) (int, error) { return 0, io.EOF }

// Write discards: the answer stays in the request's context.
func (conn) Write(b []byte) (int, error) { return len(b), nil }

// Close has nothing to close.
func (conn) Close() error { return nil }

// LocalAddr is the address the caller's request reached.
func (c conn) LocalAddr() net.Addr { return orUnspecified(c.local) }

// RemoteAddr is the caller's address (IP allow-lists apply to it).
func (c conn) RemoteAddr() net.Addr { return orUnspecified(c.remote) }

// SetDeadline accepts and ignores a deadline (no bytes flow).
func (conn) SetDeadline(time.Time) error { return nil }

// SetReadDeadline accepts and ignores a deadline (body limits set one).
func (conn) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline accepts and ignores a deadline.
func (conn) SetWriteDeadline(time.Time) error { return nil }

// orUnspecified returns a, or the unspecified TCP address when a is nil.
func orUnspecified(a net.Addr) net.Addr {
	if a == nil {
		return &net.TCPAddr{}
	}
	return a
}
