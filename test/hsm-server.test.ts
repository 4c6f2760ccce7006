/**
 * End to end with a real SoftHSMv2 token, the way an operator sets it up (test/helpers/softhsm.ts): a
 * token initialised with `softhsm2-util`, CA keys generated and self-signed ON the token with
 * `certsmith hsm genkey/initca` (the keys never leave it), then `certsmith serve --config` with two
 * HSM labels. Certificates are issued through `POST /newcert` with `label` and verified with openssl
 * against the HSM CA.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, spawnCertsmith, startCertsmith, type StartedCertsmith } from './helpers/certsmith-process.js';
import { createSoftHsmToken, type SoftHsmToken } from './helpers/softhsm.js';

let hsm: SoftHsmToken;
let dir: string;
let server: StartedCertsmith;
const caPem: Record<'ec' | 'rsa', string> = { ec: '', rsa: '' };

function opensslVerify(ca: string, leaf: string): string {
  const caFile = join(dir, `ca-${Math.random().toString(36).slice(2)}.pem`);
  const leafFile = join(dir, `leaf-${Math.random().toString(36).slice(2)}.pem`);
  writeFileSync(caFile, ca);
  writeFileSync(leafFile, leaf);
  return execFileSync('openssl', ['verify', '-CAfile', caFile, leafFile], { encoding: 'utf8' }).trim();
}

async function newcert(body: unknown): Promise<{ status: number; json: Record<string, any> }> {
  const response = await fetch(`${server.url}/api/v1/cfssl/newcert`, { method: 'POST', body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

beforeAll(async () => {
  hsm = createSoftHsmToken({ label: 'certsmith-e2e' });
  dir = hsm.dir;
  caPem.ec = (await hsm.createCa({ keyLabel: 'ec-ca', algo: 'ecdsa', size: 256, cn: 'HSM EC Root' })).certificatePem;
  caPem.rsa = (await hsm.createCa({ keyLabel: 'rsa-ca', algo: 'rsa', size: 2048, cn: 'HSM RSA Root' })).certificatePem;

  // No `cert` option: the signer reads each CA certificate from the token, where initca stored it.
  const signers = { 'hsm-ec': hsm.signer('ec-ca', { maxConcurrency: 2 }), 'hsm-rsa': hsm.signer('rsa-ca', { maxConcurrency: 2 }) };
  writeFileSync(join(dir, 'certsmith.json'), JSON.stringify({ signers }));
  server = await startCertsmith(
    ['--port', '0', '--config', join(dir, 'certsmith.json'), '--data-dir', join(dir, 'data'), '--loglevel', 'warn', '--max-queue', '1000'],
    60_000,
    hsm.env,
  );
}, 180_000);

afterAll(async () => {
  await killAllCertsmith();
  hsm?.cleanup();
});

describe('newcert with label selecting an HSM signer', () => {
  it('issues an ECDSA-signed certificate that openssl verifies against the HSM CA (ECDSA P-256 key)', async () => {
    const { status, json } = await newcert({ label: 'hsm-ec', request: { CN: 'ec.example.com', hosts: ['ec.example.com'] } });
    expect(status, JSON.stringify(json.errors)).toBe(200);
    const certificate = json.result.certificate as string;
    expect(opensslVerify(caPem.ec, certificate)).toMatch(/: OK$/);
    const x509 = new X509Certificate(certificate);
    expect(x509.issuer).toContain('CN=HSM EC Root');
    expect(execFileSync('openssl', ['x509', '-noout', '-text'], { input: certificate, encoding: 'utf8' })).toContain(
      'Signature Algorithm: ecdsa-with-SHA256',
    );
  });

  it('issues an RSA-signed certificate that openssl verifies against the HSM CA (RSA-2048 key)', async () => {
    const { status, json } = await newcert({ label: 'hsm-rsa', request: { CN: 'rsa.example.com', hosts: ['rsa.example.com'] } });
    expect(status, JSON.stringify(json.errors)).toBe(200);
    const certificate = json.result.certificate as string;
    expect(opensslVerify(caPem.rsa, certificate)).toMatch(/: OK$/);
    expect(execFileSync('openssl', ['x509', '-noout', '-text'], { input: certificate, encoding: 'utf8' })).toContain(
      'Signature Algorithm: sha256WithRSAEncryption',
    );
  });

  it('completes 200 concurrent requests on the HSM label with no error', async () => {
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        newcert({ label: 'hsm-ec', request: { CN: `load-${index}.example.com`, hosts: [`load-${index}.example.com`] } }),
      ),
    );
    const failures = replies.filter((reply) => reply.status !== 200);
    expect(failures.map((reply) => reply.json.errors)).toEqual([]);
    const ca = new X509Certificate(caPem.ec);
    const serials = new Set<string>();
    for (const reply of replies) {
      const certificate = new X509Certificate(reply.json.result.certificate as string);
      expect(certificate.verify(ca.publicKey)).toBe(true);
      serials.add(certificate.serialNumber);
    }
    expect(serials.size).toBe(200);
    // A sample checked by the independent verifier too.
    expect(opensslVerify(caPem.ec, replies[199]!.json.result.certificate as string)).toMatch(/: OK$/);
  }, 180_000);

  it('reports both HSM signers healthy and answers info with the HSM CA certificate', async () => {
    const health = (await (await fetch(`${server.url}/api/v1/cfssl/health`)).json()) as Record<string, any>;
    expect(health.result.signers['hsm-ec']).toEqual({ healthy: true });
    expect(health.result.signers['hsm-rsa']).toEqual({ healthy: true });
    const info = (await (
      await fetch(`${server.url}/api/v1/cfssl/info`, { method: 'POST', body: JSON.stringify({ label: 'hsm-rsa' }) })
    ).json()) as Record<string, any>;
    expect(new X509Certificate(info.result.certificate as string).fingerprint256).toBe(new X509Certificate(caPem.rsa).fingerprint256);
  });
});

describe('certsmith serve with a bad HSM configuration', () => {
  it('stops start-up with exit code 2 naming the pin option when the PIN is wrong, and never prints the PIN', async () => {
    const config = join(dir, 'bad-pin.json');
    writeFileSync(
      config,
      JSON.stringify({
        signers: {
          hsm: {
            plugin: '@certsmith/signer-pkcs11',
            options: { ...hsm.signerOptions('ec-ca'), pin: 'env:WRONG_HSM_PIN' },
          },
        },
      }),
    );
    const child = spawnCertsmith(['serve', '--port', '0', '--config', config, '--data-dir', join(dir, 'data-bad')], {
      ...hsm.env,
      WRONG_HSM_PIN: '999999',
    });
    const status = await child.waitForExit(60_000);
    expect(status.code).toBe(2);
    const output = `${child.lines.join('\n')}\n${child.stderr()}`;
    expect(output).toContain('signer "hsm"');
    expect(output).toMatch(/pin/i);
    expect(output).not.toContain('999999');
  }, 90_000);
});
