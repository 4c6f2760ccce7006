/**
 * `certsmith config check FILE`: load a config file exactly as `certsmith serve -config FILE` loads
 * it — the same loaders, the same rules — and print EVERY problem with its JSON path instead of
 * stopping at the first:
 *
 * ```
 * signing.profiles.www.expiry: time: unknown unit "x" in duration "1x"
 * auth_keys.main.key: environment variable CA_MAIN_KEY is not set
 * signers.hsm.plugin: package @acme/signer-vault is not installed; install it …
 * ```
 *
 * This module only formats: the rules live in the loaders (`readServerConfig`, which reads the
 * CFSSL policy with `@certsmith/issuer`'s `readSigningPolicy`; `signerDefinitions` and
 * `loadSigner`; the trust-file loaders), which report problems as `{ path, message, code }`.
 * Secret values are never printed: the loaders name references (`env:NAME`, `file:PATH`) only.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadCertificatePool } from '@certsmith/chain-builder';
import { ConfigReport, describeProblem, joinPath } from '@certsmith/issuer';
import type { ConfigProblem, ConfigWarning } from '@certsmith/issuer';
import { loadPlatforms } from '@certsmith/ubiquity-rules';
import { isCodedError } from '@certsmith/x509-core';
import { pino } from 'pino';
import { readServerConfig } from '../config-file.js';
import { SignerLoadError } from '../errors.js';
import { loadSigner } from '../signer-loader.js';
import { signerDefinitions } from '../signer-registry.js';
import type { CommandIo } from './common.js';
import { EXIT_FAILED, UsageError, acceptGoFlags, goJson, resolveIo, runAction } from './common.js';

export { joinPath };

/** What {@link checkConfigFile} found. */
export interface ConfigCheckResult {
  /** Absolute path of the file. */
  file: string;
  /** What `certsmith serve` would refuse (exit 2), in the order the loaders meet them. */
  problems: ConfigProblem[];
  /** What it accepts but logs: keys that change nothing (CFSSL keys certsmith ignores, unknown usages…). */
  warnings: ConfigWarning[];
  /** What the file holds. */
  counts: { profiles: number; authKeys: number; signers: number };
}

/** Options of {@link checkConfigFile}. */
export interface ConfigCheckOptions {
  /** Environment for `env:` references (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory for the file and the flag files (default `process.cwd()`). */
  cwd?: string;
  /** Load every signer (plugin, options, creation) as the server does. Default true. */
  loadSigners?: boolean;
  /** `serve` flags checked with the file: `--ca`/`--ca-key` and the trust files. */
  caFile?: string;
  caKeyFile?: string;
  caBundleFile?: string;
  intBundleFile?: string;
  metadataFile?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function keyCount(value: unknown): number {
  return isRecord(value) ? Object.keys(value).length : 0;
}

/** How many profiles, auth keys and signers the document holds (for the summary line). */
function countSections(raw: unknown): ConfigCheckResult['counts'] {
  if (!isRecord(raw)) return { profiles: 0, authKeys: 0, signers: 0 };
  const member = (record: Record<string, unknown>, name: string): unknown => Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  const profilesOf = (signing: unknown): number => (isRecord(signing) ? (isRecord(member(signing, 'default')) ? 1 : 0) + keyCount(member(signing, 'profiles')) : 0);
  const signers = raw['signers'];
  const ownProfiles = isRecord(signers) ? Object.values(signers).reduce<number>((sum, entry) => sum + (isRecord(entry) ? profilesOf(entry['signing']) : 0), 0) : 0;
  return { profiles: profilesOf(member(raw, 'signing')) + ownProfiles, authKeys: keyCount(member(raw, 'auth_keys')), signers: keyCount(signers) };
}

/**
 * Check `file` as `certsmith serve` would load it (with the given flags) and collect every problem.
 * Never throws for problems in the file; only programming errors escape.
 */
export async function checkConfigFile(file: string, options: ConfigCheckOptions = {}): Promise<ConfigCheckResult> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const path = resolve(cwd, file);
  const report = new ConfigReport();
  const config = await readServerConfig(path, { env, cwd, purpose: 'serve' }, report);
  let raw: unknown = null;
  if (config !== null) raw = JSON.parse(await readFile(path, 'utf8'));

  if (config !== null) {
    const flags = { ...(options.caFile === undefined ? {} : { caFile: resolve(cwd, options.caFile) }), ...(options.caKeyFile === undefined ? {} : { caKeyFile: resolve(cwd, options.caKeyFile) }) };
    for (const definition of signerDefinitions(flags, config, report)) {
      if (options.loadSigners === false) break;
      try {
        const loaded = await loadSigner({ ...definition.load, logger: pino({ level: 'silent' }), env });
        await Promise.resolve(loaded.signer.close()).catch(() => undefined);
      } catch (error) {
        if (!(error instanceof SignerLoadError)) throw error;
        report.add({ path: error.path, message: error.detail, code: error.code });
      }
    }
  }
  const trustFiles: Array<[string, string | undefined, (file: string) => Promise<unknown>]> = [
    ['--ca-bundle', options.caBundleFile, (trustFile) => loadCertificatePool(trustFile, 'roots')],
    ['--int-bundle', options.intBundleFile, (trustFile) => loadCertificatePool(trustFile, 'intermediates')],
    ['--metadata', options.metadataFile, (trustFile) => loadPlatforms(trustFile)],
  ];
  for (const [flag, trustFile, load] of trustFiles) {
    if (trustFile === undefined) continue;
    try {
      await load(resolve(cwd, trustFile));
    } catch (error) {
      report.add({ path: flag, message: error instanceof Error ? error.message : String(error), code: isCodedError(error) ? error.code : 0 });
    }
  }
  return { file: path, problems: report.problems, warnings: report.warnings, counts: countSections(raw) };
}

