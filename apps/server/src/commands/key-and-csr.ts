/**
 * Key, CSR and self-signed CA generation for `genkey` and `-initca`, over the issuer's newkey and
 * sign use cases. `initca` follows CFSSL's `initca.New` / `initca.NewFromPEM`: the request's
 * `ca` section (`expiry`, `backdate`, `pathlen`, `pathlenzero`) makes CFSSL's CA policy (usages
 * `cert sign`, `crl sign`; `43800h`; CA:TRUE with the path length), the CSR carries basicConstraints
 * when a `ca` section is present, and the certificate is the CSR signed by its own key: issuer ==
 * subject, SKI, no AKI, DNS names dropped from a CA certificate.
 */
import { createPublicKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import {
  DEFAULT_LABEL,
  chooseSignatureAlgorithm,
  createIssuer,
  createSignerDirectory,
  decodeCertificateRequest,
  generateKey,
  generateKeyAndCsr,
  newKey,
  parseSigningPolicy,
  resolveKeySpec,
} from '@certsmith/issuer';
import type { CertificateRequest, GeneratedKey, KeySpec } from '@certsmith/issuer';
import { algorithmsForKeyObject, signWithKeyObject } from '@certsmith/signer-api';
import { createLocalSigner } from '@certsmith/signer-local';
import {
  BadRequestError,
  CertsmithError,
  ErrorCode,
  derBoolean,
  derInteger,
  derSequence,
  encodeSigned,
  encodeSubject,
  encodeTbsCertificate,
  parseCertificate,
  parseCertificateRequest,
  parsePrivateKey,
  signatureAlgorithmIdentifier,
  subjectFromAttributes,
} from '@certsmith/x509-core';
import type { Reporter } from './common.js';

/** CFSSL's `csr.CAConfig`. */
export interface CaSection {
  pathlen: number;
  pathlenzero: boolean;
  expiry: string;
  backdate: string;
}

/** Output of a generation, as CFSSL's `cli.PrintCert` names it. */
export interface GeneratedMaterial {
  /** Certificate PEM (initca), absent for a bare key + CSR. */
  cert?: string;
  csr: string;
  /** Private key PEM; absent when an existing key was used. */
  key?: string;
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value === 'number' ? `number ${value}` : typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Split the `ca` member (Go matches JSON keys case-insensitively) from a CSR JSON body. */
export function splitCaSection(body: unknown): { request: unknown; ca: unknown } {
  if (!isRecord(body)) return { request: body, ca: undefined };
  const request: Record<string, unknown> = {};
  let ca: unknown;
  for (const [key, value] of Object.entries(body)) {
    if (key.toLowerCase() === 'ca') ca = value;
    else request[key] = value;
  }
  return { request, ca };
}

/** Decode a `ca` section with Go's rules and texts; `null`/absent → `null`. */
export function decodeCaSection(value: unknown): CaSection | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) throw new BadRequestError(`json: cannot unmarshal ${jsonKind(value).split(' ')[0]} into Go struct field CertificateRequest.ca of type csr.CAConfig`);
  const section: CaSection = { pathlen: 0, pathlenzero: false, expiry: '', backdate: '' };
  const fieldError = (field: string, type: string, got: unknown): BadRequestError =>
    new BadRequestError(`json: cannot unmarshal ${jsonKind(got)} into Go struct field CAConfig.ca.${field} of type ${type}`);
  for (const [key, raw] of Object.entries(value)) {
    const field = key.toLowerCase();
    if (raw === null) continue;
    if (field === 'pathlen') {
      if (typeof raw !== 'number' || !Number.isSafeInteger(raw)) throw fieldError('pathlen', 'int', raw);
      section.pathlen = raw;
    } else if (field === 'pathlenzero') {
      if (typeof raw !== 'boolean') throw fieldError('pathlenzero', 'bool', raw);
      section.pathlenzero = raw;
    } else if (field === 'expiry' || field === 'backdate') {
      if (typeof raw !== 'string') throw fieldError(field, 'string', raw);
      section[field] = raw;
    }
  }
  return section;
}

/** Progress for slow key sizes (RSA ≥ 4096 bits takes seconds). */
export function announceKey(spec: KeySpec, reporter: Reporter | undefined): void {
  if (spec.algorithm === 'RSA' && spec.bits >= 4096) reporter?.progress(`generating a ${spec.bits}-bit RSA key…`);
}

/** `genkey` (no `-initca`): CFSSL's `csr.Generator.ProcessRequest` with genkey's accept-all validator. */
export async function generateKeyAndRequest(body: unknown, reporter?: Reporter): Promise<{ request: CertificateRequest; key: string; csr: string }> {
  const request = decodeCertificateRequest(body);
  announceKey(resolveKeySpec(request.key), reporter);
  const generated = await newKey(request);
  return { request, key: generated.privateKeyPem, csr: generated.csrPem };
}

/** CFSSL `csr.IsNameEmpty`. */
function isNameEmpty(name: Record<string, unknown>): boolean {
  return ['C', 'ST', 'L', 'O', 'OU'].every((field) => typeof name[field] !== 'string' || name[field] === '');
}

/** CFSSL initca's validator: a CN, or names none of which is empty (5300 `missing subject information`). */
function assertSubjectPresent(request: CertificateRequest): void {
  if (request.CN) return;
  const names = request.names ?? [];
  if (names.length === 0 || names.some((name) => isNameEmpty(name as Record<string, unknown>))) {
    throw new CertsmithError(ErrorCode.PolicyInvalidRequest, 'missing subject information');
  }
}

