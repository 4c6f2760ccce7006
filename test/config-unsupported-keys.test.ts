/**
 * Nothing in a CFSSL config is silently ignored (issue 19), seen from the command line: a CFSSL key
 * certsmith does not implement stops `certsmith serve` (exit 2) and fails `certsmith config check`
 * naming its JSON path when it would change what is issued; otherwise the server starts and logs a
 * warning with the path, and `config check` passes printing the same warning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch, failedStart, startServer } from './fixtures-issue.js';
import type { Scratch } from './fixtures-issue.js';
import { killAllCertsmith, logLinesByProcess, spawnCertsmith } from './helpers/certsmith-process.js';

let scratch: Scratch;

beforeAll(async () => {
  scratch = await createScratch('unsupported-keys');
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

async function configCheck(file: string): Promise<{ code: number | null; stdout: string }> {
  const child = spawnCertsmith(['config', 'check', '--no-signers', file]);
  const status = await child.waitForExit(30_000);
  return { code: status.code, stdout: child.lines.map((line) => `${line}\n`).join('') };
}

const usages = ['signing', 'key encipherment', 'server auth'];

describe('a CFSSL key that would change what is issued', () => {
  it.each([
    ['ct_log_servers', { ct_log_servers: ['https://ct.example/2026/'] }, 'signing.profiles.www.ct_log_servers', /certsmith does not submit to Certificate Transparency logs/],
    ['lint_error_level', { lint_error_level: 'error' }, 'signing.profiles.www.lint_error_level', /certsmith does not lint certificates before issuing them/],
    ['a Go Backdate', { Backdate: 3_600_000_000_000 }, 'signing.profiles.www.Backdate', /CFSSL would backdate certificates/],
  ])('%s stops serve with exit 2 and fails config check, naming its path', async (_name, keys, path, reason) => {
    const file = await scratch.write('refused.json', { signing: { default: { expiry: '1h', usages }, profiles: { www: { expiry: '24h', usages, ...keys } } } });
    const serve = await failedStart(['--config', file, '--data-dir', scratch.path('data')]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(new RegExp(`^certsmith: config file ${file.replaceAll('.', '\\.')}: ${path.replaceAll('.', '\\.')}: `));
    expect(serve.stderr).toMatch(reason);
    expect(serve.stderr).toMatch(/\(code 5200\)\n$/);
    const check = await configCheck(file);
    expect(check.code).toBe(2);
    expect(check.stdout.split('\n')[0]).toMatch(new RegExp(`^${path.replaceAll('.', '\\.')}: `));
  });
});

describe('a CFSSL key that changes nothing issued', () => {
  it('lets serve start, logging a warning with the path, and config check pass printing it', async () => {
    const file = await scratch.write('warned.json', {
      signing: { default: { expiry: '1h', usages, cert_store: 'certdb', lint_error_level: 'reserved' } },
      ocsp: { CACertFile: 'ca.pem', Interval: 345_600_000_000_000 },
    });
    const server = await startServer(['--config', file, '--data-dir', scratch.path('data')]);
    try {
      // Every serving process reads the config and warns once (serve --processes N: N times in all).
      const warnedBy = logLinesByProcess(server.lines, (line) => typeof line['msg'] === 'string' && line['msg'].startsWith('config: '));
      expect(warnedBy.length).toBeGreaterThan(0);
      for (const warnings of warnedBy) {
        expect(warnings.map((line) => line['path']).sort()).toEqual(['ocsp', 'signing.default.cert_store', 'signing.default.lint_error_level']);
        expect(warnings.every((line) => line['level'] === 40)).toBe(true);
      }
      const health = await fetch(`${server.url}/api/v1/cfssl/health`);
      expect(health.status).toBe(200);
    } finally {
      await server.stop();
    }
    const check = await configCheck(file);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('warning: signing.default.cert_store: CFSSL does not read it either');
    expect(check.stdout).toMatch(/warned\.json: OK \(1 profile, 0 auth keys, 0 signers, 3 warnings\)\n$/);
  });
});

describe('the CLI commands that read a config (gencert, sign)', () => {
  it('print the same warnings on stderr and still issue', async () => {
    await scratch.write('ca-csr.json', { CN: 'Warnings CA' });
    const initca = spawnCertsmith(['gencert', '-initca', scratch.path('ca-csr.json')]);
    expect((await initca.waitForExit(30_000)).code).toBe(0);
    const ca = JSON.parse(initca.lines.join('\n')) as { cert: string; key: string };
    await scratch.write('ca.pem', ca.cert);
    await scratch.write('ca-key.pem', ca.key);
    await scratch.write('csr.json', { CN: 'warned.example', hosts: ['warned.example'] });
    const file = await scratch.write('cli-warned.json', { signing: { default: { expiry: '1h', usages, ignored_lints: ['e_sub_cert_aia_missing'] } } });
    const gencert = spawnCertsmith(['gencert', '-ca', scratch.path('ca.pem'), '-ca-key', scratch.path('ca-key.pem'), '-config', file, scratch.path('csr.json')]);
    expect((await gencert.waitForExit(30_000)).code).toBe(0);
    expect(gencert.stderr()).toContain('certsmith gencert: warning: config: signing.default.ignored_lints: excludes lints from pre-issuance linting');
    expect(JSON.parse(gencert.lines.join('\n'))).toHaveProperty('cert');
  });
});
