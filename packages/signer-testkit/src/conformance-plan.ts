/**
 * The conformance suite as data: named cases grouped by the call they exercise, independent of any
 * test runner (assertions are `node:assert`, like typescript-eslint's RuleTester), so that
 * {@link describeSignerConformance} is a thin vitest adapter and other runners can map the same
 * cases onto their own `describe`/`it`. The per-signer checks come from signer-api's
 * `checkSignerConformance`; this module adds what needs a host around the signer: loading through
 * `createSigner` (range check, options validation, shape check), coded errors, concurrency,
 * `close()` and a real issuance through certsmith's issuer.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';

import { decodeCertificateRequest, newKey } from '@certsmith/issuer';
import type { ConformanceResult, SignatureAlgorithm, Signer, SignerContext, SignerPlugin } from '@certsmith/signer-api';
import {
  SIGNATURE_ALGORITHMS,
  SIGNER_API_VERSION,
  assertSignerApiCompatible,
  assertSignerShape,
  checkSignerConformance,
  createSigner,
  createSignerContext,
  isSignerPlugin,
  resolveSignerPlugin,
} from '@certsmith/signer-api';

import { DEFAULT_ISSUANCE_REQUEST, issueThroughCertsmith } from './issue-through-certsmith.js';
import type { Issuance } from './issue-through-certsmith.js';

/** A value, or a function (possibly async) computing it when the suite runs (after your `beforeAll`). */
export type LazyValue<T> = T | (() => T | Promise<T>);

/** Options the plugin must refuse. */
export interface InvalidOptionsCase<Options = unknown> {
  /** Completes the test title `rejects with code … when given <title>`. */
  title: string;
  /** The options, or a function deriving them from the valid options. */
  options: unknown | ((valid: Options) => unknown);
  /** Expected code (default 2000, the code `createSigner` uses for invalid options). */
  code?: number;
}

/** What the issuance case asks certsmith's issuer for (see `issueThroughCertsmith`). */
export type ConformanceIssuance = Issuance;

/** Settings of {@link planSignerConformance} and `describeSignerConformance`. */
export interface SignerConformanceSettings<Options = unknown> {
  /** Title of the outer `describe` (default `signer conformance: <meta.name>`). */
  title?: string;
  /**
   * Context passed to `create` (default: `createSignerContext()`: config dir = working directory,
   * `env:` from `process.env`, silent logger). Use a function when it depends on a temporary
   * directory made in `beforeAll`.
   */
  context?: LazyValue<SignerContext>;
  /** Further options the plugin must refuse, in addition to the defaults. */
  invalidOptions?: readonly InvalidOptionsCase<Options>[];
  /**
   * Include the default refusals (default true): `null` options, and the valid options plus an
   * unknown member `conformanceUnknownOption` (set `false` for plugins whose options are not an
   * object or that accept any member).
   */
  defaultInvalidOptions?: boolean;
  /** What to issue through certsmith's issuer. */
  issuance?: ConformanceIssuance;
  /** Concurrent `sign` batches in the concurrency case (default 4). */
  concurrency?: number;
  /** Timeout of each test in ms (default: the runner's). */
  timeoutMs?: number;
}

/** Returned by a case that does not apply to this signer (the runner reports it as skipped). */
export interface SkippedCase {
  skipped: string;
}

/** One test. */
export interface ConformanceCase {
  /** The call exercised, e.g. `sign()`: the inner `describe` title. */
  group: string;
  /** What it checks: the `it` title. */
  title: string;
  /** Resolves when the check passes, rejects with an `AssertionError` or the plugin's error otherwise. */
  run(): Promise<SkippedCase | void>;
}

/** The suite for one plugin. */
export interface ConformancePlan {
  /** Title for the outer `describe`. */
  title: string;
  cases: readonly ConformanceCase[];
  /** Close every signer the cases created; call once after all cases (idempotent). */
  teardown(): Promise<void>;
}

/** The default issuance request (see `DEFAULT_ISSUANCE_REQUEST`). */
export const DEFAULT_CONFORMANCE_REQUEST: Readonly<Record<string, unknown>> = DEFAULT_ISSUANCE_REQUEST;

