/**
 * Overload: the built server with one worker and a queue of 4 (capacity 5 tasks) gets three bursts of
 * 200 concurrent RSA-2048 `newcert` requests (40× its capacity). Every answer must be either a 200
 * whose certificate is intact — it parses, is issued and signed by the CA, names the CN of *its own*
 * request, and its `private_key` matches it (a sample also through `openssl verify`) — or a 503 with
 * `Retry-After` and the JSON envelope. Nothing else: no 500, no hang, no reset. When a burst is over
 * the next requests succeed at once, and the server's RSS stays bounded with no growth across bursts.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { residentSetBytes } from './helpers/process-rss.js';
import { killAllCertsmith, parseLogLine } from './helpers/certsmith-process.js';
import { createScratch, makeRootCa, post, startServer, verifyCertificate } from './fixtures-issue.js';
import type { Envelope, OpensslCa, Scratch, Server } from './fixtures-issue.js';

const BURST = 200;
const BURSTS = 3;
const RSS_LIMIT_BYTES = 400 * 1024 * 1024;
/** Allowed RSS growth from the first burst to the last: allocator noise, not a leak. */
const RSS_GROWTH_LIMIT_BYTES = 64 * 1024 * 1024;

let scratch: Scratch;
let ca: OpensslCa;
let caCertificate: X509Certificate;
let server: Server;

beforeAll(async () => {
  scratch = await createScratch('hardening-load');
  ca = await makeRootCa(scratch, 'load-ca', 'Load CA');
  caCertificate = new X509Certificate(ca.certificatePem);
  server = await startServer(['-ca', ca.certFile, '-ca-key', ca.keyFile, '--workers', '1', '--max-queue', '4', '--data-dir', scratch.path('data')]);
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

function newcertBody(commonName: string): object {
  return { request: { CN: commonName, hosts: [commonName], key: { algo: 'rsa', size: 2048 } } };
}

interface Outcome {
  index: number;
  status: number;
  retryAfter: string | null;
  envelope: Envelope | null;
  text: string;
  error?: string;
}

async function newcert(index: number, commonName: string): Promise<Outcome> {
  try {
    const response = await fetch(`${server.url}/api/v1/cfssl/newcert`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(newcertBody(commonName)),
      signal: AbortSignal.timeout(90_000),
    });
    const text = await response.text();
    let envelope: Envelope | null = null;
    try {
      envelope = JSON.parse(text) as Envelope;
    } catch {
      // reported below as a corrupted answer
    }
    return { index, status: response.status, retryAfter: response.headers.get('retry-after'), envelope, text };
  } catch (error) {
    return { index, status: 0, retryAfter: null, envelope: null, text: '', error: (error as Error).message };
  }
}

/**
 * Why a 200 answer is not an intact certificate for `commonName`, or `null` when it is: parsed,
 * issued and signed by the CA, its own CN, and the returned key is the certificate's key.
 */
function certificateProblem(envelope: Envelope | null, commonName: string): string | null {
  if (envelope?.success !== true) return 'success is not true';
  const result = envelope.result as { certificate?: unknown; private_key?: unknown };
  if (typeof result.certificate !== 'string' || typeof result.private_key !== 'string') return 'certificate or private_key missing';
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(result.certificate);
  } catch {
    return 'certificate does not parse';
  }
  if (!certificate.checkIssued(caCertificate) || !certificate.verify(caCertificate.publicKey)) return 'not signed by the CA';
  if (!certificate.subject.split('\n').includes(`CN=${commonName}`)) return `CN is not ${commonName}: ${certificate.subject}`;
  try {
    if (!certificate.checkPrivateKey(createPrivateKey(result.private_key))) return 'private_key does not match certificate';
  } catch {
    return 'private_key does not parse';
  }
  return null;
}

describe('overload', () => {
  it(`answers ${BURSTS} bursts of ${BURST} concurrent newcert with intact 200s or 503 + Retry-After, recovers at once, RSS bounded`, { timeout: 240_000 }, async () => {
    const pid = server.child.pid!;
    // Warm up (first key generation, lazy imports) so the RSS baseline is not the cold process.
    for (let i = 0; i < 2; i += 1) expect((await post(server.url, 'newcert', newcertBody(`warm-${i}.example`))).status).toBe(200);
    const rssAfterBurst: number[] = [];
    const tallies: string[] = [];

    for (let burst = 0; burst < BURSTS; burst += 1) {
      const names = Array.from({ length: BURST }, (_, i) => `b${burst}-r${i}.load.example`);
      const outcomes = await Promise.all(names.map((name, i) => newcert(i, name)));

      const ok = outcomes.filter((outcome) => outcome.status === 200);
      const busy = outcomes.filter((outcome) => outcome.status === 503);
      const other = outcomes.filter((outcome) => outcome.status !== 200 && outcome.status !== 503);
      expect(other.map((o) => ({ status: o.status, error: o.error, text: o.text.slice(0, 200) }))).toEqual([]);
      // Capacity is 5 tasks: at least those are admitted and answered; the rest overflow.
      expect(ok.length).toBeGreaterThanOrEqual(5);
      expect(busy.length).toBeGreaterThan(0);
      tallies.push(`${ok.length}×200 + ${busy.length}×503`);

      const broken = ok.map((o) => ({ index: o.index, problem: certificateProblem(o.envelope, names[o.index]!) })).filter((o) => o.problem !== null);
      expect(broken).toEqual([]);
      for (const outcome of busy) {
        expect(outcome.retryAfter).toMatch(/^\d+$/);
        expect(outcome.envelope).toMatchObject({ success: false, result: null, errors: [{ code: 503, message: expect.any(String) }], messages: [] });
      }
      // An independent check of a sample of the issued certificates.
      for (const outcome of ok.slice(0, 3)) {
        expect(await verifyCertificate(scratch, (outcome.envelope!.result as { certificate: string }).certificate, ca.certFile)).toMatch(/: OK\n$/);
      }

      // Load has fallen: the next requests succeed without retrying.
      for (let i = 0; i < 3; i += 1) {
        const name = `after-${burst}-${i}.load.example`;
        const answer = await newcert(i, name);
        expect(answer.status).toBe(200);
        expect(certificateProblem(answer.envelope, name)).toBeNull();
      }
      rssAfterBurst.push(residentSetBytes(pid));
    }

    for (const rss of rssAfterBurst) expect(rss).toBeLessThan(RSS_LIMIT_BYTES);
    expect(rssAfterBurst.at(-1)! - rssAfterBurst[0]!).toBeLessThan(RSS_GROWTH_LIMIT_BYTES);
    // Nothing was an unexpected (500) error, and the server is still healthy.
    expect(server.lines.map(parseLogLine).filter((line) => line !== null && Number(line['level']) >= 50)).toEqual([]);
    expect((await fetch(`${server.url}/api/v1/cfssl/health`)).status).toBe(200);
    console.info(`bursts: ${tallies.join(', ')}; RSS after each burst (MiB): ${rssAfterBurst.map((rss) => (rss / 1048576).toFixed(1)).join(', ')}`);
  });
});
