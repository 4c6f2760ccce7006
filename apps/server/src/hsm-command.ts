/**
 * `certsmith hsm list|keys|genkey|initca|csr`: operator commands over a PKCS#11 module, so that a
 * fresh HSM becomes a CA without the key ever leaving it. Each prints JSON on stdout; `initca` and
 * `csr` use CFSSL's member names (`cert`, `csr`) so `cfssljson -bare` can split the output.
 *
 * The PKCS#11 plugin is imported when a subcommand runs, never when the program is built: `certsmith
 * serve` must not load a native PKCS#11 binding it was not configured to use.
 */
import { Command, InvalidArgumentError } from 'commander';
import { readFile } from 'node:fs/promises';

import type { SignRequestSubject, SignatureAlgorithm, SignerContext, SubjectName } from '@certsmith/signer-api';
import { SIGNATURE_ALGORITHMS, createSignerContext } from '@certsmith/signer-api';
import type * as Pkcs11Plugin from '@certsmith/signer-pkcs11';

/** The admin functions the commands call (the plugin's `hsm` object). */
export type HsmAdmin = (typeof Pkcs11Plugin)['hsm'];

/** Where the commands write, how they resolve `--pin` and paths, and how they load the plugin; injectable for tests. */
export interface HsmCommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Set the process exit code (default: `process.exitCode = code`). */
  setExitCode(code: number): void;
  /** Resolves `--pin env:NAME|file:PATH` and relative paths (default: environment and working directory). */
  context: SignerContext;
  /** Load the admin functions (default: `import('@certsmith/signer-pkcs11')`). */
  loadAdmin(): Promise<HsmAdmin>;
}

/** Flags shared by every subcommand that opens a token. */
interface TokenFlags {
  module: string;
  tokenLabel?: string;
  slot?: number;
  tokenSerial?: string;
  pin?: string;
}

interface KeyFlags extends TokenFlags {
  keyLabel?: string;
  keyId?: string;
}

interface SubjectFlags extends KeyFlags {
  request?: string;
  cn?: string;
  country?: string;
  state?: string;
  locality?: string;
  org?: string;
  orgUnit?: string;
  signatureAlgorithm?: SignatureAlgorithm;
  pathLength?: number;
}

/** The option names of the admin API as the flags that set them, for error messages. */
const FLAG_NAMES: Readonly<Record<string, string>> = {
  module: '--module',
  tokenLabel: '--token-label',
  slot: '--slot',
  tokenSerial: '--token-serial',
  pin: '--pin',
  keyLabel: '--key-label',
  keyId: '--key-id',
  algorithm: '--algo',
  size: '--size',
  subject: '--cn',
  expiry: '--expiry',
  pathLength: '--path-length',
  signatureAlgorithm: '--signature-algorithm',
  storeOnToken: '--no-store',
};

function integer(min: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError(`expected an integer ≥ ${min}`);
    return Number(value);
  };
}

