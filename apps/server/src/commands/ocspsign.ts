/**
 * `certsmith ocspsign`, as `cfssl ocspsign` (lifecycle spec §5.1): sign an OCSP response for a
 * certificate with the status given, and print `{"ocspResponse":"<base64 DER>"}`. Signed by a
 * delegated responder (`-ca` + `-responder` + `-responder-key`, CFSSL's flags) or by the CA itself
 * (`-ca` + `-ca-key`, or a signer of `-config` by `-label`: an HSM CA works). Nothing is stored.
 *
 * Deliberate differences: `-reason` defaults to `unspecified` (CFSSL's default `"0"` makes every
 * `-status revoked` without `-reason` fail with 8200); a responder certificate the CA did not issue
 * with id-kp-OCSPSigning is refused (2000) instead of producing responses clients reject.
 */
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { decodeOcspSignRequest, parseRevocationReason, signOcspRequest } from '@certsmith/revocation';
import { ErrorCode } from '@certsmith/x509-core';
import { durationFlag } from '../revocation/flag-parsers.js';
import type { CommandIo, Verbosity } from './common.js';
import { UsageError, createReporter, goJson, readInput, resolveIo, runAction, withLogLevel } from './common.js';
import { openOcspIdentity } from './revocation-signing.js';
import type { RevocationSigningFlags } from './revocation-signing.js';

interface OcspsignFlags extends RevocationSigningFlags {
  cert?: string;
  status: string;
  reason?: number;
  revokedAt: string;
  interval?: number;
  issuerHash?: string;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Output: {"ocspResponse":"<base64 DER OCSPResponse>"}, as cfssl ocspsign prints it.

Examples:
  certsmith ocspsign -ca ca.pem -responder ocsp.pem -responder-key ocsp-key.pem -cert www.pem
  certsmith ocspsign -ca ca.pem -ca-key ca-key.pem -cert www.pem -status revoked -reason keyCompromise -revoked-at 2026-11-20
  certsmith ocspsign -config certsmith.json -label hsm -cert www.pem | jq -r .ocspResponse | base64 -d > www.ocsp

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

function reasonFlag(value: string): number {
  try {
    return parseRevocationReason(value);
  } catch {
    throw new InvalidArgumentError('expected a CRLReason name (keyCompromise, superseded, …) or code (0-6, 8-10)');
  }
}

/** Register `certsmith ocspsign`. */
export function registerOcspsignCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('ocspsign')
    .description('sign an OCSP response for a certificate (cfssl ocspsign)')
    .helpOption('-h, --help', 'show help')
    .option('--cert <file>', 'certificate the response is about (PEM)')
    .option('--ca <file>', 'CA certificate that issued --cert (PEM)')
    .option('--ca-key <file>', 'CA private key: the CA signs the response itself (without --responder)')
    .option('--responder <file>', 'OCSP responder certificate (PEM), issued by the CA with id-kp-OCSPSigning')
    .option('--responder-key <file>', 'private key of --responder (PEM)')
    .option('--config <file>', 'certsmith config: the CA is the signer of --label (an HSM key works)')
    .option('--label <label>', 'signer label in --config (default: default)')
    .option('--status <status>', 'good, revoked or unknown', 'good')
    .addOption(new Option('--reason <reason>', 'revocation reason of -status revoked: a CRLReason name or code (default: unspecified)').argParser(reasonFlag))
    .option('--revoked-at <date>', 'revocation date of -status revoked: YYYY-MM-DD (midnight UTC) or now', 'now')
    .addOption(new Option('--interval <duration>', 'validity of the response, a Go duration (default: 96h)').argParser(durationFlag(1)))
    .option('--issuer-hash <hash>', 'CertID hash algorithm: SHA1 (default), SHA256, SHA384 or SHA512')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  withLogLevel(command);
  command.action(
    runAction(command, resolved, async (flags: OcspsignFlags) => {
      const reporter = createReporter(resolved, 'ocspsign', flags.loglevel);
      if (flags.cert === undefined) throw new UsageError('need certificate (provide with -cert)');
      const certificate = (await readInput(flags.cert, resolved, '--cert', ErrorCode.CertificateReadFailed)).toString('utf8');
      const body: Record<string, unknown> = { certificate, status: flags.status, revoked_at: flags.revokedAt, reason: flags.reason ?? 0 };
      if (flags.issuerHash !== undefined) body['issuer_hash'] = flags.issuerHash;
      const request = decodeOcspSignRequest(body);
      const identity = await openOcspIdentity(flags, resolved, reporter);
      try {
        const response = await signOcspRequest(identity.value, request, flags.interval === undefined ? {} : { intervalMs: flags.interval });
        resolved.stdout(`${goJson({ ocspResponse: Buffer.from(response.der).toString('base64') })}\n`);
      } finally {
        await identity.close();
      }
    }),
  );
  return command;
}
