/** Test certificates for store tests, generated at test time with `@certsmith/test-pki`. */
import { TestPki } from '@certsmith/test-pki';
import type { TestCertificate } from '@certsmith/test-pki';

/** A CA and a way to issue leaves from it with distinct serials. */
export interface TestIssuer {
  pki: TestPki;
  ca: TestCertificate;
  /** Lower-case hex of the CA's SKI (= the AKI of what it issues). */
  akiHex: string;
  leaf(name: string, options?: { dns?: string[]; notAfter?: Date; notBefore?: Date; serialHex?: string }): TestCertificate;
}

let counter = 0;

export function testIssuer(name = 'Store Test CA', now = new Date()): TestIssuer {
  const pki = new TestPki({ now });
  const ca = pki.root(name, { key: 'ecdsa-p256' });
  return {
    pki,
    ca,
    akiHex: Buffer.from(ca.subjectKeyId!).toString('hex'),
    leaf(leafName, options = {}) {
      counter += 1;
      // Distinct, positive serials with the top bit clear; a random prefix keeps runs apart.
      const serialHex = options.serialHex ?? `4${counter.toString(16).padStart(9, '0')}${Math.floor(Math.random() * 0xffffff).toString(16).padStart(6, '0')}`;
      return pki.leaf(leafName, ca, {
        key: 'ecdsa-p256',
        keyLabel: 'store-test-leaf',
        dns: options.dns ?? [leafName],
        serialHex,
        ...(options.notAfter === undefined ? {} : { notAfter: options.notAfter }),
        ...(options.notBefore === undefined ? {} : { notBefore: options.notBefore }),
      });
    },
  };
}
