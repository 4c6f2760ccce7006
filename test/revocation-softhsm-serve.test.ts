/**
 * Revocation by CAs whose keys live in SoftHSM, from the running server (issue 21: "a SoftHSM-signed
 * CRL and OCSP response from the running server verify with openssl"): `certsmith hsm genkey/initca`
 * make an ECDSA and an RSA CA on the token, `certsmith gencert -config -label` issues a certificate of
 * each, certadd puts them in the server's store; then the server's responder and CRLs — every
 * signature made on the token through `@certsmith/signer-pkcs11` — are checked with openssl.
 */
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serialToDecimal } from '@certsmith/cert-store';
import { parseCertificate, toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from './fixtures-issue.js';
import { CLI_PATH, killAllCertsmith, startCertsmith } from './helpers/certsmith-process.js';
import type { StartedCertsmith } from './helpers/certsmith-process.js';
import { createSoftHsmToken } from './helpers/softhsm.js';
import type { SoftHsmToken } from './helpers/softhsm.js';

const LABELS = { default: { key: 'ec-ca', algo: 'ecdsa', size: 384, signature: 'ecdsa-with-SHA384' }, rsa: { key: 'rsa-ca', algo: 'rsa', size: 2048, signature: 'sha256WithRSAEncryption' } } as const;

let hsm: SoftHsmToken;
let dir: string;
let server: StartedCertsmith;
const issued: Record<string, { serial: string; aki: string; notAfter: Date; pem: string }> = {};

function certsmith(args: string[]): string {
  return execFileSync(process.execPath, [CLI_PATH, ...args], { cwd: dir, env: hsm.env, encoding: 'utf8', timeout: 60_000 });
}

function openssl(args: readonly string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile('openssl', [...args], { cwd: dir, encoding: 'utf8', timeout: 30_000 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`));
  });
}

beforeAll(async () => {
  hsm = createSoftHsmToken({ label: 'certsmith-revocation' });
  dir = hsm.dir;
  const signers: Record<string, unknown> = {};
  for (const [label, ca] of Object.entries(LABELS)) {
    const { certificatePem } = await hsm.createCa({ keyLabel: ca.key, algo: ca.algo, size: ca.size, cn: `HSM ${label} revocation CA` });
    writeFileSync(join(dir, `${label}-ca.pem`), certificatePem);
    signers[label] = hsm.signer(ca.key);
  }
  writeFileSync(join(dir, 'certsmith.json'), JSON.stringify({ signers }));
  writeFileSync(join(dir, 'csr.json'), JSON.stringify({ CN: 'hsm.revocation.test', hosts: ['hsm.revocation.test'], key: { algo: 'ecdsa', size: 256 } }));
  for (const label of Object.keys(LABELS)) {
    const { cert } = JSON.parse(certsmith(['gencert', '-config', 'certsmith.json', '-label', label, 'csr.json'])) as { cert: string };
    writeFileSync(join(dir, `${label}-leaf.pem`), cert);
    const parsed = parseCertificate(Buffer.from(cert.replace(/-----[^-]+-----|\s/g, ''), 'base64'));
    issued[label] = { serial: serialToDecimal(parsed.serialNumberHex.toLowerCase()), aki: toHex(parsed.authorityKeyId!).toLowerCase(), notAfter: parsed.notAfter, pem: cert };
  }
  server = await startCertsmith(['--port', '0', '--workers', '1', '--loglevel', 'warn', '--config', join(dir, 'certsmith.json'), '--data-dir', join(dir, 'data'), '--ocsp-path', '/ocsp'], 60_000, hsm.env);
  for (const [label, leaf] of Object.entries(issued)) {
    const added = await post(server.url, 'certadd', {
      serial_number: leaf.serial,
      authority_key_identifier: leaf.aki,
      ca_label: label,
      status: 'good',
      expiry: leaf.notAfter.toISOString().replace('.000Z', 'Z'),
      pem: leaf.pem,
    });
    expect(added.envelope.errors).toEqual([]);
  }
}, 180_000);

afterAll(async () => {
  await killAllCertsmith();
  hsm?.cleanup();
});

describe('revocation signed on SoftHSM by the running server', () => {
  it.each(Object.keys(LABELS))('answers OCSP for the %s CA with responses signed on the token (good, then revoked)', async (label) => {
    const ask = () => openssl(['ocsp', '-issuer', `${label}-ca.pem`, '-cert', `${label}-leaf.pem`, '-url', `${server.url}/ocsp`, '-CAfile', `${label}-ca.pem`, '-no_nonce']);
    const good = await ask();
    expect(good).toContain('Response verify OK');
    expect(good).toContain(`${label}-leaf.pem: good`);
    expect((await post(server.url, 'revoke', { serial: issued[label]!.serial, authority_key_id: issued[label]!.aki, reason: 'cACompromise' })).envelope).toMatchObject({ success: true });
    const revoked = await ask();
    expect(revoked).toContain('Response verify OK');
    expect(revoked).toContain(`${label}-leaf.pem: revoked`);
    expect(revoked).toContain('Reason: cACompromise');
  });

  it.each(Object.entries(LABELS))('serves the CRL of the %s CA, signed on the token, that openssl verifies', async (label, ca) => {
    writeFileSync(join(dir, `${label}.crl`), Buffer.from(await (await fetch(`${server.url}/api/v1/certsmith/crl/${label}`)).arrayBuffer()));
    const text = await openssl(['crl', '-inform', 'DER', '-in', `${label}.crl`, '-CAfile', `${label}-ca.pem`, '-noout', '-text']);
    expect(text).toContain('verify OK');
    expect(text).toContain(`Signature Algorithm: ${ca.signature}`);
    expect(text).toContain('CA Compromise');
  });
});
