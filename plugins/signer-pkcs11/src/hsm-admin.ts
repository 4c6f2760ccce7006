/**
 * Operator functions: look at a PKCS#11 module, generate a CA key pair on a token and turn it into
 * a CA — a self-signed certificate (CFSSL `initca` profile) or a CSR for an external root — with
 * every signature made on the token, so the private key never leaves it. `certsmith hsm …` is a
 * thin CLI over these.
 *
 * Every function borrows the module from the process registry for the duration of the call and
 * opens its own session; it can run next to live signers of the same process without logging them
 * out (closing a session only logs out when it is the application's last one on the token).
 */
import { X509Certificate, createPublicKey, randomBytes } from 'node:crypto';

import { CertificateType, KeyGenMechanism, KeyType, ObjectClass, SlotFlag, TokenFlag } from 'graphene-pk11';
import type { IKeyPair, Module, PrivateKey, Session, SessionObject, Slot } from 'graphene-pk11';
import pkcs11js from 'pkcs11js';

import type { SignRequestSubject, SignatureAlgorithm, SignerContext } from '@certsmith/signer-api';
import { createSignerContext } from '@certsmith/signer-api';
import {
  CertsmithError,
  DerReader,
  ErrorCode,
  buildSelfSignedCaTbs,
  computeSubjectKeyId,
  derBoolean,
  derInteger,
  derOid,
  derSequence,
  encodeCertificationRequestInfo,
  encodePem,
  encodeSigned,
  encodeSubject,
  encodeSubjectAltNames,
  formatDistinguishedName,
  isCodedError,
  parseCertificate,
  readOid,
  sansFromHosts,
  signatureAlgorithmIdentifier,
  subjectFromNames,
} from '@certsmith/x509-core';

import { algorithmsForKey } from './mechanisms.js';
import { acquireModule } from './module-registry.js';
import type { ModuleLease } from './module-registry.js';
import { checkKeySelector, checkTokenSelector, resolvePin } from './options.js';
import { PLUGIN_NAME, TokenLookupError, ckrName, optionError, reasonSuffix } from './pkcs11-errors.js';
import { CURVE_OIDS, bytesAttribute, ecPublicKeyAttributes, ecSpki, publicKeyInfoFromSpki, readKeySpki, rsaSpki } from './public-key.js';
import { describeKey, describeToken, findObjects, findPrivateKey, findTokenSlot, login, openSession, parseKeyId, slotNumber, tokenMechanisms } from './token-selector.js';
import type { KeySelector, TokenSelector } from './token-selector.js';
import { signOnToken } from './token-signing.js';

/** Which module to open. */
export interface HsmModuleOptions {
  /** Path of the PKCS#11 library, relative to `context.configDir` (default: the working directory). */
  module: string;
  /** Resolves the module path and the PIN reference (default: `createSignerContext()`). */
  context?: SignerContext;
}

/** A token, optionally logged in. */
export interface HsmTokenOptions extends HsmModuleOptions, TokenSelector {
  /** User PIN reference, `env:NAME` or `file:PATH`; without it only public objects are visible. */
  pin?: string;
}

/** A key on a logged-in token. */
export interface HsmKeyOptions extends HsmTokenOptions, KeySelector {
  pin: string;
}

/** A token as `listSlots` reports it. */
export interface HsmTokenInfo {
  label: string;
  serial: string;
  model: string;
  manufacturer: string;
  initialized: boolean;
  userPinInitialized: boolean;
  loginRequired: boolean;
}

/** A slot as `listSlots` reports it. */
export interface HsmSlotInfo {
  /** Slot ID (`CK_SLOT_ID`), usable as the `slot` option. */
  slot: number;
  description: string;
  manufacturer: string;
  tokenPresent: boolean;
  token: HsmTokenInfo | null;
}

