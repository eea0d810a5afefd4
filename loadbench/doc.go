// Package loadbench holds the API's load benchmark (BenchmarkAPILoad, run
// by `make bench-load`; see docs/performance.md): the platform's `serve`
// process on loopback against a real redis-server, driven by vegeta at
// 1, 8, 32 and 128 connections, next to two floors measured in the same
// run: a bare Fiber JSON endpoint, and a bare Fiber handler doing only what
// an authenticated, rate-limited GET cannot avoid. It has no code outside
// its benchmark.
package loadbench
