import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDbConfigFile, parseDbConfig } from './db-config.js';

function errorOf(work: () => unknown): { code: number; message: string } {
  try {
    work();
  } catch (error) {
    return error as { code: number; message: string };
  }
  throw new Error('expected an error');
}

describe('parseDbConfig', () => {
  it('reads CFSSL keys case-insensitively, ignores unknown keys, and the last duplicate wins', () => {
    expect(parseDbConfig('{"driver":"sqlite3","data_source":"certs.db"}')).toEqual({ driver: 'sqlite3', dataSource: 'certs.db' });
    expect(parseDbConfig('{"DRIVER":"postgres","Data_Source":"dbname=x","extra":1,"data_source":"dbname=y"}')).toEqual({
      driver: 'postgres',
      dataSource: 'dbname=y',
    });
    // Go folds U+017F (long s) to "s" when matching field names.
    expect(parseDbConfig('{"driver":"sqlite3","data_\u017fource":"a.db"}').dataSource).toBe('a.db');
  });

  it("refuses what CFSSL refuses, with 5200 and CFSSL's messages", () => {
    expect(errorOf(() => parseDbConfig('{"driver":"sqlite3"}'))).toMatchObject({ code: 5200, message: 'invalid db configuration' });
    expect(errorOf(() => parseDbConfig('{"driver":"","data_source":"x"}')).message).toBe('invalid db configuration');
    expect(errorOf(() => parseDbConfig('null')).message).toBe('invalid db configuration');
    expect(errorOf(() => parseDbConfig(''))).toMatchObject({ code: 5200, message: 'failed to unmarshal configuration: unexpected end of JSON input' });
    expect(errorOf(() => parseDbConfig('x')).message).toBe("failed to unmarshal configuration: invalid character 'x' looking for beginning of value");
    // The parser's text never quotes the file (it may hold a password).
    expect(errorOf(() => parseDbConfig('{"driver":"postgres","data_source": postgres://u:hunter2@h/db}')).message).toBe("failed to unmarshal configuration: Unexpected token 'p'");
    expect(errorOf(() => parseDbConfig('{"driver":5,"data_source":"x"}')).message).toBe(
      'failed to unmarshal configuration: json: cannot unmarshal number into Go struct field DBConfig.driver of type string',
    );
    expect(errorOf(() => parseDbConfig('[]')).message).toBe(
      'failed to unmarshal configuration: json: cannot unmarshal array into Go value of type dbconf.DBConfig',
    );
  });

  it('refuses mysql and unknown drivers with a coded error naming the supported ones', () => {
    const mysql = errorOf(() => parseDbConfig('{"driver":"mysql","data_source":"u:p@tcp(h:3306)/db"}'));
    expect(mysql.code).toBe(5200);
    expect(mysql.message).toContain('"mysql" is not supported');
    expect(errorOf(() => parseDbConfig('{"driver":"invalid","data_source":"x"}')).message).toContain('sql: unknown driver "invalid"');
  });
});

describe('loadDbConfigFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-dbconf-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file, and answers invalid path / could not read configuration file', async () => {
    const file = join(dir, 'db.json');
    writeFileSync(file, '{"driver":"sqlite3","data_source":"certs.db"}');
    expect(await loadDbConfigFile(file)).toEqual({ driver: 'sqlite3', dataSource: 'certs.db' });
    await expect(loadDbConfigFile('')).rejects.toMatchObject({ code: 5200, message: 'invalid path' });
    await expect(loadDbConfigFile(join(dir, 'missing.json'))).rejects.toMatchObject({ code: 5200, message: 'could not read configuration file' });
  });
});
