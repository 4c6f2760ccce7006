/**
 * `@certsmith/cert-store`: the certificate store — CFSSL certdb-compatible tables on SQLite or
 * PostgreSQL, behind one {@link Store} interface.
 */
export type { Store } from './store.js';
export { openStore, migrateStore, checkStore } from './open-store.js';
export type { OpenStoreOptions, SqliteStoreOptions } from './open-store.js';
export { PrestartedStore, prestartStore } from './prestarted-store.js';
export { serveStore } from './remote/serve-store.js';
export type { StoreServer } from './remote/serve-store.js';
export { connectStore, DEFAULT_CALL_TIMEOUT_MS } from './remote/connect-store.js';
export type { ConnectStoreOptions } from './remote/connect-store.js';
export { ipcChannel, messagePortChannel } from './remote/store-channel.js';
export type { StoreChannel, IpcEndpoint } from './remote/store-channel.js';
export { isStoreMessage, STORE_MESSAGE_TAG } from './remote/store-protocol.js';
export type { PostgresStoreOptions } from './postgres/postgres-store.js';
export { parseDbConfig, loadDbConfigFile } from './db-config.js';
export type { DbConfig, StoreDriver } from './db-config.js';
export { STORE_MIGRATIONS } from './migrations/migrations.js';
export { describeSchemaStatus } from './migrations/migrator.js';
export type { MigrationMode, SchemaStatus } from './migrations/migrator.js';
export type {
  CertificateStatus,
  CertificateRecord,
  CertificateSummary,
  CertificateRowInput,
  RecordCertificateInput,
  IssuedCertificateFields,
  IssuedOcspResponse,
  ListCertificatesOptions,
  CertificatePage,
  CertificateJsonPage,
  OcspResponseRecord,
  OcspResponseInput,
  ListOcspResponsesOptions,
  OcspResponsePage,
  CertificateCount,
  ExpiringCount,
  CountExpiringOptions,
  TidyOptions,
  TidyResult,
  CertificateChange,
  WatchChangesOptions,
  ChangeSubscription,
} from './model.js';
export { authorityKeyIdHex, serialToDecimal, normaliseAuthorityKeyId, issuedCertificateFields, signedCertificateFields } from './certificate-row.js';
export { iterateCertificates, iterateCertificateSummaries, iterateOcspResponses } from './iterate.js';
export { certificateJsonPage, certificateRecordJson, formatGoTime } from './record-json.js';
export type { CertificateRecordJson } from './record-json.js';
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './cursor.js';
export { DEFAULT_TIDY_BUFFER_MS, DEFAULT_EXPIRING_WINDOW_MS, DEFAULT_CHANGE_RETENTION_MS } from './store-helpers.js';
export {
  StoreErrorCode,
  StoreError,
  RecordInsertError,
  CertificateNotFoundError,
  StoreUnavailableError,
  DbConfigError,
  SchemaError,
  InvalidStoreRequestError,
  StoreClosedError,
} from './errors.js';
