/**
 * Test fixture for CFSSL `multirootca` (behaviour doc 4.6, 7.11): a temp directory holding one CA key
 * pair per label (made with `openssl` at test time, never pasted blobs), one cfssl JSON signing
 * config per label whose profiles require the shared auth key, and the INI `roots.conf` naming them.
 * Also makes CSRs and checks issued certificates with `openssl verify`, so tests compare against
 * the same tool an operator would use.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { findFreePort, waitForPort } from './free-port.js';

const run = promisify(execFile);

/** One root of the fixture. */
export interface MultirootRoot {
  label: string;
  /** CA certificate PEM file. */
  certFile: string;
  /** CA private key PEM file (PKCS#8, EC P-256). */
  keyFile: string;
  /** cfssl JSON signing config of this root. */
  configFile: string;
  /** The CA certificate as written by openssl. */
  certificatePem: string;
  /** `expiry` of the default profile, distinct per label so `/info` answers can be told apart. */
  expiry: string;
}

/** Options of {@link createMultirootFixture}. */
export interface MultirootFixtureOptions {
  /** Root labels (multirootca wants `\w+` names). Default `['a', 'b']`. */
  labels?: readonly string[];
  /** Auth key as hex; default 16 random bytes. */
  authKeyHex?: string;
}

/** What {@link createMultirootFixture} made. */
export interface MultirootFixture {
  dir: string;
  /** The multirootca `-roots` file. */
  rootsFile: string;
  /** The auth key every profile of every root requires, as hex (cfssl `auth_keys` form). */
  authKeyHex: string;
  roots: Readonly<Record<string, MultirootRoot>>;
  /** A fresh EC P-256 CSR (PEM) for `commonName`. */
  createCsr(commonName: string): Promise<string>;
  /** `openssl verify -CAfile <root of label>`; `ok` is true when the certificate chains to it. */
  verifyIssuedBy(certificatePem: string, label: string): Promise<{ ok: boolean; output: string }>;
  /** Remove the directory. */
  cleanup(): Promise<void>;
}

/** Profiles every root offers: the default and `client`, both requiring the auth key (doc 7.11). */
function signingConfig(expiry: string): unknown {
  return {
    signing: {
      default: { usages: ['signing', 'key encipherment', 'server auth'], expiry, auth_key: 'primary' },
      profiles: {
        client: { usages: ['signing', 'key encipherment', 'client auth'], expiry, auth_key: 'primary' },
      },
    },
    auth_keys: { primary: { type: 'standard', key: '' } },
  };
}

/** Create the fixture: CA keys/certs, configs and roots.conf under a new temp directory. */
export async function createMultirootFixture(options: MultirootFixtureOptions = {}): Promise<MultirootFixture> {
  const labels = options.labels ?? ['a', 'b'];
  const authKeyHex = options.authKeyHex ?? randomBytes(16).toString('hex');
  const dir = await mkdtemp(join(tmpdir(), 'certsmith-multiroot-'));
  const roots: Record<string, MultirootRoot> = {};
  let csrCounter = 0;
  try {
    const sections: string[] = ['# written by test/peers/multiroot-fixture.ts'];
    let index = 0;
    for (const label of labels) {
      if (!/^\w+$/.test(label)) throw new Error(`multirootca labels must match \\w+, got ${JSON.stringify(label)}`);
      const certFile = join(dir, `${label}-ca.pem`);
      const keyFile = join(dir, `${label}-ca-key.pem`);
      const configFile = join(dir, `${label}-config.json`);
      // Each label gets its own expiry so `/info` per label is distinguishable beyond the certificate.
      const expiry = `${168 * (index + 1)}h`;
      index += 1;
      await run('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
        '-keyout', keyFile, '-out', certFile, '-days', '30',
        '-subj', `/O=certsmith tests/CN=certsmith multiroot test root ${label}`,
        '-addext', 'basicConstraints=critical,CA:TRUE',
        '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
      ]);
      const config = signingConfig(expiry) as { auth_keys: { primary: { key: string } } };
      config.auth_keys.primary.key = authKeyHex;
      await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);
      // `file:///abs` is the absolute form: multirootca joins host and path of the URL (doc 4.6).
      sections.push(`[ ${label} ]`, `private = file://${keyFile}`, `certificate = ${certFile}`, `config = ${configFile}`, '');
      roots[label] = { label, certFile, keyFile, configFile, certificatePem: await readFile(certFile, 'utf8'), expiry };
    }
    const rootsFile = join(dir, 'roots.conf');
    await writeFile(rootsFile, `${sections.join('\n')}\n`);

    return {
      dir,
      rootsFile,
      authKeyHex,
      roots,
      async createCsr(commonName: string): Promise<string> {
        csrCounter += 1;
        const keyOut = join(dir, `csr-${csrCounter}-key.pem`);
        const { stdout } = await run('openssl', [
          'req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
          '-keyout', keyOut, '-subj', `/CN=${commonName}`,
        ]);
        return stdout;
      },
      async verifyIssuedBy(certificatePem: string, label: string): Promise<{ ok: boolean; output: string }> {
        const root = roots[label];
        if (!root) throw new Error(`no root labelled ${label}`);
        const leafFile = join(dir, `verify-${Date.now()}-${Math.random().toString(16).slice(2)}.pem`);
        await writeFile(leafFile, certificatePem);
        try {
          const { stdout, stderr } = await run('openssl', ['verify', '-CAfile', root.certFile, leafFile]);
          return { ok: true, output: `${stdout}${stderr}` };
        } catch (error) {
          const failed = error as { stdout?: string; stderr?: string };
          return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
        } finally {
          await rm(leafFile, { force: true });
        }
      },
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** A multirootca that can be stopped and started again on the same port (failover tests). */
export interface RestartableMultirootca {
  url: string;
  port: number;
  /** Everything every run wrote. */
  output(): string;
  /** How many certificates this process signed (multirootca logs `signature: requester=…` per issuance). */
  countSignatures(label?: string): number;
  /** Start (again) on the same port; resolves when it accepts connections. */
  start(): Promise<void>;
  /** SIGTERM, then SIGKILL after 3 s; resolves when the process has exited. */
  stop(): Promise<void>;
}

/**
 * Like `startMultirootca` in `cfssl-peer.ts`, but keeps its port across restarts, because a
 * failover test has to bring "the first remote" back at the address the signer was configured with.
 */
export async function startRestartableMultirootca(options: { rootsFile: string; defaultLabel?: string }): Promise<RestartableMultirootca> {
  const port = await findFreePort();
  let child: ChildProcess | null = null;
  let output = '';
  const args = ['-a', `127.0.0.1:${port}`, '-roots', options.rootsFile];
  if (options.defaultLabel) args.push('-l', options.defaultLabel);

  const stop = async (): Promise<void> => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => running.kill('SIGKILL'), 3_000);
      running.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      running.kill('SIGTERM');
    });
  };

  const peer: RestartableMultirootca = {
    url: `http://127.0.0.1:${port}`,
    port,
    output: () => output,
    countSignatures(label?: string): number {
      return output.split('\n').filter((entry) => entry.includes('signature: requester=') && (label === undefined || entry.includes(`label=${label},`))).length;
    },
    async start(): Promise<void> {
      if (child !== null) return;
      const spawned = spawn('multirootca', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = spawned;
      spawned.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      spawned.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      try {
        await waitForPort(port);
      } catch (error) {
        await stop();
        throw new Error(`multirootca did not start on ${port}: ${String(error)}\n${output}`);
      }
    },
    stop,
  };
  await peer.start();
  return peer;
}