/** A CSR-shaped PEM whose content is not DER. */
const BROKEN_CSR = '-----BEGIN CERTIFICATE REQUEST-----\nbm90IGEgY2VydGlmaWNhdGUgcmVxdWVzdA==\n-----END CERTIFICATE REQUEST-----\n';

const NO_REJECTION = Symbol('no rejection');

function nextMajor(version: string): string {
  return `${Number(version.split('.')[0]) + 1}.0.0`;
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.name}${code === undefined ? '' : ` (code ${String(code)})`}: ${error.message}`;
  }
  return String(error);
}

async function rejectionOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  return NO_REJECTION;
}

/** Assert that `error` is a rejection carrying a positive integer `code` (equal to `expected` when given). */
function assertCoded(error: unknown, what: string, expected?: number): asserts error is Error & { code: number } {
  assert.notEqual(error, NO_REJECTION, `${what} resolved; expected a rejection with a numeric code`);
  const code = (error as { code?: unknown } | null)?.code;
  assert.ok(typeof code === 'number' && Number.isInteger(code) && code > 0, `${what} rejected without a numeric code: ${describeError(error)}`);
  if (expected !== undefined) assert.equal(code, expected, `${what} rejected with code ${code}, expected ${expected}: ${describeError(error)}`);
}

/** Assert that every check of `result` selected by `select` passed (and that at least one ran). */
function assertChecks(result: ConformanceResult, select: (name: string) => boolean): void {
  const selected = result.checks.filter((check) => select(check.name));
  assert.ok(selected.length > 0, 'checkSignerConformance reported no matching check');
  assert.deepEqual(
    selected.filter((check) => !check.ok).map((check) => `${check.name}: ${check.message ?? 'failed'}`),
    [],
  );
}

function memo<T>(make: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => (pending ??= make());
}

async function resolveLazy<T>(value: LazyValue<T>): Promise<T> {
  return typeof value === 'function' ? (value as () => T | Promise<T>)() : value;
}

/** The plugin name when `plugin` (or its default export) is a plugin already; `null` otherwise. */
function nameOf(plugin: unknown): string | null {
  if (isSignerPlugin(plugin)) return plugin.meta.name;
  const fallback = (plugin as { default?: unknown } | null)?.default;
  return isSignerPlugin(fallback) ? fallback.meta.name : null;
}

/**
 * Plan the conformance suite for `plugin` (a `defineSigner` result, a module namespace whose
 * default export is one, or a promise of either, e.g. `import('../dist/index.js')`) created with
 * `options` (a value, or a function called when the first case runs). Nothing runs until a case
 * does; signers are created through signer-api's `createSigner`, exactly as the server loads them.
 */
export function planSignerConformance<Options>(
  plugin: unknown,
  options: LazyValue<Options>,
  settings: SignerConformanceSettings<Options> = {},
): ConformancePlan {
  const opened: Signer[] = [];
  const issuance = settings.issuance ?? {};
  const concurrency = settings.concurrency ?? 4;

  const loadPlugin = memo(async (): Promise<SignerPlugin<unknown>> => resolveSignerPlugin(await plugin, 'the module under test'));
  const validOptions = memo(async () => resolveLazy(options));
  const context = memo(async () => (settings.context === undefined ? createSignerContext() : resolveLazy(settings.context)));
  const track = (signer: Signer): Signer => {
    opened.push(signer);
    return signer;
  };
  const open = async (): Promise<Signer> => track(await createSigner(await loadPlugin(), await validOptions(), await context()));
  /** The signer most cases use; never closed before teardown. */
  const mainSigner = memo(open);
  /** A second instance for the close() cases. */
  const closingSigner = memo(open);
  const mainReport = memo(async () => checkSignerConformance(await mainSigner(), { checkClose: false }));
  const closeReport = memo(async () => checkSignerConformance(await closingSigner()));
  const validCsr = memo(async () => (await newKey(decodeCertificateRequest(issuance.request ?? DEFAULT_CONFORMANCE_REQUEST))).csrPem);

  /** Expect `createSigner` with `candidate` to reject; closes the signer when it does not. */
  const createRejection = async (candidate: unknown, hostVersion?: string): Promise<unknown> => {
    const error = await rejectionOf(async () => {
      const signer = await createSigner(await loadPlugin(), candidate, await context(), hostVersion);
      track(signer);
    });
    return error;
  };

  const cases: ConformanceCase[] = [];
  const add = (group: string, title: string, run: () => Promise<SkippedCase | void>): void => {
    cases.push({ group, title, run });
  };

  // --- the definition: what the loader checks before calling create -----------------------------
  add('plugin definition', 'is a defineSigner definition with meta.name and create when imported', async () => {
    const definition = await loadPlugin();
    assert.ok(isSignerPlugin(definition));
    assert.equal(typeof definition.meta.name, 'string');
    assert.notEqual(definition.meta.name, '');
    assert.equal(typeof definition.create, 'function');
    if (definition.optionsSchema !== undefined) assert.equal(typeof definition.optionsSchema, 'object', 'optionsSchema must be an object');
    if (definition.validateOptions !== undefined) assert.equal(typeof definition.validateOptions, 'function', 'validateOptions must be a function');
  });

  add('plugin definition', `declares an apiVersion range that includes signer API ${SIGNER_API_VERSION}`, async () => {
    assertSignerApiCompatible(await loadPlugin(), SIGNER_API_VERSION);
  });

  const future = nextMajor(SIGNER_API_VERSION);
  add('plugin definition', `is refused with code 2000 naming the plugin when the host provides signer API ${future}`, async () => {
    // A range like `*` would let a host with a breaking contract load the plugin (fastify-plugin's rule).
    const definition = await loadPlugin();
    const error = await createRejection(await validOptions(), future);
    assertCoded(error, `createSigner with host version ${future}`, 2000);
    assert.ok(error.message.includes(definition.meta.name), `the message does not name the plugin: ${error.message}`);
  });

  // --- options: createSigner runs the schema, then validateOptions, then create ------------------
  add('createSigner()', 'creates a signer with the contract shape when the options are valid', async () => {
    const signer = await mainSigner();
    assertSignerShape(signer, (await loadPlugin()).meta.name);
  });

  const refusals: InvalidOptionsCase<Options>[] = [];
  if (settings.defaultInvalidOptions !== false) {
    refusals.push(
      { title: 'null options', options: null },
      { title: 'an unknown option', options: (valid: Options) => ({ ...(valid as object), conformanceUnknownOption: true }) },
    );
  }
  refusals.push(...(settings.invalidOptions ?? []));
  for (const refusal of refusals) {
    const code = refusal.code ?? 2000;
    add('createSigner()', `rejects with code ${code}${code === 2000 ? ' naming the plugin' : ''} when given ${refusal.title}`, async () => {
      const candidate = typeof refusal.options === 'function' ? (refusal.options as (valid: Options) => unknown)(await validOptions()) : refusal.options;
      const error = await createRejection(candidate);
      assertCoded(error, `createSigner with ${refusal.title}`, code);
      if (code === 2000) {
        const name = (await loadPlugin()).meta.name;
        assert.ok(error.message.includes(name), `the message does not name the plugin ${name}: ${error.message}`);
      }
    });
  }

  // --- the created signer ------------------------------------------------------------------------
  add('getCertificate()', 'returns one certificate as matching DER and PEM', async () => {
    assertChecks(await mainReport(), (name) => name === 'getCertificate returns matching DER and PEM');
  });

  add('algorithms', 'lists only known signature algorithms, at least one when sign is implemented', async () => {
    assertChecks(await mainReport(), (name) => name === 'algorithms are known names');
  });

  const signRequestOnly: SkippedCase = { skipped: 'the signer implements signRequest only' };

  add('sign()', 'returns signatures that verify with the certificate key for every advertised algorithm', async () => {
    if (typeof (await mainSigner()).sign !== 'function') return signRequestOnly;
    assertChecks(await mainReport(), (name) => name.startsWith('sign('));
  });

  add('sign()', `returns verifiable signatures when ${concurrency} rounds over every algorithm run concurrently`, async () => {
    const signer = await mainSigner();
    if (typeof signer.sign !== 'function') return signRequestOnly;
    // Signers "must be safe to call concurrently" (Signer contract): the server signs from many requests at once.
    const reports = await Promise.all(Array.from({ length: concurrency }, () => checkSignerConformance(signer, { checkClose: false })));
    for (const report of reports) assertChecks(report, (name) => name.startsWith('sign('));
  });

  add('sign()', 'rejects with a numeric code when asked for an algorithm it does not advertise', async () => {
    const signer = await mainSigner();
    if (typeof signer.sign !== 'function') return signRequestOnly;
    const unadvertised = SIGNATURE_ALGORITHMS.find((algorithm) => !signer.algorithms.includes(algorithm));
    if (unadvertised === undefined) return { skipped: 'the signer advertises every algorithm' };
    const error = await rejectionOf(() => signer.sign!(new Uint8Array([1, 2, 3]), unadvertised as SignatureAlgorithm));
    assertCoded(error, `sign(…, ${unadvertised})`);
  });

  const noSignRequest: SkippedCase = { skipped: 'the signer does not implement signRequest' };

  add('signRequest()', 'returns a certificate that verifies against the CA certificate when sent a CSR', async () => {
    const signer = await mainSigner();
    if (typeof signer.signRequest !== 'function') return noSignRequest;
    const { certificatePem } = await signer.signRequest({ certificate_request: await validCsr(), profile: issuance.profile ?? '', label: issuance.label ?? '' });
    const leaf = new X509Certificate(certificatePem);
    const ca = new X509Certificate((await signer.getCertificate()).pem);
    assert.ok(leaf.checkIssued(ca), `the certificate's issuer (${leaf.issuer}) is not the CA's subject (${ca.subject})`);
    assert.ok(leaf.verify(ca.publicKey), 'the certificate signature does not verify with the CA key');
  });

  add('signRequest()', 'rejects with a numeric code when the CSR does not parse', async () => {
    const signer = await mainSigner();
    if (typeof signer.signRequest !== 'function') return noSignRequest;
    const error = await rejectionOf(() => signer.signRequest!({ certificate_request: BROKEN_CSR, profile: issuance.profile ?? '', label: issuance.label ?? '' }));
    assertCoded(error, 'signRequest with a broken CSR');
  });

  add('health()', 'reports ok while the signer is open', async () => {
    if (typeof (await mainSigner()).health !== 'function') return { skipped: 'the signer does not implement health' };
    assertChecks(await mainReport(), (name) => name === 'health reports ok');
  });

  add('issuer newCertificate()', "issues a certificate through certsmith's issuer that verifies against the signer's CA certificate", async () => {
    const signer = await mainSigner();
    const result = await issueThroughCertsmith(signer, issuance);
    const leaf = new X509Certificate(result.certificatePem);
    const ca = new X509Certificate((await signer.getCertificate()).pem);
    assert.ok(Buffer.from(result.certificateDer).equals(leaf.raw), 'certificateDer and certificatePem differ');
    assert.ok(leaf.checkIssued(ca), `the certificate's issuer (${leaf.issuer}) is not the CA's subject (${ca.subject})`);
    assert.ok(leaf.verify(ca.publicKey), 'the certificate signature does not verify with the CA key');
    if (issuance.request === undefined) assert.match(leaf.subjectAltName ?? '', /DNS:conformance\.example/);
  });

  // --- close(): on a second instance, so the order of the cases above does not matter ------------
  add('close()', 'resolves when called twice', async () => {
    assertChecks(await closeReport(), (name) => name === 'close is idempotent');
  });

  add('close()', 'makes a later sign reject with a numeric code', async () => {
    const report = await closeReport();
    if (typeof (await closingSigner()).sign !== 'function') return signRequestOnly;
    assertChecks(report, (name) => name === 'sign after close rejects with a coded error');
  });

  add('close()', 'makes a later signRequest reject with a numeric code', async () => {
    await closeReport();
    const signer = await closingSigner();
    if (typeof signer.signRequest !== 'function') return noSignRequest;
    const csr = await validCsr();
    const error = await rejectionOf(() => signer.signRequest!({ certificate_request: csr, profile: issuance.profile ?? '', label: issuance.label ?? '' }));
    assertCoded(error, 'signRequest after close');
  });

  let tornDown: Promise<void> | undefined;
  return {
    title: settings.title ?? `signer conformance: ${nameOf(plugin) ?? 'signer plugin'}`,
    cases,
    teardown() {
      tornDown ??= Promise.allSettled(opened.map((signer) => signer.close())).then(() => undefined);
      return tornDown;
    },
  };
}
