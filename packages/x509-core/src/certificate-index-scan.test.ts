import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanCertificateIndex } from './certificate-index-scan.js';
import { readCertificateIndex, walkCertificateIndex, type CertificateIndex } from './certificate-index.js';
import { derBitString, derBoolean, derExplicit, derImplicit, derInteger, derOctetString, derOid, derSequence, derSetOf, derTime, derTlv, derUtf8String } from './der-writer.js';
import { decodePemBlocks } from './pem.js';
import { TRUST_DIR, certificateIndexHex } from './test-support/fixtures.js';

const fields = certificateIndexHex;

/** The walk's answer: its fields, or the code it refuses with. */
function walked(der: Uint8Array): ReturnType<typeof fields> | { code: number } {
  try {
    return fields(walkCertificateIndex(der));
  } catch (error) {
    return { code: (error as { code: number }).code };
  }
}

const TRUST = ['ca-bundle.crt', 'int-bundle.crt'].flatMap((file) => decodePemBlocks(readFileSync(`${TRUST_DIR}/${file}`, 'utf8')).map((block) => block.bytes));

const ALGORITHM = derSequence(derOid('1.2.840.10045.4.3.2'));
const name = (cn: string) => derSequence(derSetOf([derSequence(derOid('2.5.4.3'), derUtf8String(cn))]));
const extension = (oid: string, value: Uint8Array, critical = false) => derSequence(derOid(oid), ...(critical ? [derBoolean(true)] : []), derOctetString(value));
const SKI = extension('2.5.29.14', derOctetString(Uint8Array.of(1, 2, 3)));
const AKI = extension('2.5.29.35', derSequence(derImplicit(0, Uint8Array.of(4, 5, 6), false)));

/** A certificate's DER, unsigned (the index does not verify), with the parts a test changes. */
function certificate(options: { version?: Uint8Array | null; uniqueIds?: boolean; extensions?: Uint8Array[] | null } = {}): Uint8Array {
  const version = options.version === undefined ? derExplicit(0, derInteger(2)) : options.version;
  const tbs = derSequence(
    ...(version === null ? [] : [version]),
    derInteger(7),
    ALGORITHM,
    name('scan issuer'),
    derSequence(derTime(new Date('2026-01-01T00:00:00Z')), derTime(new Date('2027-01-01T00:00:00Z'))),
    name('scan subject'),
    derSequence(derSequence(derOid('1.2.840.10045.2.1'), derOid('1.2.840.10045.3.1.7')), derBitString(new Uint8Array(65).fill(4))),
    ...(options.uniqueIds ? [derImplicit(1, Uint8Array.of(0, 1), false), derImplicit(2, Uint8Array.of(0, 2), false)] : []),
    ...(options.extensions === null ? [] : [derExplicit(3, derSequence(...(options.extensions ?? [SKI, AKI])))]),
  );
  return derSequence(tbs, ALGORITHM, derBitString(new Uint8Array(70).fill(9)));
}

/** Offsets of every identifier and length octet in `der` (constructed elements entered), and of each primitive's first content octets. */
function headerOffsets(der: Uint8Array, start = 0, end = der.length, out: number[] = []): number[] {
  let at = start;
  while (at + 2 <= end) {
    const tag = der[at]!;
    let length = der[at + 1]!;
    let content = at + 2;
    if (length & 0x80) {
      const count = length & 0x7f;
      length = 0;
      for (let i = 0; i < count; i++) length = length * 256 + (der[content++] ?? 0);
    }
    for (let i = at; i < content; i++) out.push(i);
    if (content + length > end) break;
    if (tag & 0x20) headerOffsets(der, content, content + length, out);
    // A primitive's first content octets decide too: BIT STRING padding, version, id-ce arcs.
    else for (let i = content; i < Math.min(content + 3, content + length); i++) out.push(i);
    at = content + length;
  }
  return out;
}