/** CFSSL `initca.CAPolicy` adjusted by the request's `ca` section. */
function caPolicy(ca: CaSection | null) {
  const constraint: Record<string, unknown> = { is_ca: true, max_path_len: ca?.pathlen ?? 0 };
  // CFSSL ignores `pathlenzero` together with a non-zero `pathlen`.
  if (!(ca !== null && ca.pathlen !== 0 && ca.pathlenzero)) constraint['max_path_len_zero'] = ca?.pathlenzero ?? false;
  const profile: Record<string, unknown> = { usages: ['cert sign', 'crl sign'], expiry: ca?.expiry || '43800h', ca_constraint: constraint };
  if (ca?.backdate) profile['backdate'] = ca.backdate;
  return parseSigningPolicy({ signing: { default: profile } });
}

/** basicConstraints for the CSR, as CFSSL's `appendCAInfoToCSR` (pathlen -1 = omitted). */
function csrBasicConstraints(ca: CaSection): { id: number[]; critical: boolean; value: Uint8Array } {
  const pathlen = ca.pathlen === 0 && !ca.pathlenzero ? -1 : ca.pathlen;
  const value = pathlen >= 0 ? derSequence(derBoolean(true), derInteger(pathlen)) : derSequence(derBoolean(true));
  return { id: [2, 5, 29, 19], critical: true, value };
}

/** Key spec and generated-key view of an existing private key (`gencert -initca -ca-key`). */
function existingKey(keyPem: string): { keyRequest: { algo: string; size: number }; key: (spec: KeySpec) => GeneratedKey } {
  const parsed = parsePrivateKey(keyPem);
  const keyRequest =
    parsed.algorithm === 'RSA'
      ? { algo: 'rsa', size: parsed.publicKey.bits }
      : parsed.algorithm === 'ECDSA'
        ? { algo: 'ecdsa', size: parsed.publicKey.bits }
        : { algo: 'ed25519', size: 0 };
  const publicKey = createPublicKey(parsed.keyObject);
  return {
    keyRequest,
    key: (spec) => ({ spec, privateKey: parsed.keyObject, publicKey, spki: parsed.publicKey.spki, privateKeyPem: keyPem }),
  };
}

/**
 * `genkey -initca` / `gencert -initca`: a self-signed CA from a CSR JSON body. With `existingKeyPem`
 * the CA certificate is (re)issued for that key and no key is returned (CFSSL `initca.NewFromPEM`).
 * Errors: 400 (JSON types, Go's texts), 2400 key request, 5300 `missing subject information`, 5200
 * bad `ca.expiry`/`ca.backdate`.
 */
export async function initCa(body: unknown, options: { existingKeyPem?: string; reporter?: Reporter } = {}): Promise<GeneratedMaterial> {
  const { request: rest, ca: rawCa } = splitCaSection(body);
  const request = decodeCertificateRequest(rest);
  const ca = decodeCaSection(rawCa);
  assertSubjectPresent(request);
  const policy = caPolicy(ca);
  if (ca !== null) request.extensions = [...(request.extensions ?? []), csrBasicConstraints(ca)];

  let keySource: (spec: KeySpec) => Promise<GeneratedKey>;
  let privateKey: KeyObject | null = null;
  if (options.existingKeyPem !== undefined) {
    const existing = existingKey(options.existingKeyPem);
    request.key = existing.keyRequest;
    keySource = async (spec) => {
      const key = existing.key(spec);
      privateKey = key.privateKey;
      return key;
    };
  } else {
    announceKey(resolveKeySpec(request.key), options.reporter);
    keySource = async (spec) => {
      const key = await generateKey(spec);
      privateKey = key.privateKey;
      return key;
    };
  }
  const generated = await generateKeyAndCsr(request, { keySource });
  const key = privateKey as KeyObject | null;
  if (key === null) throw new CertsmithError(ErrorCode.PrivateKeyGenerationFailed, 'no key was generated');

  // The CSR signed by its own key: a local signer over a throw-away certificate that only lends its
  // subject (the issuer name) and key. It has no SKI, so the CA certificate gets no AKI, as Go's.
  const csr = parseCertificateRequest(generated.csrPem);
  const subjectDer = encodeSubject(subjectFromAttributes(csr.subject.rdns.flat()));
  const algorithm = chooseSignatureAlgorithm(csr.publicKey, algorithmsForKeyObject(key));
  if (algorithm === null) throw new CertsmithError(ErrorCode.PrivateKeyUnsupportedAlgorithm);
  const algorithmId = signatureAlgorithmIdentifier(algorithm);
  const now = new Date();
  const tbs = encodeTbsCertificate({
    serial: 1n,
    signatureAlgorithm: algorithmId,
    issuer: subjectDer,
    notBefore: now,
    notAfter: new Date(now.getTime() + 3_600_000),
    subject: subjectDer,
    spki: csr.publicKey.spki,
    extensions: [],
  });
  const bootstrap = parseCertificate(encodeSigned(tbs, algorithmId, await signWithKeyObject(key, tbs, algorithm)));
  const signer = createLocalSigner(bootstrap, key);
  try {
    const issuer = createIssuer({ signers: createSignerDirectory([{ label: DEFAULT_LABEL, signer, policy }]) });
    const issued = await issuer.signCertificate({ certificate_request: generated.csrPem, hosts: request.hosts ?? null }, { authenticated: true });
    const material: GeneratedMaterial = { cert: issued.certificatePem, csr: generated.csrPem };
    if (options.existingKeyPem === undefined) material.key = generated.privateKeyPem;
    return material;
  } finally {
    await signer.close();
  }
}
