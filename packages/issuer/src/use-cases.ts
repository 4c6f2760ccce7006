/**
 * The operations the HTTP layer calls (pure library: no HTTP, no JSON envelopes): newkey, newcert,
 * sign, authsign and info as CFSSL performs them (behaviour doc 3.1, 3.9, 4.5, 7.10). Errors are
 * CertsmithErrors with CFSSL codes; the HTTP layer maps them to status and envelope.
 */
import type { InfoResult, SignRequest, Signer } from '@certsmith/signer-api';
import type { CertificateExtension } from '@certsmith/x509-core';
import type { SubjectAttributes } from '@certsmith/x509-core';
import {
  BadRequestError,
  CertsmithError,
  DerEncodeError,
  DerReader,
  ErrorCode,
  STANDARD_ATTRIBUTE_OIDS,
  decodePemBlock,
  derExtension,
  encodeSubject,
  encodeSubjectAltNames,
  isEmptySanList,
  parseCertificateRequest,
  readPublicKeyInfo,
  sanListFromParsed,
  sansFromHosts,
  subjectAttributeList,
  subjectFromNames,
} from '@certsmith/x509-core';

import { verifyAuthenticatedRequest } from './auth-token.js';
import type { CertificateRequest, SignBody } from './certificate-request.js';
import { decodeSignRequest } from './certificate-request.js';
import type { CsrFacts, SignOverrides } from './certificate-template.js';
import { issueCertificate } from './certificate-template.js';
import type { CsrTemplate, SelfSigningKey, SignedCsr } from './csr.js';
import { createCsr, csrExtensions } from './csr.js';
import { CsrRequestError } from './errors.js';
import { delegationUsageExtension } from './extensions.js';
import type { ExtensionSpec } from './extensions.js';
import type { GoType } from './go-json.js';
import { decodeGo, goBytes } from './go-json.js';
import { parseGoJson } from './go-json-text.js';
import { getIssuerContext } from './issuer-context.js';
import { generateKey, resolveKeySpec } from './key-generation.js';
import type { GeneratedKey, KeySpec } from './key-generation.js';
import type { SigningPolicy } from './signing-policy.js';
import { selectProfile } from './signing-policy.js';
import type { Sums } from './sums.js';
import { computeSums } from './sums.js';
import type { SignatureAlgorithm } from '@certsmith/signer-api';

/** The 5300 message newcert adds when the request has no hosts (behaviour doc 3.1 step 9, exact text). */
export const NO_HOSTS_MESSAGE =
  'This certificate lacks a "hosts" field. This makes it unsuitable for\n' +
  'websites. For more information see the Baseline Requirements for the Issuance and Management\n' +
  'of Publicly-Trusted Certificates, v.1.1.6, from the CA/Browser Forum (https://cabforum.org);\n' +
  'specifically, section 10.2.3 ("Information Requirements").';

/** The 5300 message newcert/sign add when `bundle` is requested but no bundler exists (behaviour doc 3.1 step 8). */
export const NO_BUNDLER_MESSAGE = 'This request requires a bundler, but one is not initialized for the API server.';

/** A `{code, message}` item for the envelope's `messages`. */
export interface ResultMessage {
  code: number;
  message: string;
}

/** Result of {@link generateKeyAndCsr} (newkey, behaviour doc 3.9). */
export interface KeyAndCsrResult {
  /** Private key PEM (CFSSL format), trailing newline. */
  privateKeyPem: string;
  /** `CERTIFICATE REQUEST` PEM, trailing newline. */
  csrPem: string;
  csrDer: Uint8Array;
  sums: { certificate_request: Sums };
  /**
   * The CSR's facts as the signer needs them (with the CSR's own subject and SAN encodings), so a
   * newcert that signs this CSR needs neither to re-parse it nor to re-encode them. Plain data.
   */
  facts: CsrFacts;
}

/** Result of {@link issueNewCertificate} (newcert, behaviour doc 3.1). */
export interface NewCertificateResult {
  privateKeyPem: string;
  csrPem: string;
  certificatePem: string;
  certificateDer: Uint8Array;
  sums: { certificate: Sums; certificate_request: Sums };
  /** Envelope messages: the 5300 no-hosts message when the request had no hosts. */
  messages: ResultMessage[];
}

/** Result of {@link signCertificateRequest}. */
export interface SignResult {
  certificatePem: string;
  certificateDer: Uint8Array;
}

