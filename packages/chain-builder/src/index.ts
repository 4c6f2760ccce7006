/**
 * `@certsmith/chain-builder`: certificate pools, path building and verification (Go `x509.Verify`
 * semantics with CFSSL's error codes), bounded AIA chasing and remote certificate fetching.
 * Depends on x509-core only; knows nothing of ubiquity or HTTP.
 */
export { CertificatePool, certificateFingerprint } from './certificate-pool.js';
export { bytesKey } from './bytes-key.js';
export { parseSubmittedCertificates } from './submitted-certificates.js';
export type { CertificatePoolOptions, TrustPools } from './certificate-pool.js';
export { BundleFileError, loadCertificatePool, parseBundlePem } from './load-pool.js';
export { poolFromSnapshot, poolSnapshotFromPem, readPoolSnapshot, snapshotCertificates } from './pool-snapshot.js';
export type { PoolSnapshot } from './pool-snapshot.js';
export type { PoolKind } from './load-pool.js';
export {
  PARENT_CANNOT_SIGN,
  certificatePublicKey,
  checkSignatureFrom,
  isSelfSigned,
  isSignatureChain,
  parentSigningConstraint,
  verifyCertificateSignature,
} from './signature-check.js';
export { verifyChains } from './build-chains.js';
export { checkNameConstraints } from './name-constraints.js';
export type { ChainVerificationResult, VerifyChainsOptions } from './build-chains.js';
export { GoX509, ChainVerificationError, rfc3339 } from './go-errors.js';
export type { ChainProblem } from './go-errors.js';
export { AiaFetchError, createAiaFetcher, isLoopbackHost } from './aia-fetcher.js';
export type { AiaFetcher, AiaFetcherOptions, AiaFetchFailureReason, AiaFetchObservation, AiaFetchObserver, FetchGuard } from './aia-fetcher.js';
export { discoverIntermediates } from './discover-intermediates.js';
export type { DiscoverIntermediatesOptions, DiscoverIntermediatesResult } from './discover-intermediates.js';
export { resolveChains } from './resolve-chains.js';
export type { ResolveChainsResult } from './resolve-chains.js';
export { matchHostnames, parseIpAddress, verifyHostname } from './verify-hostname.js';
export { DialError, fetchPeerCertificates, splitHostPort } from './peer-certificates.js';
export { describeDialFailure, goJoinHostPort, goSplitHostPort, parseDialTarget } from './dial-errors.js';
export type { DialFailureContext, DialTarget } from './dial-errors.js';
export type { FetchPeerCertificatesOptions, PeerCertificatesResult } from './peer-certificates.js';
export type { PeerGuard } from './peer-certificates.js';
export {
  InvalidAddressError,
  PrivateNetworkRefusedError,
  SPECIAL_PURPOSE_RANGES,
  classifyAddress,
  createNetworkGuard,
  parseCidr,
} from './network-guard.js';
export type {
  AddressClassification,
  AddressKind,
  AddressRange,
  Cidr,
  NetworkGuard,
  NetworkGuardOptions,
} from './network-guard.js';
