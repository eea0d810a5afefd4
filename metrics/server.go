package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Server is an HTTP listener of its own for /metrics (and, on a worker,
// /healthz and /readyz), apart from the API's listener.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Listen opens addr and serves h on it in the background. Requests from a
// loopback address are always served; others only when their address is
// in allow (empty allow: loopback only, the others get 403). Loopback-only
// listeners should bind a loopback address too (config.Load checks that).
func Listen(addr string, allow []netip.Prefix, h http.Handler, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Server{ln: ln, done: make(chan struct{}),
		srv: &http.Server{Handler: AllowList(allow, h), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "addr", ln.Addr().String(), "error", err)
		}
	}()
	return s, nil
}

// Addr is the bound address (addr may have used port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the listener, letting requests in flight finish for up to 2s.
func (s *Server) Close(ctx context.Context) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(sctx)
	<-s.done
}

// AllowList serves h to loopback clients and to clients whose address is
// in allow; the others get 403.
func AllowList(allow []netip.Prefix, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed(r.RemoteAddr, allow) {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func allowed(remote string, allow []netip.Prefix) bool {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap()
	if ip.IsLoopback() {
		return true
	}
	for _, p := range allow {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
