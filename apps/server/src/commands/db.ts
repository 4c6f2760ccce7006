/**
 * `certsmith db migrate|check|tidy`: the certificate store's schema and housekeeping, on the store
 * `certsmith serve` would open with the same flags (`store-access.ts`).
 *
 * - `migrate` applies pending migrations in one transaction under a lock (safe beside running
 *   instances and CFSSL); creates the default SQLite file when it does not exist yet.
 * - `check` reports the schema without changing it; exit 2 when migrations are pending or the
 *   schema has a problem (for deployment jobs that start instances with `--db-migrations check`).
 * - `tidy` removes certificates expired longer than `--buffer` (default 72 h) with their OCSP
 *   responses — never a revoked certificate before its expiry — and old change-log entries.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { checkStore, describeSchemaStatus, migrateStore } from '@certsmith/cert-store';
import { CertsmithError } from '@certsmith/x509-core';
import { DEFAULT_TIDY_BUFFER_MS, parseDurationMs } from '../store-settings.js';
import type { CommandIo } from './common.js';
import { acceptGoFlags, goJson, resolveIo, runAction } from './common.js';
import { locateStore, openCommandStore, requireExistingStore, withStoreLocation } from './store-access.js';
import type { StoreLocationFlags } from './store-access.js';

interface JsonFlags extends StoreLocationFlags {
  json?: boolean;
}

interface TidyFlags extends JsonFlags {
  buffer?: number;
}

function durationParser(value: string): number {
  const ms = parseDurationMs(value);
  if (ms === null) throw new InvalidArgumentError('expected a duration such as 72h');
  return ms;
}

const EXAMPLES = `
The store is the one certsmith serve records into: --db-config FILE, else the "db_config" of
--config FILE, else <data-dir>/certs.db.

Examples:
  certsmith db check --db-config db.json      # exit 2 when migrations are pending
  certsmith db migrate --db-config db.json
  certsmith db tidy --buffer 168h

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith db`. */
export function registerDbCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const db = program
    .command('db')
    .description('the certificate store: schema migrations and tidy')
    .helpOption('-h, --help', 'show help')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);

  const migrate = withStoreLocation(db.command('migrate').description('apply pending migrations (CFSSL\'s 001/002 as goose records them, then certsmith\'s)').helpOption('-h, --help', 'show help'))
    .option('--json', 'print {"store","applied":[…]}')
    .allowExcessArguments(false);
  acceptGoFlags(migrate);
  migrate.action(
    runAction(migrate, resolved, async (flags: JsonFlags) => {
      const location = await locateStore(flags, resolved);
      // The default store is created where serve would create it (the data directory, owner only).
      if (location.isDefault) await mkdir(dirname(location.config.dataSource), { recursive: true, mode: 0o700 });
      const applied = await migrateStore(location.config, { sqlite: { thread: false } });
      if (flags.json === true) resolved.stdout(`${goJson({ store: location.description, applied })}\n`);
      else resolved.stdout(applied.length === 0 ? `${location.description}: up to date\n` : `${location.description}: applied ${applied.join(', ')}\n`);
    }),
  );

  const check = withStoreLocation(db.command('check').description('report the schema: applied and pending migrations, problems; changes nothing').helpOption('-h, --help', 'show help'))
    .option('--json', 'print {"store","applied","pending","goose_version","problems","up_to_date"}')
    .allowExcessArguments(false);
  acceptGoFlags(check);
  check.action(
    runAction(check, resolved, async (flags: JsonFlags) => {
      const location = await locateStore(flags, resolved);
      // Checking the default file would create it: a missing one is reported instead.
      requireExistingStore(location);
      const status = await checkStore(location.config, { sqlite: { thread: false } });
      if (flags.json === true) {
        resolved.stdout(`${goJson({ store: location.description, applied: status.applied, pending: status.pending, goose_version: status.gooseVersion, problems: status.problems, up_to_date: status.upToDate })}\n`);
      } else {
        resolved.stdout(`${location.description}\n  applied: ${status.applied.join(', ') || 'none'}\n  pending: ${status.pending.join(', ') || 'none'}\n`);
        for (const problem of status.problems) resolved.stdout(`  problem: ${problem}\n`);
      }
      if (!status.upToDate) throw new CertsmithError(11000, describeSchemaStatus(status));
    }),
  );

  const tidy = withStoreLocation(db.command('tidy').description('remove certificates expired longer than --buffer, with their OCSP responses (never a revoked one before it expires)').helpOption('-h, --help', 'show help'))
    .option('--buffer <duration>', 'keep certificates this long past their expiry (default: 72h)', durationParser)
    .option('--json', 'print {"store","certificates","ocsp_responses","changes"}')
    .allowExcessArguments(false);
  acceptGoFlags(tidy);
  tidy.action(
    runAction(tidy, resolved, async (flags: TidyFlags) => {
      const location = await locateStore(flags, resolved);
      const store = await openCommandStore(location, { migrations: 'check' });
      try {
        const result = await store.tidy({ bufferMs: flags.buffer ?? DEFAULT_TIDY_BUFFER_MS });
        if (flags.json === true) {
          resolved.stdout(`${goJson({ store: location.description, certificates: result.certificates, ocsp_responses: result.ocspResponses, changes: result.changes })}\n`);
        } else {
          resolved.stdout(`${location.description}: removed ${result.certificates} certificate(s), ${result.ocspResponses} OCSP response(s), ${result.changes} change-log entr${result.changes === 1 ? 'y' : 'ies'}\n`);
        }
      } finally {
        await store.close();
      }
    }),
  );
  return db;
}
