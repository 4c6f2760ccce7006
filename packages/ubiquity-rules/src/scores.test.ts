import { describe, expect, it } from 'vitest';
import { parseCertificate, type Certificate } from '@certsmith/x509-core';
import { TestPki, type TestCertificate } from '@certsmith/test-pki';
import {
  chainHashPriority,
  chainHashUbiquity,
  chainKeyAlgoPriority,
  chainKeyAlgoUbiquity,
  hashPriority,
  hashUbiquity,
  keyAlgoPriority,
  keyAlgoUbiquity,
} from './crypto-scores.js';
import { monthsValid, validExpiry } from './expiry.js';
import {
  compareChainCryptoSuite,
  compareChainExpiry,
  compareChainLength,
  compareExpiryUbiquity,
  compareSha2Homogeneity,
  filterChains,
  sha2Homogeneity,
} from './compare-chains.js';
import { crossPlatformUbiquity, platformTrusts, spkiSha1, untrustedPlatforms, type Platform } from './platform.js';
import { rankChains, rankOptimal, rankUbiquitous } from './rank-chains.js';

const now = new Date('2026-11-22T00:00:00Z');
const pki = new TestPki({ now });
const p = (c: TestCertificate): Certificate => parseCertificate(c.der);
const root = pki.root('Score Root', { key: 'rsa-2048' });

describe('hashUbiquity / hashPriority', () => {
  it('scores SHA-1 100/10, SHA-2 70/100 and MD5 or Ed25519 0/0', () => {
    const cases: Array<[TestCertificate, number, number]> = [
      [pki.leaf('sha1.example', root, { signatureHash: 'SHA-1' }), 100, 10],
      [pki.leaf('sha256.example', root), 70, 100],
      [pki.leaf('sha512.example', root, { signatureHash: 'SHA-512' }), 70, 100],
      [pki.leaf('md5.example', root, { signatureHash: 'MD5' }), 0, 0],
      [pki.leaf('ed.example', pki.root('Ed Score Root', { key: 'ed25519' })), 0, 0],
    ];
    for (const [cert, ubiquity, priority] of cases) {
      expect(hashUbiquity(p(cert))).toBe(ubiquity);
      expect(hashPriority(p(cert))).toBe(priority);
    }
  });
});

describe('keyAlgoUbiquity / keyAlgoPriority', () => {
  it('scores every key type as CFSSL when given RSA, ECDSA and Ed25519 keys', () => {
    const table: Array<[Parameters<typeof pki.leaf>[2] extends infer O ? O : never, number, number]> = [
      [{ key: 'rsa-1024' }, 100, 0],
      [{ key: 'rsa-2048' }, 100, 30],
      [{ key: 'rsa-3072' }, 100, 50],
      [{ key: 'rsa-4096' }, 100, 70],
      [{ key: 'ecdsa-p256' }, 70, 100],
      [{ key: 'ecdsa-p384' }, 70, 120],
      [{ key: 'ecdsa-p521' }, 30, 140],
      [{ key: 'ed25519' }, 0, 0],
    ];
    for (const [options, ubiquity, priority] of table) {
      const cert = p(pki.leaf(`${String(options?.key)}.key.example`, root, options));
      expect([keyAlgoUbiquity(cert), keyAlgoPriority(cert)], String(options?.key)).toEqual([ubiquity, priority]);
    }
  });
});

describe('chain scores', () => {
  it('takes minimums for ubiquity and truncated running means for priority', () => {
    const inter = pki.intermediate('Score Inter', root, { key: 'ecdsa-p384' });
    const leaf = pki.leaf('chain.example', inter, { key: 'ecdsa-p256', signatureHash: 'SHA-1' });
    const chain = [leaf, inter, root].map(p);
    expect(chainHashUbiquity(chain)).toBe(70);
    expect(chainKeyAlgoUbiquity(chain)).toBe(70);
    expect(chainHashPriority(chain)).toBe(70); // (10 + 100 + 100) / 3
    expect(chainKeyAlgoPriority(chain)).toBe(83); // (100 + 120 + 30) / 3 = 83.33
  });
});

describe('validExpiry / monthsValid', () => {
  it('applies the 39/60/120-month limits by issue date', () => {
    const mk = (nb: string, na: string): Certificate =>
      p(pki.leaf(`exp${nb}${na}.example`, root, { notBefore: new Date(nb), notAfter: new Date(na) }));
    expect(monthsValid(mk('2020-01-15T00:00:00Z', '2023-04-16T00:00:00Z'))).toBe(40);
    expect(validExpiry(mk('2020-01-15T00:00:00Z', '2023-04-15T00:00:00Z'))).toBe(true);
    expect(validExpiry(mk('2020-01-15T00:00:00Z', '2023-04-16T00:00:00Z'))).toBe(false);
    expect(validExpiry(mk('2013-01-01T00:00:00Z', '2018-01-01T00:00:00Z'))).toBe(true);
    expect(validExpiry(mk('2010-01-01T00:00:00Z', '2020-01-01T00:00:00Z'))).toBe(true);
    expect(validExpiry(mk('2010-01-01T00:00:00Z', '2020-01-02T00:00:00Z'))).toBe(false);
  });
});

