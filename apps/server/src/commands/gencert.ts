/**
 * `certsmith gencert`, as `cfssl gencert`: generate a key and CSR from a CFSSL CSR JSON and sign it
 * (locally with `-ca`/`-ca-key`, with a `signers` entry of `-config`, or on a remote CA with
 * `-remote`), or make a self-signed CA with `-initca`. Prints `{"cert","csr","key"}` exactly as
 * CFSSL's `cli.PrintCert` (Go map order, HTML-escaped JSON), so `| cfssljson -bare name` and
 * `| certsmith split -bare name` work unchanged.
 */
import type { Command } from 'commander';
import { decodeCertificateRequest, resolveKeySpec } from '@certsmith/issuer';
import { ErrorCode } from '@certsmith/x509-core';
import type { CommandIo, Verbosity } from './common.js';
import { acceptGoFlags, createReporter, goJson, parseJsonInput, readInput, resolveIo, runAction, splitHosts, withLogLevel } from './common.js';
import { initCa } from './key-and-csr.js';
import { closeQuietly, openRecordedSigning } from './signing.js';
import type { SigningFlags } from './signing.js';

interface GencertFlags extends SigningFlags {
  initca?: boolean;
  dbConfig?: string;
  hostname?: string;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Output: {"cert": PEM, "csr": PEM, "key": PEM} on stdout (cfssl gencert's JSON); split it with
"certsmith split -bare NAME" or "cfssljson -bare NAME". Flags may be written -flag or --flag.

Examples:
  certsmith gencert -initca ca-csr.json | certsmith split -bare ca
  certsmith gencert -ca ca.pem -ca-key ca-key.pem -hostname www.example.com csr.json | certsmith split -bare www
  certsmith gencert -ca ca.pem -ca-key ca-key.pem -config cfssl.json -profile client csr.json
  echo '{"CN":"svc","hosts":["svc.internal"]}' | certsmith gencert -remote http://127.0.0.1:8888 -label hsm -
  certsmith gencert -initca -ca-key ca-key.pem ca-csr.json    # new CA certificate for an existing key
  certsmith gencert -ca ca.pem -ca-key ca-key.pem -db-config db.json -label web csr.json   # recorded in the store

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith gencert`. */
export function registerGencertCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('gencert')
    .description('generate a new key and a signed certificate from a CFSSL CSR JSON (cfssl gencert)')
    .helpOption('-h, --help', 'show help')
    .argument('<csrjson>', 'CFSSL CSR JSON file ({"CN","hosts","names","key","ca"}), - for stdin')
    .option('--initca', 'make a self-signed CA (with --ca-key: a new CA certificate for that key)')
    .option('--ca <file>', 'CA certificate to sign with (PEM)')
    .option('--ca-key <file>', 'CA private key (PEM)')
    .option('--config <file>', 'CFSSL config file (signing profiles, auth keys, remotes) or a certsmith config with signers')
    .option('--profile <name>', 'signing profile')
    .option('--label <label>', 'signer label (a signers entry of --config, or the remote CA\'s label)')
    .option('--hostname <list>', 'comma-separated hosts (DNS names, IPs, e-mails, URIs) replacing the request\'s hosts in the certificate')
    .option('--db-config <file>', 'CFSSL db-config file: record the certificate in that store, with its label, before printing it')
    .option('--remote <url>', 'remote CFSSL/certsmith to sign with, e.g. http://127.0.0.1:8888 (several: comma-separated)')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  withLogLevel(command);
  acceptGoFlags(command);
  command.action(
    runAction(command, resolved, async (csrFile: string, flags: GencertFlags) => {
      const reporter = createReporter(resolved, 'gencert', flags.loglevel);
      const body = parseJsonInput(await readInput(csrFile, resolved, 'CSRJSON', ErrorCode.CsrReadFailed), 'CSRJSON');
      if (flags.initca) {
        const existingKeyPem = flags.caKey === undefined ? undefined : (await readInput(flags.caKey, resolved, '--ca-key', ErrorCode.PrivateKeyReadFailed)).toString('utf8');
        const material = await initCa(body, { reporter, ...(existingKeyPem === undefined ? {} : { existingKeyPem }) });
        resolved.stdout(`${goJson(material)}\n`);
        return;
      }
      const request = decodeCertificateRequest(body);
      const spec = resolveKeySpec(request.key);
      const hosts = splitHosts(flags.hostname);
      // With -db-config, the certificate is recorded before it is printed.
      const setup = await openRecordedSigning(flags, resolved, reporter);
      try {
        if (spec.algorithm === 'RSA' && spec.bits >= 4096) reporter.progress(`generating a ${spec.bits}-bit RSA key…`);
        if (setup.remote) reporter.progress('sending the request to the remote CA…');
        // The issuer's newcert: a bad label or profile fails before a key is generated (a remote CA
        // checks its own profiles); the operator holds the config, so auth_key profiles are allowed.
        const issued = await setup.issuer.newCertificate({ request, profile: flags.profile, label: flags.label, hosts }, { authenticated: true });
        for (const message of issued.messages) reporter.warn(message.message);
        resolved.stdout(`${goJson({ cert: issued.certificatePem, csr: issued.csrPem, key: issued.privateKeyPem })}\n`);
      } finally {
        await closeQuietly(setup);
      }
    }),
  );
  return command;
}
