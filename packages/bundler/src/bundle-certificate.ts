/**
 * The bundle use case: CFSSL's `bundler.BundleFromPEMorDER` / `BundleFromRemote` / `Bundle` and the
 * bundle JSON (behaviour doc 2.1–2.10), combining chain-builder (candidate chains, AIA, remote TLS)
 * and ubiquity-rules (ranking by flavor, status). Not an HTTP handler: it takes plain inputs and
 * injected state and returns the `result` object, or throws a coded error. Inputs and outputs are
 * structured-clone safe so it can run on a worker thread; the pools stay inside the worker.
 */
import {
  ChainVerificationError,
  fetchPeerCertificates,
  isSelfSigned,
  isSignatureChain,
  parseSubmittedCertificates,
  resolveChains,
  verifyHostname,
  type AiaFetcher,
  type TrustPools,
} from '@certsmith/chain-builder';
import { assessChain, chainExpiry, rankChains, type Platform } from '@certsmith/ubiquity-rules';
import {
  CertsmithError,
  ErrorCode,
  assertKeyMatchesCertificate,
  certificateHostnames,
  certificateToPem,
  crlSupport,
  encodePrivateKeyCfssl,
  formatDistinguishedName,
  formatExpiry,
  keySize,
  keyTypeString,
  ocspServers,
  ocspSupport,
  parsePrivateKey,
  signatureString,
  type Certificate,
  type ParsedPrivateKey,
} from '@certsmith/x509-core';
import { SelfSignedCertificateError } from './errors.js';

/** What the client sent (all optional strings, as CFSSL's string map). */
export interface BundleCertificateInput {
  /** PEM certificate(s): leaf first (or reversed), optionally with intermediates. Selects certificate mode. */
  certificatePem?: string;
  /** PEM private key of the leaf (certificate mode only). */
  privateKeyPem?: string;
  /** `ubiquitous` (default), `optimal` or `force`; any other value behaves as `ubiquitous`. */
  flavor?: string;
  /** Remote mode: host to fetch from. Certificate mode: hostname the leaf must be valid for. */
  domain?: string;
  /** Remote mode: address to dial. Certificate mode: IP the leaf must be valid for. */
  ip?: string;
}

/** Remote-mode settings. */
export interface RemoteBundleOptions {
  /** Port when `domain` carries none. Default 443. */
  port?: number;
  /** Connect + handshake timeout. Default 5,000 ms. */
  timeoutMs?: number;
  /** Replaces the TLS fetch (tests, or a hardened fetcher). */
  fetchPeer?: typeof fetchPeerCertificates;
}

/** State the use case runs against, loaded once per worker (see `loadBundleContext`). */
export interface BundleDependencies {
  pools: TrustPools;
  /** Platform metadata in file order; `[]` = none (the no-metadata warning). */
  platforms: readonly Platform[];
  /** AIA fetcher; `null` disables fetching (supplied intermediates are still learned). */
  aia: AiaFetcher | null;
  /** Clock. Default: now. */
  now?: Date;
  /** Path-building bounds. */
  limits?: { maxDepth?: number; maxHops?: number; maxFetches?: number };
  remote?: RemoteBundleOptions;
}

/** `status` of the bundle result; key order is CFSSL's. */
export interface BundleStatus {
  rebundled: boolean;
  expiring_SKIs: string[] | null;
  untrusted_root_stores: string[] | null;
  messages: string[] | null;
  code: number;
}

/** The CFSSL bundle JSON (keys alphabetical, as Go marshals the map; doc 2.9). */
export interface BundleResult {
  bundle: string;
  crl_support: boolean;
  crt: string;
  expires: string;
  hostnames: string[];
  issuer: string;
  key: string;
  key_size: number;
  key_type: string;
  leaf_expires: string;
  ocsp: string[] | null;
  ocsp_support: boolean;
  root: string;
  signature: string;
  status: BundleStatus;
  subject: string;
}