/** An object as `listKeys` reports it (attributes that do not apply are absent). */
export interface HsmObjectInfo {
  class: 'private-key' | 'public-key' | 'certificate' | 'secret-key' | 'data' | 'other';
  label: string;
  /** CKA_ID, hexadecimal (usable as the `keyId` option). */
  id: string;
  /** `RSA`, `EC`, or the numeric CKK_ value for other key types. */
  keyType?: string;
  /** RSA modulus bits or EC field bits. */
  size?: number;
  /** EC named curve (`P-256`…). */
  curve?: string;
  sign?: boolean;
  sensitive?: boolean;
  extractable?: boolean;
  alwaysSensitive?: boolean;
  neverExtractable?: boolean;
  /** Certificates: subject and expiry. */
  subject?: string;
  notAfter?: string;
}

/** Options of {@link generateKeyPair}. */
export interface GenerateKeyPairOptions extends HsmTokenOptions {
  pin: string;
  /** CKA_LABEL of both halves; must not be in use on the token. */
  keyLabel: string;
  /** CKA_ID in hex (default: 8 random bytes); must not be in use on the token. */
  keyId?: string;
  /** `rsa` (size 2048, 3072, 4096) or `ecdsa` (size 256, 384, 521: the NIST curve of that size), CFSSL's key request names. */
  algorithm: 'rsa' | 'ecdsa';
  size: number;
}

/** Result of {@link generateKeyPair}. */
export interface GeneratedKeyPair {
  keyLabel: string;
  keyId: string;
  algorithm: 'rsa' | 'ecdsa';
  size: number;
  /** SubjectPublicKeyInfo as `PUBLIC KEY` PEM. */
  publicKeyPem: string;
  /** The subject key identifier certificates for this key will carry (hex, RFC 5280 method 1). */
  subjectKeyId: string;
}

/** Options of {@link createSelfSignedCaCertificate}. */
export interface SelfSignedCaOptions extends HsmKeyOptions {
  /** CFSSL request subject: `{ CN, names: [{ C, ST, L, O, OU }] }`. */
  subject: SignRequestSubject;
  /** Validity as a Go duration of hours/minutes/seconds (`43800h`, CFSSL's initca default). */
  expiry?: string;
  /** basicConstraints pathLenConstraint (default: none). */
  pathLength?: number;
  /** Signature algorithm (default: the local signer's choice for the key). */
  signatureAlgorithm?: SignatureAlgorithm;
  /**
   * Store the certificate on the token next to the key (same CKA_LABEL and CKA_ID), where the
   * signer finds it when `cert` is not configured. Default true.
   */
  storeOnToken?: boolean;
  /** Clock, for tests. */
  now?: Date;
}

/** Result of {@link createSelfSignedCaCertificate}. */
export interface SelfSignedCaResult {
  certificatePem: string;
  certificateDer: Uint8Array;
  storedOnToken: boolean;
}

/** Options of {@link createCertificateSigningRequest}. */
export interface CertificateSigningRequestOptions extends HsmKeyOptions {
  subject: SignRequestSubject;
  /** SubjectAltName entries: DNS names, IPs, e-mails, URIs. */
  hosts?: string[];
  /** Request a CA certificate (basicConstraints CA:TRUE, as `cfssl genkey -initca`). Default true. */
  isCa?: boolean;
  pathLength?: number;
  signatureAlgorithm?: SignatureAlgorithm;
}

/** Result of {@link createCertificateSigningRequest}. */
export interface CertificateSigningRequestResult {
  csrPem: string;
  csrDer: Uint8Array;
}

const ADMIN_PREFIX = `${PLUGIN_NAME} hsm:`;
const SIGNER_PREFIX = `signer plugin ${PLUGIN_NAME}:`;

