/**
 * Tables and targets of the certificate-store cells (`store-cells.mjs`, issue 20), in the same
 * Markdown form as `report.mjs`'s, and target rows of the same shape so run.mjs lists them with
 * the others.
 */

const DRIVER_TITLE = { sqlite3: 'SQLite', postgres: 'PostgreSQL' };
const SERVER_TITLE = { store: 'certsmith, store on', cfssl: 'cfssl serve -db-config', nostore: 'certsmith --no-store' };
/** Issue 20's targets. */
export const STORE_TARGETS = { versusCfssl: 1.5, versusNoStore: 0.9, listP99Ms: 50 };

const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const ms = (value) => (Number.isFinite(value) ? (value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0)) : '–');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN);

function table(header, rows, left) {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < left ? '---' : '---:')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

function errors(summary) {
  if (!summary.errors) return '0';
  const parts = Object.entries(summary.statuses)
    .filter(([code]) => code !== '200')
    .map(([code, n]) => `${code === '0' ? 'no answer' : code}×${n}`);
  return `${summary.errors} (${parts.join(', ')})`;
}

/** newcert with and without the store, and CFSSL with its certdb, per driver. */
export function formatStoreNewcertTable(store) {
  const rows = [];
  for (const cell of store.newcert) {
    for (const [key, title] of Object.entries(SERVER_TITLE)) {
      const r = cell.results[key];
      rows.push([
        DRIVER_TITLE[cell.driver],
        cell.client ?? 'node',
        title,
        fixed(r.rps, 0),
        ms(r.p50Ms),
        ms(r.p95Ms),
        ms(r.p99Ms),
        errors(r),
        ms(r.cpuMsPerRequest),
        fixed(r.peakRssBytes / 1024 ** 2, 0),
        r.rowsRecorded === undefined ? '–' : `${r.rowsRecorded} / ${r.certificatesReturned}`,
      ]);
    }
  }
  return table(['driver', 'load generator', 'server', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'errors', 'CPU ms/req', 'peak RSS MB', 'rows / certificates returned'], rows, 3);
}

/** Inventory pages per driver, scenario and concurrency. */
export function formatStoreListTable(store) {
  const rows = store.list.map((cell) => [
    DRIVER_TITLE[cell.driver],
    cell.scenario,
    String(cell.concurrency),
    fixed(cell.rps, 0),
    ms(cell.p50Ms),
    ms(cell.p99Ms),
    ms(cell.maxP99Ms),
    errors(cell),
    ms(cell.cpuMsPerRequest),
    fixed(cell.rowsPerPage, 0),
  ]);
  return table(['driver', 'scenario', 'c', 'pages/s', 'p50 ms', 'p99 ms', 'worst round p99 ms', 'errors', 'CPU ms/page', 'rows/page'], rows, 3);
}

/** Issue 20's speed targets as `{ target, measured, verdict }` rows. */
export function checkStoreTargets(store) {
  const targets = [];
  const add = (target, measured, pass) => targets.push({ target, measured, verdict: pass === undefined ? 'n/a' : pass ? 'PASS' : 'FAIL' });
  for (const cell of store?.newcert ?? []) {
    const { store: on, cfssl, nostore } = cell.results;
    // The Node load generator's cell as before; wrk's is named.
    const driver = `${DRIVER_TITLE[cell.driver]}${cell.client === 'wrk' ? ', wrk' : ''}`;
    // A store that returned certificates it did not record fails every target of its cell.
    const recorded = on.rowsRecorded >= on.certificatesReturned && on.certificatesReturned > 0;
    const clean = on.errors === 0 && recorded;
    const note = `${clean ? '' : `, ${on.errors} errors, ${on.rowsRecorded} rows for ${on.certificatesReturned} certificates`}`;
    const versusCfssl = ratio(on.rps, cfssl.rps);
    add(`newcert ECDSA c=16, store on (${driver}) ≥ ${STORE_TARGETS.versusCfssl}× cfssl -db-config (${driver})`, `${fixed(versusCfssl, 2)}× (${fixed(on.rps, 0)} / ${fixed(cfssl.rps, 0)})${note}`, clean && versusCfssl >= STORE_TARGETS.versusCfssl);
    const versusOff = ratio(on.rps, nostore.rps);
    add(`newcert ECDSA c=16, store on (${driver}) ≥ ${STORE_TARGETS.versusNoStore}× --no-store`, `${fixed(versusOff, 2)}× (${fixed(on.rps, 0)} / ${fixed(nostore.rps, 0)})${note}`, clean && versusOff >= STORE_TARGETS.versusNoStore);
  }
  // The latency of a page, asked by one client; at 16 clients pages also wait for each other's CPU
  // (the table shows it), which is throughput, not the target.
  for (const driver of Object.keys(DRIVER_TITLE)) {
    const cells = (store?.list ?? []).filter((cell) => cell.driver === driver && cell.concurrency === 1);
    if (cells.length === 0) continue;
    const worst = cells.reduce((a, b) => (b.maxP99Ms > a.maxP99Ms ? b : a));
    const clean = cells.every((cell) => cell.errors === 0);
    add(
      `inventory page (${store.listRows} rows, ${DRIVER_TITLE[driver]}) p99 < ${STORE_TARGETS.listP99Ms} ms, every scenario`,
      `worst ${ms(worst.maxP99Ms)} ms (${worst.scenario})${clean ? '' : ', with errors'}`,
      clean && worst.maxP99Ms < STORE_TARGETS.listP99Ms,
    );
  }
  return targets;
}
