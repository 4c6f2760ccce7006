/**
 * The store's migrations, in order. The first two are CFSSL's own (`certdb/{sqlite,pg}/migrations`
 * 001 and 002 at CFSSL HEAD, lifecycle spec §1.2) and are recorded in goose's `goose_db_version`
 * exactly as `goose up` would, so CFSSL's tooling sees them applied. They are written to be safe on
 * the databases CFSSL users really have: tables created by hand from the SQL files (no goose state),
 * CFSSL 1.2.0's schema (001 only), a half-applied 002. certsmith's own migrations add tables,
 * indexes and triggers and never change what CFSSL reads and writes — except migration 4, which
 * repairs SQLite files whose `bytea` declarations made SQLite round the stored serials.
 */
import { authorityKeyIdHex, parseRecordedCertificate, serialToDecimal } from '../certificate-row.js';
import type { SchemaConnection } from './schema-connection.js';
import { tableColumns } from './schema-connection.js';

/** One migration. `gooseVersion` marks CFSSL's migrations (recorded in `goose_db_version`). */
export interface StoreMigration {
  name: string;
  gooseVersion?: number;
  up(connection: SchemaConnection): Promise<void>;
}

const CREATE_CERTIFICATES_SQLITE = `
CREATE TABLE IF NOT EXISTS certificates (
  serial_number            blob NOT NULL,
  authority_key_identifier blob NOT NULL,
  ca_label                 blob,
  status                   blob NOT NULL,
  reason                   int,
  expiry                   timestamp,
  revoked_at               timestamp,
  pem                      blob NOT NULL,
  PRIMARY KEY(serial_number, authority_key_identifier)
);
CREATE TABLE IF NOT EXISTS ocsp_responses (
  serial_number            blob NOT NULL,
  authority_key_identifier blob NOT NULL,
  body                     blob NOT NULL,
  expiry                   timestamp,
  PRIMARY KEY(serial_number, authority_key_identifier),
  FOREIGN KEY(serial_number, authority_key_identifier) REFERENCES certificates(serial_number, authority_key_identifier)
);`;

const CREATE_CERTIFICATES_POSTGRES = `
CREATE TABLE IF NOT EXISTS certificates (
  serial_number            bytea NOT NULL,
  authority_key_identifier bytea NOT NULL,
  ca_label                 bytea,
  status                   bytea NOT NULL,
  reason                   int,
  expiry                   timestamptz,
  revoked_at               timestamptz,
  pem                      bytea NOT NULL,
  PRIMARY KEY(serial_number, authority_key_identifier)
);
CREATE TABLE IF NOT EXISTS ocsp_responses (
  serial_number            bytea NOT NULL,
  authority_key_identifier bytea NOT NULL,
  body                     bytea NOT NULL,
  expiry                   timestamptz,
  PRIMARY KEY(serial_number, authority_key_identifier),
  FOREIGN KEY(serial_number, authority_key_identifier) REFERENCES certificates(serial_number, authority_key_identifier)
);`;

/** CFSSL 002's columns with their declared types (SQLite, PostgreSQL). */
const MIGRATION_002_COLUMNS: ReadonlyArray<[name: string, sqlite: string, postgres: string]> = [
  ['issued_at', 'timestamp', 'timestamptz'],
  ['not_before', 'timestamp', 'timestamptz'],
  ['metadata', 'text', 'jsonb'],
  ['sans', 'text', 'jsonb'],
  ['common_name', 'text', 'TEXT'],
];

/** CFSSL `001_CreateCertificates`. `IF NOT EXISTS`: tables created by hand from CFSSL's file stay as they are. */
const createCertificates: StoreMigration = {
  name: '001_CreateCertificates',
  gooseVersion: 1,
  async up(connection) {
    await connection.exec(connection.driver === 'sqlite3' ? CREATE_CERTIFICATES_SQLITE : CREATE_CERTIFICATES_POSTGRES);
  },
};

