/**
 * Secrets never reach the logs: one full run of the built server with a config that has auth keys
 * (inline hex, `env:` and `file:`), a CA key given through `env:`, and a PKCS#11 signer on a SoftHSMv2
 * token (test/helpers/softhsm.ts) whose PIN comes from the environment. The run issues keys (newcert, newkey),
 * bundles with `private_key`, signs with authsign tokens, and sends bad requests that carry secrets
 * (wrong types, truncated JSON, credentials in headers and query strings). Then every byte the
 * process wrote (stdout and stderr, at `trace` level) is searched for every secret: private-key PEM
 * bodies and 24-character slices of them, each key's DER in hex and its JWK `d`, auth keys (hex and
 * base64), tokens and PINs. Last, the data dir (and files written to the temp dir during the run)
 * must not hold any private key the server generated: `newcert`/`newkey` keys exist only in the
 * response.
 */
import { createHash, createHmac, createPrivateKey, randomBytes } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { createScratch, makeIntermediateCa, makeRootCa } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';
import { createSoftHsmToken } from './helpers/softhsm.js';
import type { SoftHsmToken } from './helpers/softhsm.js';

/** A secret and the forms it could be written in. */
interface Secret {
  name: string;
  needles: string[];
}

let scratch: Scratch;
let root: OpensslCa;
let issuing: OpensslCa;
let server: CertsmithProcess & { url: string };
let dataDir = '';
let startedAt = 0;
const otherOutput: string[] = []; // output of the CLI helper runs (hsm genkey/initca)
let hsm: SoftHsmToken | undefined;

const keyHex = {
  main: randomBytes(32).toString('hex'),
  rotating: randomBytes(32).toString('hex'),
  previous: randomBytes(32).toString('hex'),
};

/** Every secret this run handles, with the forms to look for. */
const secrets: Secret[] = [];
/** Private keys the server generated (newcert/newkey/bundle results). */
const generatedKeys: string[] = [];

function pemBody(pem: string): string {
  return (/-----BEGIN [^-]+-----([\s\S]*?)-----END [^-]+-----/.exec(pem)?.[1] ?? '').replace(/\s+/g, '');
}

/** The forms of a private key PEM: the body, its lines, 24-char slices, DER hex, JWK `d`. */
function privateKeyNeedles(pem: string): string[] {
  const body = pemBody(pem);
  const needles = [body, ...pem.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----'))];
  for (let at = 0; at + 24 <= body.length; at += 12) needles.push(body.slice(at, at + 24));
  needles.push(Buffer.from(body, 'base64').toString('hex'));
  try {
    // CFSSL labels Ed25519 keys `Ed25519 PRIVATE KEY`; the body is PKCS#8 either way.
    const der = Buffer.from(body, 'base64');
    const key = /BEGIN (EC|RSA) PRIVATE KEY/.test(pem)
      ? createPrivateKey(pem)
      : createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    const jwk = key.export({ format: 'jwk' });
    if (typeof jwk.d === 'string') needles.push(jwk.d);
  } catch {
    // Not every PEM is a key node can read (that is fine: the PEM forms are checked).
  }
  return needles;
}

function addPrivateKey(name: string, pem: string): void {
  secrets.push({ name, needles: privateKeyNeedles(pem) });
}

function addAuthKey(name: string, hex: string): void {
  secrets.push({ name, needles: [hex, hex.toUpperCase(), Buffer.from(hex, 'hex').toString('base64')] });
}

/** Names of the secrets whose forms appear in `text`. */
function findLeaks(text: string, among: readonly Secret[]): string[] {
  return among.filter((secret) => secret.needles.some((needle) => needle.length >= 8 && text.includes(needle))).map((secret) => secret.name);
}

interface Answer {
  status: number;
  body: { success: boolean; result: any; errors: Array<{ code: number; message: string }> };
  text: string;
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${server.url}${path.startsWith('/') ? path : `/api/v1/cfssl/${path}`}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Answer['body'], text };
}

function authenticated(inner: object, hex: string): { timestamp: number; token: string; request: string } {
  const bytes = Buffer.from(JSON.stringify(inner));
  const token = createHmac('sha256', Buffer.from(hex, 'hex')).update(bytes).digest('base64');
  secrets.push({ name: `token ${token.slice(0, 6)}…`, needles: [token, Buffer.from(token, 'base64').toString('hex')] });
  return { timestamp: Math.floor(Date.now() / 1000), token, request: bytes.toString('base64') };
}

