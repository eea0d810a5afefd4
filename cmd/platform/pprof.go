package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/telcoplatform/platform/config"
)

// startPprof serves Go's profiling endpoints (net/http/pprof) under
// /debug/pprof/ on addr, a listener of its own apart from the API, when
// PPROF_ADDR is set. addr must be a loopback address (config.Load has
// checked it; checked again here so that no caller can open it wider).
// Empty addr: profiling is off and nothing listens. It returns the bound
// address (addr may use port 0) and a function that closes the listener.
func startPprof(ctx context.Context, addr string, log *slog.Logger) (string, func(), error) {
	if addr == "" {
		return "", func() {}, nil
	}
	if err := config.CheckLoopbackAddr(addr); err != nil {
		return "", nil, fmt.Errorf("PPROF_ADDR: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("PPROF_ADDR: %w", err)
	}
	if ip, ok := ln.Addr().(*net.TCPAddr); !ok || !ip.IP.IsLoopback() { // localhost resolved elsewhere
		_ = ln.Close()
		return "", nil, fmt.Errorf("PPROF_ADDR: %s is not a loopback address", ln.Addr())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("profiling listener stopped", "error", err)
		}
	}()
	log.Warn("profiling endpoints are on (PPROF_ADDR): diagnosis only", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	return ln.Addr().String(), stop, nil
}