/** CFSSL `002_AddMetadataToCertificates`, adding only the columns that are missing. */
const addMetadataToCertificates: StoreMigration = {
  name: '002_AddMetadataToCertificates',
  gooseVersion: 2,
  async up(connection) {
    const present = await tableColumns(connection, 'certificates');
    for (const [name, sqliteType, postgresType] of MIGRATION_002_COLUMNS) {
      if (present.has(name)) continue;
      await connection.exec(
        connection.driver === 'sqlite3'
          ? `ALTER TABLE certificates ADD COLUMN "${name}" ${sqliteType}`
          : `ALTER TABLE certificates ADD COLUMN ${name} ${postgresType}`,
      );
    }
  },
};

/**
 * Names (subject CN and the string entries of `sans`) of a certificates row, for the SQLite name
 * index. `row` is `NEW` in triggers or the table alias in the backfill; `sans` may be TEXT or BLOB
 * and may hold any JSON (certadd), so only valid JSON is read and only its strings are kept.
 */
function sqliteNamesOf(row: string, table?: string): string {
  const from = table === undefined ? '' : `FROM ${table} AS ${row} `;
  const join = table === undefined ? '' : `${table} AS ${row}, `;
  return `
    SELECT ${row}.common_name, ${row}.serial_number, ${row}.authority_key_identifier
      ${from}WHERE ${row}.common_name IS NOT NULL AND ${row}.common_name <> ''
    UNION
    SELECT j.value, ${row}.serial_number, ${row}.authority_key_identifier
      FROM ${join}json_each(CASE WHEN json_valid(CAST(${row}.sans AS TEXT)) THEN CAST(${row}.sans AS TEXT) ELSE '[]' END) AS j
      WHERE j.type = 'text'`;
}

const INVENTORY_SQLITE = `
CREATE INDEX IF NOT EXISTS certsmith_certificates_expiry ON certificates (expiry, serial_number, authority_key_identifier);
CREATE INDEX IF NOT EXISTS certsmith_certificates_label_expiry ON certificates (ca_label, expiry, serial_number, authority_key_identifier);
CREATE INDEX IF NOT EXISTS certsmith_certificates_status_expiry ON certificates (status, expiry, serial_number, authority_key_identifier);
CREATE TABLE IF NOT EXISTS certsmith_certificate_names (
  name                     text NOT NULL,
  serial_number            blob NOT NULL,
  authority_key_identifier blob NOT NULL,
  PRIMARY KEY (name, serial_number, authority_key_identifier)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS certsmith_certificate_names_row ON certsmith_certificate_names (serial_number, authority_key_identifier);
CREATE TRIGGER IF NOT EXISTS certsmith_names_after_insert AFTER INSERT ON certificates BEGIN
  INSERT OR IGNORE INTO certsmith_certificate_names (name, serial_number, authority_key_identifier) ${sqliteNamesOf('NEW')};
END;
CREATE TRIGGER IF NOT EXISTS certsmith_names_after_update AFTER UPDATE OF common_name, sans, serial_number, authority_key_identifier ON certificates BEGIN
  DELETE FROM certsmith_certificate_names WHERE serial_number = OLD.serial_number AND authority_key_identifier = OLD.authority_key_identifier;
  INSERT OR IGNORE INTO certsmith_certificate_names (name, serial_number, authority_key_identifier) ${sqliteNamesOf('NEW')};
END;
CREATE TRIGGER IF NOT EXISTS certsmith_names_after_delete AFTER DELETE ON certificates BEGIN
  DELETE FROM certsmith_certificate_names WHERE serial_number = OLD.serial_number AND authority_key_identifier = OLD.authority_key_identifier;
END;
INSERT OR IGNORE INTO certsmith_certificate_names (name, serial_number, authority_key_identifier) ${sqliteNamesOf('c', 'certificates')};`;

const INVENTORY_POSTGRES = `
CREATE INDEX IF NOT EXISTS certsmith_certificates_expiry ON certificates (expiry NULLS FIRST, serial_number, authority_key_identifier);
CREATE INDEX IF NOT EXISTS certsmith_certificates_label_expiry ON certificates (ca_label, expiry NULLS FIRST, serial_number, authority_key_identifier);
CREATE INDEX IF NOT EXISTS certsmith_certificates_status_expiry ON certificates (status, expiry NULLS FIRST, serial_number, authority_key_identifier);
CREATE INDEX IF NOT EXISTS certsmith_certificates_common_name ON certificates (common_name);
CREATE INDEX IF NOT EXISTS certsmith_certificates_sans ON certificates USING gin (sans jsonb_path_ops);`;

