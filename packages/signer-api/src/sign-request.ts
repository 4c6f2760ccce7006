/**
 * CFSSL's `SignRequest` (cfssl `signer/signer.go:SignRequest`, behaviour doc 4.1), with the JSON
 * member names CFSSL uses on the wire. It is part of the contract because a remote signer (a
 * multi-root CA, another CFSSL) cannot sign raw TBS bytes: it receives the whole request and
 * forwards it as `/sign` or `/authsign` would.
 */

/** One entry of `names` (cfssl `csr.Name`): every member optional, empty strings are skipped. */
export interface SubjectName {
  C?: string;
  ST?: string;
  L?: string;
  O?: string;
  OU?: string;
  /** emailAddress (1.2.840.113549.1.9.1). */
  E?: string;
  /** Accepted but ignored, as CFSSL does (behaviour doc 3.2). */
  SerialNumber?: string;
  /** Extra attributes by dotted OID. */
  OID?: Record<string, string>;
}

/** `subject` override of a sign request (cfssl `signer.Subject`). */
export interface SignRequestSubject {
  CN?: string;
  names?: SubjectName[];
  SerialNumber?: string;
}

/** One requested extension (cfssl `signer.Extension`): dotted OID, criticality, hex-encoded value. */
export interface SignRequestExtension {
  id: string;
  critical?: boolean;
  /** extnValue contents as hexadecimal. */
  value: string;
}

/** A request to sign a CSR under a profile (behaviour doc 4.1). */
export interface SignRequest {
  /** PEM `CERTIFICATE REQUEST` (JSON member `certificate_request`). */
  certificate_request: string;
  /** When not `null`/absent, replaces every SAN of the CSR (classified as behaviour doc 3.5). */
  hosts?: string[] | null;
  /** Replaces the CSR's non-empty subject fields (behaviour doc 4.1). */
  subject?: SignRequestSubject | null;
  /** Signing profile name; empty or absent selects the default profile. */
  profile?: string;
  /** Replaces the CRL distribution point. */
  crl_override?: string;
  /** Selects the root/signer on a multi-root CA. */
  label?: string;
  /**
   * Serial for profiles with `ClientProvidesSerialNumbers` (a Go big.Int on the wire). A decimal
   * string is accepted because JSON numbers lose precision above 2^53 in JavaScript.
   */
  serial?: bigint | string | null;
  /** Extensions to add, only honoured when the profile's `allowed_extensions` lists their OIDs. */
  extensions?: SignRequestExtension[];
  /** RFC 3339 validity override; `0001-01-01T00:00:00Z` (Go's zero time) means unset. */
  NotBefore?: string;
  /** RFC 3339 validity override; `0001-01-01T00:00:00Z` (Go's zero time) means unset. */
  NotAfter?: string;
  /** Certificate-transparency precertificate request; not supported by the local issuer. */
  ReturnPrecert?: boolean;
  /** Free-form metadata stored alongside the certificate by CFSSL's certdb. */
  metadata?: Record<string, unknown>;
}

/** What a whole-request signer returns. */
export interface SignRequestResult {
  /** PEM of the issued certificate (CFSSL returns it with a trailing newline). */
  certificatePem: string;
}

/** A CFSSL `/info` request (cfssl `info.Req`). */
export interface InfoRequest {
  label?: string;
  profile?: string;
}

/** A CFSSL `/info` result (cfssl `info.Resp`, JSON member names). */
export interface InfoResult {
  /** CA certificate PEM, trimmed of the trailing newline as CFSSL does. */
  certificate: string;
  usages: string[];
  expiry: string;
}
