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
}

// flush writes what is buffered within the write timeout.
func (k *sseSink) flush() error {
	if k.conn != nil {
		_ = k.conn.SetWriteDeadline(time.Now().Add(k.timeout))
	}
	return writeErr(k.w.Flush())
}

func (k *sseSink) event(id, name string, payload []byte) error {
	if id != "" {
		if _, err := fmt.Fprintf(k.w, "id: %s\n", id); err != nil {
			return writeErr(err)
		}
	}
	if _, err := fmt.Fprintf(k.w, "event: %s\ndata: %s\n\n", name, payload); err != nil {
		return writeErr(err)
	}
	return k.flush()
}

func (k *sseSink) heartbeat() error {
	if _, err := fmt.Fprint(k.w, ": keep-alive\n\n"); err != nil {
		return writeErr(err)
	}
	return k.flush()
}

func (k *sseSink) end(e *models.Error, _ string) {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	body, _ := jsonMarshal(map[string]any{"error": ErrorDetail{Code: e.Code, Message: e.Message, Details: details}})
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
