/**
 * The config file's `revocation` section (a certsmith extension; CFSSL configures revocation only
 * through flags, lifecycle spec §3.0):
 *
 * ```json
 * { "revocation": {
 *     "ocsp": {
 *       "interval": "96h",
 *       "path": "/ocsp",
 *       "nonces": "ignore",
 *       "responders": {
 *         "default": { "plugin": "@certsmith/signer-local", "options": { "certFile": "ocsp.pem", "keyFile": "ocsp-key.pem" } },
 *         "hsm": "ca"
 *       }
 *     },
 *     "crl": { "validity": "168h" },
 *     "revoke": { "auth_key": "revoke", "client_cn": "^ops-" },
 *     "changes": { "pollInterval": "5s" } } }
 * ```
 *
 * - `ocsp.interval`: validity of the responses certsmith signs (CFSSL's `-interval`, default 96 h);
 * - `ocsp.path`: mount the OCSP responder inside `serve` at this path (default: not mounted);
 * - `ocsp.nonces`: `ignore` (CFSSL) or `sign` (echo RFC 8954 nonces, a signature per such request);
 * - `ocsp.responders.<label>`: who signs OCSP responses for the CA of that signer label: a delegated
 *   responder — any signer plugin entry, as in `signers` (an HSM key works) — or `"ca"`, the CA
 *   itself. Naming a label also serves `ocspsign` (CFSSL serves it only with `-responder`);
 * - `crl.validity`: nextUpdate − thisUpdate of the CRLs the server signs (CFSSL `/crl`'s default 168 h);
 * - `revoke.auth_key`: the name of an `auth_keys` entry: `revoke` (and `ocspsign`) then take only
 *   authenticated requests (`{"token", "request"}`, as `authsign`);
 * - `revoke.client_cn`: `revoke` (and `ocspsign`) need a verified client certificate whose subject
 *   CN matches this Go regular expression;
 * - `changes.pollInterval`: how often the server looks for revocations made elsewhere (other
 *   instances, `certsmith revoke`, `cfssl revoke`) besides PostgreSQL's notifications; default 5 s.
 */
import type { ConfigReport } from '@certsmith/issuer';
import { GoRegexpSyntaxError, compileGoRegexp, parseGoDuration } from '@certsmith/issuer';

/** Who signs OCSP responses for one label's CA. */
export type ResponderDefinition =
  /** The CA itself, through its signer. */
  | { kind: 'ca'; where: string }
  /** A delegated responder: a signer plugin entry (as in `signers`). */
  | { kind: 'plugin'; plugin: string; options: unknown; configDir: string; where: string }
  /** A delegated responder from PEM files (CFSSL's `-responder` / `-responder-key`). */
  | { kind: 'files'; certFile: string; keyFile: string; where: string };

/** The `revocation` section, checked (absent keys stay absent: flags and defaults fill them). */
export interface RevocationConfigSection {
  ocspIntervalMs?: number;
  ocspPath?: string;
  nonces?: 'ignore' | 'sign';
  /** Responders by signer label. */
  responders: Map<string, ResponderDefinition>;
  crlValidityMs?: number;
  /** Name of the `auth_keys` entry revoke requests are authenticated with. */
  revokeAuthKey?: string;
  /** Go regular expression the client certificate CN of a revoke request must match. */
  revokeClientCn?: string;
  changePollIntervalMs?: number;
}

/** The empty section (no file, or no `revocation` key). */
export function emptyRevocationSection(): RevocationConfigSection {
  return { responders: new Map() };
}

const SECTION_KEYS: Readonly<Record<string, readonly string[]>> = {
  '': ['ocsp', 'crl', 'revoke', 'changes'],
  ocsp: ['interval', 'path', 'nonces', 'responders'],
  crl: ['validity'],
  revoke: ['auth_key', 'client_cn'],
  changes: ['pollInterval'],
};

/** Longest validity of a signed OCSP response or CRL: 366 days (8784h). */
export const MAX_VALIDITY_MS = 366 * 86_400_000;

function typeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A Go duration (`96h`, `90m`, `1h30m`) in whole milliseconds within `[minMs, maxMs]`, or the reason
 * it is not one.
 */
export function parseDurationSetting(value: unknown, minMs: number, maxMs: number): number | string {
  if (typeof value !== 'string') return `must be a Go duration such as "96h" or "90m", got ${typeName(value)}`;
  let ms: number;
  try {
    ms = parseGoDuration(value);
  } catch {
    return `must be a Go duration such as "96h" or "90m", got ${JSON.stringify(value)}`;
  }
  if (!Number.isFinite(ms) || ms < minMs || ms > maxMs) return `must be from ${describeMs(minMs)} to ${describeMs(maxMs)}, got ${JSON.stringify(value)}`;
  return Math.round(ms);
}

function describeMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** Where the OCSP responder may be mounted: an absolute path, not inside the API's own paths. */
export function checkOcspPath(path: string): string | null {
  if (!path.startsWith('/')) return `must start with "/", got ${JSON.stringify(path)}`;
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(path) || path.includes('//')) return `must be a plain URL path such as "/ocsp", got ${JSON.stringify(path)}`;
  const trimmed = path.replace(/\/+$/, '') || '/';
  for (const taken of ['/api', '/metrics']) {
    if (trimmed === '/' || trimmed === taken || trimmed.startsWith(`${taken}/`)) {
      return `${JSON.stringify(path)} would hide the server's own paths (/api/…, /metrics): use a path of its own such as "/ocsp"`;
    }
  }
  return null;
}

/** Check a `--revoke-client-cn` / `revoke.client_cn` pattern; the reason when Go would refuse it. */
export function checkClientCnPattern(pattern: string): string | null {
  try {
    compileGoRegexp(pattern);
    return null;
  } catch (error) {
    if (error instanceof GoRegexpSyntaxError) return error.message;
    return (error as Error).message;
  }
}

