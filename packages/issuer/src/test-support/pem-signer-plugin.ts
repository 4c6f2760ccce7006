/**
 * A signer plugin for tests of worker-side signing: the CA certificate and key PEMs come inline in
 * the options, and the plugin declares `recreatableInWorkers`. Counts its instances so tests can
 * see that a worker made its own copy. Not built or shipped (tsconfig excludes test-support).
 */
import { createPrivateKey } from 'node:crypto';
import { algorithmsForKeyObject, defineSigner, signWithKeyObject } from '@certsmith/signer-api';
import type { Signer } from '@certsmith/signer-api';
import { parseCertificates } from '@certsmith/x509-core';

export interface PemSignerOptions {
  certificatePem: string;
  keyPem: string;
  /** Fail every signature with this message (signer failure paths). */
  failWith?: string;
}

export const created = { count: 0 };

export default defineSigner<PemSignerOptions>({
  meta: { name: 'test-pem-signer', apiVersion: '^1.0.0', recreatableInWorkers: true },
  create(options): Signer {
    created.count += 1;
    const key = createPrivateKey(options.keyPem);
    const der = parseCertificates(options.certificatePem)[0]!.der;
    return {
      algorithms: algorithmsForKeyObject(key),
      getCertificate: async () => ({ der, pem: options.certificatePem }),
      async sign(tbs, algorithm) {
        if (options.failWith !== undefined) {
          const { SignerUnavailableError } = await import('@certsmith/signer-api');
          throw new SignerUnavailableError(options.failWith);
        }
        return signWithKeyObject(key, tbs, algorithm);
      },
      close: async () => {},
    };
  },
});
