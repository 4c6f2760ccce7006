/**
 * Path building and validation: a port of Go's `Certificate.Verify` / `buildChains` (what CFSSL's
 * bundler calls, behaviour doc 2.5) with RFC 5280 6.1 checks, a depth bound and cached signature
 * results. Every valid chain leaf→root is returned, including chains through cross-signed
 * intermediates; a certificate present in both pools ends chains *and* continues them.
 */
import type { Certificate } from '@certsmith/x509-core';
import { bytesKey } from './bytes-key.js';
import { issuerKey, subjectKey, type CertificatePool, type TrustPools } from './certificate-pool.js';
import { GoX509, type ChainProblem } from './go-errors.js';
import { checkNameConstraints } from './name-constraints.js';

/** Options of {@link verifyChains}. */
export interface VerifyChainsOptions {
  /** Validation time (RFC 5280 6.1.3 (a)(2)). Default: now. Inject a fixed clock in tests. */
  now?: Date;
  /** Longest chain considered, leaf and root included. Default 10 (Go has no bound). */
  maxDepth?: number;
  /** Signature checks allowed per verification (Go's `maxChainSignatureChecks`). Default 100. */
  maxSignatureChecks?: number;
}

/**
 * Outcome of a verification, PKI.js style: `result` says whether at least one chain is valid;
 * otherwise `resultCode`/`resultMessage` carry CFSSL's code and Go's text.
 */
export interface ChainVerificationResult {
  result: boolean;
  /** 0 on success, else a CFSSL 12xx code (1211 expired, 1213 path length, 1220 unknown authority…). */
  resultCode: number;
  /** `''` on success, else Go's error text. */
  resultMessage: string;
  /** Every valid chain, leaf first, anchor (a root-pool certificate) last; `[]` on failure. */
  chains: Certificate[][];
}

type CertType = 'leaf' | 'intermediate' | 'root';

interface Context {
  pools: TrustPools;
  now: Date;
  maxDepth: number;
  maxSignatureChecks: number;
  signatureChecks: number;
}

/** Go's `alreadyInChain`: same subject, same key and same SAN extension as a certificate already used. */
function alreadyInChain(candidate: Certificate, chain: readonly Certificate[]): boolean {
  const candidateSan = candidate.extensions.find((e) => e.oid === '2.5.29.17') ?? null;
  for (const cert of chain) {
    if (subjectKey(candidate) !== subjectKey(cert)) continue;
    if (bytesKey(candidate.publicKey.spki) !== bytesKey(cert.publicKey.spki)) continue;
    const certSan = cert.extensions.find((e) => e.oid === '2.5.29.17') ?? null;
    if (candidateSan === null && certSan === null) return true;
    if (candidateSan === null || certSan === null) continue;
    if (bytesKey(candidateSan.value) === bytesKey(certSan.value)) return true;
  }
  return false;
}

/**
 * Go's `isValid` for one certificate at its place in the chain (RFC 5280 6.1.3 / 6.1.4):
 * no unknown critical extension, validity period, name constraints, cA for intermediates, path length.
 */
function checkCertificate(cert: Certificate, type: CertType, chainSoFar: readonly Certificate[], now: Date): ChainProblem | null {
  if (cert.unhandledCriticalExtensions.length > 0) return GoX509.unhandledCriticalExtension();
  const child = chainSoFar[chainSoFar.length - 1];
  if (child && issuerKey(child) !== subjectKey(cert)) return GoX509.nameMismatch();
  if (now < cert.notBefore) return GoX509.notYetValid(now, cert.notBefore);
  if (now > cert.notAfter) return GoX509.expired(now, cert.notAfter);
  // RFC 5280 6.1.4 (g) / 6.1.3 (b)-(c): a CA's name constraints bind every SAN below it (1212).
  if (type !== 'leaf') {
    const constrained = checkNameConstraints(cert, chainSoFar);
    if (constrained) return constrained;
  }
  const bc = cert.basicConstraints;
  // RFC 5280 6.1.4 (k): an intermediate must be a CA. Reached only by v1 certificates, since
  // CheckSignatureFrom already refuses v3 parents without cA.
  if (type === 'intermediate' && (bc === null || !bc.ca)) return GoX509.notAuthorizedToSign();
  // RFC 5280 6.1.4 (l)/(m): intermediates below this CA (the leaf does not count).
  if (bc !== null && bc.pathLenConstraint !== null && chainSoFar.length - 1 > bc.pathLenConstraint) {
    return GoX509.tooManyIntermediates();
  }
  return null;
}

