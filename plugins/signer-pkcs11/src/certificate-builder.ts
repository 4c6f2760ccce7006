/**
 * The DER the admin functions sign on the token: a self-signed CA certificate shaped like CFSSL's
 * `initca` output and a PKCS#10 request shaped like CFSSL's `genkey -initca` CSR. Built with
 * x509-core's writer because a plugin stands on the contract and x509-core only (the issuer has its
 * own, richer encoders for issued certificates). Signing is the caller's job: these functions
 * return the to-be-signed bytes and assemble the final structure around a signature.
 */
import { createHash, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';

import type { SignRequestSubject, SignatureAlgorithm } from '@certsmith/signer-api';
import {
  derBitString,
  derBoolean,
  derDirectoryString,
  derExplicit,
  derImplicit,
  derInteger,
  derNull,
  derOid,
  derSequence,
  derSetOf,
  derConstructed,
  derExtension,
  buildSelfSignedCaTbs as buildCaTbs,
} from '@certsmith/x509-core';

import { publicKeyInfoFromSpki } from './public-key.js';

const HASH_OIDS = { sha256: '2.16.840.1.101.3.4.2.1', sha384: '2.16.840.1.101.3.4.2.2', sha512: '2.16.840.1.101.3.4.2.3' } as const;

function pssIdentifier(hash: keyof typeof HASH_OIDS, saltLength: number): Uint8Array {
  const hashAlgorithm = derSequence(derOid(HASH_OIDS[hash]), derNull());
  return derSequence(
    derOid('1.2.840.113549.1.1.10'),
    derSequence(
      derExplicit(0, hashAlgorithm),
      derExplicit(1, derSequence(derOid('1.2.840.113549.1.1.8'), hashAlgorithm)),
      derExplicit(2, derInteger(saltLength)),
    ),
  );
}

/**
 * AlgorithmIdentifier DER per algorithm, encoded as Go does (RSA with NULL parameters, ECDSA
 * without, RSA-PSS with explicit SHA-2/MGF1 parameters and salt = hash length, RFC 4055 §3.1).
 */
export function signatureAlgorithmIdentifier(algorithm: SignatureAlgorithm): Uint8Array {
  switch (algorithm) {
    case 'ECDSA-SHA256':
      return derSequence(derOid('1.2.840.10045.4.3.2'));
    case 'ECDSA-SHA384':
      return derSequence(derOid('1.2.840.10045.4.3.3'));
    case 'ECDSA-SHA512':
      return derSequence(derOid('1.2.840.10045.4.3.4'));
    case 'RSA-SHA256':
      return derSequence(derOid('1.2.840.113549.1.1.11'), derNull());
    case 'RSA-SHA384':
      return derSequence(derOid('1.2.840.113549.1.1.12'), derNull());
    case 'RSA-SHA512':
      return derSequence(derOid('1.2.840.113549.1.1.13'), derNull());
    case 'RSA-PSS-SHA256':
      return pssIdentifier('sha256', 32);
    case 'RSA-PSS-SHA384':
      return pssIdentifier('sha384', 48);
    case 'RSA-PSS-SHA512':
      return pssIdentifier('sha512', 64);
    case 'Ed25519':
      return derSequence(derOid('1.3.101.112'));
  }
}

/** Subject attributes in the order Go's `pkix.Name.ToRDNSequence` writes them. */
const NAME_ORDER = [
  ['C', '2.5.4.6'],
  ['ST', '2.5.4.8'],
  ['L', '2.5.4.7'],
  ['O', '2.5.4.10'],
  ['OU', '2.5.4.11'],
] as const;

/**
 * Encode a CFSSL request subject (`CN` plus `names: [{C, ST, L, O, OU, E}]`) as Go/CFSSL do: all
 * values of one attribute type in one (multi-valued) RDN, types in `ToRDNSequence` order, then CN,
 * serialNumber and emailAddress (an ExtraName in CFSSL). Values are PrintableString when possible,
 * else UTF8String.
 */
export function encodeSubjectName(subject: SignRequestSubject): Uint8Array {
  const rdns: Uint8Array[] = [];
  const attribute = (oid: string, value: string): Uint8Array => derSequence(derOid(oid), derDirectoryString(value));
  for (const [field, oid] of NAME_ORDER) {
    const values = (subject.names ?? []).map((name) => name[field]).filter((value): value is string => typeof value === 'string' && value !== '');
    if (values.length > 0) rdns.push(derSetOf(values.map((value) => attribute(oid, value))));
  }
  if (subject.CN) rdns.push(derSetOf([attribute('2.5.4.3', subject.CN)]));
  if (subject.SerialNumber) rdns.push(derSetOf([attribute('2.5.4.5', subject.SerialNumber)]));
  for (const name of subject.names ?? []) {
    if (name.E) rdns.push(derSetOf([attribute('1.2.840.113549.1.9.1', name.E)]));
  }
  return derSequence(...rdns);
}

/** basicConstraints CA:TRUE with an optional pathLenConstraint, critical (RFC 5280 §4.2.1.9). */
function caBasicConstraints(pathLength: number | undefined): Uint8Array {
  const value = pathLength === undefined ? derSequence(derBoolean(true)) : derSequence(derBoolean(true), derInteger(pathLength));
  return derExtension('2.5.29.19', true, value);
}

/** RFC 5280 §4.2.1.2 method 1, as Go/CFSSL compute it: SHA-1 of the subjectPublicKey bits. */
export function subjectKeyIdentifier(spki: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha1').update(publicKeyInfoFromSpki(spki).subjectPublicKey).digest());
}

/** CFSSL's `ca.expiry` default for `initca`: 5 years as 43800 hours. */
export const DEFAULT_CA_EXPIRY_MS = 43_800 * 3_600_000;

/** Input of {@link buildSelfSignedCaTbs}. */
export interface SelfSignedCaTemplate {
  subject: SignRequestSubject;
  spki: Uint8Array;
  algorithm: SignatureAlgorithm;
  now: Date;
  validityMs: number;
  pathLength?: number;
}

/**
 * TBSCertificate of a self-signed CA as CFSSL `initca` issues it: v3, random 159-bit serial,
 * notBefore = now rounded to the minute minus 5 minutes (CFSSL's backdating), keyUsage certSign +
 * cRLSign (critical), basicConstraints CA:TRUE (critical), SKI, no AKI (Go omits it when issuer ==
 * subject).
 */
export function buildSelfSignedCaTbs(template: SelfSignedCaTemplate): Uint8Array {
  const serial = randomBytes(20);
  serial[0] = (serial[0] as number) & 0x7f;
  const notBefore = new Date(Math.round(template.now.getTime() / 60_000) * 60_000 - 5 * 60_000);
  return buildCaTbs({
    name: encodeSubjectName(template.subject),
    spki: template.spki,
    signatureAlgorithm: signatureAlgorithmIdentifier(template.algorithm),
    serial,
    notBefore,
    notAfter: new Date(notBefore.getTime() + template.validityMs),
    pathLength: template.pathLength,
  });
}

/** `Certificate`/`CertificationRequest` ::= SEQUENCE { tbs, signatureAlgorithm, signature BIT STRING }. */
export function assembleSigned(tbs: Uint8Array, algorithm: SignatureAlgorithm, signature: Uint8Array): Uint8Array {
  return derSequence(tbs, signatureAlgorithmIdentifier(algorithm), derBitString(signature));
}

function generalName(host: string): Uint8Array {
  const encoder = new TextEncoder();
  if (isIP(host) === 4) return derImplicit(7, Uint8Array.from(host.split('.').map(Number)), false);
  if (isIP(host) === 6) return derImplicit(7, ipv6Bytes(host), false);
  if (/^[^@\s]+@[^@\s]+$/.test(host)) return derImplicit(1, encoder.encode(host), false);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) return derImplicit(6, encoder.encode(host), false);
  return derImplicit(2, encoder.encode(host), false);
}

