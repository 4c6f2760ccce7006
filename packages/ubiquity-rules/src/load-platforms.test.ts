import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TestPki } from '@certsmith/test-pki';
import { decodePlatformMetadata, defaultPlatforms, keystoreFromPem, loadPlatforms } from './load-platforms.js';
import { ParsedKeystoreBlocks } from './parsed-keystore-blocks.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** cfssl_trust data, used in place: the `shared/` folder beside the repository (CI), or /work/shared. */
const TRUST = [process.env.CERTSMITH_TRUST_DIR, fileURLToPath(new URL('../../../../shared/trust', import.meta.url)), '/work/shared/trust'].find(
  (dir): dir is string => typeof dir === 'string' && existsSync(dir),
) as string;
const METADATA = `${TRUST}/ca-bundle.crt.metadata`;

const dir = mkdtempSync(join(tmpdir(), 'platforms-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pki = new TestPki({ now: new Date('2026-11-22T00:00:00Z') });

describe('loadPlatforms', () => {
  it('loads the 15 cfssl_trust platforms in file order with their keystores', async () => {
    const platforms = await loadPlatforms(METADATA);
    expect(platforms.map((p) => p.name)).toEqual([
      'Mozilla', 'Windows XP', 'Windows Vista and up', 'Windows Phone 8+', 'Mac OSX', 'Apple ios',
      'Chrome Browser M39', 'Chrome Browser M40', 'Chrome Browser M41 and later', 'Android 2.2 Froyo',
      'Android 2.3 Gingerbread', 'Android 3.0 Honeycomb', 'Android 4.0 ICS', 'Android 4.4 KitKat', 'Ubuntu',
    ]);
    // Unique SPKIs per keystore as observed with CFSSL (behaviour doc 2.11).
    expect(platforms.map((p) => p.keystore.size)).toEqual([149, 374, 374, 374, 216, 218, 0, 0, 0, 56, 104, 129, 134, 149, 177]);
    expect(platforms[0]).toMatchObject({ weight: 25, hashUbiquity: 70, keyAlgoUbiquity: 70, keystoreFile: `${TRUST}/certdata/trusted_roots/nss.pem` });
    expect(platforms[1]).toMatchObject({ name: 'Windows XP', hashUbiquity: 100, keyAlgoUbiquity: 100 });
    expect(platforms[9]).toMatchObject({ name: 'Android 2.2 Froyo', keyAlgo: 'RSA', keyAlgoUbiquity: 100 });
  });

  it('joins even absolute keystore paths onto the metadata folder', async () => {
    mkdirSync(join(dir, 'abs', 'x'), { recursive: true });
    writeFileSync(join(dir, 'abs', 'x', 'store.pem'), pki.root('Abs Root', { key: 'ecdsa-p256' }).pem);
    writeFileSync(join(dir, 'abs', 'meta.json'), JSON.stringify([{ name: 'A', weight: 1, hash_algo: 'SHA2', key_algo: 'RSA', keystore: '/x/store.pem' }]));
    const [platform] = await loadPlatforms(join(dir, 'abs', 'meta.json'));
    expect(platform?.keystoreFile).toBe(join(dir, 'abs', 'x', 'store.pem'));
    expect(platform?.keystore.size).toBe(1);
  });

  it('fails with CFSSL\'s load message when the file is missing', async () => {
    await expect(loadPlatforms(join(dir, 'nope.json'))).rejects.toMatchObject({
      code: 4003,
      message: `platform metadata failed to load: open ${join(dir, 'nope.json')}: no such file or directory`,
    });
  });

  it('fails with CFSSL\'s parse message when the JSON is bad', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, '');
    await expect(loadPlatforms(file)).rejects.toThrow('platform metadata failed to parse: unexpected end of JSON input');
    writeFileSync(file, '{"name":"x"}');
    await expect(loadPlatforms(file)).rejects.toThrow(
      'platform metadata failed to parse: json: cannot unmarshal object into Go value of type []ubiquity.Platform',
    );
    writeFileSync(file, '[{"name":"x","weight":"heavy"}]');
    await expect(loadPlatforms(file)).rejects.toThrow(
      'platform metadata failed to parse: json: cannot unmarshal string into Go struct field Platform.weight of type int',
    );
  });

  it('fails with the finalize message when a keystore is unreadable or an algorithm unknown', async () => {
    const file = join(dir, 'meta.json');
    writeFileSync(file, JSON.stringify([{ name: 'Ghost', weight: 3, hash_algo: 'SHA2', key_algo: 'ECDSA256', keystore: 'missing.pem' }]));
    await expect(loadPlatforms(file)).rejects.toThrow(
      `fail to finalize the parsing of platform metadata: {Ghost 3 SHA2 ECDSA256 ${join(dir, 'missing.pem')} map[] 70 70}`,
    );
    writeFileSync(file, JSON.stringify([{ name: 'Odd', weight: 1, hash_algo: 'MD5', key_algo: 'RSA' }]));
    await expect(loadPlatforms(file)).rejects.toThrow('fail to finalize the parsing of platform metadata: {Odd 1 MD5 RSA  map[] 0 100}');
  });

  it('reports the first platform in file order that fails, though every keystore is read at once', async () => {
    writeFileSync(join(dir, 'good.pem'), pki.root('Order Root', { key: 'ecdsa-p256' }).pem);
    const file = join(dir, 'order.json');
    const entry = (name: string, keystore: string, hashAlgo = 'SHA2') => ({ name, weight: 1, hash_algo: hashAlgo, key_algo: 'ECDSA256', keystore });
    writeFileSync(file, JSON.stringify([entry('Good', 'good.pem'), entry('First', 'missing-1.pem'), entry('Second', 'missing-2.pem')]));
    await expect(loadPlatforms(file)).rejects.toThrow(`{First 1 SHA2 ECDSA256 ${join(dir, 'missing-1.pem')} map[] 70 70}`);
    // An unknown algorithm before an unreadable keystore: the algorithm is reported, and the
    // keystore's failure is not left unhandled (vitest fails the run on an unhandled rejection).
    writeFileSync(file, JSON.stringify([entry('Odd', 'good.pem', 'MD5'), entry('First', 'missing-1.pem')]));
    await expect(loadPlatforms(file)).rejects.toThrow('{Odd 1 MD5 ECDSA256');
  });

  it('gives platforms that name the same keystore the same set, read once', async () => {
    const reads: string[] = [];
    const readTextFile = async (file: string) => {
      reads.push(file);
      return file.endsWith('.json')
        ? JSON.stringify([1, 2].map((n) => ({ name: `P${n}`, weight: 1, hash_algo: 'SHA2', key_algo: 'ECDSA256', keystore: 'shared.pem' })))
        : pki.root('Shared Root', { key: 'ecdsa-p256' }).pem;
    };
    const [first, second] = await loadPlatforms('/meta/m.json', { readTextFile });
    expect(reads).toEqual(['/meta/m.json', '/meta/shared.pem']);
    expect(first!.keystore).toBe(second!.keystore);
    expect(first!.keystore.size).toBe(1);
  });

  it('ignores unknown keys and matches keys case-insensitively like Go', () => {
    expect(decodePlatformMetadata('[{"NAME":"a","Weight":2,"hash_algo":"SHA1","key_algo":"RSA","hash_algo_expiry":"x"}]')).toEqual([
      { name: 'a', weight: 2, hashAlgo: 'SHA1', keyAlgo: 'RSA', keystore: '' },
    ]);
    expect(decodePlatformMetadata('null')).toEqual([]);
  });
});

