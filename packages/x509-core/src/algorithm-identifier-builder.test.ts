import { describe, expect, it } from 'vitest';

import { SIGNATURE_ALGORITHM_NAMES, signatureAlgorithmIdentifier } from './algorithm-identifier-builder.js';
import { readSignatureAlgorithm } from './algorithm-identifier.js';
import { DerReader } from './der-reader.js';

function read(der: Uint8Array) {
  const reader = new DerReader(der);
  return readSignatureAlgorithm(der, reader.expect(0x30, 'AlgorithmIdentifier'), reader);
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('signatureAlgorithmIdentifier', () => {
  it('reads back as the same key family and hash for every name', () => {
    for (const name of SIGNATURE_ALGORITHM_NAMES) {
      const info = read(signatureAlgorithmIdentifier(name));
      const family = name === 'Ed25519' ? 'Ed25519' : name.startsWith('ECDSA') ? 'ECDSA' : 'RSA';
      expect(info.keyAlgorithm, name).toBe(family);
      expect(info.pss, name).toBe(name.startsWith('RSA-PSS'));
      if (name !== 'Ed25519') expect(info.hash, name).toBe(name.slice(name.lastIndexOf('-') + 1));
    }
  });

  it('writes NULL parameters for RSA and none for ECDSA and Ed25519, as Go does', () => {
    expect(hex(signatureAlgorithmIdentifier('RSA-SHA256'))).toBe('300d06092a864886f70d01010b0500');
    expect(hex(signatureAlgorithmIdentifier('ECDSA-SHA256'))).toBe('300a06082a8648ce3d040302');
    expect(hex(signatureAlgorithmIdentifier('Ed25519'))).toBe('300506032b6570');
  });

  it('writes RSA-PSS parameters with a salt as long as the hash', () => {
    expect(read(signatureAlgorithmIdentifier('RSA-PSS-SHA384')).pssParameters).toMatchObject({ hash: 'SHA384', mgf1Hash: 'SHA384', saltLength: 48 });
  });
});
