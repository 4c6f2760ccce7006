/**
 * One signature on the token, shared by the signer and the admin functions (self-signed CA, CSR).
 * `C_SignInit` runs on the main thread (it is a table lookup in every library); `C_Sign` runs on
 * libuv's thread pool through pkcs11js's callback form, so a slow HSM never blocks the event loop.
 */
import type { Key, Session } from 'graphene-pk11';

import type { SignatureAlgorithm } from '@certsmith/signer-api';

import { ecdsaSignatureToDer, planSignature } from './mechanisms.js';
import type { ModuleLease } from './module-registry.js';

/**
 * Sign `data` with `key` in `session` and return the contract's form (ECDSA as DER
 * `SEQUENCE { r, s }`, RSA raw). The session must not be used by anyone else meanwhile.
 */
export function signOnToken(lease: ModuleLease, session: Session, key: Key, algorithm: SignatureAlgorithm, data: Uint8Array): Promise<Uint8Array> {
  const plan = planSignature(algorithm, data);
  return lease.run(async () => {
    const operation = session.createSign(plan.mechanism, key);
    const raw = await new Promise<Buffer>((resolve, reject) => {
      operation.once(plan.input, (error, signature) => (error ? reject(error) : resolve(signature)));
    });
    return plan.ecdsa ? ecdsaSignatureToDer(raw) : new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
  });
}
