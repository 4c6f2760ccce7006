/**
 * `certsmith gencrl`, as `cfssl gencrl SERIALFILE CERT KEY [TIME]` (lifecycle spec §4): a CRL listing
 * the decimal serials of SERIALFILE (one per line, blank lines skipped; `-` reads stdin), each
 * revoked now, valid TIME seconds (`0` or none: one week), signed by the CA CERT with KEY; printed
 * as one base64 line. Without KEY, the CA is a signer of a certsmith config (`-config`, `-label`),
 * so an HSM CA can sign it: `certsmith gencrl -config certsmith.json -label hsm serials.txt 86400`.
 *
 * Deliberate differences (package `@certsmith/revocation`): a serial that is not a decimal integer is
 * an error naming its line (CFSSL lists serial 0); the CRL has a CRL Number (thisUpdate in Unix
 * seconds, which grows between runs) and copies the CA's subject byte for byte.
 */
import type { Command } from 'commander';
import { DEFAULT_GENCRL_SECONDS, generateCrl, parseGencrlExpireTime, parseSerialNumberList } from '@certsmith/revocation';
import { ErrorCode } from '@certsmith/x509-core';
import type { CommandIo, Verbosity } from './common.js';
import { UsageError, createReporter, readInput, resolveIo, runAction, withLogLevel } from './common.js';
import { openCaRevocationSigner } from './revocation-signing.js';

interface GencrlFlags {
  config?: string;
  label?: string;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Output: the DER CRL as one base64 line (as cfssl gencrl prints it): base64 -d > ca.crl

Examples:
  certsmith gencrl serials.txt ca.pem ca-key.pem 604800 | base64 -d > ca.crl
  certsmith gencrl -config certsmith.json -label hsm serials.txt 86400 | base64 -d > hsm.crl
  openssl crl -inform DER -in ca.crl -CAfile ca.pem -noout

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith gencrl`. */
export function registerGencrlCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('gencrl')
    .description('generate a CRL from a list of serial numbers (cfssl gencrl)')
    .helpOption('-h, --help', 'show help')
    .argument('<serialfile>', 'one decimal serial number per line, - for stdin')
    .argument('[args...]', 'CERT KEY [TIME] (cfssl), or [TIME] with --config: TIME is the validity in seconds (default one week)')
    .option('--config <file>', 'certsmith config: sign with a signer of it instead of CERT and KEY (an HSM key works)')
    .option('--label <label>', 'signer label in --config (default: default)')
    .addHelpText('after', EXAMPLES);
  withLogLevel(command);
  command.action(
    runAction(command, resolved, async (serialFile: string, rest: string[], flags: GencrlFlags) => {
      const reporter = createReporter(resolved, 'gencrl', flags.loglevel);
      let certFile: string | undefined;
      let keyFile: string | undefined;
      let time: string | undefined;
      if (flags.config !== undefined) {
        if (rest.length > 1) throw new UsageError('with --config give SERIALFILE [TIME]: the CA is the signer of --label');
        time = rest[0];
      } else {
        if (flags.label !== undefined) throw new UsageError('--label needs --config');
        if (rest.length < 2) throw new UsageError('need CERT and KEY after SERIALFILE (or --config with a signer)');
        if (rest.length > 3) throw new UsageError('too many arguments: SERIALFILE CERT KEY [TIME]');
        [certFile, keyFile, time] = rest;
      }
      // CFSSL trims the TIME argument; 0 (and no argument) means one week on the command line.
      const seconds = parseGencrlExpireTime(time?.trim() ?? '');
      const expireTime = String(seconds === 0 ? DEFAULT_GENCRL_SECONDS : seconds);
      const serials = parseSerialNumberList((await readInput(serialFile, resolved, 'SERIALFILE', ErrorCode.BadRequest)).toString('utf8'));
      const ca = await openCaRevocationSigner(
        certFile === undefined ? { config: flags.config, label: flags.label } : { ca: certFile, caKey: keyFile },
        resolved,
        reporter,
      );
      try {
        const crl = await generateCrl({ issuer: ca.value, serialNumbers: serials, expireTime });
        resolved.stdout(`${Buffer.from(crl.der).toString('base64')}\n`);
      } finally {
        await ca.close();
      }
    }),
  );
  return command;
}
