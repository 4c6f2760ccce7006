/**
 * The benchmarked operations (issue 7): what is sent, to which path, and how the real-intermediate
 * workload is chosen. Both servers get byte-identical request bodies.
 */
import { parseCertificate } from '@certsmith/x509-core';
import { mapLimit, post } from './load.mjs';

export const NEWCERT_PATH = '/api/v1/cfssl/newcert';
export const BUNDLE_PATH = '/api/v1/cfssl/bundle';

/**
 * @typedef {object} Operation
 * @property {string} name     `--ops` name
 * @property {string} title    table label
 * @property {string} path
 * @property {number} durationFactor  rounds of slow ops run longer so each holds enough requests
 */

/** @type {Operation[]} */
export const LOAD_OPERATIONS = [
  { name: 'newcert-ecdsa', title: 'newcert ECDSA P-256', path: NEWCERT_PATH, durationFactor: 1 },
  // RSA key generation dominates (tens of ms, random): longer rounds for a "sustained" rate.
  { name: 'newcert-rsa', title: 'newcert RSA-2048', path: NEWCERT_PATH, durationFactor: 2 },
  { name: 'bundle-generated', title: 'bundle leaf+int (generated)', path: BUNDLE_PATH, durationFactor: 1 },
  { name: 'bundle-real', title: 'bundle real intermediates', path: BUNDLE_PATH, durationFactor: 1 },
];

/** Every `--ops` name: the load operations plus the special measurements. */
export const ALL_OPS = ['startup', ...LOAD_OPERATIONS.map((op) => op.name), 'health-under-load', 'key-pool', 'pool-size', 'ocsp'];

/**
 * The key pool (issue 7: "an optional pool of pre-generated keys … so that at c=1 p50 latency ≤ 0.2×
 * CFSSL's"): RSA-2048 newcert at c=1 on a certsmith started with `--key-pool rsa-2048=<size>`, one
 * request every `intervalMs` on both servers. The pool is filled in idle time, so the measurement
 * leaves idle time: one request every 500 ms is below what one worker refills (≈60–70 ms of CPU per
 * RSA-2048 key). A closed loop at c=1 drains any pool within a second and then measures fresh keys,
 * which the `newcert-rsa` cell does already (without a pool).
 */
export const KEY_POOL = { spec: 'rsa-2048', size: 16, intervalMs: 500 };

/**
 * Event-loop responsiveness under saturation (issue 7: `health` p99 < 50 ms while newcert runs at
 * c=64). CFSSL 1.2.0 has no `/health`; its cheapest GET, `/scaninfo`, is probed for reference.
 */
export const HEALTH_UNDER_LOAD = {
  concurrency: 64,
  probe: { certsmith: '/api/v1/cfssl/health', cfssl: '/api/v1/cfssl/scaninfo' },
  intervalMs: 20,
};

/** newcert body, `hosts` given so neither server adds the no-hosts message (behaviour doc 3.1 step 9). */
export function newcertBody(key) {
  const request = { CN: 'bench.example', hosts: ['bench.example'] };
  if (key) request.key = key;
  return JSON.stringify({ request });
}

/** bundle body in certificate mode (behaviour doc 2.1), default (ubiquitous) flavor. */
export function bundleBody(pem) {
  return JSON.stringify({ certificate: pem });
}

/** True for a self-issued certificate (subject = issuer): a root, not an intermediate. */
function isSelfIssued(pem) {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  try {
    const cert = parseCertificate(der);
    return Buffer.compare(cert.subject.der, cert.issuer.der) === 0;
  } catch {
    return false; // unparsable here: let cfssl decide
  }
}

/**
 * Keep the intermediates of cfssl_trust's int-bundle that CFSSL bundles successfully (200): some do
 * not (expired, roots missing from ca-bundle, too many intermediates), and a workload of failures
 * would measure error paths. Asked once, before any timed round.
 *
 * Self-issued certificates (a few roots sit in int-bundle.crt) are left out before asking: cfssl
 * 1.2.0 bundles some SHA-1 ones only because Go ≥ 1.18 no longer verifies their self-signature
 * (behaviour doc 2.5, quirk), while certsmith deliberately answers 1100 "self signed" — a known,
 * intended difference, not a performance one.
 *
 * @param {import('undici').Pool} cfsslClient
 * @param {string[]} pems
 * @returns {Promise<{ tried: number, accepted: string[], rejected: Record<string, number> }>}
 */
export async function prefilterRealIntermediates(cfsslClient, pems) {
  const rejected = {};
  const candidates = pems.filter((pem) => {
    if (!isSelfIssued(pem)) return true;
    rejected['self-issued (not asked)'] = (rejected['self-issued (not asked)'] ?? 0) + 1;
    return false;
  });
  const answers = await mapLimit(candidates, 4, (pem) => post(cfsslClient, BUNDLE_PATH, bundleBody(pem)));
  const accepted = [];
  answers.forEach(({ status, text }, i) => {
    if (status === 200) {
      accepted.push(candidates[i]);
      return;
    }
    // Group by CFSSL error code when there is one ("1220", …), else by HTTP status.
    let key = `HTTP ${status}`;
    try {
      const code = JSON.parse(text)?.errors?.[0]?.code;
      if (code !== undefined) key = `code ${code}`;
    } catch {
      // not JSON (connection closed, plain-text 404)
    }
    rejected[key] = (rejected[key] ?? 0) + 1;
  });
  return { tried: pems.length, accepted, rejected };
}
