/**
 * Machine description, result tables (Markdown, so they paste into docs/performance.md as is),
 * the issue-7 target check and the JSON results file.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname } from 'node:path';

/** Read the facts a reader needs to compare runs: CPU, RAM, runtimes, versions — at run time. */
export function describeMachine(repoRoot) {
  const run = (command, args) => {
    const result = spawnSync(command, args, { encoding: 'utf8', cwd: repoRoot, timeout: 10_000 });
    return result.status === 0 ? result.stdout.trim() : '';
  };
  const cfssl = run('cfssl', ['version']);
  const cfsslVersion = /Version:\s*(\S+)/.exec(cfssl)?.[1] ?? 'unknown';
  const goVersion = /Runtime:\s*(\S+)/.exec(cfssl)?.[1] ?? '';
  const commit = run('git', ['rev-parse', '--short', 'HEAD']);
  const dirty = run('git', ['status', '--porcelain', '--untracked-files=no']) !== '';
  const cpuList = cpus();
  return {
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    cpuCount: cpuList.length,
    memoryGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
    kernel: `Linux ${release()}`,
    node: process.version,
    cfssl: `cfssl ${cfsslVersion}${goVersion ? ` (${goVersion})` : ''}`,
    certsmithCommit: commit ? `${commit}${dirty ? ' + uncommitted changes' : ''}` : 'unknown',
    // Other work on the machine skews every number; the 1-minute load average says how much there was.
    loadAverage: loadavg()[0],
  };
}

/** One-line machine summary. */
export function formatMachine(machine) {
  return `${machine.cpuCount} × ${machine.cpuModel}, ${machine.memoryGiB} GiB RAM, ${machine.kernel}, Node ${machine.node}, ${
    machine.cfssl
  }, certsmith ${machine.certsmithCommit}; load average ${machine.loadAverage.toFixed(2)} at start`;
}

