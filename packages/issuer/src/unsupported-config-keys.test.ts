import { describe, expect, it } from 'vitest';

import { ConfigReport } from './config-problems.js';
import { readSigningPolicy } from './signing-policy-loader.js';
import { UNSUPPORTED_CFSSL_KEYS } from './unsupported-config-keys.js';

/** Read `{ signing: { default: profile } }` (plus `extra` top-level keys); problems and warnings by path. */
function read(profile: Record<string, unknown>, extra: Record<string, unknown> = {}): { problems: string[]; warnings: string[] } {
  const report = new ConfigReport();
  readSigningPolicy({ signing: { default: { expiry: '1h', usages: ['signing'], ...profile } }, ...extra }, {}, report);
  return { problems: report.problems.map((problem) => problem.path), warnings: report.warnings.map((warning) => warning.path) };
}

describe('unsupported CFSSL keys', () => {
  it.each([
    ['ct_log_servers with a log', { ct_log_servers: ['https://ct.example/log'] }, 'signing.default.ct_log_servers'],
    ['lint_error_level above reserved', { lint_error_level: 'warn' }, 'signing.default.lint_error_level'],
    ['an unknown ignored_lint_sources entry', { ignored_lint_sources: ['RFC5280', 'Nope'] }, 'signing.default.ignored_lint_sources[1]'],
    ['a Go Backdate without backdate', { Backdate: 3_600_000_000_000 }, 'signing.default.Backdate'],
    ['a Go RemoteServer on a local profile', { RemoteServer: 'ca.example:8888' }, 'signing.default.RemoteServer'],
    ['a Go NameWhitelist without name_whitelist', { NameWhitelist: {} }, 'signing.default.NameWhitelist'],
    ['a Go Provider (CFSSL cannot decode it)', { Provider: { key: 'x' } }, 'signing.default.Provider'],
    ['a Go LintRegistry (CFSSL cannot decode it)', { LintRegistry: 'all' }, 'signing.default.LintRegistry'],
  ])('stops loading when %s would change what is issued', (_name, profile, path) => {
    const { problems } = read(profile);
    expect(problems).toEqual([path]);
  });

  it.each([
    ['an empty ct_log_servers', { ct_log_servers: [] }, 'signing.default.ct_log_servers'],
    ['lint_error_level "reserved"', { lint_error_level: 'reserved' }, 'signing.default.lint_error_level'],
    ['ignored_lints', { ignored_lints: ['e_rsa_mod_less_than_2048_bits'] }, 'signing.default.ignored_lints'],
    ['known ignored_lint_sources', { ignored_lint_sources: ['CABF_BR', ' Mozilla'] }, 'signing.default.ignored_lint_sources'],
    ['cert_store', { cert_store: 'db' }, 'signing.default.cert_store'],
    ['a Go Expiry', { Expiry: 3_600_000_000_000 }, 'signing.default.Expiry'],
    ['a Go Backdate with backdate', { Backdate: 60_000_000_000, backdate: '1h' }, 'signing.default.Backdate'],
    ['an empty Go RemoteServer', { RemoteServer: '' }, 'signing.default.RemoteServer'],
    ['a Go NameWhitelist next to name_whitelist', { NameWhitelist: {}, name_whitelist: 'x' }, 'signing.default.NameWhitelist'],
    ['a Go ExtensionWhitelist', { ExtensionWhitelist: { '1.2.3': true } }, 'signing.default.ExtensionWhitelist'],
    ['Go RemoteCAs', { RemoteCAs: {} }, 'signing.default.RemoteCAs'],
    ['a Go ClientCert', { ClientCert: {} }, 'signing.default.ClientCert'],
  ])('only warns when %s changes nothing issued', (_name, profile, path) => {
    const { problems, warnings } = read(profile);
    expect(problems).toEqual([]);
    expect(warnings).toEqual([path]);
  });

  it('names the key as written when it differs from CFSSL\'s spelling in case', () => {
    expect(read({ CT_Log_Servers: ['https://ct.example/log'] }).problems).toEqual(['signing.default.CT_Log_Servers']);
  });

  it('only warns about a top-level ocsp section', () => {
    expect(read({}, { ocsp: {} })).toEqual({ problems: [], warnings: ['ocsp'] });
  });

  it('lists every key of its table under a test above', () => {
    expect(UNSUPPORTED_CFSSL_KEYS.map((entry) => entry.key).sort()).toEqual(
      [
        'Backdate', 'ClientCert', 'Expiry', 'ExtensionWhitelist', 'LintRegistry', 'NameWhitelist', 'PrevProvider', 'Provider', 'RemoteCAs', 'RemoteProvider',
        'RemoteServer', 'cert_store', 'ct_log_servers', 'ignored_lint_sources', 'ignored_lints', 'lint_error_level', 'ocsp',
      ].sort(),
    );
  });
});