/** Re-label a coded error for admin use (`@certsmith/signer-pkcs11 hsm: options.pin: …`), keeping its code. */
function adminError(caught: unknown): Error {
  const error = caught instanceof TokenLookupError ? optionError(caught.option, caught.message, caught) : caught;
  if (isCodedError(error)) {
    if (!error.message.startsWith(SIGNER_PREFIX)) return error;
    return new CertsmithError(error.code, `${ADMIN_PREFIX}${error.message.slice(SIGNER_PREFIX.length)}`, { cause: error });
  }
  const name = ckrName(error);
  if (name) return new CertsmithError(ErrorCode.PrivateKeyUnavailable, `${ADMIN_PREFIX} token operation failed (${name})`, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

function fail(option: string, problem: string): never {
  throw optionError(option, problem);
}

function closeQuietly(session: Session): void {
  try {
    session.close();
  } catch {
    // Already closed underneath: nothing to release.
  }
}

/** An open token for the duration of one admin call. */
interface OpenToken {
  lease: ModuleLease;
  slot: Slot;
  session: Session;
  description: string;
}

/** Run an admin call, turning every failure into a coded, admin-labelled error. */
async function runAdmin<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw adminError(error);
  }
}

/** Borrow the module, open the token (logging in when a PIN is given) and run `work`. */
async function withToken<T>(options: HsmTokenOptions, readWrite: boolean, work: (token: OpenToken) => Promise<T>): Promise<T> {
  const context = options.context ?? createSignerContext();
  const selector = checkTokenSelector(options);
  const pin = options.pin === undefined ? null : await resolvePin(options.pin, context);
  const lease = acquireModule(context.resolvePath(options.module));
  try {
    const slot = findTokenSlot(lease.module, selector);
    const session = openSession(slot, readWrite);
    try {
      if (pin !== null) login(session, pin);
      return await work({ lease, slot, session, description: describeToken(selector) });
    } finally {
      closeQuietly(session);
    }
  } finally {
    lease.release();
  }
}

/**
 * Every slot of the module with its token, if any (`certsmith hsm list`). Needs no PIN. Errors:
 * 2000 naming `options.module` when the library cannot be loaded.
 */
export async function listSlots(options: HsmModuleOptions): Promise<HsmSlotInfo[]> {
  return runAdmin(async () => {
    const context = options.context ?? createSignerContext();
    const lease = acquireModule(context.resolvePath(options.module));
    try {
      return describeSlots(lease.module);
    } finally {
      lease.release();
    }
  });
}

function describeSlots(module: Module): HsmSlotInfo[] {
  const slots = module.getSlots(false);
  const out: HsmSlotInfo[] = [];
  for (let index = 0; index < slots.length; index++) {
    const slot = slots.items(index);
    const tokenPresent = (slot.flags & SlotFlag.TOKEN_PRESENT) !== 0;
    let token: HsmTokenInfo | null = null;
    if (tokenPresent) {
      try {
        const info = slot.getToken();
        token = {
          label: info.label.trimEnd(),
          serial: info.serialNumber.trimEnd(),
          model: info.model.trimEnd(),
          manufacturer: info.manufacturerID.trimEnd(),
          initialized: (info.flags & TokenFlag.TOKEN_INITIALIZED) !== 0,
          userPinInitialized: (info.flags & TokenFlag.USER_PIN_INITIALIZED) !== 0,
          loginRequired: (info.flags & TokenFlag.LOGIN_REQUIRED) !== 0,
        };
      } catch {
        token = null; // Token present but unreadable: reported as absent rather than failing the listing.
      }
    }
    out.push({ slot: slotNumber(slot.handle), description: slot.slotDescription.trimEnd(), manufacturer: slot.manufacturerID.trimEnd(), tokenPresent, token });
  }
  return out;
}

const CLASS_NAMES: Readonly<Record<number, HsmObjectInfo['class']>> = {
  [ObjectClass.DATA]: 'data',
  [ObjectClass.CERTIFICATE]: 'certificate',
  [ObjectClass.PUBLIC_KEY]: 'public-key',
  [ObjectClass.PRIVATE_KEY]: 'private-key',
  [ObjectClass.SECRET_KEY]: 'secret-key',
};

const CURVE_NAMES: Readonly<Record<string, { name: string; bits: number }>> = {
  [CURVE_OIDS['P-256']]: { name: 'P-256', bits: 256 },
  [CURVE_OIDS['P-384']]: { name: 'P-384', bits: 384 },
  [CURVE_OIDS['P-521']]: { name: 'P-521', bits: 521 },
};

