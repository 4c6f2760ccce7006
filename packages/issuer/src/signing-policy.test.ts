import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { scratchDir } from './test-support/openssl.js';
import { defaultSigningPolicy, loadSigningPolicyFile, parseSigningPolicy, policyHasAuthenticatedProfiles, selectProfile } from './signing-policy.js';

const scratch = scratchDir();
afterAll(() => scratch.cleanup());

/** A configuration as a CFSSL user writes it, with keys certsmith ignores. */
const CFSSL_CONFIG = {
  signing: {
    default: {
      usages: ['signing', 'key encipherment', 'server auth'],
      expiry: '168h',
      ocsp_url: 'http://ocsp.example.com',
      crl_url: 'http://crl.example.com/ca.crl',
      issuer_urls: ['http://ca.example.com/ca.crt'],
      lint_error_level: 3,
    },
    profiles: {
      server: { usages: ['signing', 'key encipherment', 'server auth'], expiry: '8760h', backdate: '1h30m', name_whitelist: '\\.example\\.com$' },
      client: { usages: ['signing', 'client auth'], expiry: '90m', auth_key: 'primary', prev_auth_key: 'old' },
      intermediate: {
        usages: ['cert sign', 'crl sign'],
        expiry: '43800h',
        ca_constraint: { is_ca: true, max_path_len: 0, max_path_len_zero: true },
        Policies: [{ ID: '1.2.3.4', qualifiers: [{ type: 'id-qt-cps', value: 'https://cps.example' }] }],
      },
      ocsp: { usages: ['digital signature', 'ocsp signing'], expiry: '8760h', ocsp_no_check: true, copy_extensions: true, allowed_extensions: ['1.2.3.4.5'] },
      serialized: { usages: ['server auth'], expiry: '1h', ClientProvidesSerialNumbers: true, CSRWhitelist: { PublicKey: true, DNSNames: true } },
      remote_one: { remote: 'cfssl' },
    },
  },
  auth_keys: {
    primary: { type: 'standard', key: '00112233445566778899aabbccddeeff' },
    old: { type: 'standard', key: 'file:old.key' },
  },
  remotes: { cfssl: '127.0.0.1:8888' },
  ocsp: { some: 'section' },
};

describe('loadSigningPolicyFile', () => {
  it('loads a CFSSL-format config with every profile kind when written to a file', async () => {
    writeFileSync(join(scratch.dir, 'old.key'), 'ffeeddccbbaa99887766554433221100\n');
    const path = join(scratch.dir, 'config.json');
    writeFileSync(path, JSON.stringify(CFSSL_CONFIG));
    const policy = await loadSigningPolicyFile(path);
    expect(policy.default.expiryString).toBe('168h');
    expect(policy.default.expiry).toBe(168 * 3_600_000);
    const server = selectProfile(policy, 'server');
    expect(server.backdate).toBe(90 * 60_000);
    expect(server.nameWhitelist?.test('www.example.com')).toBe(true);
    expect(server.ocspUrl).toBe('');
    expect(server.encoded.authorityInfoAccess).not.toBeNull();
    const client = selectProfile(policy, 'client');
    expect(Buffer.from(client.authKey!).toString('hex')).toBe('00112233445566778899aabbccddeeff');
    expect(Buffer.from(client.prevAuthKey!).toString('hex')).toBe('ffeeddccbbaa99887766554433221100');
    expect(client.extKeyUsages).toEqual(['1.3.6.1.5.5.7.3.2']);
    const intermediate = selectProfile(policy, 'intermediate');
    expect(intermediate.caConstraint).toEqual({ isCa: true, maxPathLen: 0, maxPathLenZero: true });
    expect(intermediate.policies).toEqual([{ id: '1.2.3.4', qualifiers: [{ type: 'id-qt-cps', value: 'https://cps.example' }] }]);
    const ocsp = selectProfile(policy, 'ocsp');
    expect(ocsp.copyExtensions).toBe(true);
    expect(ocsp.allowedExtensions).toEqual(['1.2.3.4.5']);
    expect(ocsp.encoded.trailing).toHaveLength(1);
    const serialized = selectProfile(policy, 'serialized');
    expect(serialized.clientProvidesSerialNumbers).toBe(true);
    expect(serialized.csrWhitelist).toMatchObject({ PublicKey: true, DNSNames: true, Subject: false });
    expect(selectProfile(policy, 'remote_one').remoteServer).toBe('127.0.0.1:8888');
    expect(policyHasAuthenticatedProfiles(policy)).toBe(true);
  });

  it('throws 5200 when the file does not exist', async () => {
    await expect(loadSigningPolicyFile(join(scratch.dir, 'missing.json'))).rejects.toMatchObject({ code: 5200 });
  });
});

