/**
 * Finding a token and the objects on it. Tokens are chosen by label, slot ID or serial number;
 * keys and certificates by CKA_LABEL and/or CKA_ID. Lookups fail with a {@link TokenLookupError}
 * naming the option, and list what *was* found (labels, never secrets) so that a typo is obvious.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import { ObjectClass, SessionFlag, TokenFlag } from 'graphene-pk11';
import type { Module, PrivateKey, Session, SessionObject, Slot } from 'graphene-pk11';

import { TokenLookupError, ckrName, isPinFailure, reasonSuffix } from './pkcs11-errors.js';

/** Which token to use: exactly one member is set. */
export interface TokenSelector {
  /** CKA token label (trailing blanks ignored). */
  tokenLabel?: string;
  /** PKCS#11 slot ID (`CK_SLOT_ID`, as `certsmith hsm list` prints it). */
  slot?: number;
  /** Token serial number (trailing blanks ignored). */
  tokenSerial?: string;
}

/** Which key to use: at least one member is set. */
export interface KeySelector {
  /** CKA_LABEL of the private key. */
  keyLabel?: string;
  /** CKA_ID of the private key, in hexadecimal. */
  keyId?: string;
}

/** Slot ID of a pkcs11js slot handle (a native `CK_ULONG`, 8 bytes on 64-bit platforms). */
export function slotNumber(handle: Buffer): number {
  return handle.length >= 8 ? Number(handle.readBigUInt64LE(0)) : handle.readUInt32LE(0);
}

/** `label "ca"`, `slot 1234` or `serial "abc"`: how messages name the selected token. */
export function describeToken(selector: TokenSelector): string {
  if (selector.tokenLabel !== undefined) return `labelled "${selector.tokenLabel}"`;
  if (selector.tokenSerial !== undefined) return `with serial "${selector.tokenSerial}"`;
  return `in slot ${selector.slot}`;
}

/** `labelled "ca-key"`, `with id 01ab` or both: how messages name the selected key. */
export function describeKey(selector: KeySelector): string {
  const parts: string[] = [];
  if (selector.keyLabel !== undefined) parts.push(`labelled "${selector.keyLabel}"`);
  if (selector.keyId !== undefined) parts.push(`with id ${selector.keyId}`);
  return parts.join(' and ');
}

function selectorOption(selector: TokenSelector): string {
  return selector.tokenLabel !== undefined ? 'tokenLabel' : selector.tokenSerial !== undefined ? 'tokenSerial' : 'slot';
}

/**
 * Find the slot holding the selected, initialised token. Throws a {@link TokenLookupError} with
 * `tokenMissing` when no slot matches, listing the tokens that are present.
 */
export function findTokenSlot(module: Module, selector: TokenSelector): Slot {
  const option = selectorOption(selector);
  // Only slots with a token: a selected token that is not inserted is "missing", not an error of its own.
  const slots = module.getSlots(true);
  const seen: string[] = [];
  const matches: Slot[] = [];
  for (let index = 0; index < slots.length; index++) {
    const slot = slots.items(index);
    const id = slotNumber(slot.handle);
    if (selector.slot !== undefined) {
      if (id === selector.slot) matches.push(slot);
      seen.push(String(id));
      continue;
    }
    let label: string;
    let serial: string;
    try {
      const token = slot.getToken();
      // An uninitialised token (SoftHSM's spare slot) has no label worth matching.
      if ((token.flags & TokenFlag.TOKEN_INITIALIZED) === 0) continue;
      label = token.label.trimEnd();
      serial = token.serialNumber.trimEnd();
    } catch {
      continue; // A slot whose token cannot be read is as good as empty.
    }
    seen.push(selector.tokenLabel !== undefined ? `"${label}"` : `"${serial}"`);
    if ((selector.tokenLabel !== undefined && label === selector.tokenLabel) || (selector.tokenSerial !== undefined && serial === selector.tokenSerial)) {
      matches.push(slot);
    }
  }
  if (matches.length === 0) {
    const found = seen.length > 0 ? `present: ${seen.sort().join(', ')}` : 'no token present';
    throw new TokenLookupError(option, `no initialized token ${describeToken(selector)} (${found})`, { tokenMissing: true });
  }
  if (matches.length > 1) {
    throw new TokenLookupError(option, `${matches.length} tokens ${describeToken(selector)}; select one with tokenSerial`);
  }
  return matches[0] as Slot;
}

/** Open a read-only session (signing needs no write access) or a read-write one (key generation). */
export function openSession(slot: Slot, readWrite = false): Session {
  return slot.open(SessionFlag.SERIAL_SESSION | (readWrite ? SessionFlag.RW_SESSION : 0));
}

