import { describe, expect, it } from 'vitest';
import { parseKeyValueDsn, postgresClientConfig } from './postgres-data-source.js';

describe('parseKeyValueDsn', () => {
  it('reads libpq key=value pairs with quoted values', () => {
    expect([...parseKeyValueDsn(`dbname=certdb  user = cs password='a b\\'c' sslmode=disable`)]).toEqual([
      ['dbname', 'certdb'],
      ['user', 'cs'],
      ['password', "a b'c"],
      ['sslmode', 'disable'],
    ]);
  });

  it('refuses a pair without "=" and an unterminated quote with 5200', () => {
    expect(() => parseKeyValueDsn('dbname')).toThrowError(expect.objectContaining({ code: 5200 }));
    expect(() => parseKeyValueDsn("password='x")).toThrowError(expect.objectContaining({ code: 5200 }));
  });
});

describe('postgresClientConfig', () => {
  it('maps a URL, with lib/pq TLS semantics (default require: encrypted, not verified)', () => {
    const config = postgresClientConfig('postgres://u:p%40ss@db.example:6543/certdb');
    expect(config).toMatchObject({ host: 'db.example', port: 6543, user: 'u', password: 'p@ss', database: 'certdb' });
    expect(config.ssl).toMatchObject({ rejectUnauthorized: false });
    expect(postgresClientConfig('postgresql://h/db?sslmode=disable').ssl).toBe(false);
    expect(postgresClientConfig('dbname=x sslmode=verify-full host=/var/run/postgresql')).toMatchObject({
      host: '/var/run/postgresql',
      database: 'x',
      ssl: { rejectUnauthorized: true },
    });
  });

  it("refuses sslmodes lib/pq does not have and unreadable certificate files, with 5200", () => {
    expect(() => postgresClientConfig('dbname=x sslmode=prefer')).toThrowError(/unsupported sslmode "prefer"/);
    expect(() => postgresClientConfig('dbname=x sslmode=verify-ca sslrootcert=/nonexistent/ca.pem')).toThrowError(
      expect.objectContaining({ code: 5200 }),
    );
    expect(() => postgresClientConfig('dbname=x port=99999 sslmode=disable')).toThrowError(/invalid port/);
  });
});