/** Options of {@link generateKeyAndCsr} and {@link issueNewCertificate}. */
export interface KeyGenerationOptions {
  /**
   * Where key pairs come from (default: {@link generateKey}, asynchronous node:crypto). A server can
   * plug in a pool of pre-generated keys; benchmarks use it to time issuance without key generation.
   * Must return a fresh key matching `spec`.
   */
  keySource?: (spec: KeySpec) => Promise<GeneratedKey>;
}

/** Input of {@link issueNewCertificate}. */
export interface IssueNewCertificateInput {
  request: CertificateRequest;
  profile?: string;
  label?: string;
}

/** CFSSL `helpers.SignerAlgo` for a freshly generated key (the CSR's signature algorithm). */
function csrAlgorithm(spec: KeySpec): SignatureAlgorithm {
  switch (spec.algorithm) {
    case 'RSA':
      return spec.bits >= 4096 ? 'RSA-SHA512' : spec.bits >= 3072 ? 'RSA-SHA384' : 'RSA-SHA256';
    case 'ECDSA':
      return spec.bits === 521 ? 'ECDSA-SHA512' : spec.bits === 384 ? 'ECDSA-SHA384' : 'ECDSA-SHA256';
    case 'Ed25519':
      return 'Ed25519';
  }
}

function requestExtensions(request: CertificateRequest): ExtensionSpec[] {
  const extensions: ExtensionSpec[] = [];
  if (request.delegation_enabled) extensions.push(delegationUsageExtension());
  for (const extension of request.extensions ?? []) {
    const oid = (extension.id ?? []).join('.');
    const value = extension.value instanceof Uint8Array ? extension.value : decodeBase64Value(extension.value);
    try {
      // x509-core refuses what DER cannot carry (OID arcs, value not one DER element…): 9300 before key generation, as CFSSL's csr.Generate.
      derExtension(oid, extension.critical === true, value);
    } catch (cause) {
      if (cause instanceof DerEncodeError) throw new CsrRequestError(cause.message, { cause });
      throw cause;
    }
    // Parsers (certsmith's, Go's) refuse a request with the same extension twice.
    if (extensions.some((seen) => seen.oid === oid)) throw new CsrRequestError(`duplicate extension ${oid}`);
    extensions.push({ oid, critical: extension.critical === true, value });
  }
  return extensions;
}

function decodeBase64Value(value: unknown): Uint8Array {
  return decodeGo(value, goBytes, null, { structName: 'Extension', path: ['extensions', 'Value'] }) as Uint8Array ?? new Uint8Array();
}

/** True when re-reading the encoded subject (Go `FillFromRDNSequence`) gives back the same subject. */
function isRereadStable(subject: SubjectAttributes): boolean {
  return subject.extra.every((attribute) => !STANDARD_ATTRIBUTE_OIDS.has(attribute.oid));
}

interface GeneratedRequest {
  privateKeyPem: string;
  csrPem: string;
  csrDer: Uint8Array;
  facts: CsrFacts;
}

/** Key + CSR, keeping the facts the signer needs so newcert does not re-parse its own CSR. */
async function generateRequest(request: CertificateRequest, options: KeyGenerationOptions): Promise<GeneratedRequest> {
  // Validate everything cheap before spending time on key generation (CFSSL's error precedence is
  // kept: key request errors are reported before subject/extension errors).
  const spec = resolveKeySpec(request.key);
  const subject = subjectFromNames(request.CN, request.names, request.serialnumber);
  const subjectDer = encodeSubject(subject);
  const sans = sansFromHosts(request.hosts);
  const sanDer = isEmptySanList(sans) ? undefined : encodeSubjectAltNames(sans);
  const extras = requestExtensions(request);
  const key = await (options.keySource ?? generateKey)(spec);
  const template: CsrTemplate = { subjectDer, spki: key.spki, sans, extensions: extras, sanDer };
  let csr: SignedCsr;
  try {
    csr = await createCsr(template, key.sign !== undefined ? (key as SelfSigningKey) : key.privateKey, csrAlgorithm(spec));
  } finally {
    // The key has served: its one signature is made and its PEM is in hand.
    key.release?.();
  }
  const reader = new DerReader(key.spki);
  const publicKey = readPublicKeyInfo(key.spki, reader.expect(0x30, 'SubjectPublicKeyInfo'), reader);
  const extensions: CertificateExtension[] = csrExtensions(template).map(({ oid, critical, value }) => ({ oid, critical, value }));
  return {
    privateKeyPem: key.privateKeyPem,
    csrPem: csr.pem,
    csrDer: csr.der,
    facts: {
      subjectAttributes: subjectAttributeList(subject),
      publicKey,
      sans,
      extensions,
      // The certificate re-encodes the subject as Go re-reads it from the CSR; that is the same DER
      // unless an OID entry uses a standard attribute type (then the type moves to its standard slot).
      precomputed: { subject: isRereadStable(subject) ? { attributes: subject, der: subjectDer } : undefined, sanDer },
    },
  };
}

