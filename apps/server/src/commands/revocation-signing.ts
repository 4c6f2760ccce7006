/**
 * Who signs CRLs and OCSP responses for the revocation commands (`gencrl`, `ocspsign`,
 * `ocsprefresh`), from CFSSL's flags or a certsmith config:
 *
 * - the CA as CRL signer: `-ca` + `-ca-key` (CFSSL), or a signer of `-config` by `-label` (default
 *   `default`) — an HSM CA through `@certsmith/signer-pkcs11`, a plugin;
 * - OCSP: `-ca` + `-responder` + `-responder-key` (CFSSL: a delegated responder, which must carry
 *   id-kp-OCSPSigning and be issued by the CA), else the CA itself as above.
 *
 * A signer that cannot sign raw data (a remote multi-root CA) is refused with 2000.
 */
import { resolve } from 'node:path';
import type { OcspSigningIdentity, RevocationSigner } from '@certsmith/revocation';
import { RevocationSignerError, createOcspSigningIdentity, createRevocationSigner } from '@certsmith/revocation';
import type { Signer } from '@certsmith/signer-api';
import { pino } from 'pino';
import { loadServerConfig } from '../config-file.js';
import { loadResponderSigner, readCertificateFile } from '../revocation/responder-files.js';
import { checkReadableFile } from '../readable-file.js';
import { loadSigner } from '../signer-loader.js';
import type { CommandIo, Reporter } from './common.js';
import { UsageError } from './common.js';
import { openSigning } from './signing.js';

/** The flags that choose the CA and the OCSP responder. */
export interface RevocationSigningFlags {
  ca?: string;
  caKey?: string;
  config?: string;
  label?: string;
  responder?: string;
  responderKey?: string;
}

/** A signer held open for the command's duration. */
export interface Opened<T> {
  value: T;
  close(): Promise<void>;
}

async function closeAll(signers: readonly Signer[]): Promise<void> {
  await Promise.all(
    signers.map(async (signer) => {
      try {
        await signer.close();
      } catch {
        // Closing releases resources only; the command's result or error is already known.
      }
    }),
  );
}

/**
 * The CA of the flags, prepared for revocation signing: `-ca` + `-ca-key`, or `-config` (+ `-label`).
 * @throws UsageError when neither is given; the signer's errors; 2000 for a signer that cannot sign.
 */
export async function openCaRevocationSigner(flags: RevocationSigningFlags, io: CommandIo, reporter: Reporter): Promise<Opened<RevocationSigner>> {
  if (flags.ca === undefined && flags.caKey === undefined && flags.config === undefined) {
    throw new UsageError('need the CA: -ca and -ca-key, or -config with a signer (-label picks it, default "default")');
  }
  const setup = await openSigning({ ca: flags.ca, caKey: flags.caKey, config: flags.config, label: flags.label }, io, reporter);
  try {
    const signer = await createRevocationSigner(setup.signer, { label: flags.label || (flags.ca !== undefined ? 'the -ca/-ca-key CA' : 'default') });
    return { value: signer, close: () => closeAll([setup.signer]) };
  } catch (error) {
    await closeAll([setup.signer]);
    throw error;
  }
}

/**
 * The OCSP signing identity of the flags: `-ca` + `-responder` + `-responder-key` (a delegated
 * responder, CFSSL's way), or the CA itself ({@link openCaRevocationSigner}'s flags). A responder
 * also works with `-config`/`-label` naming the CA.
 * @throws UsageError for incomplete flags; 2000 when the responder was not delegated by the CA.
 */
