export {
  ErrorCode,
  CfsslMessage,
  CertsmithError,
  BadRequestError,
  CertificateDecodeError,
  CertificateParseError,
  PrivateKeyDecodeError,
  PrivateKeyParseError,
  EncryptedPrivateKeyError,
  KeyMismatchError,
  UnsupportedKeyAlgorithmError,
  CsrDecodeError,
  CsrParseError,
  CsrBadRequestError,
  DerDecodeError,
  DerEncodeError,
  toErrorPayload,
  fromErrorPayload,
  isCodedError,
} from './errors.js';
export type { ErrorCodeValue, ErrorPayload } from './errors.js';
export type {
  KeyAlgorithm,
  HashAlgorithm,
  NameAttribute,
  DistinguishedName,
  PublicKeyInfo,
  SignatureAlgorithmInfo,
  BasicConstraints,
  SubjectAltNames,
  CertificateExtension,
  Certificate,
  PssParameters,
  NameConstraints,
} from './certificate-model.js';
export {
  Tag,
  derTlv,
  concatBytes,
  derConstructed,
  derSequence,
  derSetOf,
  compareBytes,
  derExplicit,
  derImplicit,
  derBoolean,
  derNull,
  derInteger,
  derBitString,
  derNamedBitString,
  derOctetString,
  derOid,
  encodeOidContent,
  MAX_OID_ARCS,
  derUtf8String,
  derPrintableString,
  derIa5String,
  encodeIa5String,
  isPrintableString,
  derDirectoryString,
  derTime,
} from './der-writer.js';
export {
  MAX_DER_DEPTH,
  DerReader,
  readElement,
  elementContent,
  elementBytes,
  decodeOid,
  readOid,
  readIntegerBytes,
  readSmallInteger,
  unsignedBitLength,
  readBoolean,
  readBitString,
  readOctetString,
  StringTag,
  isStringTag,
  readString,
  decodeLatin1,
  decodeUtf8,
  isAscii,
  readTime,
} from './der-reader.js';
export type { DerElement, BitString } from './der-reader.js';
export { Oid } from './oids.js';
export { decodePemBlock, decodePemBlocks, decodePemBody, findPemBlock, encodePem, certificateToPem } from './pem.js';
export type { PemBlock, PemBlockLocation, PemBlockMatch } from './pem.js';
export { UNKNOWN_SIGNATURE, hashAlgorithmFromOid, readSignatureAlgorithm } from './algorithm-identifier.js';
export {
  namedCurve,
  readPublicKeyInfo,
  readRsaPublicKey,
  rsaPublicKeyComponents,
  ecPublicKeyCoordinates,
  ecPointCoordinates,
} from './public-key-info.js';
export type { RsaPublicKeyComponents } from './public-key-info.js';
export { readDistinguishedName, parseDistinguishedName } from './distinguished-name.js';
export { GeneralNameTag, emptySubjectAltNames, formatIpAddress, readGeneralNames } from './general-name.js';
export { readPkcs7Certificates, parsePkcs7Certificates } from './pkcs7.js';
export {
  decodeOwnedCertificate,
  parseCertificate,
  parseCertificates,
  parseCertificatesDecoding,
  toHex,
  type DecodeCertificate,
} from './parse-certificate.js';
export { LazyCertificate, certificateIndexFields, parseCertificatesLazily, MATERIALIZED_LIMIT } from './lazy-certificate.js';
export { readCertificateIndex } from './certificate-index.js';
export { readCertificateStoreFields } from './certificate-store-fields.js';
export type { CertificateStoreFields } from './certificate-store-fields.js';
export type { CertificateIndex } from './certificate-index.js';
export type { CertificateIndexFields } from './lazy-certificate.js';
export { readExtensions, emptyExtensionFacts, derExtension } from './extensions.js';
export type { ExtensionFacts } from './extensions.js';
export {
  parsePrivateKey,
  parsePrivateKeyDer,
  assertKeyMatchesCertificate,
  encodePrivateKeyCfssl,
} from './parse-private-key.js';
export type { ParsedPrivateKey, PrivateKeyAlgorithm, PrivateKeyFormat } from './parse-private-key.js';
export {
  parseCertificateRequest,
  parseCertificateRequestDer,
  verifyCertificateRequestSignature,
} from './parse-csr.js';
export type {
  CertificateRequest,
  CsrAttribute,
  RequestedExtensions,
  ParseCertificateRequestOptions,
} from './parse-csr.js';
export {
  formatDistinguishedName,
  commonName,
  keySize,
  keyTypeString,
  signatureString,
  formatExpiry,
  certificateHostnames,
  subjectKeyIdHex,
  computeSubjectKeyId,
  spkiSha1Hex,
  ocspSupport,
  crlSupport,
  ocspServers,
} from './certificate-facts.js';
export { toCertinfoResult, toCertinfoName, formatKeyId, serialToDecimal } from './certinfo.js';
export type { CertinfoName, CertinfoResult } from './certinfo.js';
export { publicKeyObject, verifySignature, isSignatureAlgorithmSupported } from './verify-signature.js';
export { buildSelfSignedCaTbs } from './self-signed-ca.js';
export type { SelfSignedCaTbsOptions } from './self-signed-ca.js';
export { encodeTbsCertificate, encodeSigned } from './certificate-builder.js';
export type { TbsCertificateFields } from './certificate-builder.js';
export { certificationRequestExtensions, encodeCertificationRequestInfo } from './certification-request-builder.js';
export type { CertificationRequestTemplate } from './certification-request-builder.js';
export { SIGNATURE_ALGORITHM_NAMES, signatureAlgorithmIdentifier } from './algorithm-identifier-builder.js';
export type { SignatureAlgorithmName } from './algorithm-identifier-builder.js';
export {
  STANDARD_ATTRIBUTE_OIDS,
  emptySubject,
  subjectFromNames,
  subjectFromAttributes,
  subjectAttributeList,
  encodeSubject,
  isEmptySubject,
  parseOidString,
} from './name-builder.js';
export type { NameEntry, SubjectAttributes } from './name-builder.js';
export {
  classifyHost,
  sansFromHosts,
  sanListFromParsed,
  parseIpAddress,
  parseMailAddress,
  parseRequestUri,
  encodeSubjectAltNames,
  emptySanList,
  isEmptySanList,
} from './subject-alt-name-builder.js';
export type { SanList, HostKind } from './subject-alt-name-builder.js';
