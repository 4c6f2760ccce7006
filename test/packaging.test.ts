/**
 * Packaging (issue 6): every public package under packages/ and plugins/ packs with `npm pack`
 * into a tarball that holds its built `dist/` with types and no sources or tests, and whose
 * `exports` map resolves to that `dist/` for a consumer without certsmith's development condition.
 * x509-core and chain-builder are then installed from their tarballs into a clean project and used
 * alone, without the server, from JavaScript (parse a certificate, build a chain from a small pool)
 * and from TypeScript (the published `.d.ts` files type-check a consumer). The issuing libraries
 * (x509-core, signer-api, issuer, signer-local, ubiquity-rules; third-party: npm's `semver` for the
 * plugin API range and `re2js` for Go regexps) are installed into a second clean project and issue a
 * certificate without the server.
 *
 * Installing is offline: certsmith packages come from the tarballs; the only third-party packages
 * (undici for chain-builder, @types/node and its undici-types for the TypeScript consumer) are
 * packed from this repository's own node_modules, so they are the exact versions the repository
 * uses and need neither the registry nor npm's cache (`npm ci` caches tarballs, not the registry
 * metadata an `npm install --offline <name>@<version>` needs: on a machine whose cache holds only
 * what `npm ci` put there, that failed with ENOTCACHED). npm pack/install run once.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { TestPki } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { projectEnv, runInProject } from './helpers/project-command.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));

interface Manifest {
  name: string;
  private?: boolean;
  main?: string;
  types?: string;
  files?: string[];
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  gypfile?: boolean;
}

/** Every package under packages/ and plugins/, with its folder. */
const PACKAGES = ['packages', 'plugins'].flatMap((parent) =>
  readdirSync(join(REPO, parent), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(REPO, parent, entry.name, 'package.json')))
    .map((entry) => {
      const dir = join(REPO, parent, entry.name);
      return { dir, folder: `${parent}/${entry.name}`, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest };
    }),
);
const PUBLIC = PACKAGES.filter((entry) => entry.manifest.private !== true);
const WORKSPACE_NAMES = new Map(PACKAGES.map((entry) => [entry.manifest.name, entry.manifest]));
/** Packages whose dependencies are all certsmith packages: installable from tarballs alone. */
const ISSUING = ['@certsmith/x509-core', '@certsmith/native-ec', '@certsmith/signer-api', '@certsmith/worker-pool', '@certsmith/issuer', '@certsmith/signer-local', '@certsmith/ubiquity-rules'];

/**
 * What a package with a native addon (`gypfile`) ships besides its dist: the C source, the gyp file
 * and the install script that compiles it on the consumer's machine.
 */
const NATIVE_FILES = ['native', 'binding.gyp', 'scripts'];

/** `npm pack --json` output per package. */
interface PackResult {
  name: string;
  filename: string;
  files: { path: string }[];
}

let work: string;
let tarballs: string;
let packs: Map<string, PackResult>;
let consumer: string;
let issuing: string;
const pki = new TestPki();

/** Third-party packages the consumer project installs, packed from the repository's node_modules. */
const THIRD_PARTY = ['undici', '@types/node', 'undici-types'];
/** Third-party dependencies of the issuing libraries (signer-api: semver; issuer: re2js). */
const ISSUING_THIRD_PARTY = ['semver', 're2js'];

