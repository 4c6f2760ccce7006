/**
 * `certsmith certinfo`, as `cfssl certinfo`: CFSSL's certinfo JSON (indented, as the cfssl CLI
 * prints it) of a certificate file (`-cert`, as `POST /api/v1/cfssl/certinfo`) or of the leaf
 * certificate a TLS server presents (`-domain host[:port]`, port 443 by default; as CFSSL, the
 * certificate is described whether or not it is trusted). The use case is `@certsmith/bundler`'s.
 */
import type { Command } from 'commander';
import { describeCertificateBytes, describeServerCertificate } from '@certsmith/bundler';
import { ErrorCode } from '@certsmith/x509-core';
import type { CertinfoResult } from '@certsmith/x509-core';
import type { CommandIo, Verbosity } from './common.js';
import { UsageError, acceptGoFlags, createReporter, goJson, readInput, resolveIo, runAction, withLogLevel } from './common.js';

interface CertinfoFlags {
  cert?: string;
  domain?: string;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Output: the certinfo JSON ({"subject","issuer","serial_number","sans","not_before","not_after",
"sigalg","authority_key_id","subject_key_id","pem"}), as cfssl certinfo prints it.

Examples:
  certsmith certinfo -cert www.pem
  certsmith certinfo -domain example.com
  certsmith certinfo -domain 127.0.0.1:8443

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith certinfo`. */
export function registerCertinfoCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('certinfo')
    .description('describe a certificate file or the certificate of a TLS server (cfssl certinfo)')
    .helpOption('-h, --help', 'show help')
    .option('--cert <file>', 'certificate file (PEM or DER)')
    .option('--domain <host>', 'TLS server, host or host:port (default port 443)')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  withLogLevel(command);
  acceptGoFlags(command);
  command.action(
    runAction(command, resolved, async (flags: CertinfoFlags) => {
      const reporter = createReporter(resolved, 'certinfo', flags.loglevel);
      let result: CertinfoResult;
      if (flags.cert !== undefined) {
        result = describeCertificateBytes(await readInput(flags.cert, resolved, '--cert', ErrorCode.CertificateReadFailed));
      } else if (flags.domain !== undefined) {
        reporter.progress(`connecting to ${flags.domain}…`);
        // The operator named the host: dialled directly, as cfssl certinfo does (no SSRF guard).
        result = await describeServerCertificate(flags.domain);
      } else {
        throw new UsageError('give --cert FILE or --domain HOST');
      }
      resolved.stdout(`${goJson(result, 2)}\n`);
    }),
  );
  return command;
}
