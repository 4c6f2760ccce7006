#!/usr/bin/env node
/**
 * The two hand-written time codecs of an inventory page (four times a row, 100 rows a page), against
 * the general code they stand in front of. Run after `npm run build`, through /work/bin/quiet on
 * the shared machine:
 *
 *   node tools/bench/cert-store/stored-times.bench.mjs [--times 1000] [--iterations 500] [--rounds 5]
 *
 * - reading: `parseStoredTime` (go-sqlite3's and PostgreSQL's UTC layouts read by character) against
 *   `parseStoredTimeByPattern` (the regular expression that reads every form), on the times
 *   `formatSqliteTime` writes — half with a fraction — and Go's zero time, as `revoked_at` holds it;
 * - writing: `formatGoTime` (from the date's fields) against `formatGoTimeByIso` (cut from
 *   `toISOString`), on the same dates.
 * Reported: ns per call, the median of the rounds, the two variants alternating in each round. Each
 * pair's outputs are compared first (the benchmark refuses to time two codecs that disagree).
 */
import { join } from 'node:path';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from '../bench-options.mjs';

const { times: timeCount, iterations, rounds } = readBenchOptions(import.meta.url, {
  times: { type: 'integer', default: 1000, min: 1 },
  iterations: { type: 'integer', default: 500, min: 1 },
  rounds: { type: 'integer', default: 5, min: 1 },
});

const dist = join(fileURLToPath(new URL('.', import.meta.url)), '../../../packages/cert-store/dist');
const { formatSqliteTime, parseStoredTime, parseStoredTimeByPattern } = await import(join(dist, 'timestamps.js'));
const { formatGoTime, formatGoTimeByIso } = await import(join(dist, 'record-json.js'));

// Dates over the next two years, every other one with milliseconds (issued_at, not_before have them).
const start = Date.UTC(2026, 10, 27);
const dates = Array.from({ length: timeCount }, (_, i) => new Date(start + i * 63_072_000 + (i % 2 === 0 ? 0 : (i * 37) % 1000)));
const stored = dates.flatMap((date) => [formatSqliteTime(date), '0001-01-01 00:00:00+00:00']);

const pairs = [
  ['read', stored, parseStoredTime, parseStoredTimeByPattern, (date) => date?.getTime() ?? null],
  ['write', dates, formatGoTime, formatGoTimeByIso, (text) => text],
];

for (const [name, inputs, fast, general, key] of pairs) {
  for (const input of inputs) {
    if (key(fast(input)) !== key(general(input))) throw new Error(`${name}: the two codecs disagree on ${String(input)}`);
  }
}

/** ns per call of `codec` over `inputs`, `iterations` times. */
function time(codec, inputs) {
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i += 1) for (const input of inputs) if (codec(input) !== null) sink += 1;
  const ns = Number(process.hrtime.bigint() - started) / (iterations * inputs.length);
  if (sink < 0) throw new Error('unreachable');
  return ns;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`stored-times: ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ${stored.length} stored times, ${dates.length} dates, ${rounds} rounds × ${iterations}`);
console.log('| codec | by hand ns/call | general ns/call | ratio |');
console.log('|---|---:|---:|---:|');
for (const [name, inputs, fast, general] of pairs) {
  const byHand = [];
  const byGeneral = [];
  // One unmeasured round each first, so both are optimised before timing.
  time(fast, inputs);
  time(general, inputs);
  for (let round = 0; round < rounds; round += 1) {
    byHand.push(time(fast, inputs));
    byGeneral.push(time(general, inputs));
  }
  const label = name === 'read' ? 'read (parseStoredTime / parseStoredTimeByPattern)' : 'write (formatGoTime / formatGoTimeByIso)';
  console.log(`| ${label} | ${median(byHand).toFixed(0)} | ${median(byGeneral).toFixed(0)} | ${(median(byGeneral) / median(byHand)).toFixed(1)}× |`);
}
