/**
 * A conformance check for signer plugins, usable from any test runner: third parties prove their
 * plugin with the same checks certsmith's own signers pass (the typescript-eslint "published test
 * harness" idea from the style guide). It reports a result object instead of throwing (PKI.js
 * style), so a failing plugin shows every problem at once.
 */
import { X509Certificate, constants, verify } from 'node:crypto';

import { isSignatureAlgorithm, signatureHash } from './signature-algorithm.js';
import type { SignatureAlgorithm } from './signature-algorithm.js';
import type { Signer } from './signer.js';

/** One check and its outcome. */
export interface ConformanceCheck {
  name: string;
  ok: boolean;
  /** Why it failed (absent when ok). */
  message?: string;
}

/** Outcome of {@link checkSignerConformance}. */
export interface ConformanceResult {
  ok: boolean;
  checks: ConformanceCheck[];
}

/** Options of {@link checkSignerConformance}. */
export interface ConformanceOptions {
  /** Also check `close()` (idempotence, later `sign` rejects with a coded error). Default true. */
  checkClose?: boolean;
}

const SALT = { sha256: 32, sha384: 48, sha512: 64 } as const;

function verifies(certificate: X509Certificate, data: Uint8Array, signature: Uint8Array, algorithm: SignatureAlgorithm): boolean {
  const hash = signatureHash(algorithm);
  const key = certificate.publicKey;
  const options = algorithm.startsWith('RSA-PSS') ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: SALT[hash as keyof typeof SALT] } : key;
  return verify(hash, data, options, signature);
}

/**
 * Run the contract checks against a created signer: the certificate (DER and PEM agree and parse),
 * the algorithm list (known names, non-empty when `sign` exists), one signature per advertised
 * algorithm verified with the certificate's public key by node:crypto (ECDSA as DER), and `close`
 * semantics. `close` is called at the end unless `checkClose` is false.
 */
export async function checkSignerConformance(signer: Signer, options: ConformanceOptions = {}): Promise<ConformanceResult> {
  const checks: ConformanceCheck[] = [];
  const check = async (name: string, run: () => Promise<string | undefined> | string | undefined): Promise<void> => {
    try {
      const problem = await run();
      checks.push(problem === undefined ? { name, ok: true } : { name, ok: false, message: problem });
    } catch (error) {
      checks.push({ name, ok: false, message: error instanceof Error ? error.message : String(error) });
    }
  };

  let certificate: X509Certificate | null = null;
  await check('getCertificate returns matching DER and PEM', async () => {
    const { der, pem } = await signer.getCertificate();
    const fromDer = new X509Certificate(der);
    const fromPem = new X509Certificate(pem);
    if (!fromDer.raw.equals(fromPem.raw)) return 'der and pem hold different certificates';
    certificate = fromDer;
    return undefined;
  });

  await check('algorithms are known names', () => {
    const unknown = signer.algorithms.filter((algorithm) => !isSignatureAlgorithm(algorithm));
    if (unknown.length > 0) return `unknown algorithms: ${unknown.join(', ')}`;
    if (typeof signer.sign === 'function' && signer.algorithms.length === 0) return 'sign exists but algorithms is empty';
    if (typeof signer.sign !== 'function' && typeof signer.signRequest !== 'function') return 'neither sign nor signRequest';
    return undefined;
  });

  if (typeof signer.sign === 'function') {
    const data = new TextEncoder().encode('certsmith signer conformance: to be signed');
    for (const algorithm of signer.algorithms) {
      await check(`sign(${algorithm}) verifies with the certificate key`, async () => {
        if (certificate === null) return 'no certificate to verify with';
        const signature = await signer.sign!(data, algorithm);
        if (!(signature instanceof Uint8Array)) return 'signature is not a Uint8Array';
        if (algorithm.startsWith('ECDSA') && signature[0] !== 0x30) return 'ECDSA signature is not a DER SEQUENCE';
        return verifies(certificate, data, signature, algorithm) ? undefined : 'signature does not verify';
      });
    }
  }

  if (typeof signer.health === 'function') {
    await check('health reports ok', async () => {
      const health = await signer.health!();
      return health.ok ? undefined : `unhealthy: ${health.message ?? 'no message'}`;
    });
  }

  if (options.checkClose !== false) {
    await check('close is idempotent', async () => {
      await signer.close();
      await signer.close();
      return undefined;
    });
    if (typeof signer.sign === 'function' && signer.algorithms.length > 0) {
      await check('sign after close rejects with a coded error', async () => {
        try {
          await signer.sign!(new Uint8Array([1]), signer.algorithms[0] as SignatureAlgorithm);
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          return typeof code === 'number' && code > 0 ? undefined : 'rejected without a numeric code';
        }
        return 'sign succeeded after close';
      });
    }
  }

  return { ok: checks.every((entry) => entry.ok), checks };
}
