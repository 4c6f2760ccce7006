/**
 * The primary process's own share of `/metrics` under `serve --processes N`: its CPU time and
 * resident memory, under the names prom-client's default metrics give them in the worker processes,
 * so that the merged `process_cpu_seconds_total` is the whole server's (the primary runs the
 * certificate store: its SQLite thread's commits are part of every issuance). Written here rather
 * than with prom-client's default metrics: the primary does not load prom-client (its memory is
 * part of the server's, docs/adr/0004-http-threads.md), and these four numbers are all it adds.
 */
import type { MetricsSnapshot } from '@certsmith/http-api';

type Sample = { name: string; help: string; type: 'counter' | 'gauge'; value: number };

/** The primary's CPU and memory in the shape of `Registry.getMetricsAsJSON()`, summed with the workers'. */
export function primaryProcessMetrics(): MetricsSnapshot {
  const cpu = process.cpuUsage();
  const user = cpu.user / 1e6;
  const system = cpu.system / 1e6;
  const samples: Sample[] = [
    // The help texts are prom-client's: the merge keeps the first process's, the primary's come last.
    { name: 'process_cpu_user_seconds_total', help: 'Total user CPU time spent in seconds.', type: 'counter', value: user },
    { name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', type: 'counter', value: system },
    { name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', type: 'counter', value: user + system },
    { name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.', type: 'gauge', value: process.memoryUsage.rss() },
  ];
  // prom-client's JSON carries `type` as its string name; its type declarations say an enum.
  return samples.map(({ name, help, type, value }) => ({ name, help, type, aggregator: 'sum', values: [{ value, labels: {} }] })) as unknown as MetricsSnapshot;
}
