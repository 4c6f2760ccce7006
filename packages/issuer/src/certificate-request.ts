/**
 * The CFSSL certificate request (`csr.CertificateRequest`, behaviour doc 3.2) and the newcert /
 * newkey / sign request bodies around it, decoded with Go's semantics (see go-json.ts): defaults
 * pre-filled and merged field by field, case-insensitive keys, Go's type-error texts.
 */
import type { SignRequest, SignRequestSubject, SubjectName } from '@certsmith/signer-api';
import { BadRequestError } from '@certsmith/x509-core';

import type { GoField, GoType } from './go-json.js';
import { decodeGo, goBool, goBytes, goInt, goString, goStringMap, goStringSlice, jsonKind, unmarshalTypeError } from './go-json.js';

/** Key request (`csr.KeyRequest`): algorithm (exact, lower case) and size. */
export interface KeyRequest {
  algo: string;
  size: number;
}

/** `ca` section; only init_ca accepts it, newcert/newkey refuse it (behaviour doc 3.1 step 3). */
export interface CaConfig {
  pathlen?: number;
  pathlenzero?: boolean;
  expiry?: string;
  backdate?: string;
}

/** An extra CSR extension (`pkix.Extension`): OID arcs, criticality and DER value. */
export interface RequestExtension {
  id: number[];
  critical?: boolean;
  /** extnValue contents; base64 text in JSON. */
  value: Uint8Array;
}

/**
 * A certificate request as CFSSL accepts it (JSON member names kept). Every member is optional;
 * omitted members take CFSSL's defaults (key `ecdsa`/256, no subject, no hosts).
 */
export interface CertificateRequest {
  CN?: string;
  names?: SubjectName[] | null;
  hosts?: string[] | null;
  /** `null` or absent selects the default key (ECDSA P-256). */
  key?: Partial<KeyRequest> | null;
  ca?: CaConfig | null;
  /** Subject serialNumber attribute. */
  serialnumber?: string;
  delegation_enabled?: boolean;
  extensions?: RequestExtension[] | null;
  /** Only used by init_ca. */
  crl_url?: string;
}

/** The newcert body after decoding (behaviour doc 3.1). */
export interface NewCertificateRequest {
  request: CertificateRequest;
  profile?: string;
  label?: string;
  bundle?: boolean;
}

/** CFSSL's default key request: ECDSA P-256 (`csr.NewKeyRequest`). */
export const DEFAULT_KEY_REQUEST: Readonly<KeyRequest> = Object.freeze({ algo: 'ecdsa', size: 256 });

const nameFields: GoField[] = [
  { json: 'C', prop: 'C', type: goString },
  { json: 'ST', prop: 'ST', type: goString },
  { json: 'L', prop: 'L', type: goString },
  { json: 'O', prop: 'O', type: goString },
  { json: 'OU', prop: 'OU', type: goString },
  { json: 'E', prop: 'E', type: goString },
  { json: 'SerialNumber', prop: 'SerialNumber', type: goString },
  { json: 'OID', prop: 'OID', type: goStringMap },
];
const nameType: GoType = { kind: 'struct', goName: 'csr.Name', structName: 'Name', fields: nameFields };
const namesType: GoType = { kind: 'slice', goName: '[]csr.Name', elem: nameType };

const keyRequestType: GoType = {
  kind: 'struct',
  goName: 'csr.KeyRequest',
  structName: 'KeyRequest',
  pointer: true,
  fields: [
    { json: 'algo', prop: 'algo', type: goString },
    { json: 'size', prop: 'size', type: goInt },
  ],
};

const caConfigType: GoType = {
  kind: 'struct',
  goName: 'csr.CAConfig',
  structName: 'CAConfig',
  pointer: true,
  fields: [
    { json: 'pathlen', prop: 'pathlen', type: goInt },
    { json: 'pathlenzero', prop: 'pathlenzero', type: goBool },
    { json: 'expiry', prop: 'expiry', type: goString },
    { json: 'backdate', prop: 'backdate', type: goString },
  ],
};

