import { ConfigReport } from '@certsmith/issuer';
import { describe, expect, it } from 'vitest';
import { checkOcspPath, readRevocationSection } from './revocation-config.js';
import { revocationSettings } from './revocation-settings.js';

function read(value: unknown) {
  const report = new ConfigReport();
  const section = readRevocationSection(value, '/etc/certsmith', report.at('revocation'));
  return { section, problems: report.problems.map((problem) => `${problem.path}: ${problem.message}`) };
}

describe('readRevocationSection', () => {
  it('reads every key', () => {
    const { section, problems } = read({
      ocsp: { interval: '48h', path: '/ocsp', nonces: 'sign', responders: { default: 'ca', hsm: ['@certsmith/signer-pkcs11', { keyLabel: 'ocsp' }], local: { plugin: './responder.js', options: { certFile: 'r.pem' } } } },
      crl: { validity: '24h' },
      revoke: { auth_key: 'revoke', client_cn: '^ops-[a-z]+$' },
      changes: { pollInterval: '2s' },
    });
    expect(problems).toEqual([]);
    expect(section).toMatchObject({ ocspIntervalMs: 48 * 3_600_000, ocspPath: '/ocsp', nonces: 'sign', crlValidityMs: 86_400_000, revokeAuthKey: 'revoke', revokeClientCn: '^ops-[a-z]+$', changePollIntervalMs: 2000 });
    expect([...section.responders.entries()]).toEqual([
      ['default', { kind: 'ca', where: 'revocation.ocsp.responders.default' }],
      ['hsm', { kind: 'plugin', plugin: '@certsmith/signer-pkcs11', options: { keyLabel: 'ocsp' }, configDir: '/etc/certsmith', where: 'revocation.ocsp.responders.hsm' }],
      ['local', { kind: 'plugin', plugin: './responder.js', options: { certFile: 'r.pem' }, configDir: '/etc/certsmith', where: 'revocation.ocsp.responders.local' }],
    ]);
  });

  it.each([
    [{ ocsp: { interval: '96' } }, 'revocation.ocsp.interval: must be a Go duration such as "96h" or "90m", got "96"'],
    [{ ocsp: { interval: '10s' } }, 'revocation.ocsp.interval: must be from 1m to 8784h, got "10s"'],
    [{ ocsp: { path: '/api/ocsp' } }, expect.stringContaining("revocation.ocsp.path: \"/api/ocsp\" would hide the server's own paths")],
    [{ ocsp: { nonces: 'echo' } }, 'revocation.ocsp.nonces: must be "ignore" or "sign", got "echo"'],
    [{ ocsp: { responders: { default: 'self' } } }, 'revocation.ocsp.responders.default: must be "ca", {"plugin", "options"} or [plugin, options], got string'],
    [{ ocsp: { responders: { default: { plugin: 'x', option: {} } } } }, 'revocation.ocsp.responders.default.option: unknown key (allowed: plugin, options)'],
    [{ crl: { validity: 3600 } }, 'revocation.crl.validity: must be a Go duration such as "96h" or "90m", got number'],
    [{ revoke: { client_cn: '(?=x)' } }, expect.stringContaining('revocation.revoke.client_cn: ')],
    [{ revoke: { authkey: 'x' } }, 'revocation.revoke.authkey: unknown key (allowed: auth_key, client_cn)'],
    [{ crls: {} }, 'revocation.crls: unknown key (allowed: ocsp, crl, revoke, changes)'],
    ['on', 'revocation: must be an object with ocsp, crl, revoke and changes, got string'],
  ])('reports %j', (value, problem) => {
    expect(read(value).problems).toEqual([problem]);
  });
});

describe('checkOcspPath', () => {
  it.each(['/ocsp', '/ocsp/', '/pki/ocsp'])('accepts %s', (path) => expect(checkOcspPath(path)).toBeNull());
  it.each(['ocsp', '/', '/api/v1/ocsp', '/metrics', '/o cs p', '/a//b'])('refuses %s', (path) => expect(checkOcspPath(path)).not.toBeNull());
});

describe('revocationSettings', () => {
  it('gives CFSSL\'s defaults', () => {
    expect(revocationSettings({}, read(undefined).section)).toMatchObject({ ocspIntervalMs: 96 * 3_600_000, crlValidityMs: 168 * 3_600_000, ocspPath: null, nonces: 'ignore', revokeAuthKey: null, changePollIntervalMs: undefined });
  });

  it('puts flags over the file, --responder on the default label', () => {
    const { section } = read({ ocsp: { interval: '48h', responders: { default: 'ca' } }, revoke: { auth_key: 'file' } });
    const settings = revocationSettings({ ocspIntervalMs: 3_600_000, responderFile: '/r.pem', responderKeyFile: '/r-key.pem', revokeAuthKey: 'flag' }, section);
    expect(settings.ocspIntervalMs).toBe(3_600_000);
    expect(settings.revokeAuthKey).toBe('flag');
    expect(settings.responders.get('default')).toEqual({ kind: 'files', certFile: '/r.pem', keyFile: '/r-key.pem', where: '--responder/--responder-key' });
  });
});

describe('readRevocationSection (responders)', () => {
  it('reports a responder entry of the wrong shape', () => {
    expect(read({ ocsp: { responders: { default: [3] } } }).problems).toEqual(['revocation.ocsp.responders.default[0]: must be a non-empty string (a package name or a path), got number']);
    expect(read({ ocsp: { responders: [] } }).problems).toEqual(['revocation.ocsp.responders: must be an object of signer label → responder, got array']);
  });
});
