import { createHash, sign } from 'node:crypto';
import { isIP } from 'node:net';
import {
  bitString,
  boolean,
  explicit,
  ia5String,
  implicitPrimitive,
  integer,
  integerBytes,
  nullValue,
  octetString,
  oid,
  printableString,
  sequence,
  setOf,
  time,
  toPem,
  utf8String,
} from './der.js';
import { testKey, type KeySpec, type TestKey } from './keys.js';

/** Hash used for the certificate signature (ignored for Ed25519). */
export type SignatureHash = 'MD5' | 'SHA-1' | 'SHA-256' | 'SHA-384' | 'SHA-512';

/** Key usage bit names (RFC 5280 4.2.1.3) in bit order. */
export const KEY_USAGE_BITS = [
  'digitalSignature',
  'nonRepudiation',
  'keyEncipherment',
  'dataEncipherment',
  'keyAgreement',
  'keyCertSign',
  'cRLSign',
  'encipherOnly',
  'decipherOnly',
] as const;
/** One key usage bit name. */
export type KeyUsageName = (typeof KEY_USAGE_BITS)[number];

/** Subject attributes, written in Go's `pkix.Name` order (C, ST, L, O, OU, CN, serialNumber). */
export interface NameFields {
  C?: string;
  ST?: string;
  L?: string;
  O?: string;
  OU?: string;
  CN?: string;
  serialNumber?: string;
  /** Extra attributes appended as-is, e.g. `[['1.2.840.113549.1.9.1', 'a@b.c']]`. */
  extra?: Array<[oid: string, value: string]>;
}

/** A subject: a plain string is the CommonName. */
export type NameSpec = string | NameFields;

/** A raw extension added verbatim (for unknown critical extensions and the like). */
export interface RawExtension {
  oid: string;
  critical: boolean;
  /** Contents of extnValue (the DER of the extension value). */
  value: Uint8Array;
}

/** Everything a test certificate can be made of. Omitted fields get role-based defaults. */
export interface CertificateOptions {
  subject: NameSpec;
  /** Signing certificate; absent = self-signed with the subject's own key. */
  issuer?: TestCertificate;
  /** Subject key: a spec (cached under `keyLabel`) or a ready key. Default `ecdsa-p256`. */
  key?: KeySpec | TestKey;
  /** Cache label for a spec'd key. Default: the subject text, so the same name reuses its key. */
  keyLabel?: string;
  /** Signature hash; default SHA-256 (SHA-384 for P-384 issuers, SHA-512 for P-521). */
  signatureHash?: SignatureHash;
  notBefore?: Date;
  notAfter?: Date;
  /** 1 makes a v1 certificate (no extensions at all). Default 3. */
  version?: 1 | 3;
  /** Hex serial; default derived deterministically from subject, issuer, key and validity. */
  serialHex?: string;
  /** basicConstraints cA. `undefined` omits the extension for leaves, sets it for CAs. */
  ca?: boolean;
  /** pathLenConstraint (CAs only); `null`/absent = unlimited. */
  pathLen?: number | null;
  /** Omit basicConstraints entirely even for a CA (to test RFC 5280 4.2.1.9 handling). */
  omitBasicConstraints?: boolean;
  /** Key usage bits; `null` omits the extension. Default by role. */
  keyUsage?: KeyUsageName[] | null;
  /** Extended key usage OIDs or `serverAuth`/`clientAuth`; `null` omits. */
  extKeyUsage?: string[] | null;
  dns?: string[];
  ips?: string[];
  emails?: string[];
  uris?: string[];
  /** AIA OCSP responder URLs. */
  ocsp?: string[];
  /** AIA CA Issuers URLs (what AIA chasing fetches). */
  caIssuers?: string[];
  /** CRL distribution point URIs. */
  crl?: string[];
  /** Subject key identifier: `true` (default) = SHA-1 of the key bits, `false` omits, or explicit bytes. */
  subjectKeyId?: boolean | Uint8Array;
  /** Authority key identifier: `true` (default when issued) = issuer's SKI, `false` omits, or bytes. */
  authorityKeyId?: boolean | Uint8Array;
  /** Name constraints (RFC 5280 4.2.1.10), critical. IP entries are CIDR text (`10.0.0.0/8`). */
  nameConstraints?: { permitted?: NameConstraintSet; excluded?: NameConstraintSet };
  /** Extensions appended after the standard ones. */
  extraExtensions?: RawExtension[];
}

