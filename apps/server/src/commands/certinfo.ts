/**
 * `certsmith certinfo`, as `cfssl certinfo`: CFSSL's certinfo JSON (indented, as the cfssl CLI
 * prints it) of a certificate file (`-cert`, as `POST /api/v1/cfssl/certinfo`) or of the leaf
 * certificate a TLS server presents (`-domain host[:port]`, port 443 by default; as CFSSL, the
 * certificate is described whether or not it is trusted), or of a recorded certificate (`-serial`
 * + `-aki` + `-db-config`, looked up in the certificate store as the API's certinfo does). The use
 * case is `@certsmith/bundler`'s.
 */
import type { Command } from 'commander';
import { describeCertificateBytes, describeCertificatePem, describeServerCertificate } from '@certsmith/bundler';
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';
import type { CertinfoResult } from '@certsmith/x509-core';
import type { CommandIo, Verbosity } from './common.js';
import { UsageError, acceptGoFlags, createReporter, goJson, readInput, resolveIo, runAction, withLogLevel } from './common.js';
import { locateStore, openCommandStore } from './store-access.js';

interface CertinfoFlags {
  cert?: string;
  domain?: string;
  serial?: string;
  aki?: string;
  dbConfig?: string;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Output: the certinfo JSON ({"subject","issuer","serial_number","sans","not_before","not_after",
"sigalg","authority_key_id","subject_key_id","pem"}), as cfssl certinfo prints it.

Examples:
  certsmith certinfo -cert www.pem
  certsmith certinfo -domain example.com
  certsmith certinfo -domain 127.0.0.1:8443
  certsmith certinfo -serial 5641422667… -aki f9dd6fc8a7b29c06bedc992be61c5000821bcde3 -db-config db.json

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
    .option('--serial <decimal>', 'serial number of a recorded certificate (with --aki and --db-config)')
    .option('--aki <hex>', 'authority key identifier of a recorded certificate (colons and either case accepted)')
    .option('--db-config <file>', 'CFSSL db-config file of the certificate store to look --serial up in')
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
      } else if (flags.serial !== undefined || flags.aki !== undefined) {
        if (flags.serial === undefined || flags.aki === undefined || flags.dbConfig === undefined) throw new UsageError('--serial needs --aki and --db-config');
        const store = await openCommandStore(await locateStore({ dbConfig: flags.dbConfig }, resolved), { migrations: 'check' });
        try {
          const record = await store.findCertificate(flags.serial, flags.aki);
          // The API answers this 404 (CFSSL: 500, code 0).
          if (record === null) throw new CertsmithError(ErrorCode.NotFound, 'no certificate found');
          result = describeCertificatePem(record.pem);
        } finally {
          await store.close();
        }
      } else {
        throw new UsageError('give --cert FILE, --domain HOST, or --serial and --aki with --db-config');
      }
      resolved.stdout(`${goJson(result, 2)}\n`);
    }),
  );
  return command;
}
