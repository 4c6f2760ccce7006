/**
 * GeneralNames (RFC 5280 4.2.1.6) decoding into the {@link SubjectAltNames} buckets, and the
 * canonical IP address text form used everywhere in certsmith.
 */
import type { SubjectAltNames } from './certificate-model.js';
import { DerReader, decodeLatin1, isAscii } from './der-reader.js';
import type { DerElement } from './der-reader.js';
import { DerDecodeError } from './errors.js';

/** GeneralName context tags (IMPLICIT, primitive unless noted). */
export const GeneralNameTag = {
  otherName: 0xa0,
  rfc822Name: 0x81,
  dNSName: 0x82,
  x400Address: 0xa3,
  directoryName: 0xa4,
  ediPartyName: 0xa5,
  uniformResourceIdentifier: 0x86,
  iPAddress: 0x87,
  registeredID: 0x88,
} as const;

/** An empty {@link SubjectAltNames}. */
export function emptySubjectAltNames(): SubjectAltNames {
  return { dns: [], email: [], ip: [], uri: [] };
}

/**
 * Canonical text of a 4- or 16-byte IP address, as Go's `net.IP.String` prints it (CFSSL compares
 * and reports IPs in that form): IPv4 dotted quad; IPv4-mapped IPv6 (`::ffff:a.b.c.d`) also as the
 * dotted quad; other IPv6 per RFC 5952 4 (lower-case hex, no leading zeros, the longest run of two
 * or more zero groups — the first on a tie — written `::`). Throws for other lengths.
 */
export function formatIpAddress(address: Uint8Array): string {
  if (address.length === 4) return `${address[0]}.${address[1]}.${address[2]}.${address[3]}`;
  if (address.length !== 16) throw new DerDecodeError(`IP address of length ${address.length}`, 0);
  let mapped = address[10] === 0xff && address[11] === 0xff;
  for (let i = 0; mapped && i < 10; i++) if (address[i] !== 0) mapped = false;
  if (mapped) return `${address[12]}.${address[13]}.${address[14]}.${address[15]}`;

  let bestStart = -1;
  let bestLength = 0;
  for (let group = 0; group < 8; ) {
    if (address[group * 2] === 0 && address[group * 2 + 1] === 0) {
      let run = group;
      while (run < 8 && address[run * 2] === 0 && address[run * 2 + 1] === 0) run++;
      if (run - group > bestLength) {
        bestStart = group;
        bestLength = run - group;
      }
      group = run;
    } else {
      group++;
    }
  }
  const groups: string[] = [];
  for (let group = 0; group < 8; group++) groups.push(((address[group * 2]! << 8) | address[group * 2 + 1]!).toString(16));
  // RFC 5952 4.2.2: "::" must not shorten a single 16-bit zero field.
  if (bestLength < 2) return groups.join(':');
  return `${groups.slice(0, bestStart).join(':')}::${groups.slice(bestStart + bestLength).join(':')}`;
}

function ia5(bytes: Uint8Array, element: DerElement, what: string): string {
  // Go rejects non-ASCII dNSName/rfc822Name/URI ("x509: SAN dNSName is malformed").
  if (!isAscii(bytes, element.valueStart, element.end)) throw new DerDecodeError(`${what} is not IA5`, element.start);
  return decodeLatin1(bytes, element.valueStart, element.end);
}

/**
 * Add the names of a GeneralNames SEQUENCE (given as a reader over its contents) to `into`:
 * dNSName, rfc822Name, uniformResourceIdentifier and iPAddress; other forms are skipped as Go skips
 * them. Returns the number of entries of other forms (name constraints must know about them).
 */
export function readGeneralNames(bytes: Uint8Array, reader: DerReader, into: SubjectAltNames): number {
  let others = 0;
  while (reader.hasMore()) {
    const name = reader.read();
    switch (name.tag) {
      case GeneralNameTag.dNSName:
        into.dns.push(ia5(bytes, name, 'dNSName'));
        break;
      case GeneralNameTag.rfc822Name:
        into.email.push(ia5(bytes, name, 'rfc822Name'));
        break;
      case GeneralNameTag.uniformResourceIdentifier:
        into.uri.push(ia5(bytes, name, 'uniformResourceIdentifier'));
        break;
      case GeneralNameTag.iPAddress:
        into.ip.push(formatIpAddress(bytes.subarray(name.valueStart, name.end)));
        break;
      default:
        others++;
        break;
    }
  }
  return others;
}