/** The named curve of CKA_EC_PARAMS, `undefined` for explicit parameters or unknown curves. */
function curveOf(params: Buffer): { name: string; bits: number } | undefined {
  if (params[0] !== 0x06) return undefined;
  return CURVE_NAMES[readOid(params, new DerReader(params).expect(0x06, 'CKA_EC_PARAMS'))];
}

function describeObject(object: SessionObject): HsmObjectInfo {
  const base = object.getAttribute({ class: null, label: null, id: null }) as { class: number; label: string | null; id: Buffer | null };
  const info: HsmObjectInfo = { class: CLASS_NAMES[base.class] ?? 'other', label: base.label ?? '', id: base.id ? base.id.toString('hex') : '' };
  const optional = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch {
      return undefined; // Attribute not readable for this object: leave it out.
    }
  };
  if (info.class === 'private-key' || info.class === 'public-key') {
    const keyType = object.getAttribute({ keyType: null }).keyType as number;
    info.keyType = keyType === KeyType.RSA ? 'RSA' : keyType === KeyType.EC ? 'EC' : String(keyType);
    if (keyType === KeyType.RSA) {
      const modulus = optional(() => object.getAttribute({ modulus: null }).modulus as Buffer);
      if (modulus) info.size = bitLength(modulus);
    } else if (keyType === KeyType.EC) {
      const params = optional(() => bytesAttribute(object, pkcs11js.CKA_EC_PARAMS));
      const curve = params ? curveOf(params) : undefined;
      if (curve) {
        info.curve = curve.name;
        info.size = curve.bits;
      }
    }
  }
  if (info.class === 'private-key') {
    const flags = optional(() => object.getAttribute({ sign: null, sensitive: null, extractable: null, alwaysSensitive: null, neverExtractable: null }));
    if (flags) Object.assign(info, flags);
  }
  if (info.class === 'certificate') {
    const value = optional(() => object.getAttribute({ value: null }).value as Buffer);
    if (value) {
      try {
        const certificate = parseCertificate(new Uint8Array(value));
        info.subject = formatDistinguishedName(certificate.subject);
        info.notAfter = certificate.notAfter.toISOString();
      } catch {
        // Not an X.509 certificate we can parse: list it without details.
      }
    }
  }
  return info;
}

function bitLength(unsigned: Uint8Array): number {
  let index = 0;
  while (index < unsigned.length && unsigned[index] === 0) index++;
  if (index === unsigned.length) return 0;
  return (unsigned.length - index - 1) * 8 + Math.floor(Math.log2(unsigned[index] as number)) + 1;
}

/**
 * Objects on the token (`certsmith hsm keys`): keys with their type, size and protection flags,
 * certificates with subject and expiry. Private objects are only visible with `pin`.
 */
export async function listKeys(options: HsmTokenOptions): Promise<HsmObjectInfo[]> {
  return runAdmin(() =>
    withToken(options, false, async ({ session }) => {
      const found = session.find();
      const out: HsmObjectInfo[] = [];
      for (let index = 0; index < found.length; index++) out.push(describeObject(found.items(index)));
      return out;
    }),
  );
}

const RSA_SIZES: readonly number[] = [2048, 3072, 4096];
const EC_CURVES: Readonly<Record<number, keyof typeof CURVE_OIDS>> = { 256: 'P-256', 384: 'P-384', 521: 'P-521' };

/**
 * Generate a CA key pair on the token (`certsmith hsm genkey`): a token private key that is
 * sensitive, never extractable and may only sign, and its public key, both labelled `keyLabel`
 * with the same CKA_ID. Errors: 2000 naming the option (size, label or id in use…), 2400 when the
 * token refuses to generate.
 */
export async function generateKeyPair(options: GenerateKeyPairOptions): Promise<GeneratedKeyPair> {
  return runAdmin(() => generateKeyPairOnToken(options));
}

