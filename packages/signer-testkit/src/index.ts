/**
 * `@certsmith/signer-testkit`: prove a signer plugin against the certsmith signer contract with the
 * tests certsmith's own plugins pass.
 */
export { describeSignerConformance } from './describe-signer-conformance.js';
export { DEFAULT_CONFORMANCE_REQUEST, planSignerConformance } from './conformance-plan.js';
export type {
  ConformanceCase,
  ConformanceIssuance,
  ConformancePlan,
  InvalidOptionsCase,
  LazyValue,
  SignerConformanceSettings,
  SkippedCase,
} from './conformance-plan.js';
export { createTestCa } from './test-ca.js';
export type { TestCa, TestCaKeyType, TestCaOptions } from './test-ca.js';
export { DEFAULT_ISSUANCE_REQUEST, issueThroughCertsmith } from './issue-through-certsmith.js';
export type { Issuance } from './issue-through-certsmith.js';
export { startTestRemoteCa } from './test-remote-ca.js';
export type { TestRemoteCa, TestRemoteCaOptions } from './test-remote-ca.js';
