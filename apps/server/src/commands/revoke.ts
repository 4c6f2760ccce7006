/**
 * `certsmith revoke`, as `cfssl revoke -db-config F -serial N -aki HEX [-reason R]` (lifecycle spec
 * §5.6): mark a certificate of the store revoked — exact serial (decimal) and AKI (lower-case hex) as
 * stored, `revoked_at` the database's time. Prints nothing on success; CFSSL's messages and codes
 * otherwise (`serial number is required but not provided`, `authority key id is required but not
 * provided`, 11200 not found, 8200 `Invalid revocation status` for a reason it cannot read).
 *
 * The running servers on that store see it through the store's change feed: they re-sign the
 * certificate's OCSP response and renew the CA's CRL (within `changes.pollInterval`, default 5 s; at
 * once on PostgreSQL). Deliberate difference: `-reason` defaults to `unspecified` (CFSSL's default
 * `"0"` fails every revoke without `-reason`, #1045).
 */
import type { Command } from 'commander';
import { OcspInvalidStatusError, parseRevocationReason } from '@certsmith/revocation';
import type { CommandIo, Verbosity } from './common.js';
import { UsageError, resolveIo, runAction, withLogLevel } from './common.js';
import { locateStore, openCommandStore, withStoreLocation } from './store-access.js';
import type { StoreLocationFlags } from './store-access.js';

interface RevokeFlags extends StoreLocationFlags {
  serial?: string;
  aki?: string;
  reason?: string;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Examples:
  certsmith revoke -db-config db.json -serial 564142266705163047067434699488539944656098241192 -aki f9dd6fc8a7b29c06bedc992be61c5000821bcde3 -reason keyCompromise
  certsmith certs list --db-config db.json --name www.example.com --json | jq -r '.serial_number + " " + .authority_key_identifier'

Exit codes: 0 revoked, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith revoke`. */
export function registerRevokeCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('revoke')
    .description('revoke a certificate in the certificate store (cfssl revoke)')
    .helpOption('-h, --help', 'show help')
    .option('--serial <serial>', 'serial number of the certificate, decimal, as stored')
    .option('--aki <hex>', 'authority key identifier of the certificate, lower-case hex without colons, as stored')
    .option('--reason <reason>', 'CRLReason name (keyCompromise, superseded, …) or code 0-6, 8-10 (default: unspecified)');
  withStoreLocation(command).allowExcessArguments(false).addHelpText('after', EXAMPLES);
  withLogLevel(command);
  command.action(
    runAction(command, resolved, async (flags: RevokeFlags) => {
      if (flags.serial === undefined || flags.serial === '') throw new UsageError('serial number is required but not provided');
      if (flags.aki === undefined || flags.aki === '') throw new UsageError('authority key id is required but not provided');
      let reason: number;
      try {
        reason = parseRevocationReason(flags.reason);
      } catch (cause) {
        // cfssl revoke's answer for a reason it cannot read (lifecycle spec §5.6).
        throw new OcspInvalidStatusError(undefined, { cause });
      }
      const store = await openCommandStore(await locateStore(flags, resolved), { migrations: 'apply' });
      try {
        await store.revokeCertificate(flags.serial, flags.aki, reason);
      } finally {
        await store.close();
      }
    }),
  );
  return command;
}