async function generateKeyPairOnToken(options: GenerateKeyPairOptions): Promise<GeneratedKeyPair> {
  const algorithm = options.algorithm;
  if (algorithm !== 'rsa' && algorithm !== 'ecdsa') fail('algorithm', `must be "rsa" or "ecdsa", got "${String(algorithm)}"`);
  if (algorithm === 'rsa' && !RSA_SIZES.includes(options.size)) fail('size', `must be 2048, 3072 or 4096 for rsa, got ${options.size}`);
  if (algorithm === 'ecdsa' && EC_CURVES[options.size] === undefined) fail('size', `must be 256, 384 or 521 for ecdsa, got ${options.size}`);
  if (typeof options.keyLabel !== 'string' || options.keyLabel === '') fail('keyLabel', 'must name the new key');
  let id: Buffer;
  if (options.keyId !== undefined) {
    const parsed = parseKeyId(options.keyId);
    if (parsed === null) fail('keyId', `must be hexadecimal (e.g. "01a4"), got "${options.keyId}"`);
    id = parsed;
  } else {
    id = randomBytes(8);
  }

  return withToken(options, true, async ({ lease, session, description }) => {
    if (findObjects(session, ObjectClass.PRIVATE_KEY, { keyLabel: options.keyLabel }).length > 0) {
      fail('keyLabel', `a private key labelled "${options.keyLabel}" already exists on token ${description}`);
    }
    if (options.keyId !== undefined && findObjects(session, ObjectClass.PRIVATE_KEY, { keyId: id.toString('hex') }).length > 0) {
      fail('keyId', `a private key with id ${id.toString('hex')} already exists on token ${description}`);
    }
    const common = { token: true, label: options.keyLabel, id };
    // The private half is a CA key: sign only, sensitive, never extractable (so never wrappable),
    // private (invisible before login). No decrypt/unwrap/derive: a CA key has no business there.
    const privateTemplate = { ...common, private: true, sign: true, decrypt: false, unwrap: false, derive: false, sensitive: true, extractable: false };
    const publicTemplate = { ...common, private: false, verify: true, encrypt: false, wrap: false };
    const mechanism = algorithm === 'rsa' ? KeyGenMechanism.RSA : KeyGenMechanism.EC;
    const curve = algorithm === 'ecdsa' ? (EC_CURVES[options.size] as keyof typeof CURVE_OIDS) : null;
    const publicAttributes =
      curve === null
        ? { ...publicTemplate, keyType: KeyType.RSA, modulusBits: options.size, publicExponent: Buffer.from([1, 0, 1]) }
        : { ...publicTemplate, keyType: KeyType.EC, paramsEC: Buffer.from(derOid(CURVE_OIDS[curve])) };
    const privateAttributes = { ...privateTemplate, keyType: curve === null ? KeyType.RSA : KeyType.EC };
    let pair: IKeyPair;
    try {
      // The callback form runs C_GenerateKeyPair on libuv's thread pool: RSA-4096 can take seconds.
      pair = await lease.run(
        () =>
          new Promise<IKeyPair>((resolve, reject) => {
            session.generateKeyPair(mechanism, publicAttributes, privateAttributes, (error, keys) => (error || !keys ? reject(error ?? new Error('no key pair returned')) : resolve(keys)));
          }),
      );
    } catch (cause) {
      throw new CertsmithError(ErrorCode.PrivateKeyGenerationFailed, `${ADMIN_PREFIX} key generation failed on token ${description}${reasonSuffix(cause)}`, { cause });
    }
    const spki =
      curve === null
        ? rsaSpki(pair.publicKey.getAttribute({ modulus: null }).modulus as Buffer, pair.publicKey.getAttribute({ publicExponent: null }).publicExponent as Buffer)
        : ecSpki(ecPublicKeyAttributes(pair.publicKey).params, ecPublicKeyAttributes(pair.publicKey).point);
    return {
      keyLabel: options.keyLabel,
      keyId: id.toString('hex'),
      algorithm,
      size: options.size,
      publicKeyPem: encodePem('PUBLIC KEY', spki),
      subjectKeyId: Buffer.from(computeSubjectKeyId(publicKeyInfoFromSpki(spki))).toString('hex'),
    };
  });
}

/** CFSSL's `ca.expiry` default for `initca`: 5 years as 43800 hours. */
export const DEFAULT_CA_EXPIRY_MS = 43_800 * 3_600_000;

