import { ConfigReport } from '@certsmith/issuer';
import { describe, expect, it } from 'vitest';
import { readRevocationSection } from './revocation-config.js';
import { revocationSettings } from './revocation-settings.js';

function read(value: unknown) {
  const report = new ConfigReport();
  const section = readRevocationSection(value, '/etc/certsmith', report.at('revocation'));
  return { section, problems: report.problems.map((problem) => `${problem.path}: ${problem.message}`) };
}

describe('readRevocationSection', () => {
  it('reads the OCSP interval and the responders by label', () => {
    const { section, problems } = read({
      ocsp: { interval: '48h', responders: { default: 'ca', hsm: ['@certsmith/signer-pkcs11', { keyLabel: 'ocsp' }], local: { plugin: './responder.js', options: { certFile: 'r.pem' } } } },
    });
    expect(problems).toEqual([]);
    expect(section.ocspIntervalMs).toBe(48 * 3_600_000);
    expect([...section.responders.entries()]).toEqual([
      ['default', { kind: 'ca', where: 'revocation.ocsp.responders.default' }],
      ['hsm', { kind: 'plugin', plugin: '@certsmith/signer-pkcs11', options: { keyLabel: 'ocsp' }, configDir: '/etc/certsmith', where: 'revocation.ocsp.responders.hsm' }],
      ['local', { kind: 'plugin', plugin: './responder.js', options: { certFile: 'r.pem' }, configDir: '/etc/certsmith', where: 'revocation.ocsp.responders.local' }],
    ]);
  });

  it.each([
    [{ ocsp: { interval: '96' } }, 'revocation.ocsp.interval: must be a Go duration such as "96h" or "90m", got "96"'],
    [{ ocsp: { interval: '10s' } }, 'revocation.ocsp.interval: must be from 1m to 8784h, got "10s"'],
    [{ ocsp: { interval: 3600 } }, 'revocation.ocsp.interval: must be a Go duration such as "96h" or "90m", got number'],
    [{ ocsp: { responders: { default: 'self' } } }, 'revocation.ocsp.responders.default: must be "ca", {"plugin", "options"} or [plugin, options], got string'],
    [{ ocsp: { responders: { default: { plugin: 'x', option: {} } } } }, 'revocation.ocsp.responders.default.option: unknown key (allowed: plugin, options)'],
    [{ ocsp: { responders: { default: [3] } } }, 'revocation.ocsp.responders.default[0]: must be a non-empty string (a package name or a path), got number'],
    [{ ocsp: { responders: [] } }, 'revocation.ocsp.responders: must be an object of signer label → responder, got array'],
    [{ ocsp: { refresh: '1h' } }, 'revocation.ocsp.refresh: unknown key (allowed: interval, responders)'],
    [{ crls: {} }, 'revocation.crls: unknown key (allowed: ocsp)'],
    ['on', 'revocation: must be an object with ocsp, got string'],
  ])('reports %j', (value, problem) => {
    expect(read(value).problems).toEqual([problem]);
  });
});

describe('revocationSettings', () => {
  it("gives CFSSL's 96 h and no responder by default", () => {
    const settings = revocationSettings({}, read(undefined).section);
    expect(settings.ocspIntervalMs).toBe(96 * 3_600_000);
    expect(settings.responders.size).toBe(0);
  });

  it('puts flags over the file, --responder on the default label', () => {
    const { section } = read({ ocsp: { interval: '48h', responders: { default: 'ca' } } });
    const settings = revocationSettings({ ocspIntervalMs: 3_600_000, responderFile: '/r.pem', responderKeyFile: '/r-key.pem' }, section);
    expect(settings.ocspIntervalMs).toBe(3_600_000);
    expect(settings.responders.get('default')).toEqual({ kind: 'files', certFile: '/r.pem', keyFile: '/r-key.pem', where: '--responder/--responder-key' });
  });
});
