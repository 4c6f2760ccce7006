/**
 * A trust pool as plain data: every certificate's DER back to back in one byte array, and the
 * offsets of the fields pools index by in an `Int32Array`. One thread reads and indexes a bundle
 * file once; every worker thread builds its {@link CertificatePool} from the snapshot (a structured
 * clone of two typed arrays) without reading or parsing the file again — the certificates are
 * {@link LazyCertificate}s over views of the snapshot's bytes, fully parsed on first use.
 *
 * Reading checks what CFSSL's bundle loading checks of the file — CFSSL's PEM rules
 * (`helpers.ParseCertificatesPEM`: blocks of any label, PKCS#7 blocks, nothing but whitespace after
 * the last block) and each certificate's structure — but not the contents a full parse decodes
 * (names, times, keys, extensions); {@link snapshotCertificates} lets a caller run the full parse
 * later, off the start-up path.
 */
import { createHash } from 'node:crypto';
import { ErrorCode, LazyCertificate, decodePemBlock, readCertificateIndex, readPkcs7Certificates } from '@certsmith/x509-core';
import type { CertificateIndex } from '@certsmith/x509-core';
import { CertificatePool, rememberFingerprint, type CertificatePoolOptions } from './certificate-pool.js';
import { BundleFileError, readBundleFile, type PoolKind } from './load-pool.js';

/** See the module comment. */
export interface PoolSnapshot {
  /** Every certificate's DER, back to back, in file order (duplicates included). */
  readonly der: Uint8Array;
  /**
   * {@link LAYOUT_FIELDS} offsets into `der` per certificate: the certificate, subject, issuer,
   * subject key id, authority key id and signature, each as `[start, end)`; `-1, -1` for an absent
   * key identifier.
   */
  readonly layout: Int32Array;
  /** SHA-256 of each certificate's DER, 32 bytes per certificate (the pools' identity, computed once). */
  readonly fingerprints: Uint8Array;
}

/** Int32s per certificate in {@link PoolSnapshot.layout}. */
const LAYOUT_FIELDS = 12;

/** Bytes per certificate in {@link PoolSnapshot.fingerprints} (SHA-256). */
const FINGERPRINT_BYTES = 32;

interface IndexedCertificate {
  der: Uint8Array;
  index: CertificateIndex;
}

function indexCertificateOrPkcs7(der: Uint8Array): IndexedCertificate[] {
  try {
    return [{ der, index: readCertificateIndex(der) }];
  } catch (certificateError) {
    let inner: Uint8Array[];
    try {
      inner = readPkcs7Certificates(der);
    } catch {
      throw certificateError;
    }
    return inner.map((cert) => ({ der: cert, index: readCertificateIndex(cert) }));
  }
}

/** Offset of `view` inside `der`, which it is a view of. */
const offsetIn = (der: Uint8Array, view: Uint8Array): number => view.byteOffset - der.byteOffset;

function encode(certificates: readonly IndexedCertificate[]): PoolSnapshot {
  let total = 0;
  for (const { der } of certificates) total += der.byteLength;
  const bytes = new Uint8Array(total);
  const layout = new Int32Array(certificates.length * LAYOUT_FIELDS);
  const fingerprints = new Uint8Array(certificates.length * FINGERPRINT_BYTES);
  let position = 0;
  certificates.forEach(({ der, index }, i) => {
    bytes.set(der, position);
    fingerprints.set(createHash('sha256').update(der).digest(), i * FINGERPRINT_BYTES);
    const put = (slot: number, view: Uint8Array | null): void => {
      layout[i * LAYOUT_FIELDS + slot] = view === null ? -1 : position + offsetIn(der, view);
      layout[i * LAYOUT_FIELDS + slot + 1] = view === null ? -1 : position + offsetIn(der, view) + view.byteLength;
    };
    layout[i * LAYOUT_FIELDS] = position;
    layout[i * LAYOUT_FIELDS + 1] = position + der.byteLength;
    put(2, index.subjectDer);
    put(4, index.issuerDer);
    put(6, index.subjectKeyId);
    put(8, index.authorityKeyId);
    put(10, index.signature);
    position += der.byteLength;
  });
  return { der: bytes, layout, fingerprints };
}