/** Every regular file under `dir` (bounded), for the data-dir scan. */
async function filesUnder(dir: string, options: { newerThan?: number; depth?: number; limit?: number } = {}): Promise<string[]> {
  const out: string[] = [];
  const walk = async (folder: string, depth: number): Promise<void> => {
    if (depth < 0 || out.length >= (options.limit ?? 5_000)) return;
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) await walk(path, depth - 1);
      else if (entry.isFile()) {
        try {
          const info = await stat(path);
          if (info.size <= 2 * 1024 * 1024 && (options.newerThan === undefined || info.mtimeMs >= options.newerThan)) out.push(path);
        } catch {
          // Vanished or unreadable: not ours.
        }
      }
    }
  };
  await walk(dir, options.depth ?? 8);
  return out;
}

beforeAll(async () => {
  scratch = await createScratch('secrets');
  dataDir = scratch.path('data');
  root = await makeRootCa(scratch, 'root', 'Secrets Root');
  issuing = await makeIntermediateCa(scratch, 'issuing', root);
  const caKeyPem = await readFile(issuing.keyFile, 'utf8');
  addPrivateKey('CA key (env:SECRETS_CA_KEY)', caKeyPem);
  addAuthKey('auth key main (inline hex)', keyHex.main);
  addAuthKey('auth key rotating (env:)', keyHex.rotating);
  addAuthKey('auth key previous (file:)', keyHex.previous);
  await scratch.write('previous.hex', `${keyHex.previous}\n`);

  // A PKCS#11 signer on a throw-away SoftHSM token, PIN by env (random PINs, so any hit is a leak).
  hsm = createSoftHsmToken({ label: 'secrets' });
  secrets.push({ name: 'HSM user PIN (env:HSM_PIN)', needles: [hsm.pin] }, { name: 'HSM SO PIN', needles: [hsm.soPin] });
  otherOutput.push((await hsm.createCa({ keyLabel: 'ca', algo: 'ecdsa', cn: 'Secrets HSM CA' })).output);

  const env: NodeJS.ProcessEnv = { ...hsm.env, SECRETS_CA_KEY: caKeyPem, SECRETS_ROTATING_KEY: keyHex.rotating };
  const signers: Record<string, unknown> = {
    default: { plugin: '@certsmith/signer-local', options: { certFile: issuing.certFile, keyFile: 'env:SECRETS_CA_KEY' } },
    hsm: ['@certsmith/signer-pkcs11', hsm.signerOptions('ca')],
  };

  const config = await scratch.write('certsmith.json', {
    signing: {
      default: { expiry: '8760h', usages: ['signing', 'key encipherment', 'server auth', 'client auth'] },
      profiles: {
        authed: { expiry: '24h', usages: ['signing', 'server auth'], auth_key: 'main' },
        rotating: { expiry: '24h', usages: ['signing', 'server auth'], auth_key: 'rotating', prev_auth_key: 'previous' },
      },
    },
    auth_keys: {
      main: { type: 'standard', key: keyHex.main },
      rotating: { type: 'standard', key: 'env:SECRETS_ROTATING_KEY' },
      previous: { type: 'standard', key: 'file:previous.hex' },
    },
    signers,
  });

  startedAt = Date.now();
  const child = spawnCertsmith(
    ['serve', '--port', '0', '--workers', '2', '--loglevel', 'trace', '--config', config, '--data-dir', dataDir, '--ca-bundle', root.certFile, '--int-bundle', issuing.certFile],
    env,
  );
  const line = await child.waitForLine((candidate) => /^certsmith listening on http:\/\/\S+$/.test(candidate), 60_000);
  server = Object.assign(child, { url: /^certsmith listening on (http:\/\/\S+)$/.exec(line)![1]! });
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
  hsm?.cleanup();
});