const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const mb = (bytes) => fixed(bytes / 1024 ** 2, 0);
/** Latency with a precision that suits its size. */
const ms = (value) => (Number.isFinite(value) ? (value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0)) : '–');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '–');
const percent = (a, b) =>
  Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%` : '–';

/** A Markdown table; the first `left` columns are left-aligned, the rest (numbers) right-aligned. */
function table(header, rows, left) {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < left ? '---' : '---:')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/** Errors as "0", or "12 (503×12)" with the status breakdown. */
function formatErrors(summary) {
  if (!summary.errors) return '0';
  const parts = Object.entries(summary.statuses)
    .filter(([code]) => code !== '200')
    .map(([code, n]) => `${code === '0' ? 'no answer' : code}×${n}`);
  return `${summary.errors} (${parts.join(', ')})`;
}

/**
 * The main table: one row per operation, concurrency and server.
 * @param {Array<object>} cells  from run.mjs: { title, concurrency, results: { certsmith, cfssl } }
 */
export function formatLoadTable(cells) {
  const rows = [];
  for (const cell of cells) {
    for (const side of ['certsmith', 'cfssl']) {
      const r = cell.results[side];
      if (!r) continue;
      if (!r.available) {
        rows.push([cell.title, String(cell.concurrency), side, r.reason, '', '', '', '', '', '', '', '', '']);
        continue;
      }
      rows.push([
        cell.title,
        String(cell.concurrency),
        side,
        fixed(r.rps, r.rps < 100 ? 1 : 0),
        ms(r.p50Ms),
        ms(r.p95Ms),
        ms(r.p99Ms),
        formatErrors(r),
        mb(r.peakRssBytes),
        ms(r.cpuMsPerRequest),
        fixed(r.serverCores, 2),
        fixed(r.machineIdleCores, 2),
        fixed(r.stealPercent, 0),
      ]);
    }
  }
  // Cores busy: the server's CPU (all threads) per second of the round; idle: the machine's idle
  // cores meanwhile (load generator and neighbours included). Steal: the highest share of the
  // machine's CPU time the hypervisor took away during a round.
  return table(
    ['operation', 'c', 'server', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'errors', 'peak RSS MB', 'CPU ms/req', 'cores busy', 'idle cores', 'max steal %'],
    rows,
    3
  );
}

/** certsmith ÷ CFSSL per operation and concurrency (req/s: higher is better; latency, RSS, CPU: lower). */
export function formatRatioTable(cells) {
  const rows = cells.map((cell) => {
    const a = cell.results.certsmith;
    const b = cell.results.cfssl;
    if (!a?.available || !b?.available) {
      return [
        cell.title,
        String(cell.concurrency),
        a?.available === false ? `certsmith: ${a.reason}` : 'cfssl: not available',
        '',
        '',
        '',
        '',
        '',
      ];
    }
    return [
      cell.title,
      String(cell.concurrency),
      ratio(a.rps, b.rps),
      ratio(a.p50Ms, b.p50Ms),
      ratio(a.p99Ms, b.p99Ms),
      ratio(a.peakRssBytes, b.peakRssBytes),
      ratio(a.cpuMsPerRequest, b.cpuMsPerRequest),
      ratio(a.serverCores, b.serverCores),
    ];
  });
  return table(['operation', 'c', 'req/s', 'p50', 'p99', 'peak RSS', 'CPU/req', 'cores busy'], rows, 2);
}

/** Start-up: median (min–max) time to the first answer, and RSS once ready. */
export function formatStartupTable(startup) {
  const rows = Object.entries(startup).map(([side, s]) => [
    side,
    s.probe,
    `${fixed(s.medianMs, 0)} (${fixed(s.minMs, 0)}–${fixed(s.maxMs, 0)})`,
    fixed(s.medianFirstBundleMs, 0),
    mb(s.medianRssBytes),
    String(s.runs.length),
  ]);
  return table(
    ['server', 'ready when', 'ms to ready: median (min–max)', 'ms to first bundle answer', 'RSS at ready MB', 'starts'],
    rows,
    2
  );
}

/** Pool size: the same leaf bundled with a 1.3k and a 13k intermediate pool, per server. */
export function formatPoolTable(pool) {
  const rows = [];
  for (const [side, entry] of Object.entries(pool.servers)) {
    if (!entry.available) {
      rows.push([side, '', entry.reason, '', '', '', '', '']);
      continue;
    }
    for (const c of Object.keys(entry.byConcurrency)) {
      const { small, large } = entry.byConcurrency[c];
      rows.push([
        side,
        c,
        `${fixed(small.rps, 0)} → ${fixed(large.rps, 0)} (${percent(large.rps, small.rps)})`,
        `${ms(small.p50Ms)} → ${ms(large.p50Ms)} (${percent(large.p50Ms, small.p50Ms)})`,
        `${ms(small.cpuMsPerRequest)} → ${ms(large.cpuMsPerRequest)} (${percent(large.cpuMsPerRequest, small.cpuMsPerRequest)})`,
        `${formatErrors(small)} / ${formatErrors(large)}`,
        `${mb(small.peakRssBytes)} → ${mb(large.peakRssBytes)}`,
        `${fixed(entry.readyMs.small, 0)} → ${fixed(entry.readyMs.large, 0)}`,
      ]);
    }
  }
  return table(
    ['server', 'c', `req/s (${pool.smallCount} → ${pool.largeCount} ints)`, 'p50 ms', 'CPU ms/req', 'errors', 'peak RSS MB', 'ready ms'],
    rows,
    2
  );
}

/** The key-pool measurement as a table: per server, latency of paced c=1 RSA-2048 newcerts. */
export function formatKeyPoolTable(keyPool) {
  const rows = [];
  for (const key of ['certsmith', 'cfssl']) {
    const side = keyPool[key];
    if (!side?.available) {
      rows.push([key, '', side?.reason ?? 'not measured', '', '', '', '']);
      continue;
    }
    rows.push([
      key === 'certsmith' ? `certsmith (--key-pool ${keyPool.flag})` : key,
      String(side.ok),
      ms(side.p50Ms),
      ms(side.p95Ms),
      ms(side.p99Ms),
      formatErrors(side),
      mb(side.peakRssBytes),
    ]);
  }
  const fill = keyPool.poolFillMs?.length ? `; certsmith idle (pool full) after ${keyPool.poolFillMs.join(', ')} ms${keyPool.poolFillTimedOut ? ' (timed out)' : ''}` : '';
  return `${table(['server', 'requests', 'p50 ms', 'p95 ms', 'p99 ms', 'errors', 'peak RSS MB'], rows, 1)}\n\nWaited before each certsmith round until the server was idle${fill}.`;
}

/** The health-under-load measurement as a table. */
export function formatHealthTable(health) {
  return table(
    ['server', 'probe', 'newcert req/s (c=64)', 'newcert errors', 'probe p50 ms', 'probe p99 ms', 'probe max ms', 'probes (errors)'],
    Object.entries(health).map(([key, h]) => [
      key,
      `GET ${h.path}`,
      fixed(h.newcertRps, 0),
      String(h.newcertErrors),
      ms(h.probeP50Ms),
      ms(h.probeP99Ms),
      ms(h.probeMaxMs),
      `${h.probes} (${h.probeErrors})`,
    ]),
    2
  );
}

/**
 * Check the issue-7 targets against what was measured. Each: { target, measured, verdict } with
 * verdict PASS, FAIL or "n/a" (not measured, or the certsmith op is not available yet).
 */
export function checkTargets({ cells, startup, pool, healthUnderLoad, keyPool }) {
  // The Node-client cells; the wrk cells of the same operation (`client: 'wrk'`) only judge cores busy.
  const find = (name, c) => cells.find((cell) => cell.name === name && cell.concurrency === c && cell.client === undefined);
  const findWrk = (name, c) => cells.find((cell) => cell.name === name && cell.concurrency === c && cell.client === 'wrk');
  const both = (cell) => cell && cell.results.certsmith?.available && cell.results.cfssl?.available;
  const targets = [];
  const add = (target, measured, pass) => targets.push({ target, measured, verdict: pass === undefined ? 'n/a' : pass ? 'PASS' : 'FAIL' });
  /** req/s at c=16 at least `factor` × CFSSL's (issue 7: 1.5×; issue 18 raised bundle to 2×). */
  const throughput = (name, label, factor = 1.5) => {
    const cell = find(name, 16);
    const target = `${label} c=16 req/s ≥ ${factor}× CFSSL`;
    if (!both(cell)) return add(target, notMeasured(cell), undefined);
    const { certsmith, cfssl } = cell.results;
    const clean = certsmith.errors === 0;
    add(target, `${ratio(certsmith.rps, cfssl.rps)}${clean ? '' : `, ${certsmith.errors} errors`}`, clean && certsmith.rps >= factor * cfssl.rps);
  };
  /**
   * Issue 18: certsmith keeps at least as much of the machine busy as CFSSL in the same c=16 cell
   * (CFSSL saturates a 2-core machine); a check that does not depend on the CPU model.
   */
  const coresBusy = (name, label) => {
    const cell = find(name, 16);
    const wrkCell = findWrk(name, 16);
    const target = `${label} c=16 cores busy ≥ CFSSL's`;
    const cores = (c) =>
      `${fixed(c.results.certsmith.serverCores, 2)} vs ${fixed(c.results.cfssl.serverCores, 2)} cores (idle ${fixed(c.results.certsmith.machineIdleCores, 2)} vs ${fixed(c.results.cfssl.machineIdleCores, 2)}, load generator ${fixed(c.results.certsmith.clientCores, 2)} vs ${fixed(c.results.cfssl.clientCores, 2)})`;
    // Judged with wrk as the load generator when it ran (see CORES_BUSY_OPS in run.mjs); the
    // Node client's figure is shown beside it.
    if (both(wrkCell)) {
      const { certsmith, cfssl } = wrkCell.results;
      return add(target, `wrk: ${cores(wrkCell)}; Node client: ${both(cell) ? cores(cell) : 'not measured'}`, certsmith.serverCores >= cfssl.serverCores);
    }
    if (!both(cell)) return add(target, notMeasured(cell), undefined);
    const { certsmith, cfssl } = cell.results;
    add(target, cores(cell), certsmith.serverCores >= cfssl.serverCores);
  };
  throughput('newcert-ecdsa', 'newcert ECDSA');
  const ecdsa = find('newcert-ecdsa', 16);
  if (both(ecdsa)) {
    const { certsmith, cfssl } = ecdsa.results;
    add('newcert ECDSA c=16 p99 ≤ CFSSL p99', `${ms(certsmith.p99Ms)} vs ${ms(cfssl.p99Ms)} ms`, certsmith.p99Ms <= cfssl.p99Ms);
  } else {
    add('newcert ECDSA c=16 p99 ≤ CFSSL p99', notMeasured(ecdsa), undefined);
  }
  const tail = (name, label) => {
    const cell = find(name, 16);
    if (!both(cell)) return add(`${label} c=16 p99 ≤ CFSSL p99`, notMeasured(cell), undefined);
    const { certsmith, cfssl } = cell.results;
    add(`${label} c=16 p99 ≤ CFSSL p99`, `${ms(certsmith.p99Ms)} vs ${ms(cfssl.p99Ms)} ms`, certsmith.p99Ms <= cfssl.p99Ms);
  };
  coresBusy('newcert-ecdsa', 'newcert ECDSA');
  throughput('bundle-generated', 'bundle (generated leaf)', 2);
  tail('bundle-generated', 'bundle (generated leaf)');
  coresBusy('bundle-generated', 'bundle (generated leaf)');
  throughput('bundle-real', 'bundle (real intermediates)', 2);
  tail('bundle-real', 'bundle (real intermediates)');
  throughput('newcert-rsa', 'newcert RSA-2048 (sustained)');
  // Issue 21: the OCSP responder, `certsmith ocspserve` vs `cfssl ocspserve` on the same responses,
  // judged with wrk on a core of its own (ocsp.mjs, measureOcsp: in the shared layout wrk needs as
  // much CPU per request as the server and caps any two-thread server below 3×).
  throughput('ocsp-pinned', 'OCSP responder (wrk on its own CPU)', 3);
  tail('ocsp-pinned', 'OCSP responder (wrk on its own CPU)');
  const pooledLabel = 'newcert RSA-2048 c=1 p50 with --key-pool ≤ 0.2× CFSSL p50';
  if (keyPool?.certsmith?.available && keyPool.cfssl?.available) {
    const { certsmith, cfssl } = keyPool;
    add(
      pooledLabel,
      `${ms(certsmith.p50Ms)} vs ${ms(cfssl.p50Ms)} ms (${ratio(certsmith.p50Ms, cfssl.p50Ms)})${certsmith.errors === 0 ? '' : `, ${certsmith.errors} errors`}`,
      certsmith.errors === 0 && certsmith.p50Ms <= 0.2 * cfssl.p50Ms
    );
  } else {
    add(pooledLabel, keyPool?.certsmith?.reason ?? 'not measured', undefined);
  }

  const rss = cells
    .map((cell) => cell.results.certsmith)
    .filter((r) => r?.available)
    .map((r) => r.peakRssBytes);
  if (rss.length > 0) {
    const peak = Math.max(...rss);
    add('certsmith RSS ≤ 200 MB', `${mb(peak)} MB peak over ${rss.length} measured cells`, peak <= 200 * 1024 ** 2);
  } else {
    add('certsmith RSS ≤ 200 MB', 'no certsmith op measured', undefined);
  }
  const ready = startup?.certsmith;
  if (ready) add('certsmith ready < 1.5 s (full trust data)', `${fixed(ready.medianMs, 0)} ms median`, ready.medianMs < 1500);
  else add('certsmith ready < 1.5 s (full trust data)', 'not measured', undefined);

  const health = healthUnderLoad?.certsmith;
  if (health) {
    add(
      'health p99 < 50 ms during newcert c=64',
      `${ms(health.probeP99Ms)} ms p99 (${health.probes} probes, ${health.probeErrors} errors)`,
      health.probeP99Ms < 50 && health.probeErrors === 0
    );
  } else {
    add('health p99 < 50 ms during newcert c=64', 'not measured', undefined);
  }

  const poolEntry = pool?.servers.certsmith;
  if (poolEntry?.available) {
    const c = Math.max(...Object.keys(poolEntry.byConcurrency).map(Number));
    const { small, large } = poolEntry.byConcurrency[c];
    // Cost = server CPU per request: unlike req/s it does not move when a neighbour takes a core.
    const delta = (large.cpuMsPerRequest - small.cpuMsPerRequest) / small.cpuMsPerRequest;
    add(
      `pool size ${pool.smallCount} → ${pool.largeCount}: bundle cost (CPU/req) within ±10%`,
      `${percent(large.cpuMsPerRequest, small.cpuMsPerRequest)} CPU/req, ${percent(large.rps, small.rps)} req/s at c=${c}`,
      Math.abs(delta) <= 0.1 && large.errors === 0 && small.errors === 0
    );
  } else {
    add('pool size 1.3k → 13k: bundle cost (CPU/req) within ±10%', poolEntry ? poolEntry.reason : 'not measured', undefined);
  }
  return targets;
}

function notMeasured(cell) {
  if (!cell) return 'not measured';
  if (cell.results.certsmith?.available === false) return `certsmith: ${cell.results.certsmith.reason}`;
  return 'cfssl: not available';
}

/** The target list as a table. */
export function formatTargets(targets) {
  return table(
    ['target (issue 7)', 'measured', 'verdict'],
    targets.map((t) => [t.target, t.measured, t.verdict]),
    3
  );
}

/** Write the JSON results (creating the directory). */
export function writeResults(file, results) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    `${JSON.stringify(results, (_, value) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2)}\n`
  );
}