/**
 * The certificates of a PEM bundle's text, indexed one block at a time (a generator, so the async
 * reader can yield to the event loop between blocks). Whitespace-only text has none.
 * @throws {BundleFileError} 4003 / 3003 (see {@link poolSnapshotFromPem})
 */
function* indexPemBundle(text: string, kind: PoolKind): Generator<IndexedCertificate[], void> {
  const parseFailed = kind === 'roots' ? ErrorCode.RootParseFailed : ErrorCode.IntermediatesParseFailed;
  const trimmed = text.trim();
  let position = 0;
  let count = 0;
  while (position < trimmed.length) {
    const match = decodePemBlock(trimmed, position);
    if (match === null) break;
    position = match.end;
    let block: IndexedCertificate[];
    try {
      block = indexCertificateOrPkcs7(match.block.bytes);
    } catch (error) {
      throw new BundleFileError(parseFailed, undefined, { cause: error });
    }
    count += block.length;
    yield block;
  }
  if (trimmed !== '' && (position < trimmed.length || count === 0)) throw new BundleFileError(parseFailed);
}

/**
 * Index a PEM bundle's text (CFSSL's PEM rules, see the module comment). Whitespace-only text is an
 * empty pool, as CFSSL accepts an empty-but-present file.
 * @throws {BundleFileError} 4003 / 3003 when a block is neither a certificate nor PKCS#7, a
 * certificate's structure is malformed, text follows the last block, or there is no block at all
 */
export function poolSnapshotFromPem(text: string, kind: PoolKind): PoolSnapshot {
  const certificates: IndexedCertificate[] = [];
  for (const block of indexPemBundle(text, kind)) certificates.push(...block);
  return encode(certificates);
}

/** Blocks indexed between two yields of {@link readPoolSnapshot} (≈2 ms). */
const BLOCKS_PER_TURN = 64;

/**
 * Read and index a PEM bundle file (`--ca-bundle`, `--int-bundle`), yielding to the event loop
 * every few milliseconds: at start-up the main thread reads the files while the worker threads
 * start, and their start-up handshakes are answered by its event loop.
 * @throws {BundleFileError} 4001/3001 (read, Go's file error text), 4003/3003 (see {@link poolSnapshotFromPem})
 */
export async function readPoolSnapshot(file: string, kind: PoolKind): Promise<PoolSnapshot> {
  const text = await readBundleFile(file, kind);
  const certificates: IndexedCertificate[] = [];
  let blocks = 0;
  for (const block of indexPemBundle(text, kind)) {
    certificates.push(...block);
    if (++blocks % BLOCKS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return encode(certificates);
}

/** The snapshot's certificates, in file order: lazy certificates over views of its bytes. */
export function snapshotCertificates(snapshot: PoolSnapshot): LazyCertificate[] {
  const { der: bytes, layout, fingerprints } = snapshot;
  const view = (start: number, end: number): Uint8Array => bytes.subarray(start, end);
  const optional = (start: number, end: number): Uint8Array | null => (start < 0 ? null : bytes.subarray(start, end));
  const hashes = Buffer.from(fingerprints.buffer, fingerprints.byteOffset, fingerprints.byteLength);
  const certificates: LazyCertificate[] = [];
  for (let i = 0, o = 0; o + LAYOUT_FIELDS <= layout.length; i++, o += LAYOUT_FIELDS) {
    const certificate = LazyCertificate.fromIndex(view(layout[o]!, layout[o + 1]!), {
      subjectDer: view(layout[o + 2]!, layout[o + 3]!),
      issuerDer: view(layout[o + 4]!, layout[o + 5]!),
      subjectKeyId: optional(layout[o + 6]!, layout[o + 7]!),
      authorityKeyId: optional(layout[o + 8]!, layout[o + 9]!),
      signature: view(layout[o + 10]!, layout[o + 11]!),
    });
    rememberFingerprint(certificate, hashes.toString('base64', i * FINGERPRINT_BYTES, (i + 1) * FINGERPRINT_BYTES));
    certificates.push(certificate);
  }
  return certificates;
}

/** A new pool of the snapshot's certificates (duplicates collapse, as in {@link loadCertificatePool}). */
export function poolFromSnapshot(snapshot: PoolSnapshot, options: CertificatePoolOptions = {}): CertificatePool {
  return new CertificatePool(snapshotCertificates(snapshot), options);
}