/**
 * Keyed digests of the PINs this process logged in with, per module and slot. Login state belongs
 * to the application and the token, not to a session: once any session of the process is logged
 * in, `C_Login` answers `CKR_USER_ALREADY_LOGGED_IN` without looking at the PIN, so a second signer
 * configured with a wrong PIN would silently work — until a restart. Comparing against the digest
 * of the PIN that did log in catches it at creation. HMAC with a per-process random key, so the map
 * holds nothing a memory dump could brute-force offline more easily than the PIN the signer keeps anyway.
 */
const loginDigests = new WeakMap<Module, Map<number, Buffer>>();
const digestKey = randomBytes(32);

function pinDigest(pin: string): Buffer {
  return createHmac('sha256', digestKey).update(pin).digest();
}

/**
 * Log the user in. `CKR_USER_ALREADY_LOGGED_IN` is success when the PIN is the one this process
 * logged in with (or when the login was made outside this registry and cannot be checked). Wrong
 * PINs fail with a {@link TokenLookupError} on `pin` carrying the CKR name only.
 */
export function login(session: Session, pin: string): void {
  const module = session.slot.module;
  const slot = slotNumber(session.slot.handle);
  let digests = loginDigests.get(module);
  if (!digests) {
    digests = new Map();
    loginDigests.set(module, digests);
  }
  try {
    session.login(pin);
    digests.set(slot, pinDigest(pin));
  } catch (error) {
    if (ckrName(error) === 'CKR_USER_ALREADY_LOGGED_IN') {
      const known = digests.get(slot);
      if (known !== undefined && !timingSafeEqual(known, pinDigest(pin))) {
        throw new TokenLookupError('pin', 'login failed (not the PIN this process is logged in to the token with)');
      }
      return;
    }
    if (isPinFailure(error)) throw new TokenLookupError('pin', `login failed${reasonSuffix(error)}`, { cause: error });
    throw error;
  }
}

/** Parse a hex CKA_ID (`01ab`, `01:AB`); `null` when it is not hex. */
export function parseKeyId(hex: string): Buffer | null {
  const compact = hex.replace(/[:\s]/g, '');
  if (compact.length === 0 || compact.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(compact)) return null;
  return Buffer.from(compact, 'hex');
}

function objectTemplate(objectClass: ObjectClass, selector: KeySelector): Record<string, unknown> {
  const template: Record<string, unknown> = { class: objectClass };
  if (selector.keyLabel !== undefined) template['label'] = selector.keyLabel;
  if (selector.keyId !== undefined) template['id'] = parseKeyId(selector.keyId);
  return template;
}

/** All objects of `objectClass` matching the selector. */
export function findObjects(session: Session, objectClass: ObjectClass, selector: KeySelector): SessionObject[] {
  const found = session.find(objectTemplate(objectClass, selector));
  const out: SessionObject[] = [];
  for (let index = 0; index < found.length; index++) out.push(found.items(index));
  return out;
}

/**
 * The one private key matching the selector. Throws a {@link TokenLookupError} on `keyLabel` (or
 * `keyId`) when there is none or more than one. Must be called after login: private keys are
 * private objects, invisible before.
 */
export function findPrivateKey(session: Session, selector: KeySelector, tokenDescription: string): PrivateKey {
  const option = selector.keyLabel !== undefined ? 'keyLabel' : 'keyId';
  const keys = findObjects(session, ObjectClass.PRIVATE_KEY, selector);
  if (keys.length === 0) throw new TokenLookupError(option, `no private key ${describeKey(selector)} on token ${tokenDescription}`);
  if (keys.length > 1) {
    throw new TokenLookupError(option, `${keys.length} private keys ${describeKey(selector)} on token ${tokenDescription}; add keyId to choose one`);
  }
  return (keys[0] as SessionObject).toType<PrivateKey>();
}

/**
 * DER of the certificate object stored with the key: first by the key's own selector, then by the
 * key's CKA_ID (the usual pairing convention of PKCS#11 tools). `null` when there is none.
 */
export function findCertificateDer(session: Session, selector: KeySelector, keyId: Buffer | null): Buffer | null {
  let certificates = findObjects(session, ObjectClass.CERTIFICATE, selector);
  if (certificates.length === 0 && keyId !== null && keyId.length > 0) {
    certificates = findObjects(session, ObjectClass.CERTIFICATE, { keyId: keyId.toString('hex') });
  }
  const first = certificates[0];
  if (first === undefined) return null;
  const value = first.getAttribute({ value: null }).value;
  return Buffer.isBuffer(value) ? value : null;
}

/** Mechanisms the token in `slot` lists, or `null` when it cannot tell (then the base mechanisms are assumed). */
export function tokenMechanisms(module: Module, slot: Slot): ReadonlySet<number> | null {
  try {
    return new Set(module.lib.C_GetMechanismList(slot.handle));
  } catch {
    return null;
  }
}
