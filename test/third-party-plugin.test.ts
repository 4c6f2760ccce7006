/**
 * A third-party signer plugin, end to end, the way a user deploys one: the example plugin
 * (examples/signer-webcrypto, outside the workspaces) and the contract packages it needs (signer-api,
 * x509-core and the optional ECDSA addon signer-api signs with, native-ec) are packed
 * with `npm pack`, installed from those tarballs into a fresh project with `npm install --offline`
 * (no registry: every package involved is a tarball — signer-api's dependency semver included — and
 * the example has no runtime dependency besides its peer @certsmith/signer-api), and named **by package name** in a certsmith config that
 * lives in that project. The built `certsmith serve` must find the plugin from the config's folder
 * (it is not installed anywhere in the repository) and issue through it; `openssl verify` checks the
 * result. npm pack/install run once in `beforeAll`.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createTestCa } from '@certsmith/signer-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_PATH, killAllCertsmith, parseLogLine, spawnCertsmith, startCertsmith } from './helpers/certsmith-process.js';
import { runInProject } from './helpers/project-command.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = join(REPO, 'examples', 'signer-webcrypto');
const PLUGIN = 'certsmith-signer-webcrypto-example';

let work: string;
let project: string;
let dataDir: string;
/** The file name of semver's tarball (its version is the repository's). */
let semverTarball: string | undefined;

const npm = (args: readonly string[], cwd: string) => runInProject('npm', args, cwd);

async function writeConfig(name: string, signers: Record<string, unknown>): Promise<string> {
  const path = join(project, name);
  const config = {
    signing: { default: { expiry: '168h', usages: ['signing', 'key encipherment', 'server auth', 'client auth'] } },
    signers,
  };
  await writeFile(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}

async function postJson(url: string, body: unknown): Promise<{ status: number; json: { success: boolean; result: Record<string, unknown> | null; errors: unknown[] } }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
  return { status: response.status, json: (await response.json()) as never };
}

/** `openssl verify -CAfile <project>/ca.pem leaf`: its output (`…: OK` when it verifies). */
async function opensslVerify(leafPem: string, name: string): Promise<string> {
  const leafFile = join(work, `${name}.pem`);
  await writeFile(leafFile, leafPem);
  const { stdout } = await runInProject('openssl', ['verify', '-CAfile', join(project, 'ca.pem'), leafFile], work, 15_000);
  return stdout.trim();
}

beforeAll(async () => {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run npm run build first`);
  work = await mkdtemp(join(tmpdir(), 'certsmith-third-party-'));
  const tarballs = join(work, 'tarballs');
  project = join(work, 'project');
  dataDir = join(work, 'data');
  await Promise.all([mkdir(tarballs), mkdir(project)]);

  // Workspace packages are packed from their built dist/; the example's prepack builds it, as it
  // would for its author.
  await npm(['pack', '--pack-destination', tarballs, '--workspace', '@certsmith/signer-api', '--workspace', '@certsmith/x509-core', '--workspace', '@certsmith/native-ec'], REPO);
  await npm(['pack', '--pack-destination', tarballs], EXAMPLE);
  // signer-api's one registry dependency goes in as a tarball too: `--offline` takes a package the
  // tarballs do not hold from npm's cache, where `npm ci` leaves tarballs but not the registry's
  // package documents that an install by version range needs (ENOTCACHED on a fresh machine).
  await npm(['pack', '--pack-destination', tarballs, join(REPO, 'node_modules', 'semver')], REPO);
  const files = (await readdir(tarballs)).filter((file) => file.endsWith('.tgz')).sort();
  expect(files.filter((file) => !file.startsWith('semver-'))).toEqual(['certsmith-native-ec-0.1.0.tgz', 'certsmith-signer-api-0.1.0.tgz', 'certsmith-signer-webcrypto-example-0.1.0.tgz', 'certsmith-x509-core-0.1.0.tgz']);
  [semverTarball] = files.filter((file) => /^semver-\d+\.\d+\.\d+\.tgz$/.test(file));
  expect(semverTarball).toBeDefined();

  await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: 'certsmith-deployment', private: true, type: 'module' }, null, 2)}\n`);
  await npm(['install', '--offline', '--no-audit', '--no-fund', ...files.map((file) => join(tarballs, file))], project);

  const ca = await createTestCa({ commonName: 'third-party plugin e2e CA' });
  await writeFile(join(project, 'ca-key.jwk'), `${JSON.stringify(ca.privateKeyJwk)}\n`, { mode: 0o600 });
  await writeFile(join(project, 'ca.pem'), ca.certificatePem);
  await writeFile(join(project, 'other.pem'), (await createTestCa({ commonName: 'unrelated CA' })).certificatePem);
}, 180_000);