/** Human form: one `path: message` line per finding, then a summary line. */
export function formatConfigCheck(result: ConfigCheckResult, shownFile: string): string {
  const line = (finding: ConfigWarning): string => (finding.path === '' ? `${shownFile}: ${finding.message}` : describeProblem(finding));
  const lines = [...result.problems.map(line), ...result.warnings.map((finding) => `warning: ${line(finding)}`)];
  const { profiles, authKeys, signers } = result.counts;
  const summary = `${profiles} profile${profiles === 1 ? '' : 's'}, ${authKeys} auth key${authKeys === 1 ? '' : 's'}, ${signers} signer${signers === 1 ? '' : 's'}`;
  const problems = result.problems.length;
  const warnings = result.warnings.length === 0 ? '' : `, ${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'}`;
  lines.push(problems === 0 ? `${shownFile}: OK (${summary}${warnings})` : `${shownFile}: ${problems} problem${problems === 1 ? '' : 's'}${warnings} (${summary})`);
  return `${lines.join('\n')}\n`;
}

interface CheckFlags {
  json?: boolean;
  signers: boolean;
  ca?: string;
  caKey?: string;
  caBundle?: string;
  intBundle?: string;
  metadata?: string;
}

const EXAMPLES = `
Prints one line per problem, "<json path>: <message>", then "warning: …" lines for keys that are
accepted but change nothing (CFSSL keys certsmith does not implement, unknown usages…), then a
summary. The same loaders as serve: serve stops at the first problem, this lists them all. Exit
codes: 0 valid (warnings allowed), 2 problems found, 1 usage error. Secrets are never printed:
auth keys and signer secrets are reported by reference (env:NAME, file:PATH) only.

Examples:
  certsmith config check /etc/certsmith/certsmith.json
  certsmith config check -ca ca.pem -ca-key ca-key.pem -ca-bundle roots.pem cfssl-config.json
  certsmith config check --json config.json | jq .problems
  certsmith config check --no-signers config.json     # do not load signer plugins`;

/** Register `certsmith config check`. */
export function registerConfigCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const config = program
    .command('config')
    .description('configuration file tools')
    .helpOption('-h, --help', 'show help')
    .allowExcessArguments(false);
  const check = config
    .command('check')
    .description('validate a config file as certsmith serve would load it, listing every problem with its JSON path')
    .helpOption('-h, --help', 'show help')
    .argument('<file>', 'config file (CFSSL signing config, optionally with certsmith signers)')
    .option('--json', 'print {"file","valid","problems":[{"path","message","code"}],"warnings":[{"path","message"}]} instead of lines')
    .option('--no-signers', 'do not load signer plugins (only their entries are checked)')
    .option('--ca <file>', 'also check the local signer of serve --ca/--ca-key')
    .option('--ca-key <file>', 'CA private key for --ca')
    .option('--ca-bundle <file>', 'also check a root bundle (serve --ca-bundle)')
    .option('--int-bundle <file>', 'also check an intermediate bundle (serve --int-bundle)')
    .option('--metadata <file>', 'also check a platform metadata file (serve --metadata)')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  acceptGoFlags(check);
  check.action(
    runAction(check, resolved, async (file: string, flags: CheckFlags) => {
      if ((flags.ca === undefined) !== (flags.caKey === undefined)) throw new UsageError('--ca and --ca-key go together');
      const options: ConfigCheckOptions = { env: resolved.env, cwd: resolved.cwd(), loadSigners: flags.signers };
      if (flags.ca !== undefined) options.caFile = flags.ca;
      if (flags.caKey !== undefined) options.caKeyFile = flags.caKey;
      if (flags.caBundle !== undefined) options.caBundleFile = flags.caBundle;
      if (flags.intBundle !== undefined) options.intBundleFile = flags.intBundle;
      if (flags.metadata !== undefined) options.metadataFile = flags.metadata;
      const result = await checkConfigFile(file, options);
      if (flags.json) {
        resolved.stdout(`${goJson({ file: result.file, valid: result.problems.length === 0, problems: result.problems, warnings: result.warnings }, 2)}\n`);
      } else {
        resolved.stdout(formatConfigCheck(result, file));
      }
      if (result.problems.length > 0) resolved.setExitCode(EXIT_FAILED);
    }),
  );
  return config;
}
