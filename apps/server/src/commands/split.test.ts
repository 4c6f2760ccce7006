import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerSplitCommand, splitOutputs } from './split.js';

const names = (outputs: ReturnType<typeof splitOutputs>) => outputs.map((output) => [output.filename, output.contents.toString('utf8'), output.mode.toString(8)]);

describe('splitOutputs (cfssljson 1.2.0 rules)', () => {
  it('splits gencert output with -bare: NAME.pem, NAME-key.pem (0600), NAME.csr', () => {
    expect(names(splitOutputs({ cert: 'C', csr: 'R', key: 'K' }, 'www', true))).toEqual([
      ['www.pem', 'C', '664'],
      ['www-key.pem', 'K', '600'],
      ['www.csr', 'R', '644'],
    ]);
  });

  it('takes the API names (certificate, private_key, certificate_request) from an envelope without -bare', () => {
    const envelope = { success: true, result: { certificate: 'C', private_key: 'K', certificate_request: 'R' }, errors: [], messages: [] };
    expect(names(splitOutputs(envelope, 'n', false)).map(([file]) => file)).toEqual(['n.pem', 'n-key.pem', 'n.csr']);
  });

  it('unwraps an envelope given with -bare too (cfssljson would write nothing)', () => {
    const envelope = { success: true, result: { certificate: 'C' }, errors: [], messages: [] };
    expect(names(splitOutputs(envelope, 'n', true))).toEqual([['n.pem', 'C', '664']]);
  });

  it('fails on a failed envelope with its first error code and every message', () => {
    const failed = { success: false, result: null, errors: [{ code: 5300, message: 'bad' }, { code: 1, message: 'worse' }], messages: [] };
    expect(() => splitOutputs(failed, 'n', false)).toThrow(expect.objectContaining({ code: 5300, message: 'Request failed: bad; worse' }));
  });

  it('refuses command output without -bare, as cfssljson does', () => {
    expect(() => splitOutputs({ cert: 'C' }, 'n', false)).toThrow(/Request failed: the input is not a CFSSL API response/);
  });

  it('writes NAME-bundle.pem for a bundle string and bundle+root for a newcert bundle object', () => {
    expect(names(splitOutputs({ bundle: 'B', crt: 'X', key: '' }, 'b', true))).toEqual([['b-bundle.pem', 'B', '644']]);
    expect(names(splitOutputs({ certificate: 'C', bundle: { bundle: 'B', root: 'R' } }, 'b', true))).toEqual([
      ['b.pem', 'C', '664'],
      ['b-bundle.pem', 'B\nR', '644'],
      ['b-root.pem', 'R', '644'],
    ]);
  });

  it('skips empty members and decodes ocspResponse; reports type errors instead of crashing', () => {
    const outputs = splitOutputs({ cert: '', key: '', ocspResponse: 'aGVsbG8=' }, 'o', true);
    expect(outputs.map((output) => [output.filename, output.contents.toString('utf8'), output.binary])).toEqual([['o-response.der', 'hello', true]]);
    expect(() => splitOutputs({ cert: 5 }, 'o', true)).toThrow(/member "cert" must be a string, got number/);
    expect(() => splitOutputs({ ocspResponse: 'a b' }, 'o', true)).toThrow(/illegal base64 data/);
    expect(() => splitOutputs([1], 'o', true)).toThrow(/cannot unmarshal array into Go value/);
  });
});

describe('certsmith split', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certsmith-split-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function split(args: string[], stdin: string): Promise<{ out: string; err: string; code: number | undefined }> {
    let out = '';
    let err = '';
    let code: number | undefined;
    const program = new Command().exitOverride().configureOutput({ writeErr: (text) => void (err += text), writeOut: () => {} });
    registerSplitCommand(program, {
      stdout: (text) => void (out += text),
      stderr: (text) => void (err += text),
      readStdin: async () => Buffer.from(stdin),
      setExitCode: (value) => void (code = value),
      cwd: () => dir,
    });
    await program.parseAsync(['split', ...args], { from: 'user' });
    return { out, err, code };
  }

  it('writes the files with their modes and narrows an existing key file to 0600', async () => {
    await writeFile(join(dir, 'www-key.pem'), 'old', { mode: 0o644 });
    const result = await split(['-bare', 'www'], JSON.stringify({ cert: 'CERT\n', csr: 'CSR\n', key: 'KEY\n' }));
    expect(result).toEqual({ out: '', err: '', code: undefined });
    expect(await readFile(join(dir, 'www.pem'), 'utf8')).toBe('CERT\n');
    expect(await readFile(join(dir, 'www-key.pem'), 'utf8')).toBe('KEY\n');
    expect((await stat(join(dir, 'www-key.pem'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'www.csr'))).mode & 0o077).toBe((0o644 & ~process.umask()) & 0o077);
  });

  it('prints the contents with -stdout and defaults the name to cert', async () => {
    const result = await split(['-bare', '-stdout'], JSON.stringify({ cert: 'C', key: 'K' }));
    expect(result.out).toBe('C\nK\n');
  });

  it('reports unparsable input as a coded JSON line with exit code 2', async () => {
    const result = await split(['-bare', 'x'], 'notjson');
    expect(result.code).toBe(2);
    expect(JSON.parse(result.err)).toMatchObject({ code: 400, message: expect.stringMatching(/^Failed to parse input: /) });
  });
});