/** The 16 bytes of an IPv6 address (already validated by `isIP`), embedded IPv4 tails included. */
function ipv6Bytes(address: string): Uint8Array {
  let text = address;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    // `::ffff:192.0.2.1` → `::ffff:c000:201`
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const words = [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right].map((group) => parseInt(group, 16));
  const out = new Uint8Array(16);
  words.forEach((word, index) => {
    out[index * 2] = word >> 8;
    out[index * 2 + 1] = word & 0xff;
  });
  return out;
}

/** Input of {@link buildCertificationRequestInfo}. */
export interface CsrTemplate {
  subject: SignRequestSubject;
  spki: Uint8Array;
  /** DNS names, IP addresses, e-mail addresses or URIs, classified as CFSSL does. */
  hosts?: readonly string[];
  /** Ask for a CA certificate: basicConstraints CA:TRUE (critical) in the extensionRequest, as CFSSL's `genkey -initca`. */
  isCa?: boolean;
  pathLength?: number;
}

/**
 * CertificationRequestInfo (RFC 2986 §4.1) as Go's `CreateCertificateRequest` lays it out for
 * CFSSL: version 0, subject, SPKI, and an extensionRequest attribute holding the SAN (non-critical)
 * then basicConstraints when asked for. The `[0]` attributes field is present even when empty.
 */
export function buildCertificationRequestInfo(template: CsrTemplate): Uint8Array {
  const extensions: Uint8Array[] = [];
  const hosts = template.hosts ?? [];
  if (hosts.length > 0) extensions.push(derExtension('2.5.29.17', false, derSequence(...hosts.map(generalName))));
  if (template.isCa) extensions.push(caBasicConstraints(template.pathLength));
  const attributes: Uint8Array[] = [];
  if (extensions.length > 0) attributes.push(derSequence(derOid('1.2.840.113549.1.9.14'), derSetOf([derSequence(...extensions)])));
  return derSequence(derInteger(0), encodeSubjectName(template.subject), template.spki, derConstructed(0xa0, attributes));
}