/** One subtree list of a name constraints extension. */
export interface NameConstraintSet {
  dns?: string[];
  emails?: string[];
  uris?: string[];
  ips?: string[];
}

/** A generated certificate with everything tests compare against. */
export interface TestCertificate {
  der: Uint8Array;
  /** PEM with trailing newline. */
  pem: string;
  /** DER of the subject Name (the next certificate's issuer is this, byte for byte). */
  subjectDer: Uint8Array;
  key: TestKey;
  /** Certificate that signed this one; `null` when self-signed. */
  issuer: TestCertificate | null;
  notBefore: Date;
  notAfter: Date;
  /** SKI bytes, `null` when omitted. */
  subjectKeyId: Uint8Array | null;
  /** Upper-case hex of the SKI (`expiring_SKIs` form), `''` when omitted. */
  subjectKeyIdHex: string;
  serialHex: string;
  /** The options this certificate was made from (for cross-signing and re-issuing). */
  options: CertificateOptions;
}

const OID = {
  rsaMd5: '1.2.840.113549.1.1.4',
  rsaSha1: '1.2.840.113549.1.1.5',
  rsaSha256: '1.2.840.113549.1.1.11',
  rsaSha384: '1.2.840.113549.1.1.12',
  rsaSha512: '1.2.840.113549.1.1.13',
  ecdsaSha1: '1.2.840.10045.4.1',
  ecdsaSha256: '1.2.840.10045.4.3.2',
  ecdsaSha384: '1.2.840.10045.4.3.3',
  ecdsaSha512: '1.2.840.10045.4.3.4',
  dsaSha1: '1.2.840.10040.4.3',
  dsaSha256: '2.16.840.1.101.3.4.3.2',
  ed25519: '1.3.101.112',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
  subjectAltName: '2.5.29.17',
  crlDistributionPoints: '2.5.29.31',
  nameConstraints: '2.5.29.30',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  ocsp: '1.3.6.1.5.5.7.48.1',
  caIssuers: '1.3.6.1.5.5.7.48.2',
} as const;

const EKU_NAMES: Record<string, string> = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  codeSigning: '1.3.6.1.5.5.7.3.3',
  emailProtection: '1.3.6.1.5.5.7.3.4',
  OCSPSigning: '1.3.6.1.5.5.7.3.9',
};

const ATTRIBUTE_OIDS: Array<[keyof NameFields, string, 'printable' | 'utf8']> = [
  ['C', '2.5.4.6', 'printable'],
  ['ST', '2.5.4.8', 'utf8'],
  ['L', '2.5.4.7', 'utf8'],
  ['O', '2.5.4.10', 'utf8'],
  ['OU', '2.5.4.11', 'utf8'],
  ['CN', '2.5.4.3', 'utf8'],
  ['serialNumber', '2.5.4.5', 'printable'],
];

/** Encode a subject as an RDNSequence of single-attribute RDNs. */
export function encodeName(spec: NameSpec): Uint8Array {
  const fields: NameFields = typeof spec === 'string' ? { CN: spec } : spec;
  const rdns: Uint8Array[] = [];
  for (const [field, attrOid, kind] of ATTRIBUTE_OIDS) {
    const value = fields[field];
    if (typeof value !== 'string') continue;
    const encoded = kind === 'printable' ? printableString(value) : utf8String(value);
    rdns.push(setOf(sequence(oid(attrOid), encoded)));
  }
  for (const [attrOid, value] of fields.extra ?? []) {
    const encoded = attrOid === '1.2.840.113549.1.9.1' ? ia5String(value) : utf8String(value);
    rdns.push(setOf(sequence(oid(attrOid), encoded)));
  }
  return sequence(...rdns);
}

