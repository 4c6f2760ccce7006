import { describe, expect, it } from 'vitest';
import { parseCertificate, type Certificate } from '@certsmith/x509-core';
import { TestPki, type TestCertificate } from '@certsmith/test-pki';
import { assessChain, expirationWarning, untrustedPlatformsWarning, StatusMessage } from './chain-status.js';
import { spkiSha1, type Platform } from './platform.js';
import { sha1DeprecationMessages, flagsChain, SHA1_DEPRECATION_POLICIES } from './sha1-deprecation.js';

const now = new Date('2026-11-22T00:00:00Z');
const pki = new TestPki({ now });
const p = (c: TestCertificate): Certificate => parseCertificate(c.der);
const root = pki.root('Status Root', { key: 'rsa-2048', signatureHash: 'SHA-1' });
const platform = (name: string, roots: TestCertificate[]): Platform => ({
  name,
  weight: 1,
  hashAlgo: 'SHA2',
  keyAlgo: 'ECDSA256',
  keystoreFile: '',
  hashUbiquity: 70,
  keyAlgoUbiquity: 70,
  keystore: new Set(roots.map((r) => spkiSha1(p(r)))),
});

describe('expirationWarning', () => {
  it('writes CFSSL\'s text without a space and in singular or plural', () => {
    expect(expirationWarning([0])).toBe('The bundle is expiring within 30 days.The expiring cert is #1 in the chain.');
    expect(expirationWarning([0, 2])).toBe('The bundle is expiring within 30 days.The expiring certs are #1 #3 in the chain.');
    expect(expirationWarning([])).toBe('');
  });
});

describe('untrustedPlatformsWarning', () => {
  it('joins names with commas and ends with a period', () => {
    expect(untrustedPlatformsWarning(['Mozilla', 'Windows XP'], 15)).toBe(
      'The bundle may not be trusted by the following platform(s): Mozilla, Windows XP.',
    );
    expect(untrustedPlatformsWarning([], 15)).toBe('');
    expect(untrustedPlatformsWarning([], 0)).toBe('Unable to measure bundle ubiquity: No platform metadata present.');
  });
});

describe('assessChain', () => {
  it('flags expiring certificates with their upper-case SKIs in chain order', () => {
    const inter = pki.intermediate('Status Inter', root, { key: 'rsa-2048', signatureHash: 'SHA-1', notAfter: pki.days(10) });
    const leaf = pki.leaf('exp.example', inter, { key: 'rsa-2048', signatureHash: 'SHA-1', notAfter: pki.days(5) });
    const status = assessChain([leaf, inter, root].map(p), { platforms: [], now, checkRootTrust: true });
    expect(status.code & 1).toBe(1);
    expect(status.expiringSkis).toEqual([leaf.subjectKeyIdHex, inter.subjectKeyIdHex]);
    expect(status.expiringSkis?.[0]).toMatch(/^[0-9A-F]{40}$/);
    expect(status.messages?.[0]).toBe('The bundle is expiring within 30 days.The expiring certs are #1 #2 in the chain.');
  });

  it('reports SHA-2, ECDSA, untrusted and no-platform warnings in CFSSL\'s order', () => {
    const inter = pki.intermediate('Status EC Inter', root, { key: 'ecdsa-p384' });
    const leaf = pki.leaf('ec.example', inter);
    const chain = [leaf, inter, root].map(p);
    const trusted = assessChain(chain, { platforms: [platform('A', [root]), platform('B', [inter]), platform('C', [])], now, checkRootTrust: true });
    expect(trusted).toEqual({
      expiringSkis: null,
      untrustedRootStores: ['B'],
      messages: [
        StatusMessage.sha2,
        StatusMessage.ecdsa,
        'The bundle may not be trusted by the following platform(s): B.',
      ],
      code: 2,
    });
    const none = assessChain(chain, { platforms: [], now, checkRootTrust: true });
    expect(none.untrustedRootStores).toEqual([]);
    expect(none.messages?.at(-1)).toBe(StatusMessage.noPlatforms);
    const force = assessChain(chain, { platforms: [], now, checkRootTrust: false });
    expect(force.untrustedRootStores).toBeNull();
    expect(force.messages).toEqual([StatusMessage.sha2, StatusMessage.ecdsa]);
  });

  it('returns nulls and code 0 for a clean all-RSA SHA-1 chain trusted everywhere', () => {
    const leaf = pki.leaf('clean.example', root, { key: 'rsa-2048', signatureHash: 'SHA-1', notBefore: new Date('2014-01-01T00:00:00Z'), notAfter: new Date('2015-12-01T00:00:00Z') });
    const status = assessChain([p(leaf), p(root)], { platforms: [platform('A', [root])], now: new Date('2015-06-01T00:00:00Z'), checkRootTrust: true });
    expect(status).toEqual({ expiringSkis: null, untrustedRootStores: [], messages: null, code: 0 });
  });
});

