/**
 * The CI share of issue 19's parser fuzzing: a bounded, deterministic campaign (seed 19) over
 * x509-core's PEM, DER, certificate, CSR, private-key and PKCS#7 parsing, seeded from the cfssl_trust
 * bundles and keys, CSRs and certificates generated now. The by-hand run of a million inputs is
 * `node tools/fuzz/run.mjs --inputs 1000000` (see tools/fuzz/README.md).
 */
import {
  parseCertificate,
  parseCertificateRequestDer,
  parseCertificates,
  parsePkcs7Certificates,
  parsePrivateKeyDer,
} from '@certsmith/x509-core';
import { describe, expect, it } from 'vitest';
import { runCampaign } from './campaign.mjs';
import { TARGETS } from './targets.mjs';

/** Inputs of the CI sample: about 5–10 s of parsing on a 2-core machine. */
const SAMPLE_INPUTS = 25_000;

describe('runCampaign', () => {
  it(`answers each of ${SAMPLE_INPUTS} mutated inputs with a result or its CFSSL code, and agrees with Node's X509Certificate wherever it accepts`, () => {
    const report = runCampaign({ seed: 19, inputs: SAMPLE_INPUTS });
    expect(report.findings).toEqual([]);
    for (const target of TARGETS) {
      const tally = report.targets[target.name]!;
      expect(tally.runs, target.name).toBeGreaterThan(200);
      // Both outcomes are reached: the mutations are neither all fatal nor all harmless.
      expect(tally.accepted, target.name).toBeGreaterThan(0);
      if (target.name !== 'pem') expect(Object.values(tally.refused).reduce((a, b) => a + b, 0), target.name).toBeGreaterThan(0);
    }
    expect(report.node.nodeAccepted).toBeGreaterThan(500);
    // No input may take long: a hang or a super-linear path shows here first.
    expect(report.slowest.milliseconds).toBeLessThan(2000);
  });

  it('gives the same outcomes for the same seed', () => {
    const first = runCampaign({ seed: 5, inputs: 500 });
    const second = runCampaign({ seed: 5, inputs: 500 });
    expect(second.targets).toEqual(first.targets);
    expect(second.node).toEqual(first.node);
  });
});

describe('length fields', () => {
  /** A TLV header claiming `length` content octets, followed by only a few. */
  const claiming = (tag: number, length: number): Uint8Array =>
    Uint8Array.of(tag, 0x84, (length >>> 24) & 0xff, (length >>> 16) & 0xff, (length >>> 8) & 0xff, length & 0xff, 0x02, 0x01, 0x00);

  it.each([
    ['parseCertificate', (der: Uint8Array) => parseCertificate(der), [1003]],
    ['parseCertificates', (der: Uint8Array) => parseCertificates(der), [1002, 1003]],
    ['parseCertificateRequestDer', (der: Uint8Array) => parseCertificateRequestDer(der), [9003]],
    ['parsePrivateKeyDer', (der: Uint8Array) => parsePrivateKeyDer(der), [2003]],
    ['parsePkcs7Certificates', (der: Uint8Array) => parsePkcs7Certificates(der), [1003]],
  ] as const)('%s refuses headers claiming up to 4 GiB with its code, allocating nothing of that size', (_name, parse, codes) => {
    const before = process.memoryUsage().arrayBuffers;
    for (const length of [0x100_0000, 0x1000_0000, 0x7fff_ffff, 0xffff_ffff]) {
      for (const tag of [0x30, 0x04, 0x02, 0x31]) {
        let code: number | undefined;
        try {
          parse(claiming(tag, length));
        } catch (error) {
          code = (error as { code?: number }).code;
        }
        expect(codes).toContain(code);
      }
    }
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 2 ** 20);
  });
});
