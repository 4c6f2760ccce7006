/**
 * The config file's `revocation` section (a certsmith extension; CFSSL configures OCSP signing only
 * through flags, lifecycle spec §3.0):
 *
 * ```json
 * { "revocation": {
 *     "ocsp": {
 *       "interval": "96h",
 *       "responders": {
 *         "default": { "plugin": "@certsmith/signer-local", "options": { "certFile": "ocsp.pem", "keyFile": "ocsp-key.pem" } },
 *         "hsm": "ca"
 *       } } } }
 * ```
 *
 * - `ocsp.interval`: validity of the responses certsmith signs (CFSSL's `-interval`, default 96 h);
 * - `ocsp.responders.<label>`: who signs OCSP responses for the CA of that signer label: a delegated
 *   responder — any signer plugin entry, as in `signers` (an HSM key works) — or `"ca"`, the CA
 *   itself. Naming a label also serves `ocspsign` (CFSSL serves it only with `-responder`).
 */
import type { ConfigReport } from '@certsmith/issuer';
import { parseGoDuration } from '@certsmith/issuer';

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
  /** Responders by signer label. */
  responders: Map<string, ResponderDefinition>;
}

/** The empty section (no file, or no `revocation` key). */
export function emptyRevocationSection(): RevocationConfigSection {
  return { responders: new Map() };
}

const SECTION_KEYS: Readonly<Record<string, readonly string[]>> = {
  '': ['ocsp'],
  ocsp: ['interval', 'responders'],
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
    report.problem([], `must be an object with ocsp, got ${typeName(value)}`);
    return section;
  }
  checkKeys(value, SECTION_KEYS['']!, report);

  const ocsp = subsection(value, 'ocsp', report);
  if (ocsp !== undefined) readOcsp(ocsp, dir, section, report.at('ocsp'));

  return section;
}

function readOcsp(ocsp: Record<string, unknown>, dir: string, section: RevocationConfigSection, report: ConfigReport): void {
  if (ocsp['interval'] !== undefined) {
    const ms = parseDurationSetting(ocsp['interval'], 60_000, MAX_VALIDITY_MS);
    if (typeof ms === 'string') report.problem(['interval'], ms);
    else section.ocspIntervalMs = ms;
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
