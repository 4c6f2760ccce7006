/**
 * A CRL and OCSP responses signed by a CA key that lives in SoftHSM, through the PKCS#11 signer
 * plugin and the signer contract (issue 21: "a SoftHSM-signed CRL and OCSP response verify with
 * openssl"). The keys are generated on the token and never leave it.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { RevocationSigner } from '@certsmith/revocation';
import { buildCrl, buildOcspResponse, createOcspSigningIdentity, createRevocationSigner, ocspValidity } from '@certsmith/revocation';
import type { Signer } from '@certsmith/signer-api';
import { createSigner, createSignerContext, silentLogger } from '@certsmith/signer-api';
import plugin, { createSelfSignedCaCertificate, generateKeyPair } from '@certsmith/signer-pkcs11';

import { createSoftHsmToken } from './helpers/softhsm.js';

// SOFTHSM2_CONF must be set before the PKCS#11 module is loaded.
const hsm = createSoftHsmToken({ label: 'revocation' });
const context = createSignerContext({ configDir: hsm.dir, env: hsm.pinEnv, logger: silentLogger });

const dir = hsm.dir;
const signers: Signer[] = [];
const cas = new Map<string, { pem: string; file: string; revocation: RevocationSigner }>();

function openssl(args: string[]): string {
  const result = spawnSync('openssl', args, { encoding: 'utf8', timeout: 30_000 });
  return `${result.stdout}${result.stderr}`;
}

beforeAll(async () => {
  for (const [keyLabel, algorithm, size] of [['hsm-ec-ca', 'ecdsa', 384], ['hsm-rsa-ca', 'rsa', 2048]] as const) {
    await generateKeyPair({ ...hsm.signerOptions(keyLabel), context, algorithm, size });
    const ca = await createSelfSignedCaCertificate({ ...hsm.signerOptions(keyLabel), context, subject: { CN: `${keyLabel} root`, names: [{ O: 'certsmith' }] } });
    const signer = await createSigner(plugin, hsm.signerOptions(keyLabel), context);
    signers.push(signer);
    const file = join(dir, `${keyLabel}.pem`);
    writeFileSync(file, ca.certificatePem);
    cas.set(keyLabel, { pem: ca.certificatePem, file, revocation: await createRevocationSigner(signer, { label: keyLabel }) });
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(signers.map((signer) => signer.close()));
  hsm.cleanup();
});

describe('revocation signed on SoftHSM', () => {
  it.each([
    ['hsm-ec-ca', 'ecdsa-with-SHA384'],
    ['hsm-rsa-ca', 'sha256WithRSAEncryption'],
  ])('writes a CRL that openssl verifies (%s)', async (label, algorithm) => {
    const ca = cas.get(label)!;
    const crl = await buildCrl({
      issuer: ca.revocation,
      crlNumber: 7n,
      nextUpdate: new Date(Date.now() + 86_400_000),
      revoked: [{ serial: 1234n, revokedAt: new Date(), reason: 1 }, { serial: '5678', revokedAt: new Date() }],
    });
    const crlFile = join(dir, `${label}.crl`);
    writeFileSync(crlFile, crl.der);
    const output = openssl(['crl', '-inform', 'DER', '-in', crlFile, '-CAfile', ca.file, '-noout', '-text']);
    expect(output).toContain('verify OK');
    expect(output).toContain(`Signature Algorithm: ${algorithm}`);
    expect(output).toContain('Key Compromise');
  });

  it.each(['hsm-ec-ca', 'hsm-rsa-ca'])('signs OCSP responses that openssl verifies (%s)', async (label) => {
    const ca = cas.get(label)!;
    const identity = createOcspSigningIdentity({ signer: ca.revocation });
    const now = new Date();
    const response = await buildOcspResponse({ identity, serialNumber: 4242n, status: 'revoked', revokedAt: now, reason: 4, ...ocspValidity(now, 3_600_000, now) });
    const respFile = join(dir, `${label}.ocsp`);
    writeFileSync(respFile, response.der);
    const output = openssl(['ocsp', '-respin', respFile, '-issuer', ca.file, '-serial', '4242', '-CAfile', ca.file, '-no_nonce']);
    expect(output).toContain('Response verify OK');
    expect(output).toContain('4242: revoked');
    expect(output).toContain('Reason: superseded');
  });
});