function checkParentSignature(pool: CertificatePool, child: Certificate, parent: Certificate): string | null {
  return pool.checkSignature(child, parent);
}

/** Go's `buildChains`, including its error selection: the last candidate error wins, else unknown authority. */
function buildChains(cert: Certificate, chainSoFar: Certificate[], ctx: Context): { chains: Certificate[][]; problem: ChainProblem | null } {
  const chains: Certificate[][] = [];
  let problem: ChainProblem | null = null;
  let hint: { error: string; candidate: Certificate } | null = null;

  const consider = (type: 'root' | 'intermediate', pool: CertificatePool, candidate: Certificate): void => {
    if (alreadyInChain(candidate, chainSoFar)) return;
    if (++ctx.signatureChecks > ctx.maxSignatureChecks) {
      problem = GoX509.signatureCheckLimit();
      return;
    }
    const signatureError = checkParentSignature(pool, cert, candidate);
    if (signatureError !== null) {
      hint ??= { error: signatureError, candidate };
      return;
    }
    const invalid = checkCertificate(candidate, type, chainSoFar, ctx.now);
    if (invalid !== null) {
      problem = invalid;
      return;
    }
    const extended = [...chainSoFar, candidate];
    if (type === 'root') {
      chains.push(extended);
      return;
    }
    if (extended.length >= ctx.maxDepth) {
      problem = GoX509.depthExceeded(ctx.maxDepth);
      return;
    }
    const sub = buildChains(candidate, extended, ctx);
    problem = sub.problem;
    chains.push(...sub.chains);
  };

  for (const root of ctx.pools.roots.findIssuerCandidates(cert)) consider('root', ctx.pools.roots, root);
  for (const inter of ctx.pools.intermediates.findIssuerCandidates(cert)) {
    consider('intermediate', ctx.pools.intermediates, inter);
  }
  if (chains.length > 0) problem = null;
  else if (problem === null) problem = GoX509.unknownAuthority(hint);
  return { chains, problem };
}

/**
 * Verify `leaf` against the pools and return every valid chain (Go's `Verify` with
 * `KeyUsages: [Any]`, as CFSSL's bundler). A leaf that is itself in the root pool yields `[[leaf]]`.
 *
 * Chain problems come back in the result (`result: false`) with CFSSL's codes:
 * expired/not yet valid 1211, v1 intermediate 1210, path length or depth 1213, no issuer 1220
 * (with Go's "possibly because of" hint), unknown critical extension 1200.
 */
export function verifyChains(leaf: Certificate, pools: TrustPools, options: VerifyChainsOptions = {}): ChainVerificationResult {
  const ctx: Context = {
    pools,
    now: options.now ?? new Date(),
    maxDepth: options.maxDepth ?? 10,
    maxSignatureChecks: options.maxSignatureChecks ?? 100,
    signatureChecks: 0,
  };
  const leafProblem = checkCertificate(leaf, 'leaf', [], ctx.now);
  if (leafProblem) return { result: false, resultCode: leafProblem.code, resultMessage: leafProblem.message, chains: [] };
  if (pools.roots.has(leaf)) return { result: true, resultCode: 0, resultMessage: '', chains: [[leaf]] };
  const { chains, problem } = buildChains(leaf, [leaf], ctx);
  if (chains.length === 0) {
    const p = problem ?? GoX509.unknownAuthority(null);
    return { result: false, resultCode: p.code, resultMessage: p.message, chains: [] };
  }
  return { result: true, resultCode: 0, resultMessage: '', chains };
}
