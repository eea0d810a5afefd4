package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/fasthttp/websocket"
	fiberws "github.com/gofiber/contrib/websocket"

	"github.com/telcoplatform/platform/models"
)

// sseSink writes a real-time stream as Server-Sent Events: `id:` is the
// event id (operation documents carry none, so a reconnection resumes
// after the last event of the log), `event:` its name, `data:` the JSON.
type sseSink struct {
	w       *bufio.Writer
	conn    net.Conn // nil in tests without a connection
	timeout time.Duration
	// deadline is when the message being written must be out: the
	// connection's write deadline, set before each message.
	deadline time.Time
}

// begin starts a message: it has the write timeout from now, including
// the writes that pass the buffer before the flush.
func (k *sseSink) begin() {
	if k.conn != nil {
		k.deadline = time.Now().Add(k.timeout)
		_ = k.conn.SetWriteDeadline(k.deadline)
	}
}

// err maps a failed write of the message to errSlowWrite when it timed
// out, or failed once its deadline had passed: the body goes through a
// pipe to the goroutine that writes the connection, whose timed-out write
// closes the pipe, so this side sees the pipe closed, not a timeout.
func (k *sseSink) err(err error) error {
	if err == nil {
		return nil
	}
	if k.conn != nil && !time.Now().Before(k.deadline) {
		return errSlowWrite
	}
	return writeErr(err)
}

// flush writes what is buffered.
func (k *sseSink) flush() error {
	return k.err(k.w.Flush())
}

func (k *sseSink) event(id, name string, payload []byte) error {
	k.begin()
	if id != "" {
		if _, err := fmt.Fprintf(k.w, "id: %s\n", id); err != nil {
			return k.err(err)
		}
	}
	if _, err := fmt.Fprintf(k.w, "event: %s\ndata: %s\n\n", name, payload); err != nil {
		return k.err(err)
	}
	return k.flush()
}

func (k *sseSink) heartbeat() error {
	k.begin()
	if _, err := fmt.Fprint(k.w, ": keep-alive\n\n"); err != nil {
		return k.err(err)
	}
	return k.flush()
}

func (k *sseSink) end(e *models.Error, _ string) {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	body, _ := jsonMarshal(map[string]any{"error": ErrorDetail{Code: e.Code, Message: e.Message, Details: details}})
	k.begin()
	if _, err := fmt.Fprintf(k.w, "event: error\ndata: %s\n\n", body); err == nil {
		_ = k.flush()
	}
}

func (k *sseSink) done() <-chan struct{} { return nil }

// wsSink writes a real-time stream as WebSocket text messages, one JSON
// object each: an event of the log as its webhook payload ({"id", "event",
// "timestamp", "data"}), an operation's document as {"event": "operation",
// "data": ...}. It pings every heartbeat and ends the stream when the
// client stops answering; the server's reason to end goes in the close
// frame (code 1008 and "<ERROR_CODE>: message"; 1001 at the maximum
// duration and at the server's shutdown).
type wsSink struct {
	conn    *fiberws.Conn
	ws      *websocket.Conn // conn's connection, kept: the handler's return gives conn back to its pool
	timeout time.Duration
	closed  chan struct{}
}

// maxClientMessage bounds what a client may send (nothing is expected).
const maxClientMessage = 4096

// newWSSink starts reading the connection (pongs and the client's close).
func newWSSink(conn *fiberws.Conn, opts StreamOptions) *wsSink {
	ws := conn.Conn
	k := &wsSink{conn: conn, ws: ws, timeout: opts.WriteTimeout, closed: make(chan struct{})}
	ws.SetReadLimit(maxClientMessage)
	wait := 2*opts.Heartbeat + opts.WriteTimeout
	_ = ws.SetReadDeadline(time.Now().Add(wait))
	ws.SetPongHandler(func(string) error { return ws.SetReadDeadline(time.Now().Add(wait)) })
	go func() {
		defer close(k.closed)
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}()
	return k
}

// stop closes the connection and waits for the reader to end, so that
// nothing reads the connection once the handler has returned it.
func (k *wsSink) stop() {
	_ = k.ws.Close()
	<-k.closed
}

func (k *wsSink) event(id, name string, payload []byte) error {
	msg := payload
	if id == "" {
		var err error
		if msg, err = jsonMarshal(map[string]any{"event": name, "data": json.RawMessage(payload)}); err != nil {
			return err
		}
	}
	_ = k.conn.SetWriteDeadline(time.Now().Add(k.timeout))
	return writeErr(k.conn.WriteMessage(websocket.TextMessage, msg))
}

func (k *wsSink) heartbeat() error {
	return writeErr(k.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(k.timeout)))
}

func (k *wsSink) end(e *models.Error, _ string) {
	code := websocket.ClosePolicyViolation
	if e.Code == models.CodeServiceMaintenance || e.Code == models.CodeInternal {
		code = websocket.CloseGoingAway
	}
	reason := string(e.Code) + ": " + e.Message
	if len(reason) > 123 { // the limit of a close frame's reason
		reason = reason[:123]
	}
	_ = k.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	select { // the client answers the close; then the connection ends
	case <-k.closed:
	case <-time.After(time.Second):
	}
}

func (k *wsSink) done() <-chan struct{} { return k.closed }