/** A request subject (`CN` plus `names: [{C, ST, L, O, OU, E}]`) as the DER Name CFSSL/Go write. */
function subjectName(subject: SignRequestSubject): Uint8Array {
  return encodeSubject(subjectFromNames(subject.CN, subject.names, subject.SerialNumber));
}

/**
 * TBSCertificate of a self-signed CA as CFSSL `initca` issues it (x509-core's builder): a random
 * 159-bit serial and notBefore = now rounded to the minute minus 5 minutes (CFSSL's backdating).
 */
function selfSignedCaTbs(subject: SignRequestSubject, spki: Uint8Array, algorithm: SignatureAlgorithm, now: Date, validityMs: number, pathLength: number | undefined): Uint8Array {
  const serial = randomBytes(20);
  serial[0] = (serial[0] as number) & 0x7f;
  const notBefore = new Date(Math.round(now.getTime() / 60_000) * 60_000 - 5 * 60_000);
  return buildSelfSignedCaTbs({
    name: subjectName(subject),
    spki,
    signatureAlgorithm: signatureAlgorithmIdentifier(algorithm),
    serial,
    notBefore,
    notAfter: new Date(notBefore.getTime() + validityMs),
    pathLength,
  });
}

/** Parse CFSSL's `ca.expiry` (a Go duration restricted to whole h/m/s) into milliseconds. */
export function parseExpiry(expiry: string): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(expiry);
  if (expiry === '' || match === null) fail('expiry', `must be a duration such as "43800h" or "8760h30m", got "${expiry}"`);
  const [hours = '0', minutes = '0', seconds = '0'] = match.slice(1).map((part) => part ?? '0');
  const ms = ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000;
  if (ms <= 0) fail('expiry', `must be positive, got "${expiry}"`);
  return ms;
}

function checkSubject(subject: SignRequestSubject | undefined): SignRequestSubject {
  if (subject === undefined || subject === null || typeof subject !== 'object') fail('subject', 'is required ({ CN, names: [{ C, ST, L, O, OU }] })');
  const hasName = (subject.names ?? []).some((name) => Object.values(name).some((value) => typeof value === 'string' && value !== ''));
  if (!subject.CN && !hasName) fail('subject', 'must have a CN or at least one name field');
  return subject;
}

function checkPathLength(pathLength: number | undefined): void {
  if (pathLength !== undefined && (!Number.isInteger(pathLength) || pathLength < 0)) fail('pathLength', `must be a non-negative integer, got ${pathLength}`);
}

/** The key to sign with, its SPKI, its label/id, and the algorithm to use. */
interface SigningKey {
  key: PrivateKey;
  spki: Uint8Array;
  label: string;
  id: Buffer;
  algorithm: SignatureAlgorithm;
}