const intSlice: GoType = { kind: 'slice', goName: 'asn1.ObjectIdentifier', elem: goInt };
const extensionType: GoType = {
  kind: 'struct',
  goName: 'pkix.Extension',
  structName: 'Extension',
  fields: [
    { json: 'Id', prop: 'id', type: intSlice },
    { json: 'Critical', prop: 'critical', type: goBool },
    { json: 'Value', prop: 'value', type: goBytes },
  ],
};

const certificateRequestFields: GoField[] = [
  { json: 'CN', prop: 'CN', type: goString },
  { json: 'names', prop: 'names', type: namesType },
  { json: 'hosts', prop: 'hosts', type: goStringSlice },
  { json: 'key', prop: 'key', type: keyRequestType },
  { json: 'ca', prop: 'ca', type: caConfigType },
  { json: 'serialnumber', prop: 'serialnumber', type: goString },
  { json: 'delegation_enabled', prop: 'delegation_enabled', type: goBool },
  { json: 'extensions', prop: 'extensions', type: { kind: 'slice', goName: '[]pkix.Extension', elem: extensionType } },
  { json: 'crl_url', prop: 'crl_url', type: goString },
];

function certificateRequestType(goName: string): GoType {
  return { kind: 'struct', goName, structName: 'CertificateRequest', pointer: true, fields: certificateRequestFields };
}

/** A fresh request holding CFSSL's defaults (`csr.New()`). */
export function defaultCertificateRequest(): CertificateRequest {
  return { CN: '', names: null, hosts: null, key: { ...DEFAULT_KEY_REQUEST }, ca: null, serialnumber: '', delegation_enabled: false, extensions: null, crl_url: '' };
}

/** Refuse `ca` outside init_ca (behaviour doc 3.1 step 3, 3.9): any non-null value, even `{}`. */
function refuseCaSection(request: CertificateRequest): void {
  if (request.ca !== null && request.ca !== undefined) throw new BadRequestError('ca section only permitted in initca');
}

/**
 * Decode a bare certificate request body (newkey, behaviour doc 3.9) onto CFSSL's defaults.
 * Throws 400 with Go's JSON text on type errors and `ca section only permitted in initca` when a
 * `ca` section is present.
 */
export function decodeCertificateRequest(body: unknown): CertificateRequest {
  const decoded = decodeGo(body, certificateRequestType('csr.CertificateRequest'), defaultCertificateRequest(), {
    structName: 'CertificateRequest',
    path: [],
  }) as CertificateRequest | null;
  // A JSON `null` body leaves the pre-filled request as it was.
  const request = decoded ?? defaultCertificateRequest();
  refuseCaSection(request);
  return request;
}

const newCertType: GoType = {
  kind: 'struct',
  goName: 'generator.genSignRequest',
  structName: 'genSignRequest',
  fields: [
    { json: 'request', prop: 'request', type: certificateRequestType('csr.CertificateRequest') },
    { json: 'profile', prop: 'profile', type: goString },
    { json: 'label', prop: 'label', type: goString },
    { json: 'bundle', prop: 'bundle', type: goBool },
  ],
};

/**
 * Decode a newcert body (behaviour doc 3.1 steps 1–3): `{}` and `null` are valid (empty subject,
 * default key), `"request": null` → 400 `missing request section`, `ca` → 400.
 */
export function decodeNewCertificateRequest(body: unknown): NewCertificateRequest {
  const initial = { request: defaultCertificateRequest(), profile: '', label: '', bundle: false };
  const decoded = (decodeGo(body, newCertType, initial, { structName: 'genSignRequest', path: [] }) ?? initial) as {
    request: CertificateRequest | null;
    profile: string;
    label: string;
    bundle: boolean;
  };
  if (decoded.request === null) throw new BadRequestError('missing request section');
  refuseCaSection(decoded.request);
  return { request: decoded.request, profile: decoded.profile, label: decoded.label, bundle: decoded.bundle };
}

/** JSON member names of the CFSSL `/sign` body (behaviour doc 4.5). */
export interface SignBody extends SignRequest {
  bundle?: boolean;
}

/**
 * Go `*big.Int` JSON decoding: an integer literal of any size, nothing else (not `1e3`, not a quoted
 * `"123"`: `big.Int.UnmarshalJSON` refuses both). Read from JSON text with `parseGoJson`, an integer
 * beyond 2^53 arrives as a bigint, exact.
 */
