/**
 * Loading platform metadata in the cfssl_trust format (`ubiquity/ubiquity_platform.go:LoadPlatforms`,
 * `Platform.ParseAndLoad`; behaviour doc 2.11), with CFSSL's exact failure messages, plus the
 * embedded default used when no metadata file is configured.
 */
import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { posix as path } from 'node:path';
import { rootCertificates } from 'node:tls';
import { CertsmithError, ErrorCode, findPemBlock, readCertificateIndex, readPkcs7Certificates } from '@certsmith/x509-core';
import { ParsedKeystoreBlocks } from './parsed-keystore-blocks.js';
import { platformHashUbiquity, platformKeyAlgoUbiquity, type Platform } from './platform.js';

/**
 * Platform metadata could not be loaded. Not a CFSSL-coded error (code 0, like the plain Go error
 * CFSSL returns): it aborts server startup, and the message is CFSSL's text.
 */
export class PlatformMetadataError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    // CFSSL returns these as plain (uncoded) errors and refuses to start. certsmith checks the
    // metadata at start-up too, and codes it 4003 (root trust data unparsable) so that a failure
    // that still reaches a request is a 400 with a code, never a 500.
    super(ErrorCode.RootParseFailed, message, options);
  }
}

/** One metadata entry as decoded from JSON, before `ParseAndLoad`. */
interface RawPlatform {
  name: string;
  weight: number;
  hashAlgo: string;
  keyAlgo: string;
  keystore: string;
}

/** Go's os error texts for the errno codes a file read meets. */
function goFileError(op: 'open' | 'read', file: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const texts: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EISDIR: 'is a directory',
    ENOTDIR: 'not a directory',
    ELOOP: 'too many levels of symbolic links',
  };
  const text = (code && texts[code]) ?? (error instanceof Error ? error.message : String(error));
  // Go opens fine and fails on read for a directory.
  return `${code === 'EISDIR' ? 'read' : op} ${file}: ${text}`;
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'boolean') return 'bool';
  return typeof value; // string | number
}

/** Go's json syntax error texts for the cases that matter; others keep the JS parser's detail. */
function goSyntaxError(text: string, error: unknown): string {
  if (text.trim() === '' || /end of (JSON )?input/i.test(String((error as Error).message))) {
    return 'unexpected end of JSON input';
  }
  const match = /position (\d+)/.exec(String((error as Error).message));
  if (match) {
    const char = text[Number(match[1])];
    if (char !== undefined) return `invalid character '${char}' looking for beginning of value`;
  }
  return (error as Error).message;
}

/**
 * Decode the metadata JSON the way Go's `json.Unmarshal` fills `[]ubiquity.Platform`: keys match
 * case-insensitively, unknown keys (e.g. `hash_algo_expiry`) are ignored, `null` leaves the zero
 * value, and the first type mismatch is reported in Go's words.
 */
export function decodePlatformMetadata(text: string): RawPlatform[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new PlatformMetadataError(`platform metadata failed to parse: ${goSyntaxError(text, error)}`, {
      cause: error,
    });
  }
  if (value === null) return [];
  if (!Array.isArray(value)) {
    throw new PlatformMetadataError(
      `platform metadata failed to parse: json: cannot unmarshal ${jsonKind(value)} into Go value of type []ubiquity.Platform`,
    );
  }
  const fields: Record<string, { field: keyof RawPlatform; type: 'string' | 'int' }> = {
    name: { field: 'name', type: 'string' },
    weight: { field: 'weight', type: 'int' },
    hash_algo: { field: 'hashAlgo', type: 'string' },
    key_algo: { field: 'keyAlgo', type: 'string' },
    keystore: { field: 'keystore', type: 'string' },
  };
  let firstError: string | null = null;
  const platforms: RawPlatform[] = [];
  for (const entry of value) {
    const raw: RawPlatform = { name: '', weight: 0, hashAlgo: '', keyAlgo: '', keystore: '' };
    if (entry === null) {
      platforms.push(raw);
      continue;
    }
    if (typeof entry !== 'object' || Array.isArray(entry)) {
      firstError ??= `json: cannot unmarshal ${jsonKind(entry)} into Go value of type ubiquity.Platform`;
      platforms.push(raw);
      continue;
    }
    for (const [key, fieldValue] of Object.entries(entry as Record<string, unknown>)) {
      const spec = fields[key.toLowerCase()];
      if (!spec || fieldValue === null) continue;
      const jsonKey = key.toLowerCase();
      if (spec.type === 'string') {
        if (typeof fieldValue === 'string') (raw[spec.field] as string) = fieldValue;
        else firstError ??= `json: cannot unmarshal ${jsonKind(fieldValue)} into Go struct field Platform.${jsonKey} of type string`;
      } else if (typeof fieldValue === 'number' && Number.isSafeInteger(fieldValue)) {
        raw.weight = fieldValue;
      } else {
        const kind = typeof fieldValue === 'number' ? `number ${fieldValue}` : jsonKind(fieldValue);
        firstError ??= `json: cannot unmarshal ${kind} into Go struct field Platform.${jsonKey} of type int`;
      }
    }
    platforms.push(raw);
  }
  if (firstError !== null) throw new PlatformMetadataError(`platform metadata failed to parse: ${firstError}`);
  return platforms;
}