function signingKey(token: OpenToken, selector: KeySelector, requested: SignatureAlgorithm | undefined): SigningKey {
  const key = findPrivateKey(token.session, selector, token.description);
  const spki = readKeySpki(token.session, key);
  const offered = algorithmsForKey(createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' }), tokenMechanisms(token.lease.module, token.slot));
  const algorithm = requested ?? offered[0];
  if (algorithm === undefined || !offered.includes(algorithm)) {
    fail('signatureAlgorithm', `the key ${describeKey(selector)} can sign with ${offered.join(', ') || 'nothing this token offers'}, not ${requested ?? 'anything'}`);
  }
  const { label, id } = key.getAttribute({ label: null, id: null }) as { label: string; id: Buffer };
  return { key, spki, label, id: id ?? Buffer.alloc(0), algorithm };
}

/**
 * Make the key a self-signed CA (`certsmith hsm initca`): CFSSL's initca profile (keyCertSign +
 * cRLSign critical, CA:TRUE critical, SKI, 5 years by default), signed on the token, checked, and
 * stored on the token next to the key unless `storeOnToken` is false. Errors: 2000 naming the
 * option (subject, expiry, key…, or a certificate already stored for the key).
 */
export async function createSelfSignedCaCertificate(options: SelfSignedCaOptions): Promise<SelfSignedCaResult> {
  return runAdmin(() => selfSignOnToken(options));
}

async function selfSignOnToken(options: SelfSignedCaOptions): Promise<SelfSignedCaResult> {
  const keySelector = checkKeySelector(options);
  const subject = checkSubject(options.subject);
  const validityMs = options.expiry === undefined ? DEFAULT_CA_EXPIRY_MS : parseExpiry(options.expiry);
  checkPathLength(options.pathLength);
  const store = options.storeOnToken ?? true;
  return withToken(options, store, async (token) => {
    const signer = signingKey(token, keySelector, options.signatureAlgorithm);
    if (store) {
      const existing = findObjects(token.session, ObjectClass.CERTIFICATE, { keyLabel: signer.label });
      if (existing.length > 0) {
        fail('storeOnToken', `token ${token.description} already holds a certificate labelled "${signer.label}"; delete it first or do not store the new one`);
      }
    }
    const tbs = selfSignedCaTbs(subject, signer.spki, signer.algorithm, options.now ?? new Date(), validityMs, options.pathLength);
    const signature = await signOnToken(token.lease, token.session, signer.key, signer.algorithm, tbs);
    const der = encodeSigned(tbs, signatureAlgorithmIdentifier(signer.algorithm), signature);
    // Check our own work before storing it: a certificate that does not verify must not become the CA.
    const x509 = new X509Certificate(der);
    if (!x509.verify(x509.publicKey)) throw new CertsmithError(ErrorCode.CertificateVerifyFailed, `${ADMIN_PREFIX} the token's signature on the new CA certificate does not verify`);
    if (store) {
      token.session.create({
        class: ObjectClass.CERTIFICATE,
        certType: CertificateType.X_509,
        token: true,
        private: false,
        label: signer.label,
        id: signer.id,
        subject: Buffer.from(subjectName(subject)),
        value: Buffer.from(der),
      });
    }
    return { certificatePem: encodePem('CERTIFICATE', der), certificateDer: der, storedOnToken: store };
  });
}

/**
 * A PKCS#10 request for the key (`certsmith hsm csr`), signed on the token, for a root elsewhere
 * to sign. Asks for a CA certificate unless `isCa` is false.
 */
export async function createCertificateSigningRequest(options: CertificateSigningRequestOptions): Promise<CertificateSigningRequestResult> {
  return runAdmin(() => requestOnToken(options));
}

async function requestOnToken(options: CertificateSigningRequestOptions): Promise<CertificateSigningRequestResult> {
  const keySelector = checkKeySelector(options);
  const subject = checkSubject(options.subject);
  checkPathLength(options.pathLength);
  return withToken(options, false, async (token) => {
    const signer = signingKey(token, keySelector, options.signatureAlgorithm);
    const hosts = options.hosts ?? [];
    // As CFSSL's `genkey -initca`: the hosts as SANs (classified and grouped as CFSSL does), then
    // basicConstraints CA:TRUE (critical) with the path length when asked for a CA.
    const basicConstraints = options.pathLength === undefined ? derSequence(derBoolean(true)) : derSequence(derBoolean(true), derInteger(options.pathLength));
    const info = encodeCertificationRequestInfo({
      subject: subjectName(subject),
      spki: signer.spki,
      subjectAltNames: hosts.length > 0 ? encodeSubjectAltNames(sansFromHosts(hosts)) : null,
      extensions: (options.isCa ?? true) ? [{ oid: '2.5.29.19', critical: true, value: basicConstraints }] : [],
    });
    const signature = await signOnToken(token.lease, token.session, signer.key, signer.algorithm, info);
    const der = encodeSigned(info, signatureAlgorithmIdentifier(signer.algorithm), signature);
    return { csrPem: encodePem('CERTIFICATE REQUEST', der), csrDer: der };
  });
}

/** The admin functions as one object: `import { hsm } from '@certsmith/signer-pkcs11'`. */
export const hsm = Object.freeze({ listSlots, listKeys, generateKeyPair, createSelfSignedCaCertificate, createCertificateSigningRequest });
