/**
 * X.509 v2 CRLs (RFC 5280 5), one per issuer, signed through the signer contract.
 *
 * Where CFSSL (Go's deprecated `CreateCRL`, lifecycle spec §4) is weak, this does better:
 * - the issuer Name is the CA certificate's subject copied byte for byte (Go re-encodes it, so a
 *   UTF8String subject became a PrintableString issuer, a plausible cause of cfssl #1122);
 * - a CRL Number (RFC 5280 5.2.3, mandatory) — supplied by the caller, from the store, so every
 *   instance agrees and it only grows;
 * - a reasonCode entry extension (RFC 5280 5.3.1) for every reason but unspecified, which the RFC
 *   says to leave out; entries revoked with removeFromCRL are not listed (that code only has a
 *   meaning in delta CRLs: the certificate is no longer on hold);
 * - the Authority Key Identifier even when the CA has no SKI (computed, RFC 5280 method 1).
 *
 * Entries are encoded one at a time straight into a growing buffer from any (async) iterable — a
 * store cursor, say — so memory is the encoded CRL and nothing else (see `tools/bench/revocation`).
 */
import { derConstructed, derExplicit, derInteger, derOctetString, derOid, derSequence, Tag } from '@certsmith/x509-core';

import { DerSink, tlvSize, writeHeaderAt } from './der-sink.js';
import { RevocationRequestError } from './errors.js';
import { RevocationReason } from './revocation-reason.js';
import type { RevocationSigner } from './revocation-signer.js';
import type { SerialNumber } from './serial-number.js';
import { integerContent, serialToBigInt } from './serial-number.js';
import { crlTime, crlTimeSize, wholeSeconds, writeCrlTime } from './time-encoding.js';

/** One revoked certificate to list. */
export interface RevokedCertificate {
  /** Serial as a bigint or CFSSL's decimal text (a store `CertificateRecord` is a valid entry). */
  serial: SerialNumber;
  /** When it was revoked (whole seconds are written); a row without one is refused. */
  revokedAt: Date | null;
  /** RFC 5280 CRLReason code; absent or 0 writes no reason extension. */
  reason?: number;
}

/** Options of {@link buildCrl}. */
export interface CrlOptions {
  /** The CA: its certificate gives the issuer Name and AKI, its key signs. */
  issuer: RevocationSigner;
  /** CRL Number (RFC 5280 5.2.3): non-negative, at most 20 octets; must grow with every CRL of this issuer. */
  crlNumber: bigint;
  /** thisUpdate; default now. Milliseconds are dropped. */
  thisUpdate?: Date;
  /** nextUpdate: not before thisUpdate. */
  nextUpdate: Date;
  /** The revoked certificates, in the order they are to be listed. */
  revoked: Iterable<RevokedCertificate> | AsyncIterable<RevokedCertificate>;
}

/** A signed CRL. */
export interface Crl {
  /** The CRL DER (serve as `application/pkix-crl`). */
  der: Uint8Array;
  crlNumber: bigint;
  thisUpdate: Date;
  nextUpdate: Date;
  /** Number of entries listed. */
  entryCount: number;
  /** The issuer's key identifier, lower-case hex (the AKI of the CRL and of the certificates it covers). */
  issuerKeyId: string;
}

const OID_REASON_CODE = '2.5.29.21';
const OID_AUTHORITY_KEY_ID = '2.5.29.35';
const OID_CRL_NUMBER = '2.5.29.20';
const VERSION_2 = derInteger(1);
const MAX_CRL_NUMBER = (1n << 159n) - 1n;

/** `crlEntryExtensions` holding only a reasonCode, pre-encoded per code. */
const REASON_EXTENSIONS = new Map<number, Uint8Array>();
for (const code of Object.values(RevocationReason)) {
  if (code === RevocationReason.unspecified) continue;
  const enumerated = Uint8Array.of(0x0a, 1, code);
  REASON_EXTENSIONS.set(code, derSequence(derSequence(derOid(OID_REASON_CODE), derOctetString(enumerated))));
}

function checkOptions(options: CrlOptions, thisUpdate: Date): void {
  if (typeof options.crlNumber !== 'bigint' || options.crlNumber < 0n || options.crlNumber > MAX_CRL_NUMBER) {
    throw new RevocationRequestError(`crlNumber must be an integer from 0 to 2^159-1 (RFC 5280 5.2.3), got ${String(options.crlNumber)}`);
  }
  if (!(options.nextUpdate instanceof Date) || Number.isNaN(options.nextUpdate.getTime())) {
    throw new RevocationRequestError('nextUpdate must be a valid date');
  }
  if (options.nextUpdate.getTime() < thisUpdate.getTime()) {
    throw new RevocationRequestError(
      `nextUpdate (${options.nextUpdate.toISOString()}) must not be before thisUpdate (${thisUpdate.toISOString()})`,
    );
  }
}