/**
 * certsmith 1: indexes for listing (expiry order, by label, by status) and for finding a
 * certificate by CN or SAN. SQLite cannot index inside JSON, so a name table kept by triggers
 * (which also see rows CFSSL writes) serves the name filter; PostgreSQL uses a GIN index on `sans`.
 */
const inventoryIndexes: StoreMigration = {
  name: 'certsmith_001_inventory_indexes',
  async up(connection) {
    await connection.exec(connection.driver === 'sqlite3' ? INVENTORY_SQLITE : INVENTORY_POSTGRES);
  },
};

/** certsmith 2: one CRL number per issuer, incremented in the database so every instance agrees. */
const crlNumbers: StoreMigration = {
  name: 'certsmith_002_crl_numbers',
  async up(connection) {
    await connection.exec(
      connection.driver === 'sqlite3'
        ? `CREATE TABLE IF NOT EXISTS certsmith_crl_numbers (issuer text PRIMARY KEY, crl_number integer NOT NULL, updated_at timestamp)`
        : `CREATE TABLE IF NOT EXISTS certsmith_crl_numbers (issuer text PRIMARY KEY, crl_number bigint NOT NULL, updated_at timestamptz)`,
    );
  },
};

const CHANGES_COLUMNS = 'serial_number, authority_key_identifier, ca_label, status, reason, revoked_at';
const CHANGES_VALUES = 'NEW.serial_number, NEW.authority_key_identifier, NEW.ca_label, NEW.status, NEW.reason, NEW.revoked_at';

const CHANGES_SQLITE = `
CREATE TABLE IF NOT EXISTS certsmith_certificate_changes (
  id                       INTEGER PRIMARY KEY AUTOINCREMENT,
  serial_number            blob NOT NULL,
  authority_key_identifier blob NOT NULL,
  ca_label                 blob,
  status                   blob,
  reason                   int,
  revoked_at               timestamp,
  changed_at               timestamp NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now'))
);
CREATE INDEX IF NOT EXISTS certsmith_certificate_changes_changed_at ON certsmith_certificate_changes (changed_at);
CREATE TRIGGER IF NOT EXISTS certsmith_changes_after_insert AFTER INSERT ON certificates
WHEN NEW.status IS NOT 'good' BEGIN
  INSERT INTO certsmith_certificate_changes (${CHANGES_COLUMNS}) VALUES (${CHANGES_VALUES});
END;
CREATE TRIGGER IF NOT EXISTS certsmith_changes_after_update AFTER UPDATE OF status, reason, revoked_at ON certificates
WHEN OLD.status IS NOT NEW.status OR OLD.reason IS NOT NEW.reason OR OLD.revoked_at IS NOT NEW.revoked_at BEGIN
  INSERT INTO certsmith_certificate_changes (${CHANGES_COLUMNS}) VALUES (${CHANGES_VALUES});
END;`;

/** The NOTIFY channel of the change feed (the payload is empty: listeners read the table). */
export const CHANGES_CHANNEL = 'certsmith_certificate_changes';

const CHANGES_POSTGRES = `
CREATE TABLE IF NOT EXISTS certsmith_certificate_changes (
  id                       bigserial PRIMARY KEY,
  serial_number            bytea NOT NULL,
  authority_key_identifier bytea NOT NULL,
  ca_label                 bytea,
  status                   bytea,
  reason                   int,
  revoked_at               timestamptz,
  changed_at               timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS certsmith_certificate_changes_changed_at ON certsmith_certificate_changes (changed_at);
CREATE OR REPLACE FUNCTION certsmith_record_certificate_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND NEW.status = 'good'::bytea THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.status IS NOT DISTINCT FROM NEW.status AND OLD.reason IS NOT DISTINCT FROM NEW.reason
     AND OLD.revoked_at IS NOT DISTINCT FROM NEW.revoked_at THEN
    RETURN NULL;
  END IF;
  INSERT INTO certsmith_certificate_changes (${CHANGES_COLUMNS}) VALUES (${CHANGES_VALUES});
  PERFORM pg_notify('${CHANGES_CHANNEL}', '');
  RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS certsmith_certificate_changes ON certificates;
CREATE TRIGGER certsmith_certificate_changes AFTER INSERT OR UPDATE ON certificates
  FOR EACH ROW EXECUTE FUNCTION certsmith_record_certificate_change();`;

