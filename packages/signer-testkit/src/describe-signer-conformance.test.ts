import type { SignRequest, Signer } from '@certsmith/signer-api';
import { SignerUnavailableError, defineSigner } from '@certsmith/signer-api';
import { DEFAULT_LABEL, createIssuer, createSignerDirectory, defaultSigningPolicy } from '@certsmith/issuer';

import { describeSignerConformance } from './describe-signer-conformance.js';
import type { TestCaKeyType } from './test-ca.js';
import { createTestCa } from './test-ca.js';

/** A plugin over the testkit's in-memory CA signer: the smallest plugin that honours the contract. */
const memoryPlugin = defineSigner<{ keyType: TestCaKeyType }>({
  meta: { name: 'memory-signer', apiVersion: '^1.0.0' },
  optionsSchema: {
    type: 'object',
    properties: { keyType: { enum: ['ecdsa-p256', 'ecdsa-p384', 'rsa-2048', 'ed25519'] } },
    required: ['keyType'],
    additionalProperties: false,
  },
  create: async ({ keyType }) => (await createTestCa({ key: keyType })).createSigner(),
});

/** A signer that can only sign whole requests, as a remote CA does: the issuer runs "remotely". */
const remotePlugin = defineSigner<Record<string, never>>({
  meta: { name: 'remote-signer', apiVersion: '^1.0.0' },
  optionsSchema: { type: 'object', additionalProperties: false },
  async create(): Promise<Signer> {
    const ca = await createTestCa();
    const behind = ca.createSigner();
    let closed = false;
    return {
      algorithms: [],
      getCertificate: () => behind.getCertificate(),
      async signRequest(request: SignRequest) {
        if (closed) throw new SignerUnavailableError('signer is closed');
        const issuer = createIssuer({ signers: createSignerDirectory([{ label: DEFAULT_LABEL, signer: behind, policy: defaultSigningPolicy() }]) });
        return { certificatePem: (await issuer.signCertificate({ ...request, label: '' }, { authenticated: true })).certificatePem };
      },
      async close() {
        closed = true;
        await behind.close();
      },
    };
  },
});

describeSignerConformance(memoryPlugin, { keyType: 'ecdsa-p256' }, { title: 'memory signer (P-256)' });
describeSignerConformance({ default: memoryPlugin }, () => ({ keyType: 'rsa-2048' as const }), {
  title: 'memory signer (RSA 2048, module namespace, lazy options)',
  invalidOptions: [{ title: 'an unsupported key type', options: { keyType: 'dsa-1024' } }],
});
describeSignerConformance(Promise.resolve(memoryPlugin), { keyType: 'ed25519' }, { title: 'memory signer (Ed25519, promised module)' });
describeSignerConformance(remotePlugin, {}, { title: 'signRequest-only signer' });
