/**
 * `@certsmith/revocation`: revocation reasons, X.509 v2 CRLs and RFC 6960 OCSP, signed through the
 * signer contract (local key, HSM or plugin), with CFSSL's semantics where certsmith is a drop-in.
 */
export {
  OcspErrorCode,
  InvalidReasonError,
  RevocationRequestError,
  OcspNoCertificateError,
  OcspIssuerMismatchError,
  OcspInvalidStatusError,
  OcspRequestError,
  OcspResponseParseError,
  RevocationSignerError,
} from './errors.js';
export {
  RevocationReason,
  REVOCATION_REASON_CODES,
  isRevocationReasonCode,
  revocationReasonName,
  parseRevocationReason,
  parseCertaddReason,
  parseOcspSignReason,
} from './revocation-reason.js';
export type { RevocationReasonName, RevocationReasonCode } from './revocation-reason.js';
export { parseDecimalSerial, serialToBigInt, integerContent, integerValue, decimalSerial } from './serial-number.js';
export type { SerialNumber } from './serial-number.js';
export { preferredRevocationAlgorithm, chooseRevocationAlgorithm } from './signature-algorithm.js';
export { createRevocationSigner } from './revocation-signer.js';
export type { RevocationSigner, RevocationSignerOptions } from './revocation-signer.js';
export { buildCrl } from './crl-builder.js';
export type { Crl, CrlOptions, RevokedCertificate } from './crl-builder.js';
export { DEFAULT_GENCRL_SECONDS, parseGoInt32, parseGencrlExpireTime, parseSerialNumberList, generateCrl } from './gencrl.js';
export type { GenerateCrlOptions } from './gencrl.js';
export { CERT_ID_HASH_ALGORITHMS, certIdHashFromOid, certIdHash, issuerHashes, encodeCertId } from './cert-id.js';
export type { CertIdHashAlgorithm, CertId, IssuerHashes } from './cert-id.js';
export { OID_OCSP_NONCE, parseOcspRequest } from './ocsp-request.js';
export type { OcspRequest } from './ocsp-request.js';
export { OID_OCSP_SIGNING, createOcspSigningIdentity } from './ocsp-signing-identity.js';
export type { OcspSigningIdentity, OcspSigningIdentityOptions, ResponderIdKind } from './ocsp-signing-identity.js';
export {
  OID_OCSP_BASIC,
  OcspResponseStatus,
  DEFAULT_OCSP_INTERVAL_MS,
  ocspErrorResponse,
  ocspValidity,
  buildOcspResponse,
} from './ocsp-response-builder.js';
export type { OcspCertStatus, OcspValidity, OcspResponseOptions, OcspResponse } from './ocsp-response-builder.js';
export { ocspResponseTemplate } from './ocsp-response-template.js';
export type { OcspResponseTemplate, OcspSingleResponseFields } from './ocsp-response-template.js';
export { parseOcspResponse } from './ocsp-response-parser.js';
export type { ParsedOcspResponse, BasicOcspResponse, OcspSingleResponse, OcspResponseStatusName } from './ocsp-response-parser.js';
export { decodeOcspSignRequest, signOcspRequest, ocspSign } from './ocsp-sign-request.js';
export type { OcspSignRequestBody, OcspSignRequest, SignOcspRequestOptions } from './ocsp-sign-request.js';
export { httpDate } from './http-date.js';
export { decodeOcspGetPath } from './ocsp-get-path.js';
export { prepareOcspResponse, isPreparedOcspResponse } from './prepared-ocsp-response.js';
export type { PreparedOcspResponse } from './prepared-ocsp-response.js';
export { createOcspIssuer, OcspIssuerDirectory } from './ocsp-issuer.js';
export type { OcspIssuer } from './ocsp-issuer.js';
export { OcspResponder, ifNoneMatchMatches } from './ocsp-responder.js';
export type { OcspHttpRequest, OcspHttpResponse, OcspLookup, OcspResponseSource, OcspResponderOptions } from './ocsp-responder.js';
export { createOcspRequestListener } from './ocsp-request-listener.js';
export type { OcspRequestListenerOptions } from './ocsp-request-listener.js';
export { createOcspFileSource, formatOcspResponseFile } from './ocsp-file-source.js';
export type { OcspFileSource, OcspFileSourceOptions } from './ocsp-file-source.js';
export type { CrlStore, OcspResponseStore, CertificateStatusRecord, SignedOcspResponse } from './store-ports.js';
export { createStoreOcspSource } from './store-ocsp-source.js';
export type { StoreOcspSource, StoreOcspSourceOptions } from './store-ocsp-source.js';
export { CrlCache, DEFAULT_CRL_VALIDITY_MS } from './crl-cache.js';
export type { CrlCacheOptions } from './crl-cache.js';
export { ocspStatusOf, signOcspForRecord, refreshOcspResponses } from './ocsp-refresh.js';
export type { OcspSigningOptions, OcspRefreshOptions, OcspRefreshResult } from './ocsp-refresh.js';