afterAll(async () => {
  await killAllCertsmith();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('npm install of the packed plugin', () => {
  it('installs the plugin and its peer from the tarballs alone when offline', async () => {
    const installed = JSON.parse(await readFile(join(project, 'node_modules', PLUGIN, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
    expect(installed.peerDependencies).toEqual({ '@certsmith/signer-api': '^0.1.0' });
    expect(existsSync(join(project, 'node_modules', PLUGIN, 'dist', 'index.js'))).toBe(true);
    expect(existsSync(join(project, 'node_modules', PLUGIN, 'src'))).toBe(false);
    expect(existsSync(join(project, 'node_modules', '@certsmith', 'signer-api', 'dist', 'index.js'))).toBe(true);
    const lock = JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
    // Every installed package came from a tarball: nothing else was needed, so nothing was fetched.
    const installedFrom = Object.fromEntries(Object.entries(lock.packages).filter(([path]) => path !== '').map(([path, entry]) => [path, entry.resolved?.startsWith('file:') ? `file:${basename(entry.resolved)}` : entry.resolved]));
    expect(installedFrom).toEqual({
      'node_modules/@certsmith/native-ec': 'file:certsmith-native-ec-0.1.0.tgz',
      'node_modules/@certsmith/signer-api': 'file:certsmith-signer-api-0.1.0.tgz',
      'node_modules/@certsmith/x509-core': 'file:certsmith-x509-core-0.1.0.tgz',
      [`node_modules/${PLUGIN}`]: 'file:certsmith-signer-webcrypto-example-0.1.0.tgz',
      'node_modules/semver': `file:${semverTarball}`,
    });
  });
});

describe('certsmith serve with a third-party signer', () => {
  it('loads the plugin named by package from the config folder and issues a certificate openssl verifies when newcert selects its label', async () => {
    const config = await writeConfig('certsmith.json', { webcrypto: { plugin: PLUGIN, options: { keyFile: 'ca-key.jwk', certFile: 'ca.pem' } } });
    const server = await startCertsmith(['--config', config, '--port', '0', '--data-dir', dataDir, '--workers', '1']);

    const loaded = server.lines.map(parseLogLine).find((line) => line?.['msg'] === 'signer loaded' && line['signer'] === 'webcrypto');
    expect(loaded).toMatchObject({ plugin: PLUGIN, resolvedFrom: 'config-dir' });

    const { status, json } = await postJson(`${server.url}/api/v1/cfssl/newcert`, {
      request: { CN: 'third-party.example', hosts: ['third-party.example', '127.0.0.1'], key: { algo: 'ecdsa', size: 256 } },
      label: 'webcrypto',
    });
    expect(json.errors).toEqual([]);
    expect(status).toBe(200);
    const certificate = json.result?.['certificate'] as string;
    expect(await opensslVerify(certificate, 'leaf-by-name')).toMatch(/: OK$/);

    const info = await postJson(`${server.url}/api/v1/cfssl/info`, { label: 'webcrypto' });
    expect(info.json.result?.['certificate']).toBe((await readFile(join(project, 'ca.pem'), 'utf8')).trim());

    server.child.kill('SIGTERM');
    expect(await server.waitForExit()).toEqual({ code: 0, signal: null });
  });

  it('loads the plugin when the config names its module by a path relative to the config folder', async () => {
    const config = await writeConfig('by-path.json', {
      webcrypto: { plugin: `./node_modules/${PLUGIN}/dist/index.js`, options: { keyFile: 'file:ca-key.jwk', certFile: 'ca.pem' } },
    });
    const server = await startCertsmith(['--config', config, '--port', '0', '--data-dir', dataDir, '--workers', '1']);
    const { json } = await postJson(`${server.url}/api/v1/cfssl/newcert`, {
      request: { CN: 'by-path.example', hosts: ['by-path.example'], key: { algo: 'ecdsa', size: 256 } },
      label: 'webcrypto',
    });
    expect(await opensslVerify(json.result?.['certificate'] as string, 'leaf-by-path')).toMatch(/: OK$/);
    server.child.kill('SIGTERM');
    expect((await server.waitForExit()).code).toBe(0);
  });

  it('exits 2 naming the label and the package when the plugin is not installed', async () => {
    const config = await writeConfig('missing.json', { missing: { plugin: 'certsmith-signer-not-installed', options: {} } });
    const child = spawnCertsmith(['serve', '--config', config, '--port', '0', '--data-dir', dataDir, '--workers', '1']);
    expect((await child.waitForExit()).code).toBe(2);
    expect(child.stderr()).toContain('signer "missing" (plugin certsmith-signer-not-installed)');
    expect(child.stderr()).toContain('(code 2000)');
  });

  it("exits 2 with the plugin's code 2300 when its key does not match the certificate", async () => {
    const config = await writeConfig('mismatch.json', { webcrypto: { plugin: PLUGIN, options: { keyFile: 'ca-key.jwk', certFile: 'other.pem' } } });
    const child = spawnCertsmith(['serve', '--config', config, '--port', '0', '--data-dir', dataDir, '--workers', '1']);
    expect((await child.waitForExit()).code).toBe(2);
    expect(child.stderr()).toContain(`signer "webcrypto" (plugin ${PLUGIN})`);
    expect(child.stderr()).toContain('(code 2300)');
  });
});

describe("the example plugin's own suite", () => {
  it('passes the signer conformance suite of @certsmith/signer-testkit under vitest', async () => {
    // The author's workflow inside this repository: its vitest config has no certsmith-internal
    // conditions, so signer-api and the testkit load from their built dist/ like published packages.
    const vitest = join(REPO, 'node_modules', 'vitest', 'vitest.mjs');
    const { stdout } = await runInProject(process.execPath, [vitest, 'run', '--root', EXAMPLE, '--reporter', 'json'], EXAMPLE, 90_000);
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { success: boolean; numFailedTests: number; numPassedTests: number; numTotalTestSuites: number };
    expect(report).toMatchObject({ success: true, numFailedTests: 0 });
    expect(report.numPassedTests).toBeGreaterThan(50);
  });
});
