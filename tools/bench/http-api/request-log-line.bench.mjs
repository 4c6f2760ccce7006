#!/usr/bin/env node
/**
 * What the access log line costs the event loop: pino's generic path (a redaction-free child's
 * `info(fields, 'request')`, what the server did before) against `createRequestLog` of
 * `@certsmith/http-api` (the line put together by hand, byte for byte pino's — its tests compare
 * both). docs/performance.md "The request path outside the operation". Run by hand after `npm run build`:
 *
 *   node tools/bench/http-api/request-log-line.bench.mjs [--lines 200000] [--per-turn 16] [--rounds 5]
 *
 * Each variant logs `--lines` request lines, `--per-turn` per event-loop turn (a busy server's turn
 * answers several requests), into a logger made by `createLogger` whose destination keeps the lines
 * of one turn and drops them (the server's destination gathers them for one write every few ms).
 * The fields are a realistic mix: a UUID request id, a path, labels, and one line in eight with a
 * quote in the label (the escaping path). Rounds alternate between the variants; reported per
 * variant: median CPU µs per line of the whole process and of the main thread alone
 * (`/proc/self/task/<tid>/stat`, 10 ms ticks: keep rounds ≥ 1 s).
 */
import { randomUUID } from 'node:crypto';
import { readBenchOptions } from '../bench-options.mjs';
import { readThreadCpuMs } from '../compare/servers.mjs';
import { createLogger } from '../../../packages/http-api/dist/logger.js';
import { createRequestLog } from '../../../packages/http-api/dist/request-log.js';

const options = readBenchOptions(import.meta.url, {
  lines: { type: 'integer', default: 200_000, min: 1000 },
  'per-turn': { type: 'integer', default: 16, min: 1 },
  rounds: { type: 'integer', default: 5, min: 1 },
});

let kept = [];
const logger = createLogger({ base: { pid: process.pid }, destination: { write: (line) => void kept.push(line) } });
const pinoChild = logger.child({}, { redact: { paths: [] } });
const VARIANTS = {
  'pino info()': (fields) => pinoChild.info(fields, 'request'),
  createRequestLog: createRequestLog(logger),
};

const ids = Array.from({ length: 64 }, () => randomUUID());
function fieldsOf(index) {
  return {
    reqId: ids[index % ids.length],
    method: 'POST',
    path: index % 2 === 0 ? '/api/v1/cfssl/bundle' : '/api/v1/cfssl/newcert',
    operation: index % 2 === 0 ? 'bundle' : 'newcert',
    status: 200,
    code: undefined,
    label: index % 8 === 0 ? 'say "primary"' : 'primary',
    profile: index % 2 === 0 ? undefined : 'server',
    durationMs: Math.round((1 + (index % 97) / 31) * 1000) / 1000,
  };
}

function runRound(log) {
  return new Promise((resolve) => {
    const cpuBefore = process.cpuUsage();
    const mainBefore = readThreadCpuMs(process.pid);
    let index = 0;
    const turn = () => {
      for (let k = 0; k < options['per-turn'] && index < options.lines; k += 1, index += 1) log(fieldsOf(index));
      kept = [];
      if (index < options.lines) setImmediate(turn);
      else {
        const cpu = process.cpuUsage(cpuBefore);
        resolve({ processUs: (cpu.user + cpu.system) / options.lines, mainUs: ((readThreadCpuMs(process.pid) - mainBefore) * 1000) / options.lines });
      }
    };
    turn();
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = Object.fromEntries(Object.keys(VARIANTS).map((name) => [name, []]));
// One warm-up round each: V8 optimises both before anything is counted.
for (const log of Object.values(VARIANTS)) await runRound(log);
for (let round = 0; round < options.rounds; round += 1) {
  const names = Object.keys(VARIANTS);
  for (const name of round % 2 === 0 ? names : names.reverse()) results[name].push(await runRound(VARIANTS[name]));
}
console.log(`${options.lines} lines per round, ${options['per-turn']} per event-loop turn, ${options.rounds} rounds (medians), Node ${process.version}`);
console.log('| variant | process CPU µs/line | main thread CPU µs/line |');
console.log('|---|---:|---:|');
for (const [name, rounds] of Object.entries(results)) {
  console.log(`| ${name} | ${median(rounds.map((r) => r.processUs)).toFixed(2)} | ${median(rounds.map((r) => r.mainUs)).toFixed(2)} |`);
}