const bigIntType: GoType = {
  kind: 'custom',
  goName: '*big.Int',
  decode(value, context) {
    if (typeof value === 'bigint') return value;
    if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
    throw unmarshalTypeError(jsonKind(value), bigIntType, context);
  },
};

const subjectType: GoType = {
  kind: 'struct',
  goName: 'signer.Subject',
  structName: 'Subject',
  pointer: true,
  fields: [
    { json: 'CN', prop: 'CN', type: goString },
    { json: 'names', prop: 'names', type: namesType },
    { json: 'SerialNumber', prop: 'SerialNumber', type: goString },
  ],
};

const signBodyType: GoType = {
  kind: 'struct',
  goName: 'signhandler.jsonSignRequest',
  structName: 'jsonSignRequest',
  fields: [
    { json: 'hostname', prop: 'hostname', type: goString },
    { json: 'hosts', prop: 'hosts', type: goStringSlice },
    { json: 'certificate_request', prop: 'certificate_request', type: goString },
    { json: 'subject', prop: 'subject', type: subjectType },
    { json: 'profile', prop: 'profile', type: goString },
    { json: 'label', prop: 'label', type: goString },
    { json: 'serial', prop: 'serial', type: bigIntType },
    { json: 'bundle', prop: 'bundle', type: goBool },
  ],
};

/** Options of {@link decodeSignRequest}. */
export interface DecodeSignRequestOptions {
  /** Message for any decoding failure (authsign uses `Unable to parse authenticated sign request`). */
  invalidMessage?: string;
  /** Throw 400 `missing parameter 'certificate_request'` when it is empty (default true). */
  requireCsr?: boolean;
}

/** CFSSL's `/sign` answer to a body it cannot unmarshal (behaviour doc 4.5). */
export const SIGN_REQUEST_PARSE_MESSAGE = 'Unable to parse sign request';

/**
 * Decode a `/sign` (or inner `/authsign`) body into a {@link SignBody} (behaviour doc 4.5) the way
 * CFSSL's `jsonSignRequest` does: only `hostname`, `hosts`, `certificate_request`, `subject`,
 * `profile`, `label`, `serial` and `bundle` are read (`crl_override`, `extensions`, validity are not
 * reachable through the HTTP API, behaviour doc 3.2); a non-empty `hostname` (comma-separated)
 * takes precedence over `hosts`; a missing or empty `certificate_request` → 400 `missing parameter
 * 'certificate_request'`. Any decoding failure is reported as CFSSL does, 400 `Unable to parse
 * sign request`. A JSON `serial` above 2^53 must reach this function as a bigint: read the body
 * with `parseGoJson` (plain `JSON.parse` loses its precision).
 */
export function decodeSignRequest(body: unknown, options: DecodeSignRequestOptions = {}): SignBody {
  const invalidMessage = options.invalidMessage ?? SIGN_REQUEST_PARSE_MESSAGE;
  let decoded: Record<string, unknown>;
  try {
    decoded = decodeGo(body, signBodyType, {}, { structName: 'jsonSignRequest', path: [] }) as Record<string, unknown>;
  } catch (cause) {
    throw new BadRequestError(invalidMessage, { cause });
  }
  if (decoded === null || typeof decoded !== 'object') throw new BadRequestError(invalidMessage);
  const hostname = (decoded.hostname as string | undefined) ?? '';
  const hosts = hostname !== '' ? hostname.split(',') : ((decoded.hosts as string[] | null | undefined) ?? null);
  const csr = (decoded.certificate_request as string | undefined) ?? '';
  if (csr === '' && options.requireCsr !== false) throw new BadRequestError("missing parameter 'certificate_request'");
  const result: SignBody = { certificate_request: csr, hosts };
  if (decoded.subject) result.subject = decoded.subject as SignRequestSubject;
  for (const key of ['profile', 'label'] as const) {
    const value = decoded[key];
    if (typeof value === 'string' && value !== '') result[key] = value;
  }
  if (typeof decoded.serial === 'bigint') result.serial = decoded.serial;
  if (decoded.bundle === true) result.bundle = true;
  return result;
}