/**
 * newkey: generate a key and a CSR for `request` (behaviour doc 3.3–3.5, 3.9). Errors: 2400 key
 * request (`RSA key is too weak`, `RSA key size too large`, `invalid curve`, `invalid algorithm`),
 * 9300 subject/extension problems (`invalid OID part abc`). `request.ca` is not checked here: use
 * {@link decodeCertificateRequest} on raw bodies.
 */
export async function generateKeyAndCsr(request: CertificateRequest, options: KeyGenerationOptions = {}): Promise<KeyAndCsrResult> {
  const generated = await generateRequest(request, options);
  return {
    privateKeyPem: generated.privateKeyPem,
    csrPem: generated.csrPem,
    csrDer: generated.csrDer,
    sums: { certificate_request: computeSums(generated.csrDer) },
    facts: generated.facts,
  };
}

function certificateDerFromPem(pem: string): Uint8Array {
  const match = decodePemBlock(pem);
  if (match === null) throw new CertsmithError(ErrorCode.CertificateDecodeFailed);
  return match.block.bytes;
}

/**
 * newcert: generate key and CSR, sign under `profile` with `signer`, compute sums (behaviour doc
 * 3.1). An unknown profile fails with 5400 before any key is generated. Signers without
 * {@link Signer.sign} (remote CAs) receive `{certificate_request, profile, label}` through
 * {@link Signer.signRequest} and apply their own policy. `messages` carries the 5300 no-hosts
 * message when `request.hosts` is empty.
 */
export async function issueNewCertificate(
  input: IssueNewCertificateInput,
  signer: Signer,
  policy: SigningPolicy,
  options: KeyGenerationOptions = {},
): Promise<NewCertificateResult> {
  const request = input.request;
  const messages: ResultMessage[] = (request.hosts ?? []).length === 0 ? [{ code: ErrorCode.PolicyInvalidRequest, message: NO_HOSTS_MESSAGE }] : [];
  let certificatePem: string;
  let certificateDer: Uint8Array;
  let generated: GeneratedRequest;
  if (typeof signer.sign === 'function') {
    const profile = selectProfile(policy, input.profile);
    const [context, made] = await Promise.all([getIssuerContext(signer), generateRequest(request, options)]);
    generated = made;
    const issued = await issueCertificate(context, policy, profile, generated.facts);
    certificatePem = issued.pem;
    certificateDer = issued.der;
  } else {
    generated = await generateRequest(request, options);
    const remote = await remoteSign(signer, { certificate_request: generated.csrPem, profile: input.profile ?? '', label: input.label ?? '' });
    certificatePem = remote.certificatePem;
    certificateDer = remote.certificateDer;
  }
  return {
    privateKeyPem: generated.privateKeyPem,
    csrPem: generated.csrPem,
    certificatePem,
    certificateDer,
    sums: { certificate: computeSums(certificateDer), certificate_request: computeSums(generated.csrDer) },
    messages,
  };
}

async function remoteSign(signer: Signer, request: SignRequest): Promise<SignResult> {
  if (typeof signer.signRequest !== 'function') throw new CertsmithError(ErrorCode.PrivateKeyUnavailable);
  const { certificatePem } = await signer.signRequest(request);
  return { certificatePem, certificateDer: certificateDerFromPem(certificatePem) };
}

/**
 * sign: sign a CSR from a SignRequest (behaviour doc 4.1, 4.5, 7.10): profile (5400 when unknown),
 * CSR parsing (9002 `CSR Decode failed`, 9300 `not a csr`, 9003, 9300 bad signature), then the
 * local signer's rules — `hosts` replaces SANs, `subject` replaces the subject's non-empty fields,
 * `serial` with ClientProvidesSerialNumbers (1400 when missing), allowed `extensions` (1300
 * otherwise), `crl_override`, `NotBefore`/`NotAfter`. Signers without {@link Signer.sign} get the
 * request as it is.
 */