/** Every string target of an `exports` value with its condition path (`./test-support › types`). */
function exportTargets(value: unknown, path: string[] = []): { conditions: string[]; target: string }[] {
  if (typeof value === 'string') return [{ conditions: path, target: value }];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => exportTargets(inner, [...path, key]));
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'certsmith-packaging-'));
  tarballs = join(work, 'tarballs');
  consumer = join(work, 'consumer');
  issuing = join(work, 'issuing');
  await Promise.all([mkdir(tarballs), mkdir(consumer), mkdir(issuing)]);

  const workspaces = PUBLIC.flatMap((entry) => ['--workspace', entry.manifest.name]);
  const { stdout } = await runInProject('npm', ['pack', '--json', '--pack-destination', tarballs, ...workspaces], REPO);
  packs = new Map((JSON.parse(stdout) as PackResult[]).map((result) => [result.name, result]));
  const thirdParty = await runInProject('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tarballs, ...[...THIRD_PARTY, ...ISSUING_THIRD_PARTY].map((name) => join(REPO, 'node_modules', name))], REPO);
  for (const result of JSON.parse(thirdParty.stdout) as PackResult[]) packs.set(result.name, result);

  // The clean project: x509-core and chain-builder only (chain-builder's one workspace dependency
  // is x509-core), undici and @types/node as the repository has them.
  const tarball = (name: string): string => join(tarballs, packs.get(name)!.filename);
  await writeFile(join(consumer, 'package.json'), `${JSON.stringify({ name: 'chain-consumer', private: true, type: 'module' }, null, 2)}\n`);
  await runInProject(
    'npm',
    [
      'install',
      '--offline',
      '--no-audit',
      '--no-fund',
      tarball('@certsmith/x509-core'),
      tarball('@certsmith/chain-builder'),
      ...THIRD_PARTY.map(tarball),
    ],
    consumer,
  );

  // A second clean project: the issuing libraries and their two small third-party dependencies.
  await writeFile(join(issuing, 'package.json'), `${JSON.stringify({ name: 'issuing-consumer', private: true, type: 'module' }, null, 2)}\n`);
  await runInProject(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', ...ISSUING.map(tarball), ...ISSUING_THIRD_PARTY.map(tarball)],
    issuing,
  );

  const root = pki.root('Packaging Root');
  const intermediate = pki.intermediate('Packaging Intermediate', root, { pathLen: 0 });
  const leaf = pki.leaf('packaging.example', intermediate);
  const unrelated = pki.root('Unrelated Root');
  await Promise.all([
    writeFile(join(consumer, 'root.pem'), root.pem),
    writeFile(join(consumer, 'intermediate.pem'), intermediate.pem),
    writeFile(join(consumer, 'leaf.pem'), leaf.pem),
    writeFile(join(consumer, 'unrelated.pem'), unrelated.pem),
  ]);
}, 180_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe.each(PUBLIC.map((entry) => [entry.manifest.name, entry] as const))('package %s', (name, entry) => {
  const manifest = entry.manifest;

  it('maps "." to dist types and code after the development condition, and exports ./package.json', () => {
    const dot = manifest.exports?.['.'] as Record<string, string> | undefined;
    expect(Object.keys(dot ?? {})).toEqual(['@certsmith/source', 'types', 'default']);
    expect(dot).toMatchObject({ '@certsmith/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' });
    expect(manifest.exports?.['./package.json']).toBe('./package.json');
    expect({ main: manifest.main, types: manifest.types }).toEqual({ main: './dist/index.js', types: './dist/index.d.ts' });
    // Build info and source maps stay out: the maps point at src/, which is not published.
    const native = manifest.gypfile === true ? NATIVE_FILES : [];
    expect(manifest.files).toEqual(['dist', '!dist/.tsbuildinfo', '!dist/**/*.map', ...native, 'README.md']);
  });

  it('depends on no private workspace package', () => {
    const privateDependencies = Object.keys(manifest.dependencies ?? {}).filter((dependency) => WORKSPACE_NAMES.get(dependency)?.private === true);
    expect(privateDependencies).toEqual([]);
  });

  it('packs dist with types, README and package.json, and no sources or tests', () => {
    const files = packs.get(name)!.files.map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts']));
    const shipsNative = (file: string): boolean => manifest.gypfile === true && NATIVE_FILES.some((entry) => file === entry || file.startsWith(`${entry}/`));
    expect(files.filter((file) => !file.startsWith('dist/') && !['package.json', 'README.md'].includes(file) && !shipsNative(file))).toEqual([]);
    // A native package's build output is made on the consumer's machine, never shipped.
    expect(files.filter((file) => file.startsWith('build/') || file.endsWith('.node'))).toEqual([]);
    expect(files.filter((file) => /\.test\.|\.bench\.|(^|\/)src\//.test(file) || (file.endsWith('.ts') && !file.endsWith('.d.ts')))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.map') || file.endsWith('.tsbuildinfo'))).toEqual([]);
    // Every .js has its .d.ts: the package is typed throughout, not only at the entry point.
    const declarations = new Set(files.filter((file) => file.endsWith('.d.ts')));
    expect(files.filter((file) => file.endsWith('.js') && !declarations.has(file.replace(/\.js$/, '.d.ts')))).toEqual([]);
  });

  it('ships every exports target a consumer resolves (all but the development condition)', () => {
    const files = new Set(packs.get(name)!.files.map((file) => file.path));
    const targets = Object.entries(manifest.exports ?? {}).flatMap(([subpath, value]) =>
      exportTargets(value).map((target) => ({ subpath, ...target })),
    );
    const consumerTargets = targets.filter((target) => !target.conditions.includes('@certsmith/source'));
    expect(consumerTargets.filter((target) => !files.has(target.target.replace(/^\.\//, '')))).toEqual([]);
    // The development condition points at sources that are deliberately not shipped.
    expect(targets.filter((target) => target.conditions.includes('@certsmith/source')).every((target) => target.target.startsWith('./src/'))).toBe(true);
  });
});

describe('x509-core and chain-builder installed alone', () => {
  it('installed nothing else from certsmith and no server', () => {
    const installed = readdirSync(join(consumer, 'node_modules', '@certsmith')).sort();
    expect(installed).toEqual(['chain-builder', 'x509-core']);
    expect(existsSync(join(consumer, 'node_modules', 'certsmith'))).toBe(false);
  });

  it('parses a certificate and builds a chain from a small pool when imported from JavaScript', async () => {
    await writeFile(
      join(consumer, 'use.mjs'),
      `import { readFileSync } from 'node:fs';
import { certificateHostnames, commonName, parseCertificates } from '@certsmith/x509-core';
import { CertificatePool, verifyChains } from '@certsmith/chain-builder';

const read = (file) => parseCertificates(readFileSync(new URL(file, import.meta.url), 'utf8'));
const [leaf] = read('./leaf.pem');
const names = (result) => result.chains.map((chain) => chain.map((cert) => commonName(cert.subject)));
const good = verifyChains(leaf, { roots: new CertificatePool(read('./root.pem')), intermediates: new CertificatePool(read('./intermediate.pem')) });
const bad = verifyChains(leaf, { roots: new CertificatePool(read('./unrelated.pem')), intermediates: new CertificatePool(read('./intermediate.pem')) });
console.log(JSON.stringify({
  resolved: [import.meta.resolve('@certsmith/x509-core'), import.meta.resolve('@certsmith/chain-builder')],
  leaf: { commonName: commonName(leaf.subject), hosts: certificateHostnames(leaf) },
  good: { result: good.result, resultCode: good.resultCode, chains: names(good) },
  bad: { result: bad.result, resultCode: bad.resultCode },
}));
`,
    );
    // Plain node: no --conditions, so the exports map's development condition is not in play.
    const { stdout } = await runInProject(process.execPath, ['use.mjs'], consumer, 30_000);
    const output = JSON.parse(stdout) as Record<string, unknown>;
    const modules = join(consumer, 'node_modules', '@certsmith');
    expect(output['resolved']).toEqual([`file://${join(modules, 'x509-core', 'dist', 'index.js')}`, `file://${join(modules, 'chain-builder', 'dist', 'index.js')}`]);
    expect(output['leaf']).toEqual({ commonName: 'packaging.example', hosts: ['packaging.example'] });
    expect(output['good']).toEqual({ result: true, resultCode: 0, chains: [['packaging.example', 'Packaging Intermediate', 'Packaging Root']] });
    // 1220: unknown authority (CFSSL's code for Go's x509.UnknownAuthorityError).
    expect(output['bad']).toEqual({ result: false, resultCode: 1220 });
  });

  it('type-checks a strict TypeScript consumer against the published declarations', async () => {
    await writeFile(
      join(consumer, 'tsconfig.json'),
      `${JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['use.ts'] }, null, 2)}\n`,
    );
    await writeFile(
      join(consumer, 'use.ts'),
      `import type { Certificate } from '@certsmith/x509-core';
import { parseCertificates } from '@certsmith/x509-core';
import type { ChainVerificationResult } from '@certsmith/chain-builder';
import { CertificatePool, verifyChains } from '@certsmith/chain-builder';

const leaf: Certificate | undefined = parseCertificates('')[0];
if (leaf) {
  const result: ChainVerificationResult = verifyChains(leaf, { roots: new CertificatePool(), intermediates: new CertificatePool() });
  const code: number = result.resultCode;
  void code;
}
`,
    );
    await runInProject(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], consumer, 100_000);
  });
});

describe('issuer, signer-api, signer-local and ubiquity-rules installed without the server', () => {
  it('issues a certificate openssl verifies when used as libraries', async () => {
    await writeFile(
      join(issuing, 'use.mjs'),
      `import { createIssuer, createSignerDirectory, decodeNewCertificateRequest, defaultSigningPolicy } from '@certsmith/issuer';
import { createDevelopmentCa, createLocalSignerFromPem, readDevelopmentCa } from '@certsmith/signer-local';
import { SIGNER_API_VERSION } from '@certsmith/signer-api';
import * as ubiquity from '@certsmith/ubiquity-rules';

const ca = await readDevelopmentCa(await createDevelopmentCa(new URL('./data', import.meta.url).pathname));
const signer = createLocalSignerFromPem(ca.certificatePem, ca.keyPem);
const issuer = createIssuer({ signers: createSignerDirectory([{ label: 'default', signer, policy: defaultSigningPolicy() }]) });
const issued = await issuer.newCertificate(decodeNewCertificateRequest({ request: { CN: 'library.example', hosts: ['library.example'] } }));
await signer.close();
console.log(JSON.stringify({
  resolved: ['@certsmith/issuer', '@certsmith/signer-local', '@certsmith/signer-api', '@certsmith/ubiquity-rules'].map((name) => import.meta.resolve(name)),
  signerApi: SIGNER_API_VERSION,
  ubiquityExports: Object.keys(ubiquity).length,
  caPem: ca.certificatePem,
  certificatePem: issued.certificatePem,
}));
`,
    );
    const { stdout } = await runInProject(process.execPath, ['use.mjs'], issuing, 30_000);
    const output = JSON.parse(stdout) as { resolved: string[]; signerApi: string; ubiquityExports: number; caPem: string; certificatePem: string };
    expect(output.resolved.every((url) => url.startsWith(`file://${join(issuing, 'node_modules', '@certsmith')}/`) && url.endsWith('/dist/index.js'))).toBe(true);
    expect(output.signerApi).toBe('1.0.0');
    expect(output.ubiquityExports).toBeGreaterThan(0);
    await writeFile(join(issuing, 'ca.pem'), output.caPem);
    await writeFile(join(issuing, 'leaf.pem'), output.certificatePem);
    const { stdout: verified } = await runInProject('openssl', ['verify', '-CAfile', 'ca.pem', 'leaf.pem'], issuing, 15_000);
    expect(verified.trim()).toBe('leaf.pem: OK');
    expect(readdirSync(join(issuing, 'node_modules')).filter((name) => !name.startsWith('.')).sort()).toEqual(['@certsmith', 're2js', 'semver']);
    // The native ECDSA addon was compiled from the tarball at install, against this node.
    expect(existsSync(join(issuing, 'node_modules', '@certsmith', 'native-ec', 'build', 'Release', 'native_ec.node'))).toBe(true);
  });
});

describe('the certsmith command on a fresh clone', () => {
  /** Run a file directly (its shebang picks the interpreter); resolves with the exit code. */
  function execute(file: string, args: readonly string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(file, args, { cwd, env: projectEnv(), timeout: 30_000, encoding: 'utf8' }, (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as NodeJS.ErrnoException & { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  it('is linked by npm install before anything is built (the bin is a committed file, not dist/)', async () => {
    // What a fresh clone holds of apps/server: its tracked files, so no dist/. Its dependencies are
    // left out (npm links bins whatever they are); the root is a workspace project like ours.
    const clone = join(work, 'clone');
    const { stdout: tracked } = await runInProject('git', ['ls-files', 'apps/server/package.json', 'apps/server/bin'], REPO);
    const manifest = JSON.parse(readFileSync(join(REPO, 'apps/server/package.json'), 'utf8')) as Manifest & { bin: Record<string, string>; devDependencies?: unknown };
    expect(tracked.split('\n').filter(Boolean).sort()).toEqual(['apps/server/bin/certsmith.js', 'apps/server/package.json']);
    await mkdir(join(clone, 'apps/server/bin'), { recursive: true });
    await writeFile(join(clone, 'package.json'), `${JSON.stringify({ name: 'fresh-clone', private: true, workspaces: ['apps/server'] }, null, 2)}\n`);
    await writeFile(join(clone, 'apps/server/package.json'), `${JSON.stringify({ ...manifest, dependencies: {}, devDependencies: {} }, null, 2)}\n`);
    await writeFile(join(clone, 'apps/server/bin/certsmith.js'), readFileSync(join(REPO, 'apps/server/bin/certsmith.js')), { mode: 0o755 });
    await runInProject('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], clone);

    const link = join(clone, 'node_modules', '.bin', 'certsmith');
    expect(existsSync(link)).toBe(true);
    const notBuilt = await execute(link, ['--help'], clone);
    expect(notBuilt).toMatchObject({ code: 1, stdout: '' });
    expect(notBuilt.stderr).toBe(`certsmith: not built yet (${join(clone, 'apps/server/dist/cli.js')} is missing): run "npm run build" in the repository\n`);
  });

  it('runs the built CLI through the committed launcher (npx certsmith --help after npm ci, which builds)', async () => {
    const root = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    // npm runs the root project's `prepare` after `npm ci`/`npm install`: the clone is built, and
    // the linked launcher finds dist/.
    expect(root.scripts['prepare']).toBe('npm run build');
    const help = await execute(join(REPO, 'apps/server/bin/certsmith.js'), ['--help'], REPO);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: certsmith \[options\] \[command\]\n/);
    const version = await execute(join(REPO, 'apps/server/bin/certsmith.js'), ['-version'], REPO);
    expect(version).toMatchObject({ code: 0, stdout: `${(JSON.parse(readFileSync(join(REPO, 'apps/server/package.json'), 'utf8')) as { version: string }).version}\n` });
  });
});