describe('scanCertificateIndex', () => {
  it('takes every cfssl_trust certificate, with the walk\'s fields', () => {
    for (const der of TRUST) {
      const scanned = scanCertificateIndex(der);
      expect(scanned).not.toBeNull();
      expect(fields(scanned!)).toEqual(walked(der));
    }
    expect(TRUST.length).toBeGreaterThan(1_500);
  });

  it('takes unique identifiers, critical flags and an AKI without a key identifier as the walk does', () => {
    const withAll = certificate({ uniqueIds: true, extensions: [extension('2.5.29.14', derOctetString(Uint8Array.of(8)), true), extension('2.5.29.35', derSequence(derImplicit(2, Uint8Array.of(1), false)))] });
    expect(fields(scanCertificateIndex(withAll)!)).toEqual(walked(withAll));
    expect(fields(scanCertificateIndex(withAll)!).aki).toBeNull();
    const v1 = certificate({ version: null, extensions: null });
    expect(fields(scanCertificateIndex(v1)!)).toEqual(walked(v1));
  });

  it('declines what the walk refuses, and leaves unusual encodings to the walk', () => {
    const duplicate = certificate({ extensions: [SKI, AKI, SKI] });
    expect(scanCertificateIndex(duplicate)).toBeNull();
    expect(() => readCertificateIndex(duplicate)).toThrow(expect.objectContaining({ code: 1003 }));
    const badVersion = certificate({ version: derExplicit(0, derInteger(3)) });
    // The signature's BIT STRING claims one unused bit, but its last octet (0x09) has it set.
    const good = certificate();
    const badPadding = Uint8Array.from(good);
    badPadding[good.length - 71] = 1;
    expect(fields(scanCertificateIndex(good)!).signature).toBe('09'.repeat(70));
    for (const der of [badVersion, badPadding]) {
      expect(scanCertificateIndex(der)).toBeNull();
      expect(() => readCertificateIndex(der)).toThrow(expect.objectContaining({ code: 1003 }));
    }
    // Accepted by the walk, read by it: a version INTEGER of two octets, more than 64 extensions.
    const longVersion = certificate({ version: derExplicit(0, derTlv(0x02, Uint8Array.of(0, 2))) });
    const many = certificate({ extensions: Array.from({ length: 70 }, (_, i) => extension(`1.2.3.${i}`, Uint8Array.of(5, 0))) });
    for (const der of [longVersion, many]) {
      expect(scanCertificateIndex(der)).toBeNull();
      expect(fields(readCertificateIndex(der))).toEqual(walked(der));
    }
  });

  it('takes a mutated certificate only when the walk accepts it, and then with the walk\'s fields', () => {
    const sources = [...TRUST.filter((_, i) => i % 50 === 0), certificate(), certificate({ uniqueIds: true }), certificate({ version: null, extensions: null })];
    const mutation = fc.record({
      source: fc.nat(sources.length - 1),
      // Mostly the identifier and length octets, where the structure is decided; any octet too.
      edits: fc.array(fc.record({ header: fc.boolean(), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }), kind: fc.constantFrom('set', 'set', 'set', 'cut', 'insert') }), { minLength: 1, maxLength: 3 }),
    });
    let taken = 0;
    let refused = 0;
    fc.assert(
      fc.property(mutation, ({ source, edits }) => {
        let der = Uint8Array.from(sources[source]!);
        for (const edit of edits) {
          const offsets = headerOffsets(der);
          const at = edit.header && offsets.length > 0 ? offsets[edit.at % offsets.length]! : edit.at % der.length;
          if (edit.kind === 'set') der[at] = edit.value;
          else if (edit.kind === 'cut') der = Uint8Array.from([...der.subarray(0, at), ...der.subarray(at + 1)]);
          else der = Uint8Array.from([...der.subarray(0, at), edit.value, ...der.subarray(at)]);
        }
        const scanned = scanCertificateIndex(der);
        const expected = walked(der);
        if ('code' in expected) refused++;
        if (scanned === null) return;
        taken++;
        expect(fields(scanned)).toEqual(expected);
      }),
      { numRuns: 20_000 },
    );
    // The mutations reach both sides.
    expect(taken).toBeGreaterThan(1_000);
    expect(refused).toBeGreaterThan(1_000);
  });
});
