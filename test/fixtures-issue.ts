/**
 * Fixtures for the issuing end-to-end tests (newcert, sign, authsign, info, plugins, cfssl client):
 * CAs made with `openssl` at test time in a scratch folder, a way to start the built server with an
 * environment, HTTP helpers, CFSSL auth tokens, and checks with the independent openssl CLI
 * (`openssl verify`, `openssl x509 -text`, `openssl req -verify`).
 */
import { execFile } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';

const run = promisify(execFile);

/** Run openssl; resolves with stdout, rejects with stdout+stderr in the message. */
export async function openssl(args: readonly string[], cwd?: string): Promise<string> {
  try {
    const { stdout } = await run('openssl', [...args], { cwd, encoding: 'utf8', timeout: 30_000 });
    return stdout;
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`openssl ${args.join(' ')} failed: ${failure.message}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
  }
}

/** A CA made by openssl: certificate and key files (PEM) and the certificate text. */
export interface OpensslCa {
  name: string;
  certFile: string;
  keyFile: string;
  certificatePem: string;
}

/** A scratch folder for one test file, removed by `cleanup`. */
export interface Scratch {
  dir: string;
  path(name: string): string;
  write(name: string, content: string | object): Promise<string>;
  cleanup(): Promise<void>;
}

/** Make a scratch folder. */
export async function createScratch(prefix: string): Promise<Scratch> {
  const dir = await mkdtemp(join(tmpdir(), `certsmith-${prefix}-`));
  return {
    dir,
    path: (name) => join(dir, name),
    async write(name, content) {
      const path = join(dir, name);
      await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
      return path;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

const CA_EXTENSIONS = ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'];

/** A self-signed ECDSA P-256 CA named `name` (files `<name>.pem`, `<name>-key.pem`). */
export async function makeRootCa(scratch: Scratch, name: string, commonName = `${name} CA`): Promise<OpensslCa> {
  const certFile = scratch.path(`${name}.pem`);
  const keyFile = scratch.path(`${name}-key.pem`);
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '30', '-subj', `/O=certsmith e2e/CN=${commonName}`, ...CA_EXTENSIONS]);
  return { name, certFile, keyFile, certificatePem: await readFile(certFile, 'utf8') };
}

/** An intermediate CA (ECDSA P-256, pathlen 0) signed by `issuer`. */
export async function makeIntermediateCa(scratch: Scratch, name: string, issuer: OpensslCa): Promise<OpensslCa> {
  const certFile = scratch.path(`${name}.pem`);
  const keyFile = scratch.path(`${name}-key.pem`);
  const csrFile = scratch.path(`${name}.csr`);
  const extFile = await scratch.write(
    `${name}.ext`,
    'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n',
  );
  await openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', csrFile, '-subj', `/O=certsmith e2e/CN=${name} CA`]);
  await openssl(['x509', '-req', '-in', csrFile, '-CA', issuer.certFile, '-CAkey', issuer.keyFile, '-set_serial', '0x1234', '-days', '30', '-extfile', extFile, '-out', certFile]);
  return { name, certFile, keyFile, certificatePem: await readFile(certFile, 'utf8') };
}

/**
 * A leaf (ECDSA P-256) for `commonName` signed by `issuer`, with `extensions` (openssl x509 -extfile
 * syntax, e.g. `extendedKeyUsage=clientAuth`): TLS server and client certificates for the tests.
 */
export async function makeLeaf(
  scratch: Scratch,
  issuer: OpensslCa,
  name: string,
  commonName: string,
  extensions: string,
): Promise<{ certFile: string; keyFile: string; cert: string; key: string }> {
  const keyFile = scratch.path(`${name}-key.pem`);
  const certFile = scratch.path(`${name}.pem`);
  const csrFile = scratch.path(`${name}.csr`);
  const extFile = await scratch.write(`${name}.ext`, extensions);
  await openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', csrFile, '-subj', `/CN=${commonName}`]);
  await openssl(['x509', '-req', '-in', csrFile, '-CA', issuer.certFile, '-CAkey', issuer.keyFile, '-set_serial', `0x${Math.floor(Math.random() * 1e9).toString(16)}`, '-days', '2', '-extfile', extFile, '-out', certFile]);
  return { certFile, keyFile, cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
}

/** A CSR (ECDSA P-256 unless `keyArgs` say otherwise) for `/CN=<commonName>`. */
export async function makeCsr(scratch: Scratch, name: string, commonName: string, keyArgs = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']): Promise<{ csrFile: string; csrPem: string }> {
  const csrFile = scratch.path(`${name}.csr`);
  await openssl(['req', '-new', ...keyArgs, '-nodes', '-keyout', scratch.path(`${name}-key.pem`), '-out', csrFile, '-subj', `/O=Requester/CN=${commonName}`]);
  return { csrFile, csrPem: await readFile(csrFile, 'utf8') };
}

/** `openssl verify -CAfile root [-untrusted chain]` of a certificate PEM; returns openssl's output. */
export async function verifyCertificate(scratch: Scratch, certificatePem: string, caFile: string, untrustedFile?: string): Promise<string> {
  const file = await scratch.write(`verify-${Math.random().toString(36).slice(2)}.pem`, certificatePem);
  const args = ['verify', '-CAfile', caFile, ...(untrustedFile ? ['-untrusted', untrustedFile] : []), file];
  return openssl(args);
}

/** `openssl x509 -noout -text` of a certificate PEM. */
export async function certificateText(scratch: Scratch, certificatePem: string): Promise<string> {
  const file = await scratch.write(`text-${Math.random().toString(36).slice(2)}.pem`, certificatePem);
  return openssl(['x509', '-noout', '-text', '-nameopt', 'RFC2253', '-in', file]);
}

/** `openssl req -verify -noout -text` of a CSR PEM (rejects when the self-signature is bad). */
export async function verifyCsr(scratch: Scratch, csrPem: string): Promise<string> {
  const file = await scratch.write(`csr-${Math.random().toString(36).slice(2)}.pem`, csrPem);
  return openssl(['req', '-verify', '-noout', '-text', '-in', file]);
}

/** DER bytes of the first PEM block. */
export function derOf(pem: string): Buffer {
  const body = /-----BEGIN [^-]+-----([\s\S]*?)-----END [^-]+-----/.exec(pem)?.[1] ?? '';
  return Buffer.from(body.replace(/\s+/g, ''), 'base64');
}

/** CFSSL `sums` of a PEM, recomputed here: md5, sha-1, sha-256 of the DER, upper-case hex. */
export function sumsOf(pem: string): { md5: string; 'sha-1': string; 'sha-256': string } {
  const der = derOf(pem);
  const digest = (algorithm: string): string => createHash(algorithm).update(der).digest('hex').toUpperCase();
  return { md5: digest('md5'), 'sha-1': digest('sha1'), 'sha-256': digest('sha256') };
}

/** CFSSL's authenticated request: HMAC-SHA256 over the exact JSON bytes of the inner request. */
export function authenticatedRequest(inner: object, keyHex: string): { timestamp: number; token: string; request: string } {
  const bytes = Buffer.from(JSON.stringify(inner));
  const token = createHmac('sha256', Buffer.from(keyHex, 'hex')).update(bytes).digest('base64');
  return { timestamp: Math.floor(Date.now() / 1000), token, request: bytes.toString('base64') };
}

/** A CFSSL response envelope. */
export interface Envelope {
  success: boolean;
  result: any;
  errors: { code: number; message: string }[];
  messages: { code: number; message: string }[];
}

/** POST JSON (or a raw string) to `/api/v1/cfssl/<operation>`. */
export async function post(url: string, operation: string, body: unknown): Promise<{ status: number; envelope: Envelope; text: string }> {
  const response = await fetch(`${url}/api/v1/cfssl/${operation}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  return { status: response.status, envelope: JSON.parse(text) as Envelope, text };
}

/** A started server. */
export interface Server extends CertsmithProcess {
  url: string;
  /** SIGTERM and wait (bounded). */
  stop(): Promise<void>;
}

const LISTENING = /^certsmith listening on (http:\/\/\S+)$/;

/** Start `certsmith serve …args` with `env` added to the environment; waits for the listening line. */
export async function startServer(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const child = spawnCertsmith(['serve', '--port', '0', '--workers', '1', '--loglevel', 'warn', ...args], { ...process.env, ...env });
  const line = await child.waitForLine((candidate) => LISTENING.test(candidate), 30_000);
  return Object.assign(child, {
    url: LISTENING.exec(line)![1]!,
    async stop() {
      child.child.kill('SIGTERM');
      await child.waitForExit(15_000).catch(() => child.child.kill('SIGKILL'));
    },
  });
}

/** Run `certsmith serve …args` expecting it to fail at startup; resolves with the exit code and stderr. */
export async function failedStart(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawnCertsmith(['serve', '--port', '0', '--workers', '1', '--loglevel', 'warn', ...args], { ...process.env, ...env });
  const status = await child.waitForExit(30_000);
  return { code: status.code, stderr: child.stderr() };
}

/** Usages of an ordinary TLS profile. */
export const TLS_USAGES = ['signing', 'key encipherment', 'server auth', 'client auth'];