export async function signCertificateRequest(request: SignRequest, signer: Signer, policy: SigningPolicy): Promise<SignResult> {
  if (typeof signer.sign !== 'function') return remoteSign(signer, request);
  const profile = selectProfile(policy, request.profile);
  const csr = parseCertificateRequest(request.certificate_request ?? '');
  const context = await getIssuerContext(signer);
  const facts: CsrFacts = {
    subjectAttributes: csr.subject.rdns.flat(),
    publicKey: csr.publicKey,
    sans: sanListFromParsed(csr.subjectAltNames),
    extensions: csr.extensions,
  };
  const issued = await issueCertificate(context, policy, profile, facts, signOverridesOf(request));
  return { certificatePem: issued.pem, certificateDer: issued.der };
}

/** What a sign request changes in the certificate its CSR would give (CFSSL's SignRequest fields). */
export function signOverridesOf(request: SignRequest): SignOverrides {
  return {
    hosts: request.hosts,
    subject: request.subject,
    serial: request.serial,
    extensions: request.extensions,
    crlOverride: request.crl_override,
    notBefore: request.NotBefore,
    notAfter: request.NotAfter,
  };
}

/**
 * `/sign` refuses profiles that require authentication: 400 `authentication required` when the
 * selected profile has an `auth_key` (behaviour doc 4.5). Unknown profiles → 5400.
 */
export function assertUnauthenticatedSigningAllowed(policy: SigningPolicy, profileName: string | undefined): void {
  if (selectProfile(policy, profileName).authKey) throw new BadRequestError('authentication required');
}

const authenticatedRequestType: GoType = {
  kind: 'struct',
  goName: 'auth.AuthenticatedRequest',
  structName: 'AuthenticatedRequest',
  fields: [
    { json: 'timestamp', prop: 'timestamp', type: { kind: 'int', goName: 'int64' } },
    { json: 'remote_address', prop: 'remoteAddress', type: goBytes },
    { json: 'token', prop: 'token', type: goBytes },
    { json: 'request', prop: 'request', type: goBytes },
  ],
};

/**
 * authsign: decode and verify an authenticated request (behaviour doc 4.4, 4.5) and return the
 * inner sign request, ready for {@link signCertificateRequest}. Errors, in CFSSL's order: outer
 * body → 400 Go JSON text; inner → 400 `Unable to parse authenticated sign request`; profile
 * without auth key → 400 `no authentication provider`; bad token (neither `auth_key` nor
 * `prev_auth_key`) → 400 `invalid token`; no CSR → 400 `missing parameter 'certificate_request'`.
 * An unknown profile → 5400 (certsmith's stricter rule).
 */
export function authenticateSignRequest(body: unknown, policy: SigningPolicy): SignBody {
  const outer = decodeGo(body, authenticatedRequestType, {}, { structName: 'AuthenticatedRequest', path: [] }) as {
    token?: Uint8Array | null;
    request?: Uint8Array | null;
  };
  const requestBytes = outer.request ?? new Uint8Array();
  let inner: unknown;
  try {
    // Read as Go reads it: exact number literals, duplicate keys refused (go-json-text.ts).
    inner = parseGoJson(new TextDecoder().decode(requestBytes));
  } catch (cause) {
    throw new BadRequestError('Unable to parse authenticated sign request', { cause });
  }
  const signBody = decodeSignRequest(inner, { invalidMessage: 'Unable to parse authenticated sign request', requireCsr: false });
  const profile = selectProfile(policy, signBody.profile);
  if (!profile.authKey) throw new BadRequestError('no authentication provider');
  if (!verifyAuthenticatedRequest({ token: outer.token ?? new Uint8Array(), request: requestBytes }, [profile.authKey, profile.prevAuthKey])) {
    throw new BadRequestError('invalid token');
  }
  if (signBody.certificate_request === '') throw new BadRequestError("missing parameter 'certificate_request'");
  return signBody;
}

/**
 * info: the CA certificate (PEM, trimmed as CFSSL does), the profile's `usages` and `expiry` string
 * (behaviour doc 4.2, 7.10). Signers with their own {@link Signer.info} (remote) answer themselves.
 */
export async function signerInfo(signer: Signer, policy: SigningPolicy, profileName?: string, label?: string): Promise<InfoResult> {
  if (typeof signer.info === 'function') return signer.info({ profile: profileName ?? '', label: label ?? '' });
  const profile = selectProfile(policy, profileName);
  const certificate = await signer.getCertificate();
  return { certificate: certificate.pem.trim(), usages: [...profile.usages], expiry: profile.expiryString };
}
