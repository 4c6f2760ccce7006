/**
 * `certsmith certs list|show|export`: the certificate inventory from the command line, read from the
 * store `certsmith serve` records into (see `store-access.ts` for how it is found). Same rows and
 * JSON as `GET /api/v1/certsmith/certificates`, without a running server.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { certificateRecordJson, iterateCertificateSummaries, iterateCertificates, normaliseAuthorityKeyId } from '@certsmith/cert-store';
import type { CertificateRecord, CertificateSummary, ListCertificatesOptions, Store } from '@certsmith/cert-store';
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';
import { parseDurationMs } from '../store-settings.js';
import type { CommandIo } from './common.js';
import { UsageError, acceptGoFlags, createReporter, goJson, resolveIo, runAction } from './common.js';
import { locateStore, openCommandStore, withStoreLocation } from './store-access.js';
import type { StoreLocationFlags } from './store-access.js';

interface FilterFlags extends StoreLocationFlags {
  label?: string;
  status?: string;
  name?: string;
  aki?: string;
  expiresAfter?: Date;
  expiresBefore?: Date;
  expiringWithin?: number;
  expired?: boolean;
}

interface ListFlags extends FilterFlags {
  limit?: number;
  json?: boolean;
}

interface OneFlags extends StoreLocationFlags {
  serial?: string;
  aki?: string;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function timeParser(value: string): Date {
  const date = RFC3339.test(value) ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new InvalidArgumentError('expected an RFC 3339 time such as 2027-01-01T00:00:00Z');
  return date;
}

function durationParser(value: string): number {
  const ms = parseDurationMs(value);
  if (ms === null) throw new InvalidArgumentError('expected a duration such as 720h');
  return ms;
}

function countParser(value: string): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a positive integer');
  return Number(value);
}

function statusParser(value: string): string {
  if (!['good', 'revoked', 'unknown'].includes(value)) throw new InvalidArgumentError('expected good, revoked or unknown');
  return value;
}

function akiParser(value: string): string {
  const normalised = normaliseAuthorityKeyId(value);
  if (!/^(?:[0-9a-f]{2})+$/.test(normalised)) throw new InvalidArgumentError('expected the hex of a key identifier (colons allowed)');
  return normalised;
}

/** Add the listing filters to `command`. */
function withFilters(command: Command): Command {
  return command
    .option('--label <label>', 'issuing signer label (ca_label)')
    .option('--status <status>', 'good, revoked or unknown', statusParser)
    .option('--name <name>', 'subject CN or a DNS SAN, exactly')
    .option('--aki <hex>', 'issuer: the authority key identifier (colons and either case accepted)', akiParser)
    .option('--expires-after <time>', 'only certificates expiring after this RFC 3339 time', timeParser)
    .option('--expires-before <time>', 'only certificates expiring at or before this RFC 3339 time', timeParser)
    .option('--expiring-within <duration>', 'unexpired certificates expiring within this duration, e.g. 720h', durationParser)
    .option('--expired', 'only certificates that have expired');
}

/** The store filters of the flags, with times relative to `now`. */
function filtersOf(flags: FilterFlags, now: Date): Omit<ListCertificatesOptions, 'cursor' | 'limit'> {
  const windows = [flags.expiringWithin !== undefined, flags.expired === true, flags.expiresAfter !== undefined || flags.expiresBefore !== undefined].filter(Boolean).length;
  if (windows > 1) throw new UsageError('give one of --expiring-within, --expired, or --expires-after/--expires-before');
  const filters: Omit<ListCertificatesOptions, 'cursor' | 'limit'> = {};
  if (flags.label !== undefined) filters.label = flags.label;
  if (flags.status !== undefined) filters.status = flags.status;
  if (flags.name !== undefined) filters.name = flags.name;
  if (flags.aki !== undefined) filters.authorityKeyId = flags.aki;
  if (flags.expiresAfter !== undefined) filters.expiresAfter = flags.expiresAfter;
  if (flags.expiresBefore !== undefined) filters.expiresBefore = flags.expiresBefore;
  if (flags.expiringWithin !== undefined) {
    filters.expiresAfter = now;
    filters.expiresBefore = new Date(now.getTime() + flags.expiringWithin);
  }
  if (flags.expired === true) filters.expiresBefore = now;
  return filters;
}

const COLUMNS = ['EXPIRY', 'STATUS', 'LABEL', 'COMMON NAME', 'SERIAL', 'AKI'] as const;

function tableRow(record: CertificateSummary): string[] {
  return [record.expiry?.toISOString().replace('.000Z', 'Z') ?? '-', record.status, record.label === '' ? '-' : record.label, record.commonName ?? '-', record.serial, record.authorityKeyId === '' ? '-' : record.authorityKeyId];
}

