/**
 * `certsmith ocsprefresh`, as `cfssl ocsprefresh -db-config F -ca CA -responder R -responder-key K
 * [-interval 96h]` (lifecycle spec §5.2): sign a fresh OCSP response for every unexpired certificate
 * of the store — its status, reason and revocation time — and store it. Also signed by the CA itself
 * (`-ca` + `-ca-key`), or by every signer of a certsmith `-config` (each with its responder from the
 * file's `revocation.ocsp.responders`; `-label` picks one), so one run covers several CAs.
 *
 * Deliberate difference: CFSSL's run aborts at the first certificate another CA issued (8100, #1105,
 * #1152, #746); certsmith signs each row with its own CA, reports the rows of CAs it has no signer
 * for as skipped (a warning on stderr), and goes on after a failed row (exit 2 at the end).
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { iterateCertificateSummaries } from '@certsmith/cert-store';
import { createOcspIssuer, refreshOcspResponses } from '@certsmith/revocation';
import { CertsmithError } from '@certsmith/x509-core';
import { durationFlag } from '../revocation/flag-parsers.js';
import type { CommandIo, Verbosity } from './common.js';
import { createReporter, goJson, resolveIo, runAction, withLogLevel } from './common.js';
import { openOcspIdentities } from './revocation-signing.js';
import type { RevocationSigningFlags } from './revocation-signing.js';
import { locateStore, openCommandStore, withStoreLocation } from './store-access.js';
import type { StoreLocationFlags } from './store-access.js';

interface OcsprefreshFlags extends StoreLocationFlags, RevocationSigningFlags {
  interval?: number;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Output: nothing on success (as cfssl); warnings on stderr name skipped and failed rows.

Examples:
  certsmith ocsprefresh -db-config db.json -ca ca.pem -responder ocsp.pem -responder-key ocsp-key.pem
  certsmith ocsprefresh -db-config db.json -ca ca.pem -ca-key ca-key.pem -interval 48h
  certsmith ocsprefresh -config certsmith.json          # every CA of the config, HSMs included

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith ocsprefresh`. */
export function registerOcsprefreshCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('ocsprefresh')
    .description('sign fresh OCSP responses for every unexpired certificate of the store (cfssl ocsprefresh)')
    .helpOption('-h, --help', 'show help')
    .option('--ca <file>', 'CA certificate (PEM)')
    .option('--ca-key <file>', 'CA private key: the CA signs the responses itself (without --responder)')
    .option('--responder <file>', 'OCSP responder certificate (PEM), issued by the CA with id-kp-OCSPSigning')
    .option('--responder-key <file>', 'private key of --responder (PEM)')
    .option('--label <label>', 'only the signer of this label in --config')
    .addOption(new Option('--interval <duration>', 'validity of the responses, a Go duration (default: 96h)').argParser(durationFlag(60_000)));
  withStoreLocation(command).allowExcessArguments(false).addHelpText('after', EXAMPLES);
  withLogLevel(command);
  command.action(
    runAction(command, resolved, async (flags: OcsprefreshFlags) => {
      const reporter = createReporter(resolved, 'ocsprefresh', flags.loglevel);
      const identities = await openOcspIdentities(flags, resolved, reporter);
      try {
        const store = await openCommandStore(await locateStore(flags, resolved), { migrations: 'apply' });
        try {
          // Keyed by the CA's key identifier: the `authority_key_identifier` of the rows it issued.
          const byAki = new Map(identities.value.map((identity) => [createOcspIssuer(identity).keyIdentifier, identity]));
          const result = await refreshOcspResponses({
            certificates: iterateCertificateSummaries(store, { expiresAfter: new Date() }),
            identityFor: (aki) => byAki.get(aki),
            save: (response) => store.upsertOcspResponse(response),
            ...(flags.interval === undefined ? {} : { intervalMs: flags.interval }),
          });
          reporter.progress(`${result.signed} responses signed`);
          if (result.skipped.length > 0) reporter.warn(`${result.skipped.length} certificates of CAs without a signer here skipped (e.g. serial ${result.skipped[0]!.serial}, AKI ${result.skipped[0]!.authorityKeyId || '(empty)'})`);
          for (const failure of result.failed.slice(0, 10)) reporter.warn(`serial ${failure.serial} (AKI ${failure.authorityKeyId}): ${goJson(failure.error)}`);
          if (result.failed.length > 0) {
            const first = result.failed[0]!.error;
            throw new CertsmithError(first.code, `${result.failed.length} responses could not be signed; first: ${first.message}`);
          }
        } finally {
          await store.close();
        }
      } finally {
        await identities.close();
      }
    }),
  );
  return command;
}
