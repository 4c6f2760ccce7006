#!/usr/bin/env node
// @ts-check
/**
 * Mutation fuzzing of @certsmith/x509-core's parsers, by hand (build first: `npm run build`):
 *
 *   node tools/fuzz/run.mjs --inputs 1000000 [--seed 1] [--start 0] [--json report.json] [--corpus FILE] [--fresh]
 *   node tools/fuzz/run.mjs --seed 1 --replay 123456      # reproduce one input and show its outcome
 *
 * Seeds: the cfssl_trust bundles (read by path; CERTSMITH_TRUST_DIR overrides /work/shared/trust)
 * and keys, CSRs, certificates and PKCS#7 generated at start. Each input is made from (seed, index)
 * alone. The campaign runs in a child process that writes each input's index to a pipe before running
 * it; this process stops it when one input runs longer than --hang-ms (default 10 s), and names the
 * input when the child dies (a native crash). Exit status 1 when anything was found: a
 * throw other than the target's CFSSL codes, a hang, an input slower than --slow-ms (default 2 s),
 * or a disagreement with Node's X509Certificate that is not explained in packages/x509-core/README.md.
 * See tools/fuzz/README.md.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { fork } from 'node:child_process';

const { values } = parseArgs({
  options: {
    inputs: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '1' },
    start: { type: 'string', default: '0' },
    replay: { type: 'string' },
    json: { type: 'string' },
    'slow-ms': { type: 'string', default: '2000' },
    'hang-ms': { type: 'string', default: '10000' },
    corpus: { type: 'string', default: join(tmpdir(), 'certsmith-fuzz-corpus.json') },
    fresh: { type: 'boolean', default: false },
  },
});
// Generated keys, CSRs and certificates are saved on the first run and reused, so runs and replays
// see the same seeds (Node cannot generate keys from a seed); --fresh makes new ones.
if (values.fresh) rmSync(values.corpus, { force: true });
process.env.CERTSMITH_FUZZ_CORPUS = values.corpus;
const seed = Number(values.seed);
const startIndex = Number(values.start);

if (values.replay !== undefined) {
  const { replayInput } = await import('./src/campaign.mjs');
  const result = replayInput(seed, Number(values.replay));
  const shown = typeof result.input === 'string' ? JSON.stringify(result.input) : Buffer.from(result.input).toString('hex');
  console.log(`target ${result.target}, made from ${result.seedName}, ${result.input.length} ${typeof result.input === 'string' ? 'characters' : 'octets'}`);
  console.log(shown.length > 4000 ? `${shown.slice(0, 4000)}…` : shown);
  console.log(result.outcome);
  if (result.agreement) console.log(JSON.stringify(result.agreement, null, 2));
  process.exit(0);
}

const inputs = Number(values.inputs);
const hangMs = Number(values['hang-ms']);
console.log(`fuzzing x509-core: ${inputs} inputs, seed ${seed}, from index ${startIndex}; generated seeds in ${values.corpus}; node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}`);
const started = Date.now();
const child = fork(new URL('./src/child.mjs', import.meta.url), [], {
  env: { ...process.env, CERTSMITH_FUZZ_CAMPAIGN: JSON.stringify({ seed, inputs, startIndex, slowMs: Number(values['slow-ms']) }) },
  stdio: ['inherit', 'inherit', 'inherit', 'pipe', 'ipc'],
});
let running = -1;
let pending = Buffer.alloc(0);
child.stdio[3]?.on('data', (/** @type {Buffer} */ chunk) => {
  pending = Buffer.concat([pending, chunk]);
  const whole = pending.length - (pending.length % 4);
  if (whole >= 4) running = pending.readInt32LE(whole - 4);
  pending = pending.subarray(whole);
});
let reported = false;

let lastIndex = -1;
let lastChange = Date.now();
const watchdog = setInterval(() => {
  if (running !== lastIndex) {
    lastIndex = running;
    lastChange = Date.now();
  } else if (running >= 0 && Date.now() - lastChange > hangMs) {
    console.log(`HANG: input #${running} has run for more than ${hangMs} ms; reproduce with --seed ${seed} --replay ${running}`);
    clearInterval(watchdog);
    reported = true;
    child.kill('SIGKILL');
    process.exitCode = 1;
  }
}, 500);

child.on('exit', (code, signal) => {
  clearInterval(watchdog);
  if (!reported) {
    console.log(`CRASH: the campaign process died (${signal ?? `exit ${code}`}) at input #${running}; reproduce with --seed ${seed} --replay ${running}`);
    process.exitCode = 1;
  }
});

child.on('message', (/** @type {any} */ message) => {
  if (message.type === 'progress') {
    const seconds = (Date.now() - started) / 1000;
    console.log(`  ${message.done} inputs, ${seconds.toFixed(0)} s (${Math.round(message.done / seconds)} inputs/s)`);
    return;
  }
  reported = true;
  const report = message.report;
  if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\n${report.inputs} inputs in ${(report.milliseconds / 1000).toFixed(1)} s (${Math.round(report.inputs / (report.milliseconds / 1000))} inputs/s)`);
  for (const [name, tally] of Object.entries(report.targets)) {
    const refused = Object.entries(tally.refused).map(([code, count]) => `${code}×${count}`).join(' ');
    console.log(`  ${name.padEnd(24)} ${String(tally.runs).padStart(8)} runs  ${String(tally.accepted).padStart(8)} accepted  refused ${refused || '-'}`);
  }
  console.log(`  Node X509Certificate: ${report.node.compared} compared, ${report.node.nodeAccepted} accepted by Node; explained differences ${JSON.stringify(report.node.explained)}`);
  console.log(`  memory: RSS ${report.memory.rssStartMb} MB at start, at most ${report.memory.rssMaxMb} MB; heap at most ${report.memory.heapMaxMb} MB; largest input ${report.largestInput} octets`);
  console.log(`  slowest input: #${report.slowest.index} (${report.slowest.target}) ${report.slowest.milliseconds} ms`);
  console.log(`  findings: ${report.findings.length}`);
  for (const finding of report.findings) {
    console.log(`    ${finding.kind} in ${finding.target} ×${finding.count} (first #${finding.firstIndex}, from ${finding.seedName}): ${finding.signature}`);
  }
  process.exitCode = report.findings.length > 0 ? 1 : 0;
});