/** Read one TLV header at `offset`: returns [contentStart, contentEnd]. */
function readTlv(der: Uint8Array, offset: number): [number, number] {
  let pos = offset + 1;
  const first = der[pos++] as number;
  let length = first;
  if (first & 0x80) {
    length = 0;
    for (let i = 0; i < (first & 0x7f); i++) length = length * 256 + (der[pos++] as number);
  }
  return [pos, pos + length];
}

/** The subjectPublicKey BIT STRING contents (without the unused-bits octet) of an SPKI. */
export function subjectPublicKeyBits(spki: Uint8Array): Uint8Array {
  const [outerStart] = readTlv(spki, 0);
  const [, algEnd] = readTlv(spki, outerStart);
  const [bitsStart, bitsEnd] = readTlv(spki, algEnd);
  return spki.subarray(bitsStart + 1, bitsEnd);
}

/** RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits. */
export function keyIdentifier(key: TestKey): Uint8Array {
  return new Uint8Array(createHash('sha1').update(subjectPublicKeyBits(key.spki)).digest());
}

function defaultHash(key: TestKey): SignatureHash {
  if (key.spec === 'ecdsa-p384') return 'SHA-384';
  if (key.spec === 'ecdsa-p521') return 'SHA-512';
  return 'SHA-256';
}

/** AlgorithmIdentifier and node:crypto digest name for a signer key and hash. */
function signatureAlgorithm(signer: TestKey, hash: SignatureHash): { algId: Uint8Array; digest: string | null } {
  const digest = hash.replace('-', '').toLowerCase();
  const family = signer.spec.split('-')[0];
  if (family === 'ed25519') return { algId: sequence(oid(OID.ed25519)), digest: null };
  if (family === 'rsa') {
    const oids: Record<SignatureHash, string> = {
      MD5: OID.rsaMd5,
      'SHA-1': OID.rsaSha1,
      'SHA-256': OID.rsaSha256,
      'SHA-384': OID.rsaSha384,
      'SHA-512': OID.rsaSha512,
    };
    return { algId: sequence(oid(oids[hash]), nullValue()), digest };
  }
  if (family === 'ecdsa') {
    const oids: Partial<Record<SignatureHash, string>> = {
      'SHA-1': OID.ecdsaSha1,
      'SHA-256': OID.ecdsaSha256,
      'SHA-384': OID.ecdsaSha384,
      'SHA-512': OID.ecdsaSha512,
    };
    const found = oids[hash];
    if (!found) throw new RangeError(`ECDSA cannot sign with ${hash}`);
    return { algId: sequence(oid(found)), digest };
  }
  const dsaOid = hash === 'SHA-1' ? OID.dsaSha1 : OID.dsaSha256;
  return { algId: sequence(oid(dsaOid)), digest: hash === 'SHA-1' ? 'sha1' : 'sha256' };
}

function extension(extOid: string, critical: boolean, value: Uint8Array): Uint8Array {
  return critical
    ? sequence(oid(extOid), boolean(true), octetString(value))
    : sequence(oid(extOid), octetString(value));
}

/** KeyUsage as a minimal named BIT STRING (X.690 11.2.2: trailing zero bits removed). */
function keyUsageValue(names: KeyUsageName[]): Uint8Array {
  let bits = 0;
  for (const name of names) bits |= 1 << KEY_USAGE_BITS.indexOf(name);
  if (bits === 0) return bitString(new Uint8Array(0));
  const highest = 31 - Math.clz32(bits);
  const byteCount = Math.floor(highest / 8) + 1;
  const bytes = new Uint8Array(byteCount);
  for (let bit = 0; bit <= highest; bit++) {
    if (bits & (1 << bit)) bytes[bit >> 3] = (bytes[bit >> 3] as number) | (0x80 >> (bit & 7));
  }
  const unused = byteCount * 8 - 1 - highest;
  return bitString(bytes, unused);
}

