import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { scratchDir } from './test-support/openssl.js';
import { ConfigReport } from './config-problems.js';
import { matchGoRegexp } from './go-regexp.js';
import { policyHasAuthenticatedProfiles, selectProfile } from './signing-policy.js';
import { defaultSigningPolicy, loadSigningPolicyFile, parseSigningPolicy, readSigningPolicy } from './signing-policy-loader.js';

const scratch = scratchDir();
afterAll(() => scratch.cleanup());

/** A configuration as a CFSSL user writes it, with keys certsmith ignores (with a warning). */
const CFSSL_CONFIG = {
  signing: {
    default: {
      usages: ['signing', 'key encipherment', 'server auth'],
      expiry: '168h',
      ocsp_url: 'http://ocsp.example.com',
      crl_url: 'http://crl.example.com/ca.crl',
      issuer_urls: ['http://ca.example.com/ca.crt'],
      lint_error_level: 'reserved',
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
  ocsp: { Interval: 3_600_000_000_000 },
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
    expect(matchGoRegexp(server.nameWhitelist!, 'www.example.com')).toBe(true);
    expect(matchGoRegexp(server.nameWhitelist!, 'www.example.org')).toBe(false);
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
    [{}, 'signing: No "signing" field present'],
    [withProfile({ usages: ['signing'] }), 'signing.profiles.p.expiry: empty expiry string'],
    [withProfile({ usages: ['signing'], expiry: '1d' }), 'signing.profiles.p.expiry: time: unknown unit "d" in duration "1d"'],
    [withProfile({ usages: [], expiry: '1h' }), 'signing.profiles.p.usages: no usages given (e.g. ["signing", "key encipherment", "server auth"])'],
    [withProfile({ usages: ['bogus'], expiry: '1h' }), 'signing.profiles.p.usages: none of the usages is known: "bogus"'],
    [withProfile({ usages: ['signing'], expiry: '1h', auth_key: 'nope' }), 'signing.profiles.p.auth_key: failed to find auth_key in auth_keys section: no auth key named "nope"'],
    [
      withProfile({ usages: ['signing'], expiry: '1h', prev_auth_key: 'nope' }),
      'signing.profiles.p.prev_auth_key: failed to find prev_auth_key in auth_keys section: no auth key named "nope"',
    ],
    [
      withProfile({ usages: ['signing'], expiry: '1h', auth_key: 'k' }, { auth_keys: { k: { type: 'fancy', key: '00' } } }),
      'signing.profiles.p.auth_key: auth key "k" is not usable (see auth_keys.k): unknown authentication type "fancy" (expected "standard")',
    ],
    [
      withProfile({ usages: ['signing'], expiry: '1h', auth_key: 'k' }, { auth_keys: { k: { type: 'standard', key: 'zz' } } }),
      'signing.profiles.p.auth_key: auth key "k" is not usable (see auth_keys.k): the key is not hex-encoded (encoding/hex: invalid byte or odd length)',
    ],
    [
      withProfile({ usages: ['signing'], expiry: '1h', auth_key: 'k' }, { auth_keys: { k: { type: 'standard', key: 'vault:x' } } }),
      'signing.profiles.p.auth_key: auth key "k" is not usable (see auth_keys.k): unknown key prefix: vault (expected hex, env:NAME or file:PATH)',
    ],
    [withProfile({ remote: 'nowhere' }), 'signing.profiles.p.remote: failed to find remote in remotes section: no remote named "nowhere"'],
    [
      withProfile({ usages: ['signing'], expiry: '1h', name_whitelist: '(' }),
      'signing.profiles.p.name_whitelist: failed to compile name whitelist section: error parsing regexp: missing closing ): `(`',
    ],
    [withProfile(null), "signing.profiles.p: can't parse nil profile: a profile must be an object"],
    [
      withProfile({ usages: 'signing', expiry: '1h' }),
      'signing.profiles.p.usages: failed to unmarshal configuration: json: cannot unmarshal string into Go struct field SigningProfile.signing.profiles.usages of type []string',
    ],
    [{ signing: { default: { expiry: '' } } }, 'signing.default.expiry: empty expiry string'],
    [{ signing: { default: { expiry: '0s' } } }, 'signing.default.expiry: the default profile needs a non-zero expiry'],
    [withProfile({ remote: 'a', auth_remote: { remote: 'a', auth_key: 'k' } }, { remotes: { a: 'x:1' }, auth_keys: { k: { type: 'standard', key: '00' } } }), 'signing.profiles.p.auth_remote: give either "remote" or "auth_remote", not both'],
    [withProfile({ usages: ['signing'], expiry: '1h', not_before: '2030-01-01T00:00:00Z', not_after: '2020-01-01T00:00:00Z' }), 'signing.profiles.p.not_after: not_after is before not_before'],
    [
      withProfile({ usages: ['signing'], expiry: '1h', Policies: [{ ID: '1.2.3', Qualifiers: [{ Type: 'id-qt-other', Value: 'x' }] }] }),
      'signing.profiles.p.Policies[0].Qualifiers[0].Type: invalid policy qualifier type "id-qt-other" (expected "id-qt-cps" or "id-qt-unotice")',
    ],
  ])("throws 5200 with the reason and the key's path when the config is %j", (config, described) => {
    const [path, message] = [described.slice(0, described.indexOf(': ')), described.slice(described.indexOf(': ') + 2)];
    expect(() => parseSigningPolicy(config)).toThrow(expect.objectContaining({ code: 5200, path, message }) as Error);
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

describe('readSigningPolicy', () => {
  const read = (config: unknown, options = {}): { policy: unknown; report: ConfigReport } => {
    const report = new ConfigReport();
    return { policy: readSigningPolicy(config, options, report), report };
  };

  it('reports every problem of the file at its JSON path in one reading', () => {
    const { policy, report } = read({
      signing: {
        default: { expiry: '1x', usages: ['signing'] },
        profiles: {
          www: { expiry: 5, usages: ['signing'] },
          'odd.name': { expiry: '1h', usages: ['signing'], backdate: 'zz' },
          wl: { expiry: '1h', usages: ['signing'], name_whitelist: 'a(?=b)' },
        },
      },
      remotes: { a: 7 },
    });
    expect(policy).toBeNull();
    expect(report.problems.map((problem) => problem.path)).toEqual([
      'signing.profiles.www.expiry',
      'remotes.a',
      'signing.default.expiry',
      'signing.profiles["odd.name"].backdate',
      'signing.profiles.wl.name_whitelist',
    ]);
    expect(report.problems.every((problem) => problem.code === 5200)).toBe(true);
    expect(report.problems[4]!.message).toBe('failed to compile name whitelist section: error parsing regexp: invalid or unsupported Perl syntax: `(?=`');
  });

  it('warns about keys Go would ignore and usages CFSSL ignores, and still loads', () => {
    const { policy, report } = read({ signing: { default: { expiry: '1h', usages: ['signing', 'server auht'], exipry: '2h' } }, sigining: {} });
    expect(policy).not.toBeNull();
    expect(report.warnings).toEqual([
      { path: 'signing.default.exipry', message: 'unknown key, ignored (CFSSL ignores it too): check its spelling' },
      { path: 'sigining', message: 'unknown key, ignored (CFSSL ignores it too): check its spelling' },
      { path: 'signing.default.usages', message: 'unknown usage "server auht" is ignored' },
    ]);
  });

  it("does not warn about the caller's own top-level keys", () => {
    const { report } = read({ signing: { default: { expiry: '1h' } }, signers: {} }, { ownKeys: ['signers'] });
    expect(report.warnings).toEqual([]);
  });

  it('refuses an auth key whose environment variable is unset or empty, which CFSSL would accept as an empty HMAC key', () => {
    const config = { signing: { default: { expiry: '1h', auth_key: 'k' } }, auth_keys: { k: { type: 'standard', key: 'env:CERTSMITH_TEST_KEY' } } };
    for (const env of [{}, { CERTSMITH_TEST_KEY: '' }]) {
      const { report } = read(config, { env });
      expect(report.problems.map((problem) => problem.path)).toEqual(['signing.default.auth_key', 'auth_keys.k.key']);
    }
  });

  it('only warns about a broken auth key no profile uses (CFSSL never reads it)', () => {
    const { policy, report } = read({ signing: { default: { expiry: '1h' } }, auth_keys: { spare: { type: 'standard', key: 'file:/nonexistent/spare.hex' } } });
    expect(policy).not.toBeNull();
    expect(report.warnings).toEqual([{ path: 'auth_keys.spare.key', message: 'cannot read file /nonexistent/spare.hex (ENOENT) (no profile of this signing section uses the key)' }]);
  });

  it('decodes lint_error_level as zlint does: labels, not numbers', () => {
    expect(read({ signing: { default: { expiry: '1h', lint_error_level: 3 } } }).report.problems).toEqual([
      { path: 'signing.default.lint_error_level', message: 'failed to unmarshal configuration: bad LintStatus JSON value: 3', code: 5200 },
    ]);
    expect(read({ signing: { default: { expiry: '1h', lint_error_level: 'reserved' } } }).report.problems).toEqual([]);
  });

  it('warns about the ocsp section and checks its Go types', () => {
    expect(read({ signing: { default: { expiry: '1h' } }, ocsp: { KeyFile: 'k.pem' } }).report.warnings.map((warning) => warning.path)).toEqual(['ocsp']);
    expect(read({ signing: { default: { expiry: '1h' } }, ocsp: { Interval: '96h' } }).report.problems[0]).toMatchObject({
      path: 'ocsp.Interval',
      message: 'failed to unmarshal configuration: json: cannot unmarshal string into Go struct field Config.ocsp.Interval of type time.Duration',
    });
  });
});
