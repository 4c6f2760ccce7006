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
import { hash } from 'node:crypto';
import { ErrorCode, LazyCertificate, findPemBlock, readCertificateIndex, readPkcs7Certificates } from '@certsmith/x509-core';
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

/**
 * A snapshot being read. Each PEM body is decoded straight into one buffer sized for the whole
 * text (decoded base64 is at most ¾ of it) and indexed where it lies, so a certificate costs no
 * buffer, copy or list entry of its own: the trust files' ≈1,600 certificates are read by every
 * server at start-up (docs/performance.md#start-up-pass-6c-reading-the-trust-files-2026-11-2627-issue-18-item-7).
 */
class SnapshotWriter {
  readonly #buffer: Buffer;
  /** `#buffer` as a plain Uint8Array: its views are plain too (a Buffer's subarray is a Buffer, made more slowly). */
  readonly #bytes: Uint8Array;
  #used = 0;
  #layout = new Int32Array(64 * LAYOUT_FIELDS);
  #count = 0;

  constructor(textLength: number) {
    this.#buffer = Buffer.allocUnsafeSlow(Math.ceil(textLength / 4) * 3);
    this.#bytes = new Uint8Array(this.#buffer.buffer, this.#buffer.byteOffset, this.#buffer.byteLength);
  }

  /**
   * Decode the body `text.slice(bodyStart, bodyEnd)` (checked base64) and index it: one certificate,
   * or the certificates of a PKCS#7 block. Returns how many certificates it added.
   * @throws the certificate's structure error (the inner certificate's for a PKCS#7 block)
   */
  add(text: string, bodyStart: number, bodyEnd: number): number {
    const start = this.#used;
    const length = this.#buffer.write(text.slice(bodyStart, bodyEnd), start, 'base64');
    const block = this.#bytes.subarray(start, start + length);
    let index: CertificateIndex;
    try {
      index = readCertificateIndex(block);
    } catch (certificateError) {
      let inner: Uint8Array[];
      try {
        inner = readPkcs7Certificates(block);
      } catch {
        throw certificateError;
      }
      // The certificates move to the front of the block, back to back, in order: each lies after
      // the place it moves to, so nothing not yet moved is overwritten.
      for (const certificate of inner) {
        const from = this.#offsetOf(certificate);
        const to = this.#used;
        this.#bytes.copyWithin(to, from, from + certificate.byteLength);
        this.#append(to, certificate.byteLength, readCertificateIndex(this.#bytes.subarray(to, to + certificate.byteLength)));
      }
      return inner.length;
    }
    this.#append(start, length, index);
    return 1;
  }

  /** The snapshot, in buffers of their own size (a structured clone copies a view's whole buffer). */
  finish(): PoolSnapshot {
    const der = this.#bytes.slice(0, this.#used);
    const layout = this.#layout.slice(0, this.#count * LAYOUT_FIELDS);
    const fingerprints = new Uint8Array(this.#count * FINGERPRINT_BYTES);
    for (let i = 0, o = 0; i < this.#count; i++, o += LAYOUT_FIELDS) {
      // One-shot hash: createHash builds a stream object per certificate.
      fingerprints.set(hash('sha256', der.subarray(layout[o]!, layout[o + 1]!), 'buffer'), i * FINGERPRINT_BYTES);
    }
    return { der, layout, fingerprints };
  }

  #offsetOf(view: Uint8Array): number {
    return view.byteOffset - this.#bytes.byteOffset;
  }

  #append(start: number, length: number, index: CertificateIndex): void {
    if ((this.#count + 1) * LAYOUT_FIELDS > this.#layout.length) {
      const grown = new Int32Array(this.#layout.length * 2);
      grown.set(this.#layout);
      this.#layout = grown;
    }
    const layout = this.#layout;
    const at = this.#count * LAYOUT_FIELDS;
    layout[at] = start;
    layout[at + 1] = start + length;
    this.#put(at + 2, index.subjectDer);
    this.#put(at + 4, index.issuerDer);
    this.#put(at + 6, index.subjectKeyId);
    this.#put(at + 8, index.authorityKeyId);
    this.#put(at + 10, index.signature);
    this.#count += 1;
    this.#used = start + length;
  }

  #put(slot: number, view: Uint8Array | null): void {
    const start = view === null ? -1 : this.#offsetOf(view);
    this.#layout[slot] = start;
    this.#layout[slot + 1] = view === null ? -1 : start + view.byteLength;
  }
}

/**
 * Index a PEM bundle's text into `writer`, one block at a time (a generator, so the async reader
 * can yield to the event loop between blocks). Whitespace-only text has none.
 * @throws {BundleFileError} 4003 / 3003 (see {@link poolSnapshotFromPem})
 */
function* indexPemBundle(text: string, kind: PoolKind, writer: SnapshotWriter): Generator<void, void> {
  const parseFailed = kind === 'roots' ? ErrorCode.RootParseFailed : ErrorCode.IntermediatesParseFailed;
  const trimmed = text.trim();
  let position = 0;
  let count = 0;
  while (position < trimmed.length) {
    const location = findPemBlock(trimmed, position);
    if (location === null) break;
    position = location.end;
    try {
      count += writer.add(trimmed, location.bodyStart, location.bodyEnd);
    } catch (error) {
      throw new BundleFileError(parseFailed, undefined, { cause: error });
    }
    yield;
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
  const writer = new SnapshotWriter(text.length);
  for (const _ of indexPemBundle(text, kind, writer));
  return writer.finish();
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
  const writer = new SnapshotWriter(text.length);
  let blocks = 0;
  for (const _ of indexPemBundle(text, kind, writer)) {
    if (++blocks % BLOCKS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return writer.finish();
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