describe('keystoreFromPem', () => {
  it('skips blocks that are not certificates when parsing best effort', () => {
    const a = pki.root('KS A', { key: 'ecdsa-p256' });
    const text = `${a.pem}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n${pki.root('KS B', { key: 'ecdsa-p256' }).pem}`;
    expect(keystoreFromPem(text).size).toBe(2);
  });

  it('finds the same SPKIs in the cfssl_trust keystores read as UTF-8 text or one character per byte', () => {
    for (const store of ['nss.pem', 'windows.pem', 'ios.pem']) {
      const bytes = readFileSync(`${TRUST}/certdata/trusted_roots/${store}`);
      const asBytes = keystoreFromPem(bytes.toString('latin1'));
      expect(asBytes.size).toBeGreaterThan(100);
      expect(asBytes).toEqual(keystoreFromPem(bytes.toString('utf8')));
    }
  });

  it('finds the same keystore whatever non-ASCII text, valid UTF-8 or not, lies between the blocks', () => {
    const a = pki.root('KS Bytes A', { key: 'ecdsa-p256' });
    const b = pki.root('KS Bytes B', { key: 'ecdsa-p256' });
    const ascii = Buffer.from(`friendlyName: A\n${a.pem}friendlyName: B\n${b.pem}`);
    const other = Buffer.concat([Buffer.from('friendlyName: Ærø Ünïcødé\n'), Buffer.from(a.pem), Buffer.of(0xff, 0xc3, 0x0a), Buffer.from(b.pem)]);
    const expected = keystoreFromPem(ascii.toString('latin1'));
    expect(expected.size).toBe(2);
    expect(keystoreFromPem(other.toString('latin1'))).toEqual(expected);
    expect(keystoreFromPem(other.toString('utf8'))).toEqual(expected);
  });

  it('finds the same keystore for a store whose blocks repeat, and reuses what other stores parsed', () => {
    const a = pki.root('KS Repeat A', { key: 'ecdsa-p256' });
    const b = pki.root('KS Repeat B', { key: 'ecdsa-p256' });
    const parsed = new ParsedKeystoreBlocks();
    const once = keystoreFromPem(`${a.pem}${b.pem}`, parsed);
    expect(once.size).toBe(2);
    expect(keystoreFromPem(`${b.pem}junk\n${a.pem}${a.pem}${b.pem}`, parsed)).toEqual(once);
    // A malformed body is refused whether or not the same certificates were parsed before.
    expect(keystoreFromPem(`-----BEGIN CERTIFICATE-----\nAQI\n-----END CERTIFICATE-----\n${a.pem}`, parsed).size).toBe(1);
  });
});

describe('defaultPlatforms', () => {
  it('returns one platform trusting Node\'s bundled roots', async () => {
    const platforms = await defaultPlatforms({ extraStoreFiles: [] });
    expect(platforms).toHaveLength(1);
    expect(platforms[0]?.keystore.size).toBeGreaterThan(100);
    expect(platforms[0]).toMatchObject({ name: 'System', hashUbiquity: 70, keyAlgoUbiquity: 70 });
  });
});
