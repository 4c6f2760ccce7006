import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPki } from '@certsmith/test-pki';
import { checkTrustFiles } from './trust-check.js';

describe('checkTrustFiles', () => {
  let dir: string;
  let rootPem: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certsmith-trust-check-'));
    const pki = new TestPki({ now: new Date() });
    rootPem = pki.root('Trust Check Root').pem;
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reports what each file holds when all load', async () => {
    const roots = join(dir, 'roots.pem');
    await writeFile(roots, rootPem);
    const metadata = join(dir, 'metadata.json');
    await writeFile(metadata, JSON.stringify([{ name: 'P', weight: 1, hash_algo: 'SHA2', key_algo: 'RSA', keystore: 'roots.pem' }]));
    await expect(checkTrustFiles({ caBundleFile: roots, intBundleFile: roots, metadataFile: metadata })).resolves.toEqual({
      roots: 1,
      intermediates: 1,
      platforms: 1,
    });
  });

  it('checks nothing when no file is given', async () => {
    await expect(checkTrustFiles({})).resolves.toEqual({ roots: null, intermediates: null, platforms: null });
  });

  it('fails with 4003 naming --metadata when the metadata is not JSON', async () => {
    const metadata = join(dir, 'broken.json');
    await writeFile(metadata, '{"name":');
    await expect(checkTrustFiles({ metadataFile: metadata })).rejects.toMatchObject({
      code: 4003,
      flag: '--metadata',
      exitCode: 2,
    });
  });

  it('fails with 3003 naming --int-bundle when the bundle has trailing garbage', async () => {
    const bundle = join(dir, 'ints.pem');
    await writeFile(bundle, `${rootPem}\nnot a certificate\n`);
    await expect(checkTrustFiles({ intBundleFile: bundle })).rejects.toMatchObject({ code: 3003, flag: '--int-bundle' });
  });
});