describe('parseSigningPolicy', () => {
  const withProfile = (profile: unknown, extra: Record<string, unknown> = {}): unknown => ({ signing: { default: { expiry: '1h' }, profiles: { p: profile } }, ...extra });

  it('uses DefaultConfig for the default profile when none is given', () => {
    const policy = parseSigningPolicy({ signing: { profiles: { p: { usages: ['signing'], expiry: '1h' } } } });
    expect(policy.default.usages).toEqual(['signing', 'key encipherment', 'server auth', 'client auth']);
    expect(policy.default.expiryString).toBe('8760h');
  });

  it('matches keys case-insensitively when a config uses other casing', () => {
    const policy = parseSigningPolicy({ Signing: { Default: { Usages: ['signing'], EXPIRY: '2h' } } });
    expect(policy.default.expiry).toBe(7_200_000);
  });

  it.each([
    [{}, 'No "signing" field present'],
    [withProfile({ usages: ['signing'] }), 'empty expiry string'],
    [withProfile({ usages: ['signing'], expiry: '1d' }), 'time: unknown unit "d" in duration "1d"'],
    [withProfile({ usages: [], expiry: '1h' }), 'Invalid or unknown policy'],
    [withProfile({ usages: ['bogus'], expiry: '1h' }), 'Invalid or unknown policy'],
    [withProfile({ usages: ['signing'], expiry: '1h', auth_key: 'nope' }), 'failed to find auth_key in auth_keys section'],
    [withProfile({ usages: ['signing'], expiry: '1h', auth_key: 'k' }, { auth_keys: { k: { type: 'fancy', key: '00' } } }), 'unknown authentication type'],
    [withProfile({ usages: ['signing'], expiry: '1h', auth_key: 'k' }, { auth_keys: { k: { type: 'standard', key: 'zz' } } }), 'failed to create new standard auth provider'],
    [withProfile({ usages: ['signing'], expiry: '1h', auth_key: 'k' }, { auth_keys: { k: { type: 'standard', key: 'vault:x' } } }), 'failed to create new standard auth provider'],
    [withProfile({ remote: 'nowhere' }), 'failed to find remote in remotes section'],
    [withProfile({ usages: ['signing'], expiry: '1h', name_whitelist: '(' }), 'failed to compile name whitelist section'],
    [withProfile(null), "can't parse nil profile"],
    [withProfile({ usages: 'signing', expiry: '1h' }), 'failed to unmarshal configuration: json: cannot unmarshal string into Go struct field SigningProfile.signing.profiles.usages of type []string'],
    [{ signing: { default: { expiry: '' } } }, 'empty expiry string'],
  ])('throws 5200 with CFSSL\'s reason when the config is %j', (config, message) => {
    expect(() => parseSigningPolicy(config)).toThrow(expect.objectContaining({ code: 5200, message }) as Error);
  });

  it('throws 5200 when the JSON text is malformed', () => {
    expect(() => parseSigningPolicy('{"signing":')).toThrow(expect.objectContaining({ code: 5200 }) as Error);
  });

  it('reads env: auth keys from the environment when one is given', () => {
    const policy = parseSigningPolicy(withProfile({ usages: ['signing'], expiry: '1h', auth_key: 'k' }, { auth_keys: { k: { type: 'standard', key: 'env:AUTH_HEX' } } }), {
      env: { AUTH_HEX: 'abcd' },
    });
    expect(Buffer.from(selectProfile(policy, 'p').authKey!).toString('hex')).toBe('abcd');
  });
});

describe('selectProfile', () => {
  const policy = parseSigningPolicy({ signing: { default: { expiry: '1h', usages: ['signing'] }, profiles: { web: { usages: ['server auth'], expiry: '2h' } } } });

  it('returns the default profile when the name is empty or default', () => {
    expect(selectProfile(policy, '')).toBe(policy.default);
    expect(selectProfile(policy, undefined)).toBe(policy.default);
    expect(selectProfile(policy, 'default')).toBe(policy.default);
  });

  it('throws 5400 when the profile is unknown', () => {
    expect(() => selectProfile(policy, 'nosuchprofile')).toThrow(expect.objectContaining({ code: 5400, message: 'Unknown policy profile' }) as Error);
  });
});

describe('defaultSigningPolicy', () => {
  it('matches CFSSL DefaultConfig when the server has no config', () => {
    const policy = defaultSigningPolicy();
    expect(policy.default.usages).toEqual(['signing', 'key encipherment', 'server auth', 'client auth']);
    expect(policy.default.expiryString).toBe('8760h');
    expect(policy.default.keyUsage).toBe(0b101);
    expect(policy.default.caConstraint.isCa).toBe(false);
    expect(policy.profiles.size).toBe(0);
  });
});