/** Append one RevokedCertificate SEQUENCE to `sink`. */
function writeEntry(sink: DerSink, entry: RevokedCertificate, index: number): boolean {
  const reason = entry.reason ?? RevocationReason.unspecified;
  if (reason === RevocationReason.removeFromCRL) return false;
  let extensions: Uint8Array | undefined;
  if (reason !== RevocationReason.unspecified) {
    extensions = REASON_EXTENSIONS.get(reason);
    if (extensions === undefined) throw new RevocationRequestError(`revoked[${index}].reason ${reason} is not an RFC 5280 CRLReason code`);
  }
  const revokedAt = entry.revokedAt;
  if (!(revokedAt instanceof Date) || Number.isNaN(revokedAt.getTime())) {
    throw new RevocationRequestError(`revoked[${index}] (serial ${String(entry.serial)}) has no valid revocation date`);
  }
  const serial = integerContent(serialToBigInt(entry.serial));
  const content = tlvSize(serial.length) + crlTimeSize(revokedAt) + (extensions?.length ?? 0);
  const offset = sink.reserve(tlvSize(content));
  const out = sink.bytes;
  let at = writeHeaderAt(out, offset, Tag.Sequence, content);
  at = writeHeaderAt(out, at, Tag.Integer, serial.length);
  out.set(serial, at);
  at = writeCrlTime(out, at + serial.length, revokedAt);
  if (extensions) out.set(extensions, at);
  return true;
}

/** The crlExtensions: AKI then CRL Number (both non-critical, RFC 5280 5.2.1 and 5.2.3). */
function crlExtensions(issuer: RevocationSigner, crlNumber: bigint): Uint8Array {
  const aki = derSequence(derOid(OID_AUTHORITY_KEY_ID), derOctetString(derSequence(derConstructed(0x80, [issuer.keyIdentifier]))));
  const number = derSequence(derOid(OID_CRL_NUMBER), derOctetString(derInteger(crlNumber)));
  return derExplicit(0, derSequence(aki, number));
}

/**
 * Build and sign a CRL. Entries are read from `options.revoked` one at a time.
 *
 * @throws RevocationRequestError (400) for a CRL number out of range, nextUpdate before thisUpdate,
 *   an entry with an invalid date or reason; the signer's coded error when signing fails.
 */
export async function buildCrl(options: CrlOptions): Promise<Crl> {
  const thisUpdate = wholeSeconds(options.thisUpdate ?? new Date());
  checkOptions(options, thisUpdate);
  const nextUpdate = wholeSeconds(options.nextUpdate);
  const issuer = options.issuer;

  const entries = new DerSink(64 * 1024);
  let entryCount = 0;
  let index = 0;
  const revoked = options.revoked;
  // A plain loop for arrays and other sync iterables: `for await` would cost a promise per entry.
  if (Symbol.iterator in revoked) {
    for (const entry of revoked) if (writeEntry(entries, entry, index++)) entryCount++;
  } else {
    for await (const entry of revoked) if (writeEntry(entries, entry, index++)) entryCount++;
  }

  const head = [VERSION_2, issuer.algorithmIdentifier, issuer.certificate.subject.der, crlTime(thisUpdate), crlTime(nextUpdate)];
  const extensions = crlExtensions(issuer, options.crlNumber);
  let tbsContent = extensions.length;
  for (const part of head) tbsContent += part.length;
  // RFC 5280 5.1.2.6: with no entries, revokedCertificates is absent (not an empty SEQUENCE).
  if (entryCount > 0) tbsContent += tlvSize(entries.length);

  const tbs = new Uint8Array(tlvSize(tbsContent));
  let at = writeHeaderAt(tbs, 0, Tag.Sequence, tbsContent);
  for (const part of head) {
    tbs.set(part, at);
    at += part.length;
  }
  if (entryCount > 0) {
    at = writeHeaderAt(tbs, at, Tag.Sequence, entries.length);
    tbs.set(entries.view(), at);
    at += entries.length;
  }
  tbs.set(extensions, at);

  const signature = await issuer.sign(tbs);
  const signatureContent = signature.length + 1;
  const crlContent = tbs.length + issuer.algorithmIdentifier.length + tlvSize(signatureContent);
  const der = new Uint8Array(tlvSize(crlContent));
  at = writeHeaderAt(der, 0, Tag.Sequence, crlContent);
  der.set(tbs, at);
  at += tbs.length;
  der.set(issuer.algorithmIdentifier, at);
  at += issuer.algorithmIdentifier.length;
  at = writeHeaderAt(der, at, Tag.BitString, signatureContent);
  der[at] = 0;
  der.set(signature, at + 1);

  return { der, crlNumber: options.crlNumber, thisUpdate, nextUpdate, entryCount, issuerKeyId: issuer.keyIdentifierHex };
}

