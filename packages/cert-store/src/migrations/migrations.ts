/**
 * The store's migrations, in order. The first two are CFSSL's own (`certdb/{sqlite,pg}/migrations`
 * 001 and 002 at CFSSL HEAD, lifecycle spec §1.2) and are recorded in goose's `goose_db_version`
 * exactly as `goose up` would, so CFSSL's tooling sees them applied. They are written to be safe on
 * the databases CFSSL users really have: tables created by hand from the SQL files (no goose state),
 * CFSSL 1.2.0's schema (001 only), a half-applied 002. certsmith's own migrations only add tables,
 * indexes and triggers; they never change or drop what CFSSL reads and writes.
 */
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

/** Every migration, in the order they apply. */
export const STORE_MIGRATIONS: readonly StoreMigration[] = [
  createCertificates,
  addMetadataToCertificates,
  inventoryIndexes,
  crlNumbers,
  certificateChanges,
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