describe('sha1DeprecationMessages', () => {
  it('keeps the most severe policy per platform in a fixed platform order', () => {
    const inter = pki.intermediate('SHA1 Inter', root, { key: 'rsa-2048', signatureHash: 'SHA-1' });
    const leaf = pki.leaf('sha1dep.example', inter, { key: 'rsa-2048', signatureHash: 'SHA-1' });
    expect(sha1DeprecationMessages([leaf, inter, root].map(p), now)).toEqual([
      'Google Chrome shows the SSL connection is untrusted due to SHA-1 deprecation',
      'Mozilla Firefox shows the SSL connection is untrusted due to SHA-1 deprecation',
      'Microsoft Windows Vista and later shows the SSL connection is untrusted due to SHA-1 deprecation',
    ]);
  });

  it('applies effective dates and ignores a SHA-1 root', () => {
    const leaf = pki.leaf('early.example', root, { key: 'rsa-2048', signatureHash: 'SHA-1', notBefore: new Date('2015-01-01T00:00:00Z'), notAfter: new Date('2016-06-01T00:00:00Z') });
    const chain = [p(leaf), p(root)];
    expect(sha1DeprecationMessages(chain, new Date('2015-06-01T00:00:00Z'))).toEqual([
      'Google Chrome shows the SSL connection has minor problems due to SHA-1 deprecation',
    ]);
    const sha2Leaf = pki.leaf('sha2leaf.example', root, { key: 'rsa-2048' });
    expect(sha1DeprecationMessages([p(sha2Leaf), p(root)], now)).toEqual([]);
  });

  it('finds nothing to flag, as no policy would, when nothing below the root is SHA-1 signed', () => {
    const sha2Inter = pki.intermediate('SHA2 Inter', root, { key: 'rsa-2048' });
    const sha2Leaf = pki.leaf('sha2only.example', sha2Inter, { key: 'rsa-2048', notBefore: new Date('2016-02-01T00:00:00Z'), notAfter: new Date('2030-01-01T00:00:00Z') });
    const sha1Leaf = pki.leaf('sha1alone.example', root, { key: 'rsa-2048', signatureHash: 'SHA-1', notBefore: new Date('2016-02-01T00:00:00Z'), notAfter: new Date('2030-01-01T00:00:00Z') });
    for (const chain of [[sha2Leaf, sha2Inter, root].map(p), [sha2Leaf, sha2Inter].map(p), [p(sha1Leaf)]]) {
      for (const at of [new Date('2015-06-01T00:00:00Z'), new Date('2016-03-01T00:00:00Z'), now]) {
        expect(SHA1_DEPRECATION_POLICIES.some((policy) => flagsChain(policy, chain, at))).toBe(false);
        expect(sha1DeprecationMessages(chain, at)).toEqual([]);
      }
    }
  });

  it('flags a new SHA-1 leaf under Firefox\'s never-issue-after rule', () => {
    const policy = SHA1_DEPRECATION_POLICIES[3]!;
    const leaf = pki.leaf('new.example', root, { key: 'rsa-2048', signatureHash: 'SHA-1', notBefore: new Date('2016-02-01T00:00:00Z'), notAfter: new Date('2016-12-01T00:00:00Z') });
    expect(flagsChain(policy, [p(leaf), p(root)], new Date('2016-03-01T00:00:00Z'))).toBe(true);
    expect(flagsChain(policy, [p(leaf)], new Date('2016-03-01T00:00:00Z'))).toBe(false);
  });
});
