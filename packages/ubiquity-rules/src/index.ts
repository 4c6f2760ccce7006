/**
 * `@certsmith/ubiquity-rules`: platform trust metadata, CFSSL's ubiquity scores and chain rankings,
 * and the status warnings of a bundle (behaviour doc 2.7, 2.8, 2.11). Depends on x509-core only.
 */
export {
  HashUbiquity,
  KeyAlgoUbiquity,
  isSha1Signed,
  hashUbiquity,
  keyAlgoUbiquity,
  chainHashUbiquity,
  chainKeyAlgoUbiquity,
  hashPriority,
  keyAlgoPriority,
  chainHashPriority,
  chainKeyAlgoPriority,
} from './crypto-scores.js';
export { chainExpiry, monthsValid, validExpiry } from './expiry.js';
export {
  platformHashUbiquity,
  platformKeyAlgoUbiquity,
  spkiSha1,
  platformTrusts,
  untrustedPlatforms,
  crossPlatformUbiquity,
} from './platform.js';
export type { Platform } from './platform.js';
export {
  PlatformMetadataError,
  decodePlatformMetadata,
  keystoreFromPem,
  loadPlatforms,
  defaultPlatforms,
} from './load-platforms.js';
export type { LoadPlatformsOptions, DefaultPlatformsOptions } from './load-platforms.js';
export { ParsedKeystoreBlocks } from './parsed-keystore-blocks.js';
export {
  filterChains,
  compareChainLength,
  compareChainExpiry,
  compareChainCryptoSuite,
  compareChainHashPriority,
  compareChainKeyAlgoPriority,
  compareChainHashUbiquity,
  compareChainKeyAlgoUbiquity,
  sha2Homogeneity,
  compareSha2Homogeneity,
  compareExpiryUbiquity,
  comparePlatformUbiquity,
} from './compare-chains.js';
export type { Chain, ChainComparator } from './compare-chains.js';
export { rankOptimal, rankUbiquitous, rankChains } from './rank-chains.js';
export type { BundleFlavor } from './rank-chains.js';
export {
  DeprecationSeverity,
  SHA1_DEPRECATION_POLICIES,
  flagsChain,
  sha1DeprecationMessages,
} from './sha1-deprecation.js';
export type { Sha1DeprecationPolicy } from './sha1-deprecation.js';
export {
  BUNDLE_EXPIRING_BIT,
  BUNDLE_NOT_UBIQUITOUS_BIT,
  StatusMessage,
  expiringCertificateIndices,
  expirationWarning,
  untrustedPlatformsWarning,
  skiHex,
  assessChain,
} from './chain-status.js';
export type { AssessChainOptions, ChainAssessment } from './chain-status.js';
