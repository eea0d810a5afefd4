package portal

import (
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// inProcessConn is the connection of an in-process API request: no bytes
// flow through it (the request and response are the RequestCtx's), but
// the API may set deadlines on it (operations with their own body limit
// do) and reads the caller's address from it.
type inProcessConn struct{ remote net.Addr }

func (c *inProcessConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (c *inProcessConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c *inProcessConn) Close() error                     { return nil }
func (c *inProcessConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4zero} }
func (c *inProcessConn) RemoteAddr() net.Addr             { return c.remote }
func (c *inProcessConn) SetDeadline(time.Time) error      { return nil }
func (c *inProcessConn) SetReadDeadline(time.Time) error  { return nil }
func (c *inProcessConn) SetWriteDeadline(time.Time) error { return nil }

// slogPrintf is fasthttp's logger on slog.
type slogPrintf struct{ log *slog.Logger }

// Printf logs a fasthttp message.
func (l slogPrintf) Printf(format string, args ...any) {
	l.log.Debug("in-process request", "format", format, "args", args)
}

// initInProcess prepares rc to serve req in process for a caller at remote.
func initInProcess(rc *fasthttp.RequestCtx, req *fasthttp.Request, remote net.Addr) {
	rc.Init2(&inProcessConn{remote: remote}, slogPrintf{slog.Default()}, true)
	req.CopyTo(&rc.Request)
}