describe('a full run of certsmith serve', () => {
  it('never writes a private key, auth key, token or PIN to its output, and keeps generated keys out of the data dir', async () => {
    // --- keys generated by the server -----------------------------------------------------
    const issued: Answer[] = [];
    for (const key of [{ algo: 'ecdsa', size: 256 }, { algo: 'rsa', size: 2048 }, { algo: 'ed25519' }, { algo: 'ecdsa', size: 384 }]) {
      const answer = await post('newcert', { request: { CN: 'secret.example', hosts: ['secret.example'], key }, bundle: key.algo === 'ecdsa' });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.result.private_key).toMatch(/^-----BEGIN (EC |RSA |Ed25519 )?PRIVATE KEY-----/);
      issued.push(answer);
    }
    for (const key of [{ algo: 'ecdsa', size: 521 }, { algo: 'rsa', size: 2048 }]) {
      const answer = await post('newkey', { request: { CN: 'k.example', hosts: ['k.example'], key } });
      expect(answer.status, answer.text).toBe(200);
      issued.push(answer);
    }
    for (const [i, answer] of issued.entries()) {
      generatedKeys.push(answer.body.result.private_key as string);
      addPrivateKey(`generated key #${i}`, answer.body.result.private_key as string);
    }
    const [ecdsaLeaf, rsaLeaf] = issued as [Answer, Answer];

    // --- bundle with private_key ------------------------------------------------------------
    const bundled = await post('bundle', { certificate: ecdsaLeaf.body.result.certificate, private_key: ecdsaLeaf.body.result.private_key });
    expect(bundled.status, bundled.text).toBe(200);
    expect(bundled.body.result.key).toMatch(/PRIVATE KEY/);
    generatedKeys.push(bundled.body.result.key as string);
    addPrivateKey('bundle result key', bundled.body.result.key as string);
    // Wrong key, garbage certificate with a real key, truncated and mistyped keys.
    expect((await post('bundle', { certificate: ecdsaLeaf.body.result.certificate, private_key: rsaLeaf.body.result.private_key })).body.errors[0]?.code).toBe(2300);
    expect((await post('bundle', { certificate: 'not a certificate', private_key: rsaLeaf.body.result.private_key })).status).toBe(400);
    const rsaKey = rsaLeaf.body.result.private_key as string;
    expect((await post('bundle', { certificate: rsaLeaf.body.result.certificate, private_key: rsaKey.slice(0, rsaKey.length / 2) })).status).toBe(400);
    expect((await post('bundle', { certificate: rsaLeaf.body.result.certificate, private_key: [rsaKey] })).status).toBe(400);
    expect((await post('bundle', { certificate: rsaLeaf.body.result.certificate, private_key: { pem: rsaKey } })).status).toBe(400);
    expect((await post('bundle', `{"certificate":"x","private_key":${JSON.stringify(rsaKey)}`)).status).toBe(400);
    expect((await post('bundle', `{"private_key":${JSON.stringify(rsaKey)},"certificate":}`)).status).toBe(400);
    expect((await post('bundle', { certificate: rsaKey })).status).toBe(400);
    expect((await post('certinfo', { certificate: rsaKey })).status).toBe(400);
    expect((await post('sign', { certificate_request: rsaKey })).status).toBe(400);

    // --- sign / authsign with tokens -----------------------------------------------------------
    const csr = ecdsaLeaf.body.result.certificate_request as string;
    expect((await post('sign', { certificate_request: csr, profile: 'authed' })).body.errors[0]?.message).toBe('authentication required');
    expect((await post('sign', { certificate_request: csr, hosts: ['s.example'] })).status).toBe(200);
    for (const [profile, hex] of [['authed', keyHex.main], ['rotating', keyHex.rotating], ['rotating', keyHex.previous]] as const) {
      const answer = await post('authsign', authenticated({ certificate_request: csr, hosts: ['a.example'], profile }, hex));
      expect(answer.status, answer.text).toBe(200);
    }
    const forged = authenticated({ certificate_request: csr, profile: 'authed' }, randomBytes(32).toString('hex'));
    expect((await post('authsign', forged)).body.errors[0]?.message).toBe('invalid token');
    const crossed = authenticated({ certificate_request: csr, profile: 'authed' }, keyHex.rotating);
    expect((await post('authsign', crossed)).body.errors[0]?.message).toBe('invalid token');
    expect((await post('authsign', { ...authenticated({ certificate_request: csr, profile: 'authed' }, keyHex.main), token: 42 })).status).toBe(400);
    expect((await post('authsign', { token: keyHex.main, request: 'not base64 !!' })).status).toBe(400);

    // --- credentials in places a logger might look -------------------------------------------------
    const headerToken = `hdr-${randomBytes(16).toString('hex')}`;
    const queryToken = `qry-${randomBytes(16).toString('hex')}`;
    secrets.push({ name: 'Authorization / X-Auth-Token header', needles: [headerToken] }, { name: 'token in the query string', needles: [queryToken] });
    await post('info', {}, { authorization: `Bearer ${headerToken}`, 'x-auth-token': headerToken, cookie: `session=${headerToken}` });
    await post(`/api/v1/cfssl/authsign?token=${queryToken}&key=${keyHex.main}`, { token: queryToken });
    await post(`/api/v1/cfssl/nope?token=${queryToken}`, {});
    await post('newcert', { request: { CN: 'x', key: { algo: 'rsa', size: 1e9 } }, auth_key: keyHex.main, token: headerToken, private_key: rsaKey });

    // --- the HSM signer -------------------------------------------------------------------------------
    const viaHsm = await post('newcert', { request: { CN: 'hsm.example', hosts: ['hsm.example'] }, label: 'hsm' });
    expect(viaHsm.status, viaHsm.text).toBe(200);
    generatedKeys.push(viaHsm.body.result.private_key as string);
    addPrivateKey('generated key (HSM-signed newcert)', viaHsm.body.result.private_key as string);
    expect((await post('sign', { certificate_request: csr, label: 'hsm' })).status).toBe(200);

    // --- stop and collect everything the process wrote ----------------------------------------------
    server.child.kill('SIGTERM');
    const exit = await server.waitForExit(20_000);
    expect(exit.code).toBe(0);
    const output = [...server.lines, server.stderr(), ...otherOutput].join('\n');

    // The capture is real: every request left a line (trace level adds more).
    expect(server.lines.filter((line) => line.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(30);
    // The search is real: it finds a slice of a key in a line that contains one.
    expect(findLeaks(`{"x":"${pemBody(rsaKey).slice(200, 230)}"}`, secrets)).not.toEqual([]);
    expect(findLeaks(`token=${headerToken}`, secrets)).toEqual(['Authorization / X-Auth-Token header']);

    expect(findLeaks(output, secrets)).toEqual([]);

    // --- generated keys only ever lived in responses --------------------------------------------------
    // The store records each issued certificate, and a certificate carries its public key, which an
    // EC or Ed25519 private-key encoding holds too: slices of a key's PEM that also occur in the
    // (public) certificates and CSRs the server answered are not secrets, the rest are.
    const publicMaterial = issued.flatMap((answer) => [answer.body.result.certificate, answer.body.result.certificate_request]).filter((text): text is string => typeof text === 'string').join('\n');
    const generated = secrets
      .filter((secret) => secret.name.startsWith('generated') || secret.name === 'bundle result key')
      .map((secret) => ({ ...secret, needles: secret.needles.filter((needle) => !publicMaterial.includes(needle)) }));
    expect(generated.length).toBeGreaterThanOrEqual(generatedKeys.length);
    const dataFiles = await filesUnder(dataDir);
    const recentTempFiles = (await filesUnder(tmpdir(), { newerThan: startedAt, depth: 3, limit: 3_000 })).filter((file) => !file.startsWith(scratch.dir));
    const leakingFiles: string[] = [];
    for (const file of [...dataFiles, ...recentTempFiles]) {
      let content: string;
      try {
        content = (await readFile(file)).toString('latin1');
      } catch {
        continue;
      }
      if (findLeaks(content, generated).length > 0) leakingFiles.push(file);
    }
    expect(leakingFiles).toEqual([]);
    // Fingerprint of what was checked, for the log of the run.
    console.log(
      `secrets: ${secrets.length} secrets (${secrets.reduce((n, s) => n + s.needles.length, 0)} forms) searched in ${output.length} bytes of output ` +
        `(${server.lines.length} stdout lines); ${dataFiles.length} data-dir files and ${recentTempFiles.length} new temp files scanned; ` +
        `output sha256 ${createHash('sha256').update(output).digest('hex').slice(0, 12)}`,
    );
  }, 240_000);
});
