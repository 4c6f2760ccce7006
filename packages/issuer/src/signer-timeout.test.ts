/**
 * The signer timeout of the issuing use case: a signer that never answers (`sign`, `signRequest`,
 * `getCertificate`, `info`) fails the request with 2500 `signer "<label>" did not answer within N ms`
 * instead of holding it forever, and the other labels keep working.
 */
import type { Signer } from '@certsmith/signer-api';
import { algorithmsForKeyObject, signWithKeyObject } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import { describe, expect, it } from 'vitest';

import { decodeNewCertificateRequest } from './certificate-request.js';
import { SignerTimeoutError } from './errors.js';
import { createIssuer } from './issuer.js';
import { createSignerDirectory } from './signer-directory.js';
import { withSignerTimeout } from './signer-timeout.js';
import { parseSigningPolicy } from './signing-policy-loader.js';

const pki = new TestPki();
const ca = pki.root({ CN: 'Timeout Unit CA' }, { key: 'ecdsa-p256' });
const policy = parseSigningPolicy({ signing: { default: { expiry: '1h', usages: ['signing', 'server auth'] } } });
const never = <T>(): Promise<T> => new Promise<T>(() => {});

const working: Signer = {
  algorithms: algorithmsForKeyObject(ca.key.privateKey),
  getCertificate: async () => ({ der: ca.der, pem: ca.pem }),
  sign: (tbs, algorithm) => signWithKeyObject(ca.key.privateKey, tbs, algorithm),
  close: async () => {},
};
/** An HSM whose signing call hangs. */
const hangingSign: Signer = { ...working, sign: () => never() };
/** A remote CA that accepts the connection and never answers. */
const hangingRemote: Signer = { algorithms: [], getCertificate: () => never(), signRequest: () => never(), info: () => never(), close: async () => {} };

const issuer = createIssuer({
  signers: createSignerDirectory([
    { label: 'default', signer: working, policy },
    { label: 'stuck', signer: hangingSign, policy },
    { label: 'remote', signer: hangingRemote, policy },
  ]),
  signerTimeoutMs: 300,
});

const newcert = (label: string, cn: string) => issuer.newCertificate(decodeNewCertificateRequest({ label, request: { CN: cn, hosts: [cn] } }));

describe('signer timeout', () => {
  it('fails newCertificate on a hanging signer with 2500 naming the label, and keeps other labels working', async () => {
    await expect(newcert('stuck', 'a.example')).rejects.toMatchObject({ code: 2500, message: 'signer "stuck" did not answer within 300 ms' });
    await expect(newcert('', 'b.example')).resolves.toMatchObject({ messages: [] });
  });

  it('fails newCertificate, signCertificate and info on a remote CA that never answers', async () => {
    const expected = { code: 2500, message: 'signer "remote" did not answer within 300 ms' };
    await expect(newcert('remote', 'c.example')).rejects.toMatchObject(expected);
    await expect(issuer.signCertificate({ label: 'remote', certificate_request: 'any' })).rejects.toMatchObject(expected);
    await expect(issuer.info({ label: 'remote', profile: '' })).rejects.toMatchObject(expected);
  });
});

describe('withSignerTimeout', () => {
  it('passes results and failures through and swallows late rejections', async () => {
    await expect(withSignerTimeout('x', 1000, async () => 42)).resolves.toBe(42);
    await expect(withSignerTimeout('x', 1000, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    let rejectLate!: (error: Error) => void;
    const late = new Promise<never>((_, reject) => (rejectLate = reject));
    await expect(withSignerTimeout('late', 20, () => late)).rejects.toBeInstanceOf(SignerTimeoutError);
    rejectLate(new Error('too late')); // must not become an unhandled rejection (vitest would fail the run)
    await new Promise((resolve) => setTimeout(resolve, 10));
  });
});