function ipBytes(text: string): Uint8Array {
  const family = isIP(text);
  if (family === 4) return Uint8Array.from(text.split('.').map(Number));
  if (family !== 6) throw new RangeError(`not an IP address: ${text}`);
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined): number[] => {
    if (!part) return [];
    const groups: number[] = [];
    for (const group of part.split(':')) {
      if (group.includes('.')) {
        const v4 = group.split('.').map(Number);
        groups.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number));
      } else groups.push(parseInt(group, 16));
    }
    return groups;
  };
  const left = parse(head);
  const right = parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

function subtrees(set: NameConstraintSet): Uint8Array[] {
  const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);
  const cidr = (text: string): Uint8Array => {
    const [address = '', prefixText] = text.split('/');
    const bytes = ipBytes(address);
    const prefix = Number(prefixText ?? bytes.length * 8);
    const mask = new Uint8Array(bytes.length);
    for (let bit = 0; bit < prefix; bit++) mask[bit >> 3] = (mask[bit >> 3] as number) | (0x80 >> (bit & 7));
    const out = new Uint8Array(bytes.length * 2);
    out.set(bytes);
    out.set(mask, bytes.length);
    return out;
  };
  return [
    ...(set.emails ?? []).map((e) => sequence(implicitPrimitive(1, ascii(e)))),
    ...(set.dns ?? []).map((d) => sequence(implicitPrimitive(2, ascii(d)))),
    ...(set.uris ?? []).map((u) => sequence(implicitPrimitive(6, ascii(u)))),
    ...(set.ips ?? []).map((ip) => sequence(implicitPrimitive(7, cidr(ip)))),
  ];
}

/**
 * Build and sign one certificate. Synchronous and fast (node:crypto signing, cached keys).
 * @param options what to put in it; see {@link CertificateOptions}
 * @param now the reference time for default validity windows
 */