/**
 * PEM of the chain's pool certificates (every certificate after the leaf outside the force flavor),
 * made once per certificate object: derived from the trust pools, never from a request
 * (docs/performance.md#bundle-cpu-per-request).
 */
const poolPems = new WeakMap<Certificate, string>();

function poolCertificatePem(cert: Certificate): string {
  let pem = poolPems.get(cert);
  if (pem === undefined) {
    pem = certificateToPem(cert.der);
    poolPems.set(cert, pem);
  }
  return pem;
}

/** The PEM blocks of `chain` (leaf first) concatenated; only pool certificates are memoised. */
function chainPem(leafPem: string, chain: readonly Certificate[], fromPools: boolean): string {
  let pem = leafPem;
  for (let i = 1; i < chain.length; i++) {
    const cert = chain[i] as Certificate;
    pem += fromPools ? poolCertificatePem(cert) : certificateToPem(cert.der);
  }
  return pem;
}

function sameChain(a: readonly Certificate[], b: readonly Certificate[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((cert, i) => Buffer.compare(cert.signature, (b[i] as Certificate).signature) === 0);
}

/**
 * CFSSL `Bundle` over parsed certificates: reverse detection, key checks, verification or force
 * check, ranking, status, root removal, `rebundled`.
 */
async function bundleParsed(
  input: readonly Certificate[],
  key: ParsedPrivateKey | null,
  flavor: string,
  deps: BundleDependencies,
): Promise<{ result: BundleResult; leaf: Certificate }> {
  const now = deps.now ?? new Date();
  let certs = [...input];
  // Doc 2.3: a reverse-ordered bundle is accepted when the reversed list is a signature chain.
  if (certs.length > 1 && !isSignatureChain(certs, deps.pools)) {
    const reversed = [...certs].reverse();
    if (isSignatureChain(reversed, deps.pools)) certs = reversed;
  }
  const leaf = certs[0] as Certificate;
  assertKeyMatchesCertificate(key, leaf);

  const force = flavor === 'force';
  let chain: Certificate[];
  if (force) {
    // Force only checks that the list is a signature chain (no time/trust/self-signed checks).
    if (!isSignatureChain(certs, deps.pools)) {
      throw new CertsmithError(ErrorCode.CertificateVerifyFailed, 'Unable to verify the certificate chain');
    }
    chain = certs;
  } else {
    if (isSelfSigned(leaf, deps.pools)) throw new SelfSignedCertificateError();
    const verified = await resolveChains(certs, deps.pools, {
      now,
      fetcher: deps.aia,
      maxDepth: deps.limits?.maxDepth,
      maxHops: deps.limits?.maxHops,
      maxFetches: deps.limits?.maxFetches,
    });
    if (!verified.result) {
      throw new ChainVerificationError({ code: verified.resultCode, message: verified.resultMessage });
    }
    chain = rankChains(verified.chains, flavor, deps.platforms)[0] as Certificate[];
    // The leaf is itself a pool root without being "self-signed" by Go's rules (e.g. a v3 root
    // without basicConstraints): CFSSL empties the chain and crashes; we answer 1100.
    if (chain.length < 2) throw new SelfSignedCertificateError();
  }

  // Doc 2.8: the status looks at the chain *including* its root.
  const assessment = assessChain(chain, { platforms: deps.platforms, now, checkRootTrust: !force });
  let returned = chain;
  let root = '';
  if (!force) {
    root = poolCertificatePem(chain[chain.length - 1] as Certificate).trim();
    // Doc 2.5 step 7: keep leaf+root when an OCSP-enabled non-CA leaf would otherwise be alone.
    const keepRoot = leaf.ocspUrls.length > 0 && !(leaf.basicConstraints?.ca ?? false) && chain.length <= 2;
    if (!keepRoot) returned = chain.slice(0, -1);
  }
  const expires = chainExpiry(returned) ?? leaf.notAfter;
  // The chain starts with the leaf in every flavor; its PEM serves `crt` and `bundle`.
  const leafPem = certificateToPem(leaf.der);
  const result: BundleResult = {
    bundle: chainPem(leafPem, returned, !force).trim(),
    crl_support: crlSupport(leaf),
    crt: leafPem.trim(),
    expires: formatExpiry(expires),
    hostnames: certificateHostnames(leaf),
    issuer: formatDistinguishedName(leaf.issuer),
    key: key ? encodePrivateKeyCfssl(key) : '',
    key_size: keySize(leaf),
    key_type: keyTypeString(leaf),
    leaf_expires: formatExpiry(leaf.notAfter),
    ocsp: ocspServers(leaf),
    ocsp_support: ocspSupport(leaf),
    root,
    signature: signatureString(leaf),
    status: {
      rebundled: !sameChain(returned, certs),
      expiring_SKIs: assessment.expiringSkis,
      untrusted_root_stores: assessment.untrustedRootStores,
      messages: assessment.messages,
      code: assessment.code,
    },
    subject: formatDistinguishedName(leaf.subject),
  };
  return { result, leaf };
}

function assertHostname(cert: Certificate, name: string): void {
  const problem = verifyHostname(cert, name);
  if (problem) throw new ChainVerificationError(problem);
}

/**
 * Build the CFSSL bundle for a certificate (certificate mode: `certificatePem` present) or for the
 * chain a TLS server presents (remote mode: only `domain`, optionally `ip`).
 *
 * Certificate mode, in CFSSL's order: private key (2002 / 2100 / 2003), certificates (1002 / 1003),
 * reverse detection, leaf key type and match (2200 / 2300), self-signed (1100), verification with
 * AIA discovery (12xx, 1220), ranking by flavor; then `domain` and `ip` must match the leaf (1200).
 * Remote mode: dial (6000), hostname (1200), then the same bundling without a key; a failed strict
 * handshake is appended to `status.messages` without changing `code`.
 *
 * SHA-1 chains are bundled (with the SHA-1 warnings) where modern CFSSL refuses them.
 *
 * @throws CertsmithError with CFSSL's code for every failure above
 */
export async function bundleCertificate(input: BundleCertificateInput, deps: BundleDependencies): Promise<BundleResult> {
  const flavor = input.flavor ?? '';
  if (input.certificatePem !== undefined) {
    const key = input.privateKeyPem ? parsePrivateKey(input.privateKeyPem) : null;
    const certs = parseSubmittedCertificates(input.certificatePem, deps.pools);
    const { result, leaf } = await bundleParsed(certs, key, flavor, deps);
    if (input.domain) assertHostname(leaf, input.domain);
    if (input.ip) assertHostname(leaf, input.ip);
    return result;
  }
  if (input.domain === undefined) {
    throw new CertsmithError(ErrorCode.BadRequest, 'no valid parameter sets found');
  }
  const fetchPeer = deps.remote?.fetchPeer ?? fetchPeerCertificates;
  const peer = await fetchPeer({
    domain: input.domain,
    ip: input.ip || undefined,
    port: deps.remote?.port,
    timeoutMs: deps.remote?.timeoutMs,
    trust: deps.pools.roots.size > 0 ? deps.pools.roots : undefined,
    now: deps.now,
  });
  const peerLeaf = peer.certificates[0];
  // CFSSL's certinfo words it so (its bundler would crash on the empty list).
  if (!peerLeaf) throw new CertsmithError(ErrorCode.DialFailed, 'received no server certificates');
  assertHostname(peerLeaf, peer.serverName);
  const { result } = await bundleParsed(peer.certificates, null, flavor, deps);
  if (peer.handshakeWarning !== null) {
    result.status.messages = [...(result.status.messages ?? []), peer.handshakeWarning];
  }
  return result;
}