/**
 * certsmith 3: a change log of certificate status changes, written by triggers, so other instances
 * (and revocations made with `cfssl revoke` on the same database) are seen within seconds.
 * PostgreSQL also sends a NOTIFY on every change.
 */
const certificateChanges: StoreMigration = {
  name: 'certsmith_003_certificate_changes',
  async up(connection) {
    await connection.exec(connection.driver === 'sqlite3' ? CHANGES_SQLITE : CHANGES_POSTGRES);
  },
};

/** Columns that hold text; in SQLite their declared type must not give them numeric affinity. */
export const SQLITE_TEXT_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  certificates: ['serial_number', 'authority_key_identifier', 'ca_label', 'status', 'pem'],
  ocsp_responses: ['serial_number', 'authority_key_identifier', 'body'],
};

/** SQLite type affinity (sqlite.org/datatype3.html §3.1): only TEXT and BLOB affinities keep text as text. */
export function keepsText(declared: string): boolean {
  const type = declared.toUpperCase();
  if (type.includes('INT')) return false;
  return type.includes('CHAR') || type.includes('CLOB') || type.includes('TEXT') || type.includes('BLOB') || type === '';
}

/** Name of the migration that rebuilds SQLite tables declared with numeric affinity. */
export const SQLITE_REBUILD_MIGRATION = 'certsmith_004_sqlite_text_columns';