/**
 * SPKI hashes of every certificate a keystore PEM file holds, best effort: blocks that do not parse
 * as a certificate or a PKCS#7 bundle are skipped (`ParseOneCertificateFromPEM` in a loop).
 *
 * @param parsed what blocks already parsed to, shared across the keystores of one metadata file
 *   (see {@link ParsedKeystoreBlocks}); a repeated block is not parsed again. Same text, same
 *   answer, so the result does not change.
 */
export function keystoreFromPem(text: string, parsed: ParsedKeystoreBlocks = new ParsedKeystoreBlocks()): Set<string> {
  const keystore = new Set<string>();
  // A body parsed before was found valid base64 then: its check is skipped. The block found is the
  // one findPemBlock asked about last, so `known` holds its hashes (a second lookup cost ≈1 µs).
  let known: readonly string[] | undefined;
  const seenBefore = (body: string): boolean => (known = parsed.get(body)) !== undefined;
  let offset = 0;
  for (;;) {
    known = undefined;
    const location = findPemBlock(text, offset, seenBefore);
    if (location === null) break;
    offset = location.end;
    let hashes: readonly string[] | undefined = known;
    if (hashes === undefined) {
      const body = text.slice(location.bodyStart, location.bodyEnd);
      // Not copied out of Buffer's pool (as decodePemBody does): only the hashes are kept.
      const decoded = Buffer.from(body, 'base64');
      hashes = blockSpkiHashes(new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength));
      parsed.set(body, hashes);
    }
    for (const hash of hashes) keystore.add(hash);
  }
  return keystore;
}

/** Lower-case hex SHA-1 of a certificate's SPKI element (how CFSSL's keystores match roots). */
function spkiHash(der: Uint8Array): string {
  return hash('sha1', readCertificateIndex(der).spki, 'hex');
}

/**
 * SPKI hashes of one PEM block's certificate or PKCS#7 certificates; `[]` when it is neither. Only
 * the structure is read, up to the SPKI the hash needs (`readCertificateIndex`, a quarter of a
 * full parse): the keystores are read by every server at start-up.
 */
function blockSpkiHashes(bytes: Uint8Array): string[] {
  try {
    return [spkiHash(bytes)];
  } catch {
    try {
      return readPkcs7Certificates(bytes).map(spkiHash);
    } catch {
      return [];
    }
  }
}

/** Go's `%v` of a `ubiquity.Platform` value, as embedded in the finalize error. */
function formatGoPlatform(raw: RawPlatform, keystoreFile: string, keystore: ReadonlySet<string>, h: number, k: number): string {
  const map = `map[${[...keystore].sort().map((key) => `${key}:true`).join(' ')}]`;
  return `{${raw.name} ${raw.weight} ${raw.hashAlgo} ${raw.keyAlgo} ${keystoreFile} ${map} ${h} ${k}}`;
}

/** Options of {@link loadPlatforms}. */
export interface LoadPlatformsOptions {
  /**
   * Reads a file (the metadata and each keystore); injectable for tests. Default `fs.readFile`: the
   * metadata as UTF-8 text, the keystores one character per byte (`latin1`).
   */
  readTextFile?: (file: string) => Promise<string>;
}

/**
 * Load the platforms of a cfssl_trust metadata file, in file order. Each `keystore` is joined onto
 * the metadata file's folder with a plain path join (so even absolute paths become relative, as in
 * CFSSL). Keystores read once per distinct path.
 *
 * @throws {PlatformMetadataError} `platform metadata failed to load: …` (unreadable file),
 *   `platform metadata failed to parse: …` (bad JSON), `fail to finalize the parsing of platform
 *   metadata: {…}` (unreadable keystore, unknown hash_algo/key_algo) — CFSSL's texts.
 */
