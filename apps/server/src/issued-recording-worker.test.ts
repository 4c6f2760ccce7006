import { createPrivateKey, createPublicKey, sign as signWithKey, verify } from 'node:crypto';
import { serialToDecimal } from '@certsmith/cert-store';
import { parseOcspResponse } from '@certsmith/revocation';
import type { Signer } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { describe, expect, it } from 'vitest';
import { createIssuedHook, isIssuedRecordingAttachment } from './issued-recording-worker.js';
import type { IssuedRecordingAttachment } from './issued-recording-worker.js';

const pki = new TestPki();
const root = pki.root({ CN: 'Worker Hook Root' }, { key: 'ecdsa-p256' });
const otherRoot = pki.root({ CN: 'Another Root' }, { key: 'ecdsa-p256' });
const aki = toHex(root.subjectKeyId!);

/** The CA key as a contract signer (what the worker's copy of a local signer is). */
function caSigner(ca = root): Signer & { calls: number } {
  const key = createPrivateKey(ca.key.pkcs8Pem);
  const signer = {
    calls: 0,
    algorithms: ['ECDSA-SHA256' as const],
    getCertificate: async () => ({ der: ca.der, pem: ca.pem }),
    async sign(tbs: Uint8Array): Promise<Uint8Array> {
      signer.calls++;
      return new Uint8Array(signWithKey('sha256', tbs, key));
    },
    close: async () => {},
  };
  return signer;
}

const leafOf = (name: string, ca = root) => pki.leaf(name, ca, { key: 'ecdsa-p256' });

describe('createIssuedHook', () => {
  it("signs the first OCSP response (good) with the worker's CA key, and reads the row's fields", async () => {
    const hook = createIssuedHook({ ocspLabels: ['default'], ocspIntervalMs: 3_600_000 });
    const signer = caSigner();
    const leaf = leafOf('hooked.example');
    const before = Date.now();
    const result = await hook({ label: 'default', certificateDer: leaf.der, certificatePem: leaf.pem, signer });
    const attachment = structuredClone(result.attachment) as IssuedRecordingAttachment;
    expect(isIssuedRecordingAttachment(attachment)).toBe(true);
    expect(attachment.fields).toMatchObject({ serial: serialToDecimal(leaf.serialHex.toLowerCase()), authorityKeyId: aki, commonName: 'hooked.example', sansJson: '["hooked.example"]', pem: leaf.pem });
    expect(signer.calls).toBe(1);
    expect(result.signSeconds).toHaveLength(1);
    expect(result.signSeconds[0]).toBeGreaterThan(0);

    const response = parseOcspResponse(attachment.ocspResponse!.body);
    const single = response.basic!.responses[0]!;
    expect(response.status).toBe('successful');
    expect(single.status).toBe('good');
    expect(toHex(single.certId.serialNumber)).toBe(leaf.serialHex.toLowerCase());
    expect(single.nextUpdate!.getTime()).toBe(attachment.ocspResponse!.expiry.getTime());
    expect(attachment.ocspResponse!.expiry.getTime()).toBeGreaterThan(before);
    // Signed by the CA itself: the signature verifies with the CA certificate's key.
    expect(verify('sha256', response.basic!.tbsResponseData, createPublicKey(root.pem), response.basic!.signature)).toBe(true);
  });

  it('prepares the OCSP identity once per worker signer', async () => {
    const hook = createIssuedHook({ ocspLabels: ['default'], ocspIntervalMs: 3_600_000 });
    const signer = caSigner();
    let certificateFetches = 0;
    const counting: Signer = { ...signer, getCertificate: async () => (certificateFetches++, await signer.getCertificate()) };
    for (const name of ['a.example', 'b.example', 'c.example']) {
      const leaf = leafOf(name);
      await hook({ label: 'default', certificateDer: leaf.der, certificatePem: leaf.pem, signer: counting });
    }
    expect(certificateFetches).toBe(1);
    expect(signer.calls).toBe(3);
  });

  it('gives the fields only for a label it does not sign for, or a certificate of another CA', async () => {
    const hook = createIssuedHook({ ocspLabels: ['default'], ocspIntervalMs: 3_600_000 });
    const signer = caSigner();
    const leaf = leafOf('delegated.example');
    const delegated = await hook({ label: 'delegated', certificateDer: leaf.der, certificatePem: leaf.pem, signer });
    expect(delegated.attachment).toMatchObject({ kind: 'issued-recording', ocspResponse: null, fields: { authorityKeyId: aki } });
    expect(delegated.signSeconds).toEqual([]);
    const foreign = leafOf('foreign.example', otherRoot);
    const other = await hook({ label: 'default', certificateDer: foreign.der, certificatePem: foreign.pem, signer });
    expect(other.attachment).toMatchObject({ ocspResponse: null, fields: { authorityKeyId: toHex(otherRoot.subjectKeyId!) } });
    expect(signer.calls).toBe(0);
  });

  it("fails with the signer's error when the OCSP response cannot be signed", async () => {
    const hook = createIssuedHook({ ocspLabels: ['default'], ocspIntervalMs: 3_600_000 });
    const signer: Signer = {
      ...caSigner(),
      sign: async () => {
        throw Object.assign(new Error('signer "default" failed'), { code: 2500 });
      },
    };
    const leaf = leafOf('down.example');
    await expect(hook({ label: 'default', certificateDer: leaf.der, certificatePem: leaf.pem, signer })).rejects.toMatchObject({ code: 2500 });
  });
});
