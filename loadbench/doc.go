// Package loadbench holds the platform's load benchmarks (see
// docs/performance.md), each run only when LOAD_BENCH is set:
//
//   - BenchmarkAPILoad (`make bench-load`): the platform's `serve` process
//     on loopback against a real redis-server, driven by vegeta at 1, 8, 32
//     and 128 connections, next to two floors measured in the same run: a
//     bare Fiber JSON endpoint, and a bare Fiber handler doing only what an
//     authenticated, rate-limited GET cannot avoid.
//   - BenchmarkProvisionStart (`make bench-start`): POST
//     /v1/services/provision answered 202, against a raw SDK ExecuteWorkflow
//     loop on the same Temporal dev server.
//   - BenchmarkWebhookFanout (`make bench-webhooks`): events written to the
//     outbox, delivered by `platform worker` to subscriptions on a loopback
//     receiver; deliveries per second and latency from the event's
//     created_at to its receipt.
//
// It has no code outside its benchmarks.
package loadbench