describe('filterChains', () => {
  it('keeps ties in input order and restarts on a strictly better chain', () => {
    const a = [p(root)];
    const b = [p(root), p(root)];
    const c = [p(root)];
    expect(filterChains([b, a, c], compareChainLength)).toEqual([a, c]);
    expect(filterChains([a], compareChainLength)).toEqual([a]);
    expect(filterChains([], compareChainLength)).toEqual([]);
  });
});

describe('comparators', () => {
  const inter = pki.intermediate('Cmp Inter', root);
  const leaf = pki.leaf('cmp.example', inter);
  it('prefers shorter, later-expiring and more modern chains', () => {
    const long = [leaf, inter, root].map(p);
    const short = [leaf, inter].map(p);
    expect(compareChainLength(short, long)).toBeGreaterThan(0);
    const early = pki.intermediate('Cmp Inter', root, { key: inter.key, notAfter: pki.days(10) });
    expect(compareChainExpiry([p(leaf), p(inter)], [p(leaf), p(early)])).toBe(1);
    expect(compareChainCryptoSuite([p(leaf), p(inter)], [p(leaf), p(root)])).toBeGreaterThan(0);
  });

  it('prefers SHA-2 homogeneous chains and CA/B-valid lifetimes from the root end', () => {
    const sha1Inter = pki.crossSign(inter, root, { signatureHash: 'SHA-1' });
    expect(sha2Homogeneity([leaf, inter, root].map(p))).toBe(1);
    expect(sha2Homogeneity([leaf, sha1Inter, root].map(p))).toBe(0);
    expect(compareSha2Homogeneity([leaf, inter, root].map(p), [leaf, sha1Inter, root].map(p))).toBe(1);
    const shortRoot = pki.root('Cmp Short Root', { notAfter: pki.days(365) });
    const longRoot = pki.root('Cmp Long Root', { notAfter: pki.days(3650) });
    expect(compareExpiryUbiquity([p(leaf), p(shortRoot)], [p(leaf), p(longRoot)])).toBe(1);
  });
});

describe('platforms', () => {
  const otherRoot = pki.root('Score Other Root', { key: 'rsa-2048' });
  const mk = (name: string, weight: number, roots: TestCertificate[], hash = 70, key = 70): Platform => ({
    name,
    weight,
    hashAlgo: hash === 100 ? 'SHA1' : 'SHA2',
    keyAlgo: key === 100 ? 'RSA' : 'ECDSA256',
    keystoreFile: '',
    hashUbiquity: hash,
    keyAlgoUbiquity: key,
    keystore: new Set(roots.map((r) => spkiSha1(p(r)))),
  });

  it('trusts every root when the keystore is empty', () => {
    expect(platformTrusts(mk('Chrome', 0, []), p(otherRoot))).toBe(true);
  });

  it('lists untrusting platforms in metadata order', () => {
    const platforms = [mk('B', 1, [otherRoot]), mk('A', 1, [root]), mk('C', 1, [otherRoot])];
    expect(untrustedPlatforms(p(root), platforms)).toEqual(['B', 'C']);
  });

  it('sums weights of trusting platforms whose crypto requirements the chain meets', () => {
    const inter = pki.intermediate('Plat Inter', root, { key: 'ecdsa-p256' });
    const chain = [pki.leaf('plat.example', inter), inter, root].map(p);
    const platforms = [mk('Modern', 10, [root]), mk('XP', 21, [root], 100, 100), mk('Other', 5, [otherRoot])];
    expect(crossPlatformUbiquity(chain, platforms)).toBe(10);
    expect(crossPlatformUbiquity(chain, [])).toBe(0);
  });

  it('ranks by platform weight in ubiquitous mode and by length in optimal mode', () => {
    const inter = pki.intermediate('Rank Inter', root);
    const crossRoot = pki.root('Rank Cross Root');
    const interAsRoot = inter; // trusted directly by one platform, like TestUbiquitousBundle's L1
    const leaf = pki.leaf('rank.example', inter);
    const short = [leaf, interAsRoot].map(p);
    const long = [leaf, inter, root].map(p);
    const platforms = [mk('Wide', 10, [root]), mk('Narrow', 1, [interAsRoot])];
    expect(rankOptimal([long, short])[0]).toBe(short);
    expect(rankUbiquitous([short, long], platforms)[0]).toBe(long);
    expect(rankChains([short, long], 'bogus', platforms)[0]).toBe(long);
    expect(rankChains([long, short], 'optimal', platforms)[0]).toBe(short);
    void crossRoot;
  });
});