export async function loadPlatforms(metadataFile: string, options: LoadPlatformsOptions = {}): Promise<Platform[]> {
  // Read whole, then decoded once (see chain-builder's readBundleFile).
  const read = options.readTextFile ?? (async (file: string) => (await readFile(file)).toString('utf8'));
  // Keystores one character per byte, as Go's pem.Decode reads bytes: PEM's structure and base64
  // are ASCII, which both decodings keep as they are (UTF-8 never folds an ASCII byte into a
  // replacement character), so the same blocks are found. As UTF-8, the friendly names in
  // cfssl_trust's nss.pem and windows.pem made those files two-byte strings: twice the memory, and
  // slower to search and decode (docs/performance.md#start-up-pass-6c-reading-the-trust-files-2026-11-2627-issue-18-item-7).
  const readKeystore = options.readTextFile ?? (async (file: string) => (await readFile(file)).toString('latin1'));
  let text: string;
  try {
    text = await read(metadataFile);
  } catch (error) {
    throw new PlatformMetadataError(`platform metadata failed to load: ${goFileError('open', metadataFile, error)}`, {
      cause: error,
    });
  }
  const raws = decodePlatformMetadata(text);
  const folder = path.dirname(metadataFile);
  const keystoreFiles = raws.map((raw) => (raw.keystore === '' ? '' : path.join(folder, raw.keystore)));
  const parsedBlocks = new ParsedKeystoreBlocks();
  // Every keystore is read at once, each path once, and parsed as it arrives; they are awaited in
  // file order below, so the platform reported is the first one that fails, as before.
  const keystores = new Map<string, Promise<Set<string>>>();
  for (const keystoreFile of keystoreFiles) {
    if (keystoreFile === '' || keystores.has(keystoreFile)) continue;
    const pending = readKeystore(keystoreFile).then((text) => keystoreFromPem(text, parsedBlocks));
    // Its failure is reported where it is awaited, or not at all when an earlier platform fails.
    pending.catch(() => undefined);
    keystores.set(keystoreFile, pending);
  }
  const platforms: Platform[] = [];
  for (const [index, raw] of raws.entries()) {
    const keystoreFile = keystoreFiles[index]!;
    const hashUbiquity = platformHashUbiquity(raw.hashAlgo);
    const keyAlgoUbiquity = platformKeyAlgoUbiquity(raw.keyAlgo);
    let keystore = new Set<string>();
    if (keystoreFile !== '') {
      try {
        keystore = await keystores.get(keystoreFile)!;
      } catch (error) {
        const detail = formatGoPlatform(raw, keystoreFile, new Set(), hashUbiquity, keyAlgoUbiquity);
        throw new PlatformMetadataError(`fail to finalize the parsing of platform metadata: ${detail}`, { cause: error });
      }
    }
    if (hashUbiquity <= 0 || keyAlgoUbiquity <= 0) {
      const detail = formatGoPlatform(raw, keystoreFile, keystore, hashUbiquity, keyAlgoUbiquity);
      throw new PlatformMetadataError(`fail to finalize the parsing of platform metadata: ${detail}`);
    }
    platforms.push({
      name: raw.name,
      weight: raw.weight,
      hashAlgo: raw.hashAlgo,
      keyAlgo: raw.keyAlgo,
      keystoreFile,
      hashUbiquity,
      keyAlgoUbiquity,
      keystore,
    });
  }
  return platforms;
}

/** Options of {@link defaultPlatforms}. */
export interface DefaultPlatformsOptions {
  /** Platform name. Default `System`. */
  name?: string;
  /** Extra PEM bundles to merge when readable. Default: the Debian/Ubuntu OS store. */
  extraStoreFiles?: readonly string[];
}

/**
 * The embedded default when no metadata is configured: ONE platform trusting Node's bundled roots
 * (`tls.rootCertificates`) plus the OS store if present, requiring SHA-2/ECDSA256 (modern client).
 * Weight 1: with a single platform any trusted chain wins the ubiquity filter the same way.
 */
export async function defaultPlatforms(options: DefaultPlatformsOptions = {}): Promise<Platform[]> {
  const parsedBlocks = new ParsedKeystoreBlocks();
  const keystore = keystoreFromPem(rootCertificates.join('\n'), parsedBlocks);
  for (const file of options.extraStoreFiles ?? ['/etc/ssl/certs/ca-certificates.crt']) {
    try {
      for (const hash of keystoreFromPem(await readFile(file, 'utf8'), parsedBlocks)) keystore.add(hash);
    } catch {
      // An absent OS store is normal (containers, macOS); Node's roots remain.
    }
  }
  return [
    {
      name: options.name ?? 'System',
      weight: 1,
      hashAlgo: 'SHA2',
      keyAlgo: 'ECDSA256',
      keystoreFile: '',
      hashUbiquity: 70,
      keyAlgoUbiquity: 70,
      keystore,
    },
  ];
}