/** Rows in aligned columns (widths from these rows). */
function formatTable(rows: string[][]): string {
  const widths = COLUMNS.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n');
}

async function withStore<T>(flags: StoreLocationFlags, io: CommandIo, work: (store: Store) => Promise<T>): Promise<T> {
  // Reading needs a migrated schema (the name filter uses certsmith's index tables).
  const store = await openCommandStore(await locateStore(flags, io), { migrations: 'check' });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

async function findOne(store: Store, flags: OneFlags): Promise<CertificateRecord> {
  if (flags.serial === undefined || flags.aki === undefined) throw new UsageError('give --serial and --aki');
  if (!/^\d+$/.test(flags.serial)) throw new UsageError('--serial is the decimal serial number (as certinfo shows it)');
  const record = await store.findCertificate(flags.serial, flags.aki);
  if (record === null) throw new CertsmithError(ErrorCode.NotFound, `no certificate with serial ${flags.serial} and authority key identifier ${flags.aki}`);
  return record;
}

const EXAMPLES = `
The store is the one certsmith serve records into: --db-config FILE, else the "db_config" of
--config FILE, else <data-dir>/certs.db.

Examples:
  certsmith certs list --expiring-within 720h
  certsmith certs list --label default --status revoked --json
  certsmith certs show --serial 5641422667051630… --aki f9dd6fc8a7b29c06bedc992be61c5000821bcde3
  certsmith certs export --name www.example.com > www.pem
  certsmith certs list --db-config db.json

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith certs`. */
export function registerCertsCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const certs = program
    .command('certs')
    .description('the certificate inventory: list, show and export recorded certificates')
    .helpOption('-h, --help', 'show help')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);

  const list = withFilters(withStoreLocation(certs.command('list').description('list recorded certificates in expiry order').helpOption('-h, --help', 'show help')))
    .option('--limit <n>', 'print at most n certificates', countParser)
    .option('--json', 'one JSON object per line (the fields of GET /api/v1/certsmith/certificates) instead of a table')
    .allowExcessArguments(false);
  acceptGoFlags(list);
  list.action(
    runAction(list, resolved, async (flags: ListFlags) => {
      const filters = filtersOf(flags, new Date());
      await withStore(flags, resolved, async (store) => {
        let printed = 0;
        let page: string[][] = [];
        const flush = (): void => {
          if (page.length > 0) resolved.stdout(`${formatTable(page)}\n`);
          page = [];
        };
        if (flags.json !== true) page.push([...COLUMNS]);
        for await (const record of iterateCertificateSummaries(store, { ...filters, limit: Math.min(flags.limit ?? 1000, 1000) })) {
          if (flags.limit !== undefined && printed >= flags.limit) break;
          printed += 1;
          if (flags.json === true) resolved.stdout(`${goJson(certificateRecordJson(record))}\n`);
          else if (page.push(tableRow(record)) >= 1000) flush();
        }
        flush();
        if (printed === 0) createReporter(resolved, 'certs list').warn('no certificate matches');
      });
    }),
  );

  const show = withStoreLocation(certs.command('show').description('one recorded certificate as JSON, with its PEM').helpOption('-h, --help', 'show help'))
    .option('--serial <decimal>', 'serial number, decimal (as certinfo and the inventory show it)')
    .option('--aki <hex>', 'authority key identifier (colons and either case accepted)')
    .allowExcessArguments(false);
  acceptGoFlags(show);
  show.action(
    runAction(show, resolved, async (flags: OneFlags) => {
      await withStore(flags, resolved, async (store) => {
        const record = await findOne(store, flags);
        resolved.stdout(`${goJson(certificateRecordJson(record, record.pem), 2)}\n`);
      });
    }),
  );

  const exporting = withFilters(withStoreLocation(certs.command('export').description('the PEM of one certificate (--serial, --aki) or of every certificate the filters match').helpOption('-h, --help', 'show help')))
    .option('--serial <decimal>', 'serial number, decimal (with --aki)')
    .allowExcessArguments(false);
  acceptGoFlags(exporting);
  exporting.action(
    runAction(exporting, resolved, async (flags: FilterFlags & OneFlags) => {
      await withStore(flags, resolved, async (store) => {
        if (flags.serial !== undefined) {
          resolved.stdout((await findOne(store, flags)).pem);
          return;
        }
        let exported = 0;
        for await (const record of iterateCertificates(store, filtersOf(flags, new Date()))) {
          resolved.stdout(record.pem.endsWith('\n') ? record.pem : `${record.pem}\n`);
          exported += 1;
        }
        if (exported === 0) createReporter(resolved, 'certs export').warn('no certificate matches');
      });
    }),
  );
  return certs;
}
