import { describe, expect, it } from 'vitest';
import { parseSqliteDataSource } from './sqlite-database.js';

describe('parseSqliteDataSource', () => {
  it('reads paths, :memory: and go-sqlite3 file: URIs with their parameters', () => {
    expect(parseSqliteDataSource('certs.db')).toEqual({ filename: 'certs.db', readonly: false });
    expect(parseSqliteDataSource(':memory:')).toEqual({ filename: ':memory:', readonly: false });
    expect(parseSqliteDataSource('file:/var/lib/certs.db?mode=ro&_busy_timeout=250&cache=shared')).toEqual({
      filename: '/var/lib/certs.db',
      readonly: true,
      busyTimeoutMs: 250,
    });
    expect(parseSqliteDataSource('file:x.db?mode=memory').filename).toBe(':memory:');
    expect(parseSqliteDataSource('certs.db?_journal=DELETE&_sync=NORMAL')).toMatchObject({ journalMode: 'DELETE', synchronous: 'NORMAL' });
  });

  it('refuses parameter values that are not plain words or numbers, with 5200', () => {
    expect(() => parseSqliteDataSource('x.db?_busy_timeout=soon')).toThrowError(expect.objectContaining({ code: 5200 }));
    expect(() => parseSqliteDataSource('x.db?_journal_mode=WAL;DROP')).toThrowError(expect.objectContaining({ code: 5200 }));
  });
});