export function buildCertificate(options: CertificateOptions, now: Date): TestCertificate {
  const subjectDer = encodeName(options.subject);
  const subjectText = typeof options.subject === 'string' ? options.subject : JSON.stringify(options.subject);
  const key =
    typeof options.key === 'object' ? options.key : testKey(options.key ?? 'ecdsa-p256', options.keyLabel ?? subjectText);
  const issuer = options.issuer ?? null;
  const signerKey = issuer ? issuer.key : key;
  const issuerDer = issuer ? issuer.subjectDer : subjectDer;
  const isCa = options.ca ?? false;
  const day = 86_400_000;
  const second = (d: Date): Date => new Date(Math.floor(d.getTime() / 1000) * 1000);
  const notBefore = second(options.notBefore ?? new Date(now.getTime() - day));
  const notAfter = second(options.notAfter ?? new Date(now.getTime() + (isCa ? (issuer ? 3 * 365 : 10 * 365) : 90) * day));
  const hash = options.signatureHash ?? defaultHash(signerKey);
  const { algId, digest } = signatureAlgorithm(signerKey, hash);

  let serialHex = options.serialHex;
  if (!serialHex) {
    const h = createHash('sha256')
      .update(subjectDer)
      .update(issuerDer)
      .update(key.spki)
      .update(String(notBefore.getTime()))
      .update(String(notAfter.getTime()))
      .update(hash)
      .digest();
    h[0] = ((h[0] as number) & 0x7f) | 0x10;
    serialHex = h.subarray(0, 16).toString('hex');
  }

  const version = options.version ?? 3;
  const ski =
    options.subjectKeyId instanceof Uint8Array
      ? options.subjectKeyId
      : options.subjectKeyId === false
        ? null
        : keyIdentifier(key);
  const issuerSki = issuer ? issuer.subjectKeyId : ski;
  const aki =
    options.authorityKeyId instanceof Uint8Array
      ? options.authorityKeyId
      : options.authorityKeyId === false || (!issuer && options.authorityKeyId !== true)
        ? null
        : issuerSki;

  const extensions: Uint8Array[] = [];
  if (version === 3) {
    if (isCa && !options.omitBasicConstraints) {
      const pathLen = options.pathLen;
      extensions.push(
        extension(
          OID.basicConstraints,
          true,
          pathLen === undefined || pathLen === null ? sequence(boolean(true)) : sequence(boolean(true), integer(pathLen)),
        ),
      );
    } else if (options.ca === false) {
      extensions.push(extension(OID.basicConstraints, true, sequence()));
    }
    const ku =
      options.keyUsage === undefined
        ? isCa
          ? (['keyCertSign', 'cRLSign'] as KeyUsageName[])
          : key.spec.startsWith('rsa')
            ? (['digitalSignature', 'keyEncipherment'] as KeyUsageName[])
            : (['digitalSignature'] as KeyUsageName[])
        : options.keyUsage;
    if (ku) extensions.push(extension(OID.keyUsage, true, keyUsageValue(ku)));
    const eku = options.extKeyUsage === undefined ? (isCa ? null : ['serverAuth', 'clientAuth']) : options.extKeyUsage;
    if (eku) extensions.push(extension(OID.extKeyUsage, false, sequence(...eku.map((e) => oid(EKU_NAMES[e] ?? e)))));
    if (ski) extensions.push(extension(OID.subjectKeyId, false, octetString(ski)));
    if (aki) extensions.push(extension(OID.authorityKeyId, false, sequence(implicitPrimitive(0, aki))));
    const sans: Uint8Array[] = [
      ...(options.emails ?? []).map((e) => implicitPrimitive(1, new TextEncoder().encode(e))),
      ...(options.dns ?? []).map((d) => implicitPrimitive(2, new TextEncoder().encode(d))),
      ...(options.uris ?? []).map((u) => implicitPrimitive(6, new TextEncoder().encode(u))),
      ...(options.ips ?? []).map((ip) => implicitPrimitive(7, ipBytes(ip))),
    ];
    if (sans.length > 0) extensions.push(extension(OID.subjectAltName, false, sequence(...sans)));
    const access: Uint8Array[] = [
      ...(options.ocsp ?? []).map((u) => sequence(oid(OID.ocsp), implicitPrimitive(6, new TextEncoder().encode(u)))),
      ...(options.caIssuers ?? []).map((u) =>
        sequence(oid(OID.caIssuers), implicitPrimitive(6, new TextEncoder().encode(u))),
      ),
    ];
    if (access.length > 0) extensions.push(extension(OID.authorityInfoAccess, false, sequence(...access)));
    if (options.crl && options.crl.length > 0) {
      const points = options.crl.map((u) =>
        sequence(explicit(0, explicit(0, implicitPrimitive(6, new TextEncoder().encode(u))))),
      );
      extensions.push(extension(OID.crlDistributionPoints, false, sequence(...points)));
    }
    if (options.nameConstraints) {
      const parts: Uint8Array[] = [];
      if (options.nameConstraints.permitted) parts.push(explicit(0, ...subtrees(options.nameConstraints.permitted)));
      if (options.nameConstraints.excluded) parts.push(explicit(1, ...subtrees(options.nameConstraints.excluded)));
      extensions.push(extension(OID.nameConstraints, true, sequence(...parts)));
    }
    for (const raw of options.extraExtensions ?? []) extensions.push(extension(raw.oid, raw.critical, raw.value));
  }

  const tbs = sequence(
    ...(version === 3 ? [explicit(0, integer(2))] : []),
    integerBytes(Buffer.from(serialHex, 'hex')),
    algId,
    issuerDer,
    sequence(time(notBefore), time(notAfter)),
    subjectDer,
    key.spki,
    ...(version === 3 && extensions.length > 0 ? [explicit(3, sequence(...extensions))] : []),
  );
  const signature = new Uint8Array(sign(digest, tbs, signerKey.privateKey));
  const der = sequence(tbs, algId, bitString(signature));
  return {
    der,
    pem: toPem(der),
    subjectDer,
    key,
    issuer,
    notBefore,
    notAfter,
    subjectKeyId: ski,
    subjectKeyIdHex: ski ? Buffer.from(ski).toString('hex').toUpperCase() : '',
    serialHex,
    options,
  };
}