function signatureAlgorithm(value: string): SignatureAlgorithm {
  if (!(SIGNATURE_ALGORITHMS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${SIGNATURE_ALGORITHMS.join(', ')}`);
  return value as SignatureAlgorithm;
}

function withTokenFlags(command: Command, pin: 'required' | 'optional'): Command {
  command
    .requiredOption('--module <path>', 'PKCS#11 library, e.g. /usr/lib/softhsm/libsofthsm2.so')
    .option('--token-label <label>', 'token label')
    .option('--slot <id>', 'slot ID (as `hsm list` prints it)', integer(0))
    .option('--token-serial <serial>', 'token serial number');
  const pinHelp = 'user PIN reference: env:NAME or file:PATH (never the PIN itself)';
  return pin === 'required' ? command.requiredOption('--pin <ref>', pinHelp) : command.option('--pin <ref>', pinHelp);
}

function withKeyFlags(command: Command): Command {
  return command.option('--key-label <label>', 'CKA_LABEL of the key').option('--key-id <hex>', 'CKA_ID of the key, hex');
}

function withSubjectFlags(command: Command): Command {
  return command
    .option('--request <file>', 'CFSSL CSR JSON ({"CN", "names", "hosts", "ca": {"expiry", "pathlen"}}); flags override it')
    .option('--cn <name>', 'subject common name')
    .option('--country <C>', 'subject country (C)')
    .option('--state <ST>', 'subject state or province (ST)')
    .option('--locality <L>', 'subject locality (L)')
    .option('--org <O>', 'subject organization (O)')
    .option('--org-unit <OU>', 'subject organizational unit (OU)')
    .option('--path-length <n>', 'basicConstraints pathLenConstraint', integer(0))
    .option('--signature-algorithm <name>', `one of ${SIGNATURE_ALGORITHMS.filter((name) => name !== 'Ed25519').join(', ')} (default: chosen from the key)`, signatureAlgorithm);
}

function tokenOptions(flags: TokenFlags, context: SignerContext): { module: string; tokenLabel?: string; slot?: number; tokenSerial?: string; pin?: string; context: SignerContext } {
  const options: { module: string; tokenLabel?: string; slot?: number; tokenSerial?: string; pin?: string; context: SignerContext } = { module: flags.module, context };
  if (flags.tokenLabel !== undefined) options.tokenLabel = flags.tokenLabel;
  if (flags.slot !== undefined) options.slot = flags.slot;
  if (flags.tokenSerial !== undefined) options.tokenSerial = flags.tokenSerial;
  if (flags.pin !== undefined) options.pin = flags.pin;
  return options;
}

function keyOptions(flags: KeyFlags): { keyLabel?: string; keyId?: string } {
  const options: { keyLabel?: string; keyId?: string } = {};
  if (flags.keyLabel !== undefined) options.keyLabel = flags.keyLabel;
  if (flags.keyId !== undefined) options.keyId = flags.keyId;
  return options;
}

/** A CFSSL CSR JSON file (`cfssl genkey -initca csr.json`), the parts the HSM commands use. */
interface RequestFile {
  CN?: string;
  names?: SubjectName[];
  hosts?: string[];
  ca?: { expiry?: string; pathlen?: number };
}

async function readRequest(path: string | undefined, context: SignerContext): Promise<RequestFile> {
  if (path === undefined) return {};
  const text = await readFile(context.resolvePath(path), 'utf8');
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError(`${path}: expected a CFSSL CSR JSON object`);
  return parsed as RequestFile;
}

/** Subject from `--request`, its first `names` entry overridden field by field by `--country`, `--state`, `--locality`, `--org`, `--org-unit`, and `--cn`. */
function subjectFrom(flags: SubjectFlags, request: RequestFile): SignRequestSubject {
  const names: SubjectName[] = [...(request.names ?? [])];
  const override: SubjectName = {};
  if (flags.country !== undefined) override.C = flags.country;
  if (flags.state !== undefined) override.ST = flags.state;
  if (flags.locality !== undefined) override.L = flags.locality;
  if (flags.org !== undefined) override.O = flags.org;
  if (flags.orgUnit !== undefined) override.OU = flags.orgUnit;
  const merged = Object.keys(override).length === 0 ? names : [{ ...(names[0] ?? {}), ...override }, ...names.slice(1)];
  const subject: SignRequestSubject = { names: merged };
  const cn = flags.cn ?? request.CN;
  if (cn !== undefined) subject.CN = cn;
  return subject;
}

/** `options.keyLabel: …` → `--key-label: …`, and without the plugin's prefix: the operator typed flags. */
function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = typeof (error as { code?: unknown })?.code === 'number' ? ` (code ${(error as { code: number }).code})` : '';
  const text = message.replace(/^@certsmith\/signer-pkcs11 hsm: /, '').replace(/\boptions\.([A-Za-z]+)/g, (whole, name: string) => FLAG_NAMES[name] ?? whole);
  return `${text}${code}`;
}

function defaultIo(): HsmCommandIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    setExitCode: (code) => {
      process.exitCode = code;
    },
    context: createSignerContext(),
    loadAdmin: async () => (await import('@certsmith/signer-pkcs11')).hsm,
  };
}

/**
 * Register `certsmith hsm …` on `program`. Returns the `hsm` command. Failures print
 * `certsmith hsm <sub>: <message> (code N)` on stderr and set exit code 1; the PIN never appears.
 */
export function registerHsmCommand(program: Command, io: Partial<HsmCommandIo> = {}): Command {
  const resolved: HsmCommandIo = { ...defaultIo(), ...io };
  const json = (value: unknown): void => resolved.stdout(`${JSON.stringify(value, null, 2)}\n`);
  const run =
    <Flags>(name: string, body: (admin: HsmAdmin, flags: Flags) => Promise<unknown>) =>
    async (flags: Flags): Promise<void> => {
      try {
        json(await body(await resolved.loadAdmin(), flags));
      } catch (error) {
        resolved.stderr(`certsmith hsm ${name}: ${describeError(error)}\n`);
        resolved.setExitCode(1);
      }
    };

  const hsm = program
    .command('hsm')
    .description('PKCS#11 HSM administration: list slots and keys, generate a CA key, self-sign it or make a CSR')
    .helpOption('-h, --help', 'show help')
    .allowExcessArguments(false);

  hsm
    .command('list')
    .description('list the slots and tokens of a PKCS#11 module (no PIN needed)')
    .helpOption('-h, --help', 'show help')
    .requiredOption('--module <path>', 'PKCS#11 library, e.g. /usr/lib/softhsm/libsofthsm2.so')
    .allowExcessArguments(false)
    .action(run<{ module: string }>('list', async (admin, flags) => ({ slots: await admin.listSlots({ module: flags.module, context: resolved.context }) })));

  withTokenFlags(hsm.command('keys').description('list the objects on a token (private keys need --pin)').helpOption('-h, --help', 'show help'), 'optional')
    .allowExcessArguments(false)
    .action(run<TokenFlags>('keys', async (admin, flags) => ({ objects: await admin.listKeys(tokenOptions(flags, resolved.context)) })));

  withTokenFlags(hsm.command('genkey').description('generate a CA key pair on the token (sensitive, never extractable)').helpOption('-h, --help', 'show help'), 'required')
    .requiredOption('--key-label <label>', 'CKA_LABEL of the new key')
    .option('--key-id <hex>', 'CKA_ID of the new key, hex (default: random)')
    .option('--algo <algo>', 'ecdsa or rsa (CFSSL key request names)', 'ecdsa')
    .option('--size <n>', 'ecdsa: 256, 384 or 521; rsa: 2048, 3072 or 4096 (default: 256 / 2048)', integer(1))
    .allowExcessArguments(false)
    .action(
      run<TokenFlags & { keyLabel: string; keyId?: string; algo: string; size?: number }>('genkey', async (admin, flags) => {
        const algorithm = flags.algo as 'rsa' | 'ecdsa';
        const size = flags.size ?? (algorithm === 'rsa' ? 2048 : 256);
        const options = { ...tokenOptions(flags, resolved.context), pin: flags.pin as string, keyLabel: flags.keyLabel, algorithm, size };
        return { key: await admin.generateKeyPair(flags.keyId === undefined ? options : { ...options, keyId: flags.keyId }) };
      }),
    );

  withSubjectFlags(withKeyFlags(withTokenFlags(hsm.command('initca').description('self-sign the key as a CA (CFSSL initca profile) and store the certificate on the token').helpOption('-h, --help', 'show help'), 'required')))
    .option('--expiry <duration>', 'validity as hours/minutes/seconds, e.g. 43800h (default: 43800h, 5 years)')
    .option('--no-store', 'do not store the certificate on the token')
    .allowExcessArguments(false)
    .action(
      run<SubjectFlags & { expiry?: string; store: boolean }>('initca', async (admin, flags) => {
        const request = await readRequest(flags.request, resolved.context);
        const expiry = flags.expiry ?? request.ca?.expiry;
        const pathLength = flags.pathLength ?? request.ca?.pathlen;
        const result = await admin.createSelfSignedCaCertificate({
          ...tokenOptions(flags, resolved.context),
          ...keyOptions(flags),
          pin: flags.pin as string,
          subject: subjectFrom(flags, request),
          storeOnToken: flags.store,
          ...(expiry === undefined ? {} : { expiry }),
          ...(pathLength === undefined ? {} : { pathLength }),
          ...(flags.signatureAlgorithm === undefined ? {} : { signatureAlgorithm: flags.signatureAlgorithm }),
        });
        return { cert: result.certificatePem, stored_on_token: result.storedOnToken };
      }),
    );

  withSubjectFlags(withKeyFlags(withTokenFlags(hsm.command('csr').description('make a CSR for the key, signed on the token, for an external root').helpOption('-h, --help', 'show help'), 'required')))
    .option('--hosts <list>', 'comma-separated subjectAltName entries (DNS names, IPs, e-mails, URIs)')
    .option('--no-ca', 'request an end-entity certificate instead of a CA')
    .allowExcessArguments(false)
    .action(
      run<SubjectFlags & { hosts?: string; ca: boolean }>('csr', async (admin, flags) => {
        const request = await readRequest(flags.request, resolved.context);
        const hosts = flags.hosts !== undefined ? flags.hosts.split(',').map((host) => host.trim()).filter((host) => host !== '') : (request.hosts ?? []);
        const pathLength = flags.pathLength ?? request.ca?.pathlen;
        const result = await admin.createCertificateSigningRequest({
          ...tokenOptions(flags, resolved.context),
          ...keyOptions(flags),
          pin: flags.pin as string,
          subject: subjectFrom(flags, request),
          hosts,
          isCa: flags.ca,
          ...(pathLength === undefined ? {} : { pathLength }),
          ...(flags.signatureAlgorithm === undefined ? {} : { signatureAlgorithm: flags.signatureAlgorithm }),
        });
        return { csr: result.csrPem };
      }),
    );

  return hsm;
}