interface SqliteColumn {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

/** Recreate `table` with text columns declared `blob`, copying every value as stored (storage classes kept). */
async function rebuildSqliteTable(connection: SchemaConnection, table: string): Promise<void> {
  const columns = await connection.query<SqliteColumn>(`SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, [table]);
  const textColumns = SQLITE_TEXT_COLUMNS[table]!;
  const keys = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => `"${c.name}"`);
  const definitions = columns.map(
    (c) => `"${c.name}" ${textColumns.includes(c.name) ? 'blob' : c.type}${c.notnull === 1 ? ' NOT NULL' : ''}`,
  );
  const foreign = table === 'ocsp_responses'
    ? ', FOREIGN KEY(serial_number, authority_key_identifier) REFERENCES certificates(serial_number, authority_key_identifier)'
    : '';
  const list = columns.map((c) => `"${c.name}"`).join(', ');
  await connection.exec(`
    CREATE TABLE certsmith_rebuild (${definitions.join(', ')}${keys.length > 0 ? `, PRIMARY KEY(${keys.join(', ')})` : ''}${foreign});
    INSERT INTO certsmith_rebuild (${list}) SELECT ${list} FROM "${table}";
    DROP TABLE "${table}";
    ALTER TABLE certsmith_rebuild RENAME TO "${table}";`);
}

/** The decimal serial and AKI hex a stored PEM holds, or `null` when it does not parse. */
function keyFromPem(pem: string): { serial: string; aki: string } | null {
  try {
    const certificate = parseRecordedCertificate(pem);
    return { serial: serialToDecimal(certificate.serialNumberHex), aki: authorityKeyIdHex(certificate) };
  } catch {
    return null;
  }
}

/**
 * certsmith 4 (SQLite only): CFSSL's SQL of the 1.2.0 era declared the SQLite columns `bytea`, which
 * gives them numeric affinity: SQLite stores a decimal serial (and an all-digit AKI) as a number and
 * rounds it. The tables are rebuilt with CFSSL's current `blob` declarations, every value copied as
 * it is stored, and numbers in the key columns replaced by the exact serial and AKI read from the
 * row's certificate (OCSP rows follow their certificate). Nothing is done when the types are fine.
 */
const sqliteTextColumns: StoreMigration = {
  name: SQLITE_REBUILD_MIGRATION,
  async up(connection) {
    if (connection.driver !== 'sqlite3') return;
    let rebuilt = false;
    const needsRebuild = async (table: string) => {
      const columns = await tableColumns(connection, table);
      return SQLITE_TEXT_COLUMNS[table]!.some((name) => columns.has(name) && !keepsText(columns.get(name)!));
    };
    const corrected = new Map<string, { serial: string; aki: string }>();
    const rawKey = (serial: unknown, aki: unknown) => `${typeof serial}:${String(serial)}|${typeof aki}:${String(aki)}`;
    if (await needsRebuild('certificates')) {
      await rebuildSqliteTable(connection, 'certificates');
      rebuilt = true;
      const rows = await connection.query<{ rowid: number; s: unknown; a: unknown; pem: string }>(
        `SELECT rowid, serial_number AS s, authority_key_identifier AS a, CAST(pem AS TEXT) AS pem FROM certificates
         WHERE typeof(serial_number) IN ('integer', 'real') OR typeof(authority_key_identifier) IN ('integer', 'real')`,
      );
      for (const row of rows) {
        const fromPem = keyFromPem(row.pem);
        const serial = typeof row.s === 'number' || typeof row.s === 'bigint' ? (fromPem?.serial ?? String(row.s)) : String(row.s);
        const aki = typeof row.a === 'number' || typeof row.a === 'bigint' ? (fromPem?.aki ?? String(row.a)) : String(row.a);
        corrected.set(rawKey(row.s, row.a), { serial, aki });
        await connection.query(`UPDATE certificates SET serial_number = ?, authority_key_identifier = ? WHERE rowid = ?`, [serial, aki, row.rowid]);
      }
      await connection.exec(
        `UPDATE certificates SET ca_label = CAST(ca_label AS TEXT) WHERE typeof(ca_label) IN ('integer', 'real');
         UPDATE certificates SET status = CAST(status AS TEXT) WHERE typeof(status) IN ('integer', 'real');`,
      );
    }
    if (await needsRebuild('ocsp_responses')) {
      await rebuildSqliteTable(connection, 'ocsp_responses');
      rebuilt = true;
      const rows = await connection.query<{ rowid: number; s: unknown; a: unknown }>(
        `SELECT rowid, serial_number AS s, authority_key_identifier AS a FROM ocsp_responses
         WHERE typeof(serial_number) IN ('integer', 'real') OR typeof(authority_key_identifier) IN ('integer', 'real')`,
      );
      for (const row of rows) {
        const key = corrected.get(rawKey(row.s, row.a));
        if (key !== undefined) {
          await connection.query(`UPDATE ocsp_responses SET serial_number = ?, authority_key_identifier = ? WHERE rowid = ?`, [key.serial, key.aki, row.rowid]);
        }
      }
    }
    if (rebuilt) {
      // Dropping a table drops its indexes and triggers: put certsmith's back, and re-index the names.
      await connection.exec(`DELETE FROM certsmith_certificate_names; ${INVENTORY_SQLITE}; ${CHANGES_SQLITE}`);
    }
  },
};

/**
 * certsmith 5: a small covering index for the metrics' counts by label and status, which otherwise
 * read every row, PEM included (218 ms on 100,000 SQLite rows: list-page.bench.mjs, performance.md).
 */
const countIndex: StoreMigration = {
  name: 'certsmith_005_label_status_index',
  async up(connection) {
    await connection.exec(`CREATE INDEX IF NOT EXISTS certsmith_certificates_label_status ON certificates (ca_label, status)`);
  },
};

/** The index of the rows whose status is not `good` (migration 6); listings by such a status name it in their WHERE. */
export const NOT_GOOD_INDEX = 'certsmith_certificates_not_good_expiry';

/**
 * The names a row was indexed under, as `name` values for `DELETE … WHERE name IN (…)`: the same
 * expressions as {@link sqliteNamesOf} (deterministic in the row's columns), so they find exactly the
 * entries the insert or the last update wrote.
 */
function sqliteNameValuesOf(row: string): string {
  return `
    SELECT ${row}.common_name WHERE ${row}.common_name IS NOT NULL AND ${row}.common_name <> ''
    UNION
    SELECT j.value FROM json_each(CASE WHEN json_valid(CAST(${row}.sans AS TEXT)) THEN CAST(${row}.sans AS TEXT) ELSE '[]' END) AS j
      WHERE j.type = 'text'`;
}

const LEANER_INDEXES_SQLITE = `
DROP INDEX IF EXISTS certsmith_certificate_names_row;
DROP TRIGGER IF EXISTS certsmith_names_after_update;
DROP TRIGGER IF EXISTS certsmith_names_after_delete;
CREATE TRIGGER certsmith_names_after_update AFTER UPDATE OF common_name, sans, serial_number, authority_key_identifier ON certificates BEGIN
  DELETE FROM certsmith_certificate_names WHERE name IN (${sqliteNameValuesOf('OLD')})
    AND serial_number = OLD.serial_number AND authority_key_identifier = OLD.authority_key_identifier;
  INSERT OR IGNORE INTO certsmith_certificate_names (name, serial_number, authority_key_identifier) ${sqliteNamesOf('NEW')};
END;
CREATE TRIGGER certsmith_names_after_delete AFTER DELETE ON certificates BEGIN
  DELETE FROM certsmith_certificate_names WHERE name IN (${sqliteNameValuesOf('OLD')})
    AND serial_number = OLD.serial_number AND authority_key_identifier = OLD.authority_key_identifier;
END;
DROP INDEX IF EXISTS certsmith_certificates_status_expiry;
CREATE INDEX IF NOT EXISTS ${NOT_GOOD_INDEX} ON certificates (status, expiry, serial_number, authority_key_identifier) WHERE status <> 'good';`;

const LEANER_INDEXES_POSTGRES = `
DROP INDEX IF EXISTS certsmith_certificates_status_expiry;
CREATE INDEX IF NOT EXISTS ${NOT_GOOD_INDEX} ON certificates (status, expiry NULLS FIRST, serial_number, authority_key_identifier)
  WHERE status <> 'good'::bytea;`;

/**
 * certsmith 6: fewer index entries written per recorded certificate. Serials are random, so every
 * index keyed (or tie-broken) by serial puts each new certificate on a leaf of its own, which the
 * commit writes anew (SQLite: a whole WAL frame; docs/store.md, "Recording at issuance").
 * - The status index holds only rows whose status is not `good` (revoked, unknown): those are the
 *   ones listed by status (the CRL, `--status revoked`); a list of `good` rows reads the expiry
 *   index, where nearly every row is good. Issuing (always `good`) no longer writes it.
 * - SQLite: the name table loses its index on (serial, AKI), which served only the triggers that
 *   remove a row's names on update and delete; they now find them through the table's own key (name,
 *   serial, AKI), with the names recomputed from the old row. Listing by name reads the key, as before.
 */
const leanerIndexes: StoreMigration = {
  name: 'certsmith_006_leaner_indexes',
  async up(connection) {
    await connection.exec(connection.driver === 'sqlite3' ? LEANER_INDEXES_SQLITE : LEANER_INDEXES_POSTGRES);
  },
};

/** Every migration, in the order they apply. */
export const STORE_MIGRATIONS: readonly StoreMigration[] = [
  createCertificates,
  addMetadataToCertificates,
  inventoryIndexes,
  crlNumbers,
  certificateChanges,
  sqliteTextColumns,
  countIndex,
  leanerIndexes,
];

/** Columns CFSSL's accessor reads and writes (`certdb.CertificateRecord`, `certdb.OCSPRecord`). */
export const REQUIRED_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  certificates: [
    'serial_number',
    'authority_key_identifier',
    'ca_label',
    'status',
    'reason',
    'expiry',
    'revoked_at',
    'pem',
    'issued_at',
    'not_before',
    'metadata',
    'sans',
    'common_name',
  ],
  ocsp_responses: ['serial_number', 'authority_key_identifier', 'body', 'expiry'],
};
