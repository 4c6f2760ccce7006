/**
 * `certsmith sign`, as `cfssl sign`: sign a PEM CSR (argument, `-csr` flag, or `-` for stdin),
 * optionally replacing its hosts (`-hostname`) and subject (a SUBJECT JSON file, cfssl's
 * `signer.Subject`). Prints `{"cert","csr"}` as cfssl 1.2's `sign` does (the CSR as read).
 */
import type { Command } from 'commander';
import { decodeSignRequest } from '@certsmith/issuer';
import type { SignBody } from '@certsmith/issuer';
import { ErrorCode } from '@certsmith/x509-core';
import type { CommandIo, Verbosity } from './common.js';
import { UsageError, acceptGoFlags, createReporter, goJson, parseJsonInput, readInput, resolveIo, runAction, splitHosts, withLogLevel } from './common.js';
import { closeQuietly, openRecordedSigning } from './signing.js';
import type { SigningFlags } from './signing.js';

interface SignFlags extends SigningFlags {
  hostname?: string;
  dbConfig?: string;
  csr?: string;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Output: {"cert": PEM, "csr": PEM} (cfssl sign's JSON; "csr" is the request as read).

Examples:
  certsmith sign -ca ca.pem -ca-key ca-key.pem -hostname www.example.com,10.0.0.5 www.csr | certsmith split -bare www
  certsmith sign -ca ca.pem -ca-key ca-key.pem -config cfssl.json -profile server www.csr subject.json
  openssl req -new -key k.pem -subj /CN=x | certsmith sign -remote http://127.0.0.1:8888 -
  certsmith sign -ca ca.pem -ca-key ca-key.pem -db-config db.json www.csr   # recorded in the store

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith sign`. */
export function registerSignCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('sign')
    .description('sign a certificate request (PEM CSR) with a CA (cfssl sign)')
    .helpOption('-h, --help', 'show help')
    .argument('[csr]', 'PEM certificate request file, - for stdin (or --csr)')
    .argument('[subject]', 'JSON file with a subject ({"CN","names":[{"C","ST","L","O","OU"}]}) replacing the CSR\'s')
    .option('--csr <file>', 'PEM certificate request file (takes precedence over the argument)')
    .option('--ca <file>', 'CA certificate to sign with (PEM)')
    .option('--ca-key <file>', 'CA private key (PEM)')
    .option('--config <file>', 'CFSSL config file or a certsmith config with signers')
    .option('--profile <name>', 'signing profile')
    .option('--label <label>', 'signer label (a signers entry of --config, or the remote CA\'s label)')
    .option('--hostname <list>', 'comma-separated hosts replacing the CSR\'s SANs')
    .option('--db-config <file>', 'CFSSL db-config file: record the certificate in that store, with its label, before printing it')
    .option('--remote <url>', 'remote CFSSL/certsmith to sign with (several: comma-separated)')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  withLogLevel(command);
  acceptGoFlags(command);
  command.action(
    runAction(command, resolved, async (csrArgument: string | undefined, subjectFile: string | undefined, flags: SignFlags) => {
      const reporter = createReporter(resolved, 'sign', flags.loglevel);
      // cfssl: the -csr flag takes precedence; then the first argument is the CSR and the second the subject.
      let csrFile = flags.csr;
      let subjectPath = subjectFile;
      if (csrFile === undefined) csrFile = csrArgument;
      else if (csrArgument !== undefined) {
        if (subjectFile !== undefined) throw new UsageError('too many arguments: with --csr, give at most a SUBJECT file');
        subjectPath = csrArgument;
      }
      if (csrFile === undefined) throw new UsageError("missing required argument 'csr'");
      const csrText = (await readInput(csrFile, resolved, 'CSR', ErrorCode.CsrReadFailed)).toString('utf8');
      const body: Record<string, unknown> = { certificate_request: csrText };
      if (subjectPath !== undefined) body['subject'] = parseJsonInput(await readInput(subjectPath, resolved, 'SUBJECT', ErrorCode.CsrReadFailed), 'SUBJECT');
      const decoded = decodeSignRequest(body);
      const request: SignBody = { certificate_request: csrText, hosts: splitHosts(flags.hostname) };
      if (decoded.subject) request.subject = decoded.subject;
      if (flags.profile) request.profile = flags.profile;
      if (flags.label) request.label = flags.label;
      // With -db-config, the certificate is recorded before it is printed.
      const setup = await openRecordedSigning(flags, resolved, reporter);
      try {
        if (setup.remote) reporter.progress('sending the request to the remote CA…');
        // The issuer's sign; the operator holds the config, so auth_key profiles are allowed.
        const issued = await setup.issuer.signCertificate(request, { authenticated: true });
        resolved.stdout(`${goJson({ cert: issued.certificatePem, csr: csrText })}\n`);
      } finally {
        await closeQuietly(setup);
      }
    }),
  );
  return command;
}
