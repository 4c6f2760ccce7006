/**
 * `certsmith bundle`, as `cfssl bundle`: the bundle of a certificate file (`-cert`, with its
 * `-key`) or of the chain a TLS server presents (`-domain`, `-ip`), built in-process by the same use
 * case and trust loading as `POST /api/v1/cfssl/bundle` (`@certsmith/bundler`: `bundleContextConfig`
 * + `loadBundleContext` + `bundleCertificate`), so the JSON printed equals the endpoint's `result`
 * for the same input and trust flags.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { fetchPeerCertificates } from '@certsmith/chain-builder';
import { bundleCertificate, bundleContextConfig, loadBundleContext } from '@certsmith/bundler';
import type { BundleCertificateInput, BundleDependencies } from '@certsmith/bundler';
import { ErrorCode, certificateToPem, parseCertificates } from '@certsmith/x509-core';
import type { CommandIo, Verbosity } from './common.js';
import { UsageError, acceptGoFlags, createReporter, goJson, readInput, resolveIo, runAction, withLogLevel } from './common.js';

interface BundleFlags {
  cert?: string;
  key?: string;
  domain?: string;
  ip?: string;
  flavor?: string;
  caBundle?: string;
  intBundle?: string;
  metadata?: string;
  allowPrivateNetworks?: boolean;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Output: the bundle JSON ({"bundle","crl_support","crt",…,"status","subject"}), the same as the
"result" of POST /api/v1/cfssl/bundle. Without --ca-bundle, Node's root store is used.

Examples:
  certsmith bundle -cert www.pem -ca-bundle roots.pem -int-bundle intermediates.pem
  certsmith bundle -cert www.pem -key www-key.pem -flavor optimal | certsmith split -bare www
  certsmith bundle -domain example.com
  certsmith bundle -domain www.example.com:8443 -ip 192.0.2.10 -ca-bundle roots.pem

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** A certificate file as PEM text: PEM as it is, DER (or PKCS#7) converted. */
function certificateText(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  if (text.includes('-----BEGIN')) return text;
  return parseCertificates(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    .map((certificate) => certificateToPem(certificate.der))
    .join('');
}

/** Register `certsmith bundle`. */
export function registerBundleCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('bundle')
    .description('build the certificate bundle of a certificate file or a TLS server (cfssl bundle)')
    .helpOption('-h, --help', 'show help')
    .option('--cert <file>', 'certificate to bundle (PEM or DER), optionally followed by intermediates')
    .option('--key <file>', 'private key of the certificate (returned re-encoded as "key")')
    .option('--domain <host>', 'without --cert: TLS server to fetch the chain from (host or host:port); with it: hostname the certificate must match')
    .option('--ip <address>', 'with --domain only: address to dial; with --cert: IP the certificate must match')
    .option('--flavor <flavor>', 'ubiquitous (default), optimal or force', 'ubiquitous')
    .option('--ca-bundle <file>', 'trusted roots (default: Node\'s root store)')
    .option('--int-bundle <file>', 'known intermediates')
    .option('--metadata <file>', 'root store (platform) metadata for ubiquity ranking')
    .option('--allow-private-networks', 'let AIA fetches reach loopback, private and link-local addresses (as serve --allow-private-networks)')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  withLogLevel(command);
  acceptGoFlags(command);
  command.action(
    runAction(command, resolved, async (flags: BundleFlags) => {
      if (flags.cert === undefined && flags.domain === undefined) throw new UsageError('give --cert FILE or --domain HOST');
      const reporter = createReporter(resolved, 'bundle', flags.loglevel);
      const input: BundleCertificateInput = { flavor: flags.flavor ?? 'ubiquitous' };
      if (flags.cert !== undefined) {
        input.certificatePem = certificateText(await readInput(flags.cert, resolved, '--cert', ErrorCode.CertificateReadFailed));
        if (flags.key !== undefined) input.privateKeyPem = (await readInput(flags.key, resolved, '--key', ErrorCode.PrivateKeyReadFailed)).toString('utf8');
      } else if (flags.key !== undefined) {
        throw new UsageError('--key needs --cert');
      }
      if (flags.domain !== undefined) input.domain = flags.domain;
      if (flags.ip !== undefined) input.ip = flags.ip;

      const path = (file: string | undefined): string | undefined => (file === undefined ? undefined : resolve(resolved.cwd(), file));
      const config = bundleContextConfig({
        caBundleFile: path(flags.caBundle),
        intBundleFile: path(flags.intBundle),
        metadataFile: path(flags.metadata),
        allowPrivateNetworks: flags.allowPrivateNetworks,
      });
      if (flags.caBundle !== undefined || flags.intBundle !== undefined || flags.metadata !== undefined) reporter.progress('loading trust bundles…');
      const context = await loadBundleContext(config);
      if (flags.cert === undefined) reporter.progress(`fetching the certificate chain of ${flags.domain}…`);
      // The --domain target is dialled directly, as cfssl bundle and certinfo --domain do: the operator
      // named it. AIA URLs inside certificates stay guarded exactly as in the server.
      const deps: BundleDependencies = { ...context, remote: { ...(context as BundleDependencies).remote, fetchPeer: fetchPeerCertificates } };
      const result = await bundleCertificate(input, deps);
      resolved.stdout(`${goJson(result)}\n`);
    }),
  );
  return command;
}
