/**
 * `certsmith certs …` and `certsmith db …` in-process with injected stdio, on SQLite stores in a
 * temporary folder (the default data-directory store and a CFSSL db-config file).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, serialToDecimal } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { Command, CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCertinfoCommand } from './certinfo.js';
import { registerCertsCommand } from './certs.js';
import type { CommandIo } from './common.js';
import { registerDbCommand } from './db.js';

let dir: string;

async function cli(args: string[]): Promise<{ out: string; err: string; code: number | undefined }> {
  let out = '';
  let err = '';
  let code: number | undefined;
  const io: Partial<CommandIo> = {
    stdout: (text) => void (out += text),
    stderr: (text) => void (err += text),
    stderrIsTty: () => false,
    setExitCode: (value) => void (code = value),
    cwd: () => dir,
    env: { XDG_DATA_HOME: join(dir, 'xdg') },
  };
  const program = new Command().exitOverride().configureOutput({ writeErr: (text) => void (err += text), writeOut: (text) => void (out += text) });
  registerCertsCommand(program, io);
  registerDbCommand(program, io);
  registerCertinfoCommand(program, io);
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    code = error.exitCode;
  }
  return { out, err, code };
}

const pki = new TestPki();
const root = pki.root({ CN: 'commands root' }, { key: 'ecdsa-p256' });
const aki = toHex(root.subjectKeyId!);
const soon = pki.leaf('soon.example', root, { key: 'ecdsa-p256', notAfter: pki.days(10) });
const later = pki.leaf('later.example', root, { key: 'ecdsa-p256', notAfter: pki.days(300), dns: ['later.example', 'www.later.example'] });
const gone = pki.leaf('gone.example', root, { key: 'ecdsa-p256', notBefore: pki.days(-60), notAfter: pki.days(-10) });
const serialOf = (hex: string): string => serialToDecimal(hex.toLowerCase());

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-store-commands-'));
  await writeFile(join(dir, 'db.json'), JSON.stringify({ driver: 'sqlite3', data_source: join(dir, 'other.db') }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('certsmith db and certs', () => {
  it('db check refuses a default store that does not exist; db migrate creates it', async () => {
    const missing = await cli(['db', 'check']);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.err)).toEqual({ code: 11000, message: expect.stringMatching(/^no certificate store at .*xdg\/certsmith\/certs\.db/) });
    expect(existsSync(join(dir, 'xdg', 'certsmith', 'certs.db'))).toBe(false);

    const migrated = await cli(['db', 'migrate', '--json']);
    expect(migrated.code).toBeUndefined();
    expect(JSON.parse(migrated.out)).toMatchObject({ store: `sqlite3 ${join(dir, 'xdg', 'certsmith', 'certs.db')}`, applied: expect.arrayContaining(['001_CreateCertificates', '002_AddMetadataToCertificates']) });
    expect((await cli(['db', 'migrate'])).out).toBe(`sqlite3 ${join(dir, 'xdg', 'certsmith', 'certs.db')}: up to date\n`);
    const checked = await cli(['db', 'check', '--json']);
    expect(checked.code).toBeUndefined();
    expect(JSON.parse(checked.out)).toMatchObject({ pending: [], problems: [], up_to_date: true });
  });

  it('db check exits 2 naming the pending migrations of a database CFSSL made', async () => {
    const store = await openStore({ driver: 'sqlite3', dataSource: join(dir, 'bare.db') }, { migrations: 'off', sqlite: { thread: false } });
    await store.close();
    await writeFile(join(dir, 'bare.json'), JSON.stringify({ driver: 'sqlite3', data_source: join(dir, 'bare.db') }));
    const checked = await cli(['db', 'check', '-db-config', 'bare.json']);
    expect(checked.code).toBe(2);
    expect(checked.out).toContain('pending: 001_CreateCertificates');
    expect(JSON.parse(checked.err)).toMatchObject({ code: 11000, message: expect.stringContaining('certsmith db migrate') });
  });

  describe('on a store with certificates', () => {
    beforeAll(async () => {
      const store = await openStore({ driver: 'sqlite3', dataSource: join(dir, 'xdg', 'certsmith', 'certs.db') }, { sqlite: { thread: false } });
      await store.recordCertificate({ certificate: soon.pem, label: 'default' });
      await store.recordCertificate({ certificate: later.pem, label: 'web' });
      await store.recordCertificate({ certificate: gone.pem, label: 'default' });
      await store.close();
    });

    it('certs list prints a table in expiry order', async () => {
      const { out, code } = await cli(['certs', 'list']);
      expect(code).toBeUndefined();
      const lines = out.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^EXPIRY\s+STATUS\s+LABEL\s+COMMON NAME\s+SERIAL\s+AKI$/);
      expect(lines.slice(1).map((line) => line.split(/\s+/)[3])).toEqual(['gone.example', 'soon.example', 'later.example']);
    });

    it('certs list filters (--expiring-within, --expired, --name, --label) and prints JSON lines', async () => {
      const names = async (...args: string[]): Promise<string[]> =>
        (await cli(['certs', 'list', '--json', ...args])).out
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => (JSON.parse(line) as { common_name: string }).common_name);
      expect(await names('--expiring-within', '720h')).toEqual(['soon.example']);
      expect(await names('--expired')).toEqual(['gone.example']);
      expect(await names('--name', 'www.later.example')).toEqual(['later.example']);
      expect(await names('--label', 'default', '--limit', '1')).toEqual(['gone.example']);
      const { err } = await cli(['certs', 'list', '--label', 'nobody']);
      expect(err).toBe('certsmith certs list: warning: no certificate matches\n');
    });

    it('certs show prints one certificate with its PEM; an unknown one is a coded failure', async () => {
      const shown = await cli(['certs', 'show', '--serial', serialOf(later.serialHex), '--aki', aki.toUpperCase()]);
      expect(JSON.parse(shown.out)).toMatchObject({ serial_number: serialOf(later.serialHex), authority_key_identifier: aki, ca_label: 'web', sans: ['later.example', 'www.later.example'], pem: later.pem });
      const unknown = await cli(['certs', 'show', '--serial', '1', '--aki', aki]);
      expect(unknown.code).toBe(2);
      expect(JSON.parse(unknown.err)).toEqual({ code: 404, message: `no certificate with serial 1 and authority key identifier ${aki}` });
      expect((await cli(['certs', 'show', '--serial', '1'])).code).toBe(1);
    });

    it('certs export prints PEMs: one by serial and AKI, or all the filters match', async () => {
      expect((await cli(['certs', 'export', '--serial', serialOf(soon.serialHex), '--aki', aki])).out).toBe(soon.pem);
      expect((await cli(['certs', 'export', '--label', 'default'])).out).toBe(gone.pem + soon.pem);
    });

    it('certinfo -serial -aki -db-config describes a recorded certificate, as cfssl certinfo', async () => {
      await writeFile(join(dir, 'default-db.json'), JSON.stringify({ driver: 'sqlite3', data_source: join(dir, 'xdg', 'certsmith', 'certs.db') }));
      const described = await cli(['certinfo', '-serial', serialOf(later.serialHex), '-aki', aki.toUpperCase(), '-db-config', 'default-db.json']);
      expect(JSON.parse(described.out)).toMatchObject({ serial_number: serialOf(later.serialHex), subject: { common_name: 'later.example' }, sans: ['later.example', 'www.later.example'] });
      const unknown = await cli(['certinfo', '-serial', '1', '-aki', aki, '-db-config', 'default-db.json']);
      expect(unknown.code).toBe(2);
      expect(JSON.parse(unknown.err)).toEqual({ code: 404, message: 'no certificate found' });
      expect((await cli(['certinfo', '-serial', '1', '-aki', aki])).code).toBe(1);
    });

    it('db tidy removes what expired longer than the buffer ago', async () => {
      expect(JSON.parse((await cli(['db', 'tidy', '--json'])).out)).toMatchObject({ certificates: 1 });
      expect((await cli(['db', 'tidy', '--buffer', '0s'])).out).toMatch(/removed 0 certificate\(s\)/);
      expect((await cli(['certs', 'list', '--expired', '--json'])).out).toBe('');
    });

    it('--db-config picks another store', async () => {
      await cli(['db', 'migrate', '--db-config', 'db.json']);
      const listed = await cli(['certs', 'list', '--db-config', 'db.json', '--json']);
      expect(listed.out).toBe('');
      expect(listed.err).toContain('no certificate matches');
    });
  });
});