function checkKeys(section: Record<string, unknown>, allowed: readonly string[], report: ConfigReport): void {
  for (const key of Object.keys(section)) {
    if (!allowed.includes(key)) report.problem([key], `unknown key (allowed: ${allowed.join(', ')})`);
  }
}

/** An object member, or `undefined`; a non-object where one is needed is reported. */
function subsection(parent: Record<string, unknown>, key: string, report: ConfigReport): Record<string, unknown> | undefined {
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    report.problem([key], `must be an object, got ${typeName(value)}`);
    return undefined;
  }
  checkKeys(value, SECTION_KEYS[key]!, report.at(key));
  return value;
}

/**
 * Read the `revocation` value of a config file (`dir` is the file's folder, for relative paths);
 * problems go to `report` (its view at `revocation`).
 */
export function readRevocationSection(value: unknown, dir: string, report: ConfigReport): RevocationConfigSection {
  const section = emptyRevocationSection();
  if (value === undefined || value === null) return section;
  if (!isRecord(value)) {
    report.problem([], `must be an object with ocsp, crl, revoke and changes, got ${typeName(value)}`);
    return section;
  }
  checkKeys(value, SECTION_KEYS['']!, report);

  const ocsp = subsection(value, 'ocsp', report);
  if (ocsp !== undefined) readOcsp(ocsp, dir, section, report.at('ocsp'));

  const crl = subsection(value, 'crl', report);
  if (crl?.['validity'] !== undefined) {
    const ms = parseDurationSetting(crl['validity'], 60_000, MAX_VALIDITY_MS);
    if (typeof ms === 'string') report.problem(['crl', 'validity'], ms);
    else section.crlValidityMs = ms;
  }

  const revoke = subsection(value, 'revoke', report);
  if (revoke !== undefined) {
    const authKey = revoke['auth_key'];
    if (authKey !== undefined) {
      if (typeof authKey !== 'string' || authKey === '') report.problem(['revoke', 'auth_key'], `must name an entry of auth_keys, got ${JSON.stringify(authKey)}`);
      else section.revokeAuthKey = authKey;
    }
    const clientCn = revoke['client_cn'];
    if (clientCn !== undefined) {
      const problem = typeof clientCn === 'string' ? checkClientCnPattern(clientCn) : `must be a regular expression string, got ${typeName(clientCn)}`;
      if (problem !== null) report.problem(['revoke', 'client_cn'], problem);
      else section.revokeClientCn = clientCn as string;
    }
  }

  const changes = subsection(value, 'changes', report);
  if (changes?.['pollInterval'] !== undefined) {
    const ms = parseDurationSetting(changes['pollInterval'], 100, 3_600_000);
    if (typeof ms === 'string') report.problem(['changes', 'pollInterval'], ms);
    else section.changePollIntervalMs = ms;
  }
  return section;
}

function readOcsp(ocsp: Record<string, unknown>, dir: string, section: RevocationConfigSection, report: ConfigReport): void {
  if (ocsp['interval'] !== undefined) {
    const ms = parseDurationSetting(ocsp['interval'], 60_000, MAX_VALIDITY_MS);
    if (typeof ms === 'string') report.problem(['interval'], ms);
    else section.ocspIntervalMs = ms;
  }
  if (ocsp['path'] !== undefined) {
    const path = ocsp['path'];
    const problem = typeof path === 'string' ? checkOcspPath(path) : `must be a URL path such as "/ocsp", got ${typeName(path)}`;
    if (problem !== null) report.problem(['path'], problem);
    else section.ocspPath = path as string;
  }
  if (ocsp['nonces'] !== undefined) {
    if (ocsp['nonces'] !== 'ignore' && ocsp['nonces'] !== 'sign') report.problem(['nonces'], `must be "ignore" or "sign", got ${JSON.stringify(ocsp['nonces'])}`);
    else section.nonces = ocsp['nonces'];
  }
  const responders = ocsp['responders'];
  if (responders === undefined || responders === null) return;
  if (!isRecord(responders)) {
    report.problem(['responders'], `must be an object of signer label → responder, got ${typeName(responders)}`);
    return;
  }
  for (const [label, entry] of Object.entries(responders)) {
    const where = `revocation.ocsp.responders.${label}`;
    const at = report.at('responders', label);
    if (entry === 'ca') {
      section.responders.set(label, { kind: 'ca', where });
      continue;
    }
    let plugin: unknown;
    let options: unknown;
    if (Array.isArray(entry) && entry.length >= 1 && entry.length <= 2) [plugin, options] = entry;
    else if (isRecord(entry)) {
      for (const key of Object.keys(entry)) if (key !== 'plugin' && key !== 'options') at.problem([key], 'unknown key (allowed: plugin, options)');
      plugin = entry['plugin'];
      options = entry['options'];
    } else {
      at.problem([], `must be "ca", {"plugin", "options"} or [plugin, options], got ${typeName(entry)}`);
      continue;
    }
    if (typeof plugin !== 'string' || plugin.trim() === '') {
      at.problem([Array.isArray(entry) ? 0 : 'plugin'], `must be a non-empty string (a package name or a path), got ${typeName(plugin)}`);
      continue;
    }
    if (options !== undefined && options !== null && !isRecord(options)) {
      at.problem([Array.isArray(entry) ? 1 : 'options'], `must be an object, got ${typeName(options)}`);
      continue;
    }
    // Resolved as `signers` plugins are: against the config folder (`dir`), then certsmith's own.
    section.responders.set(label, { kind: 'plugin', plugin, options: options ?? {}, configDir: dir, where });
  }
}