export async function openOcspIdentity(flags: RevocationSigningFlags, io: CommandIo, reporter: Reporter): Promise<Opened<OcspSigningIdentity>> {
  if (flags.responder === undefined && flags.responderKey === undefined) {
    const ca = await openCaRevocationSigner(flags, io, reporter);
    return { value: createOcspSigningIdentity({ signer: ca.value }), close: ca.close };
  }
  if (flags.responder === undefined) throw new UsageError('need responder certificate (provide with -responder)');
  if (flags.responderKey === undefined) throw new UsageError('need responder key (provide with -responder-key)');
  const responderFile = await checkReadableFile('--responder', flags.responder, io.cwd());
  const responderKeyFile = await checkReadableFile('--responder-key', flags.responderKey, io.cwd());
  const opened: Signer[] = [];
  try {
    let issuer;
    if (flags.ca !== undefined && flags.caKey === undefined) {
      issuer = await readCertificateFile(resolve(io.cwd(), flags.ca), '--ca');
    } else if (flags.ca !== undefined || flags.config !== undefined) {
      const ca = await openSigning({ ca: flags.ca, caKey: flags.caKey, config: flags.config, label: flags.label }, io, reporter);
      opened.push(ca.signer);
      issuer = (await createRevocationSigner(ca.signer, { label: flags.label || 'default' })).certificate;
    } else {
      throw new UsageError('need CA certificate (provide with -ca)');
    }
    const responder = await loadResponderSigner(responderFile, responderKeyFile);
    opened.push(responder);
    const identity = createOcspSigningIdentity({ issuer, signer: await createRevocationSigner(responder, { label: 'the -responder' }) });
    return { value: identity, close: () => closeAll(opened) };
  } catch (error) {
    await closeAll(opened);
    throw error;
  }
}

/**
 * Every OCSP identity a command signs for: with `-config` and no `-label`, one per signer of the
 * file that can sign (each with its responder from the file's `revocation.ocsp.responders`, else
 * the CA), skipping remote signers with a warning; otherwise the one of {@link openOcspIdentity}.
 */
export async function openOcspIdentities(flags: RevocationSigningFlags, io: CommandIo, reporter: Reporter): Promise<Opened<OcspSigningIdentity[]>> {
  if (flags.config === undefined || flags.label !== undefined || flags.ca !== undefined || flags.responder !== undefined) {
    const one = await openOcspIdentity(flags, io, reporter);
    return { value: [one.value], close: one.close };
  }
  const config = await loadServerConfig(resolve(io.cwd(), flags.config), { env: io.env, cwd: io.cwd() });
  if (config.signers.length === 0) throw new UsageError(`${config.file} has no signers: give -ca and -ca-key (and -responder, -responder-key)`);
  const identities: OcspSigningIdentity[] = [];
  const closers: Array<() => Promise<void>> = [];
  const closeOpened = async (): Promise<void> => {
    for (const close of closers) await close();
  };
  try {
    for (const entry of config.signers) {
      const responder = config.revocation.responders.get(entry.label);
      if (responder?.kind === 'plugin') {
        // A plugin responder: load it as serve does, with the CA of the label.
        const ca = await openCaRevocationSigner({ config: flags.config, label: entry.label }, io, reporter);
        closers.push(ca.close);
        const loaded = await loadSigner({
          label: `ocsp-${entry.label}`,
          plugin: responder.plugin,
          options: responder.options,
          configDir: responder.configDir,
          logger: pino({ level: 'silent' }),
          where: responder.where,
          configFile: config.file,
          env: io.env,
        });
        closers.push(() => closeAll([loaded.signer]));
        identities.push(createOcspSigningIdentity({ issuer: ca.value.certificate, signer: await createRevocationSigner(loaded.signer, { label: `OCSP responder of ${entry.label}` }) }));
        continue;
      }
      try {
        const ca = await openCaRevocationSigner({ config: flags.config, label: entry.label }, io, reporter);
        closers.push(ca.close);
        identities.push(createOcspSigningIdentity({ signer: ca.value }));
      } catch (error) {
        // A remote signer cannot sign; its certificates are refreshed where they are signed.
        if (!(error instanceof RevocationSignerError)) throw error;
        reporter.warn(`signer "${entry.label}" skipped: ${(error as Error).message}`);
      }
    }
    if (identities.length === 0) throw new UsageError(`no signer of ${config.file} can sign OCSP responses`);
    return { value: identities, close: closeOpened };
  } catch (error) {
    await closeOpened();
    throw error;
  }
}
